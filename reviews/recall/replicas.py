"""Read replicas: which reads may go to one, and what happens when one is down or behind.

Reads go to a replica only where the code says so, with ``read_on_replica()`` (or the
``replica_view`` decorator of a read-only page): recall's fact reads and the auditors'
recall listings. Everything else, above all every write and every page that must show
what was just written (a subject's own page, the review queue after a decision, a recall
record fetched by the id a recall just returned), reads the primary. An opt-in rather than
a router that sends every read away: a service reading inside its own transaction must see
that transaction, which only the primary can show.

A replica that fails (connection refused, recovery conflict: any ``OperationalError``) or
is more than ``DATABASE_REPLICA_MAX_LAG_SECONDS`` behind is left out of the choice for
``DATABASE_REPLICA_RETRY_SECONDS``; the read is served by the primary and the cause logged
once. The state is per process (a web worker serves one request at a time).
"""
from __future__ import annotations

import itertools
import logging
import time
from contextvars import ContextVar
from functools import wraps
from typing import Callable, TypeVar

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, InterfaceError, OperationalError, connections

log = logging.getLogger(__name__)
T = TypeVar("T")

# How often a process asks a replica how far behind it is (one short query).
LAG_CHECK_SECONDS = 1.0
# On the replica: 0 when everything received is replayed, else the age of the last
# transaction replayed (so a replica whose replay stands still ages while the primary moves).
LAG_SQL = (
    "SELECT CASE WHEN pg_last_wal_receive_lsn() IS NOT DISTINCT FROM pg_last_wal_replay_lsn() THEN 0 "
    "ELSE COALESCE(EXTRACT(EPOCH FROM now() - pg_last_xact_replay_timestamp()), 0) END"
)

_reading: ContextVar[str | None] = ContextVar("replica_reading", default=None)
_left_out_until: dict[str, float] = {}
_lag_checked_at: dict[str, float] = {}
_turn = itertools.count()


class ReplicaRouter:
    """ORM reads go to the replica chosen by ``read_on_replica()`` while it runs; writes
    and migrations always to the primary (an instance read from a replica saves there too)."""

    def db_for_read(self, model, **hints):
        return _reading.get()

    def db_for_write(self, model, **hints):
        return DEFAULT_DB_ALIAS

    def allow_relation(self, obj1, obj2, **hints):
        return True  # the same data, wherever it was read

    def allow_migrate(self, db, app_label, model_name=None, **hints):
        return db == DEFAULT_DB_ALIAS


def read_on_replica(read: Callable[[str], T]) -> T:
    """``read(alias)`` on a replica if one is usable, else (or if it fails there) on the
    primary. ``read`` must only read: it may run twice."""
    alias = _choose()
    if alias is None:
        return read(DEFAULT_DB_ALIAS)
    token = _reading.set(alias)
    try:
        return read(alias)
    except (OperationalError, InterfaceError) as error:
        _leave_out(alias, f"failed: {error}".strip())
        _close(alias)
    finally:
        _reading.reset(token)
    return read(DEFAULT_DB_ALIAS)


def replica_view(view):
    """A read-only page whose queries may be served by a replica (see the module's docstring)."""

    @wraps(view)
    def wrapper(request, *args, **kwargs):
        return read_on_replica(lambda alias: view(request, *args, **kwargs))

    return wrapper


def _choose() -> str | None:
    replicas = settings.DATABASE_REPLICAS
    if not replicas:
        return None
    now = time.monotonic()
    start = next(_turn)
    for offset in range(len(replicas)):
        alias = replicas[(start + offset) % len(replicas)]
        if _left_out_until.get(alias, 0) > now:
            continue
        if now - _lag_checked_at.get(alias, float("-inf")) >= LAG_CHECK_SECONDS and not _current(alias, now):
            continue
        return alias
    return None


def _current(alias: str, now: float) -> bool:
    """Ask the replica how far behind it is; leave it out if too far or unreachable."""
    _lag_checked_at[alias] = now
    try:
        with connections[alias].cursor() as cursor:
            cursor.execute(LAG_SQL)
            lag = float(cursor.fetchone()[0])
    except (OperationalError, InterfaceError) as error:
        _leave_out(alias, f"failed: {error}".strip())
        _close(alias)
        return False
    if lag > settings.DATABASE_REPLICA_MAX_LAG_SECONDS:
        _leave_out(alias, f"is {lag:.1f} s behind the primary")
        return False
    return True


def _leave_out(alias: str, why: str) -> None:
    seconds = settings.DATABASE_REPLICA_RETRY_SECONDS
    _left_out_until[alias] = time.monotonic() + seconds
    log.warning("replica %s %s; reading from the primary for %.0f s", alias, why, seconds)


def _close(alias: str) -> None:
    try:
        connections[alias].close()
    except (OperationalError, InterfaceError):
        pass  # already broken: Django drops it either way


def reset_replica_state() -> None:
    """Forget which replicas were left out (tests; a process that knows they are back)."""
    _left_out_until.clear()
    _lag_checked_at.clear()
