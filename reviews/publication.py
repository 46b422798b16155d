"""Publication of approved facts to the LangGraph Store (SPEC §5).

Services call :func:`schedule_projection` after changing a subject's facts; the
projection task runs once the transaction commits and calls :func:`project_subject`,
which recomputes that subject's whole projection from the facts: it puts what is
missing or different and deletes what no fact supports any more. Running it twice, or
late, or for a subject with no facts left, is harmless.

Layout (SPEC §5), in a ``PostgresStore`` on PostgreSQL and a ``SqliteStore`` on SQLite:

- namespace ``("tenants", tenant_slug, "users")``, key ``user_id``: the subject's
  ``user`` entity, ``{"facts": {field: {"value", "confidence", "source_message_id",
  "updated_at"}}}``, a list of such objects for a ``many`` field;
- namespace ``("tenants", tenant_slug, "users", user_id, entity_type)``, key
  ``entity_id``: every other entity, same value shape.

Projected: active, unexpired, long-term facts that are not ``sensitive``. Sensitive facts
stay behind the recall API's ``recall:sensitive`` scope. Thread-scoped facts are not
projected either: the store has no thread dimension, so an agent would see one thread's
facts in every other; recall with ``thread_id`` returns them.

LangGraph refuses a period inside a namespace label, so a ``user_id`` used as a label is
escaped (``.`` → ``%2E``, ``%`` → ``%25``); as a key it is stored unchanged.
"""
from __future__ import annotations

import logging
import os
import sqlite3
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import psycopg
from django.conf import settings
from django.db import InterfaceError, OperationalError, connection, connections, transaction
from django.db.models import Exists, OuterRef, Q
from django.utils import timezone
from langgraph.store.base import GetOp, PutOp, SearchOp
from langgraph.store.postgres import PostgresStore
from langgraph.store.sqlite import SqliteStore
from psycopg.conninfo import make_conninfo
from psycopg.rows import dict_row
from psycopg_pool import ConnectionPool, PoolTimeout

from .background import TaskName, publish_tasks, publisher, runs_in_process, task
from .embeddings.store import loadable_sqlite3, sqlite_connect, store_index
from .embeddings.sync import schedule_embedding
from .models import Cardinality, DeletionStatus, Fact, FactDeletion, FactStatus, MemoryScope, Sensitivity, Subject, Tenant
from .transactions import on_commit_once

logger = logging.getLogger(__name__)

STORE_ROOT = "tenants"
USERS = "users"
USER_ENTITY_TYPE = "user"
# How many items one store round trip reads or writes.
STORE_PAGE = 1000
STORE_WRITE_BATCH = 500
# Key space of the PostgreSQL advisory locks that serialise projections of one subject.
_LOCK_CLASS = 0x4D50


@dataclass(frozen=True)
class _EnqueueProjection:
    """Runs after the commit; never raises, so a committed change always answers normally."""

    subject_id: int

    def __call__(self) -> None:
        if runs_in_process():
            try:
                task(TaskName.PROJECT_SUBJECT).delay(self.subject_id)
            except Exception:  # noqa: BLE001 - the hourly reconcile repairs what this missed
                logger.exception("projection of subject %s failed; the reconcile will repair it", self.subject_id)
            return
        publisher.submit(_publish_projection, self.subject_id)


def _publish_projection(subject_id: int) -> None:
    if not publish_tasks(TaskName.PROJECT_SUBJECT, [(subject_id,)]):
        logger.warning("projection of subject %s not queued; the hourly reconcile will repair it", subject_id)


def schedule_projection(subject_id: int) -> None:
    """Enqueue one projection per subject per transaction, however many facts changed.

    The subject's embeddings follow the same changes (reviews/embeddings/sync.py)."""
    schedule_embedding(subject_id)
    callback = _EnqueueProjection(subject_id)
    on_commit_once(callback)


# Errors after which a projection is worth retrying (connections, locks, timeouts).
TRANSIENT_STORE_ERRORS = (
    OperationalError,
    InterfaceError,
    psycopg.OperationalError,
    PoolTimeout,
    sqlite3.OperationalError,
) + ((loadable_sqlite3.OperationalError,) if loadable_sqlite3 else ())

# --- The store ------------------------------------------------------------------------------

_store = None
_store_pid = None
_store_lock = threading.Lock()


def store_location() -> tuple[str, str]:
    """(kind, location) of the store: ``MEMORY_STORE_URL`` or beside Django's database."""
    url = getattr(settings, "MEMORY_STORE_URL", "") or ""
    if url.startswith(("postgres://", "postgresql://")):
        return "postgres", url
    if url.startswith("sqlite:///"):
        # sqlite:///relative/path, sqlite:////absolute/path, sqlite:///:memory:
        return "sqlite", url.removeprefix("sqlite:///")
    if url:
        raise ValueError("MEMORY_STORE_URL must be a postgres:// or sqlite:/// URL.")
    db = connections["default"].settings_dict
    if db["ENGINE"].endswith("postgresql"):
        params = {
            "dbname": db["NAME"],
            "user": db.get("USER") or None,
            "password": db.get("PASSWORD") or None,
            "host": db.get("HOST") or None,
            "port": str(db["PORT"]) if db.get("PORT") else None,
        }
        return "postgres", make_conninfo("", **{k: v for k, v in params.items() if v})
    name = str(db["NAME"])
    if name == ":memory:" or "mode=memory" in name:
        return "sqlite", ":memory:"
    return "sqlite", f"{name}-store.sqlite3"


def _open_store():
    store = _connect_store()
    _set_up(store, *store_location())
    return store


def _connect_store():
    kind, location = store_location()
    if kind == "postgres":
        pool = ConnectionPool(
            location,
            min_size=1,
            max_size=4,
            kwargs={"autocommit": True, "prepare_threshold": 0, "row_factory": dict_row},
            check=ConnectionPool.check_connection,
            # An unreachable store fails the task (which retries) rather than hanging it.
            timeout=10,
            name="memory-store",
            open=True,
        )
        store = PostgresStore(pool)
    else:
        if location != ":memory:":
            Path(location).parent.mkdir(parents=True, exist_ok=True)
        # Indexed with the configured embedder (sqlite-vec), so agents search by meaning;
        # PostgresStore stays without one: pgvector is not assumed (docs/scaling.md).
        store = SqliteStore(sqlite_connect(location), index=store_index())
    return store


# Any fixed 64-bit number: the advisory lock that serialises store set-up across processes.
STORE_SETUP_LOCK = 0x6D705F73746F7265  # "mp_store"
STORE_SETUP_POLL_SECONDS = 0.05


def _set_up(store, kind: str, location: str) -> None:
    """The store's tables and migrations, made once. On PostgreSQL under an advisory lock:
    processes forked at once (gunicorn's workers, Celery's pool) setting up a fresh store
    raced in its CREATE TABLE IF NOT EXISTS and one failed on a duplicate row in pg_type."""
    if kind != "postgres":
        store.setup()
        return
    with psycopg.connect(location, autocommit=True) as lock:
        # Polled, not waited for: a waiting statement holds a snapshot, and the store's
        # CREATE INDEX CONCURRENTLY waits for every snapshot to go (an undetected deadlock).
        while not lock.execute("SELECT pg_try_advisory_lock(%s)", [STORE_SETUP_LOCK]).fetchone()[0]:
            time.sleep(STORE_SETUP_POLL_SECONDS)
        try:
            store.setup()
        finally:
            lock.execute("SELECT pg_advisory_unlock(%s)", [STORE_SETUP_LOCK])


def get_store():
    """The process's store, opened (and set up, idempotently) on first use.

    Opened again in a forked child (gunicorn, Celery prefork): a connection must not be
    shared across processes.
    """
    global _store, _store_pid
    if _store is None or _store_pid != os.getpid():
        with _store_lock:
            if _store is None or _store_pid != os.getpid():
                _store, _store_pid = _open_store(), os.getpid()
    return _store


def close_store() -> None:
    """Close the process's store (tests close it before their database is dropped)."""
    global _store, _store_pid
    with _store_lock:
        store, _store, _store_pid = _store, None, None
    if store is None:
        return
    conn = store.conn
    if hasattr(conn, "close"):
        conn.close()


def _label(text: str) -> str:
    return text.replace("%", "%25").replace(".", "%2E")


def _unlabel(text: str) -> str:
    return text.replace("%2E", ".").replace("%25", "%")


def user_namespace(tenant_slug: str) -> tuple[str, ...]:
    return (STORE_ROOT, tenant_slug, USERS)


def entities_prefix(tenant_slug: str, user_id: str) -> tuple[str, ...]:
    return (STORE_ROOT, tenant_slug, USERS, _label(user_id))


def entity_namespace(tenant_slug: str, user_id: str, entity_type: str) -> tuple[str, ...]:
    return (*entities_prefix(tenant_slug, user_id), _label(entity_type))


# --- What the facts say the store should hold ----------------------------------------------

Items = dict[tuple[tuple[str, ...], str], dict]


def projected_facts(subject_ids, now=None):
    """The facts SPEC §5 publishes to the store, for these subjects."""
    now = now or timezone.now()
    return (
        Fact.objects.filter(subject_id__in=subject_ids, status=FactStatus.ACTIVE, scope=MemoryScope.LONG_TERM)
        .filter(Q(expires_at__isnull=True) | Q(expires_at__gt=now))
        .exclude(sensitivity=Sensitivity.SENSITIVE)
        # Deleted by the subject, undoable for a few seconds: out of the store already.
        .exclude(Exists(FactDeletion.objects.filter(fact=OuterRef("pk"), status=DeletionStatus.SCHEDULED)))
        .order_by("subject_id", "entity_id", "field", "updated_at", "id")
        .values_list(
            "subject_id",
            "entity__entity_type",
            "entity__entity_id",
            "field",
            "cardinality",
            "value",
            "confidence",
            "source_message_id",
            "updated_at",
            named=True,
        )
    )


def desired_items(subjects, facts) -> Items:
    """Group fact rows into store items: one per entity, keyed as SPEC §5 says."""
    by_id = {subject.pk: subject for subject in subjects}
    items: Items = {}
    for fact in facts:
        subject = by_id[fact.subject_id]
        slug = subject.tenant.slug
        if fact.entity__entity_type == USER_ENTITY_TYPE:
            address = (user_namespace(slug), subject.user_id)
        else:
            address = (entity_namespace(slug, subject.user_id, fact.entity__entity_type), fact.entity__entity_id)
        entry = {
            "value": fact.value,
            "confidence": fact.confidence,
            "source_message_id": fact.source_message_id,
            "updated_at": fact.updated_at.isoformat(),
        }
        facts_of_entity = items.setdefault(address, {"facts": {}})["facts"]
        if fact.cardinality == Cardinality.MANY:
            facts_of_entity.setdefault(fact.field, []).append(entry)
        else:
            facts_of_entity[fact.field] = entry
    return items


# --- Reading and writing the store ---------------------------------------------------------


def _search_all(store, prefix: tuple[str, ...]):
    offset = 0
    while True:
        (page,) = store.batch([SearchOp(namespace_prefix=prefix, limit=STORE_PAGE, offset=offset)])
        yield from page
        if len(page) < STORE_PAGE:
            return
        offset += STORE_PAGE


def stored_items(store, subjects) -> Items:
    """What the store holds for these subjects, read in one round trip per page."""
    ops, prefixes = [], []
    for subject in subjects:
        ops.append(GetOp(user_namespace(subject.tenant.slug), subject.user_id))
        prefix = entities_prefix(subject.tenant.slug, subject.user_id)
        ops.append(SearchOp(namespace_prefix=prefix, limit=STORE_PAGE))
        prefixes.append(prefix)
    results = store.batch(ops) if ops else []
    items: Items = {}
    for index, prefix in enumerate(prefixes):
        user_item, entity_items = results[2 * index], results[2 * index + 1]
        if user_item is not None:
            items[(tuple(user_item.namespace), user_item.key)] = user_item.value
        if len(entity_items) == STORE_PAGE:  # a subject with very many entities: read on
            entity_items = list(_search_all(store, prefix))
        for item in entity_items:
            items[(tuple(item.namespace), item.key)] = item.value
    return items


@dataclass
class Drift:
    """Differences between what the facts say and what the store holds."""

    missing: list = field(default_factory=list)  # (namespace, key) not in the store
    changed: list = field(default_factory=list)  # in the store with another value
    extra: list = field(default_factory=list)  # in the store, supported by no fact

    def __bool__(self) -> bool:
        return bool(self.missing or self.changed or self.extra)

    def merge(self, other: "Drift") -> None:
        self.missing += other.missing
        self.changed += other.changed
        self.extra += other.extra

    @property
    def counts(self) -> dict:
        return {"missing": len(self.missing), "changed": len(self.changed), "extra": len(self.extra)}


def compare(desired: Items, stored: Items) -> Drift:
    drift = Drift()
    for address, value in desired.items():
        if address not in stored:
            drift.missing.append(address)
        elif stored[address] != value:
            drift.changed.append(address)
    drift.extra = [address for address in stored if address not in desired]
    return drift


def _write(store, desired: Items, drift: Drift) -> None:
    # An indexed store (reviews/embeddings/store.py) embeds each item it is given, so
    # agents search by meaning; `False` tells any other store there is nothing to embed.
    index = None if getattr(store, "index_config", None) else False
    ops = [PutOp(namespace, key, desired[(namespace, key)], index=index) for namespace, key in drift.missing]
    ops += [PutOp(namespace, key, desired[(namespace, key)], index=index) for namespace, key in drift.changed]
    ops += [PutOp(namespace, key, None) for namespace, key in drift.extra]
    for start in range(0, len(ops), STORE_WRITE_BATCH):
        store.batch(ops[start : start + STORE_WRITE_BATCH])


def _lock_subjects(subject_ids) -> None:
    """Serialise projections of the same subject (PostgreSQL; SQLite has one writer).

    Taken before the facts are read: whoever holds the lock reads facts at least as new
    as those of any projection that finished before it, so the last write wins with the
    newest state.
    """
    if connection.vendor != "postgresql":
        return
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_advisory_xact_lock(%s, (id %% 2147483647)::int) FROM unnest(%s::bigint[]) AS id ORDER BY id",
            [_LOCK_CLASS, sorted(subject_ids)],
        )


def project_subjects(subject_ids, *, dry_run: bool = False) -> Drift:
    """Make the store hold exactly what these subjects' facts say; returns what differed."""
    subject_ids = sorted(set(subject_ids))
    if not subject_ids:
        return Drift()
    store = get_store()
    with transaction.atomic():
        _lock_subjects(subject_ids)
        subjects = list(Subject.objects.filter(pk__in=subject_ids).select_related("tenant"))
        desired = desired_items(subjects, projected_facts([s.pk for s in subjects]))
        drift = compare(desired, stored_items(store, subjects))
        if drift and not dry_run:
            _write(store, desired, drift)
    return drift


def project_subject(subject_id: int) -> Drift:
    """Recompute one subject's whole projection (the projection task calls this)."""
    drift = project_subjects([subject_id])
    if drift:
        logger.info("projection of subject %s: %s", subject_id, drift.counts)
    return drift


# --- Whole-store reconcile and rebuild ------------------------------------------------------

RECONCILE_CHUNK = 500


def _orphans(store, tenants, *, every_tenant: bool) -> Drift:
    """Items of tenants or users the database does not know: stale by definition.

    The projection owns ``("tenants", slug, "users", ...)``: anything else written there
    (say, by an agent calling ``store.put``) is drift too, and a repair removes it.
    """
    drift = Drift()
    known = {one.slug: one for one in tenants}
    for namespace in store.list_namespaces(prefix=(STORE_ROOT,), max_depth=2, limit=1_000_000):
        if every_tenant and len(namespace) == 2 and namespace[1] not in known:
            drift.extra += [(tuple(item.namespace), item.key) for item in _search_all(store, namespace)]
    for slug, one in known.items():
        users = set(Subject.objects.filter(tenant=one).values_list("user_id", flat=True))
        for item in _search_all(store, (STORE_ROOT, slug)):
            namespace = tuple(item.namespace)
            in_layout = namespace[:3] == user_namespace(slug) and len(namespace) in (3, 5)
            owner = item.key if len(namespace) == 3 else _unlabel(namespace[3]) if len(namespace) > 3 else None
            if not in_layout or owner not in users:
                drift.extra.append((namespace, item.key))
    return drift


def reconcile(*, tenant=None, repair: bool = False, progress=None) -> Drift:
    """Compare (and with ``repair``, fix) the whole projection against the facts.

    Subject by subject in chunks, each under the same lock as the projection task, so a
    repair never overwrites a newer projection with an older one. Items of tenants or
    users the database no longer knows are reported as extra and, on repair, deleted.
    """
    store = get_store()
    tenants = [tenant] if tenant is not None else list(Tenant.objects.all())
    total = Drift()
    for one in tenants:
        ids = list(Subject.objects.filter(tenant=one).order_by("pk").values_list("pk", flat=True))
        for start in range(0, len(ids), RECONCILE_CHUNK):
            total.merge(project_subjects(ids[start : start + RECONCILE_CHUNK], dry_run=not repair))
            if progress:
                progress(one.slug, min(start + RECONCILE_CHUNK, len(ids)), len(ids))
    orphans = _orphans(store, tenants, every_tenant=tenant is None)
    total.merge(orphans)
    if repair and orphans.extra:
        _write(store, {}, orphans)
    return total
