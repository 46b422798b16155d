"""Statements on the hot path of an API request, planned once per database connection.

Django binds parameters on the client (psycopg's ClientCursor), so PostgreSQL plans every
statement afresh: for the recall's join that planning cost twice its execution. The few
statements run on every recall go through ``prepared_cursor()`` instead, which binds on
the server and prepares the statement on its first run in a connection. Prepared
statements live as long as their connection, so this is done only on persistent ones
(``DATABASE_CONN_MAX_AGE`` above 0).

A pooler in transaction mode that does not track prepared statements (PgBouncer before
1.21) cannot serve these: set ``DATABASE_PREPARED_STATEMENTS=0`` behind one. On SQLite
this is Django's ordinary cursor.

Queries still go through Django's cursor wrapper, so they are logged, counted by tests,
and their errors are Django's. The psycopg cursor under that wrapper is made once per
connection and kept: making one per statement (its adapters copied to register the
timestamp loader, then closed) cost 35 µs of CPU, about a third of a statement's whole
client side, on each of a recall's two statements.
"""
from __future__ import annotations

import psycopg
from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, connections
from django.db.backends.postgresql.base import ServerBindingCursor
from django.db.backends.utils import CursorDebugWrapper, CursorWrapper
from psycopg.pq import Format

_TIMESTAMPTZ = psycopg.postgres.types["timestamptz"].oid
# psycopg's own loader: compiled with psycopg[binary]. Django registers a Python subclass
# that parses the same text and then sets the connection's time zone; under USE_TZ the
# session's TimeZone is already UTC, so both give the same instant, in UTC.
_COMPILED_TIMESTAMPTZ_LOADER = psycopg.adapters.get_loader(_TIMESTAMPTZ, Format.TEXT)


class _PreparingCursor(ServerBindingCursor):
    """Server-side binding, every statement prepared (psycopg caches them by text), and
    timestamps parsed by psycopg's compiled loader (a recall's rows carry two each)."""

    def __init__(self, connection, *args, **kwargs):
        super().__init__(connection, *args, **kwargs)
        if settings.USE_TZ:
            self.adapters.register_loader(_TIMESTAMPTZ, _COMPILED_TIMESTAMPTZ_LOADER)

    def execute(self, query, params=None, *, prepare=None, binary=None):
        return super().execute(query, params, prepare=True, binary=binary)


class _KeptCursor(CursorWrapper):
    """Django's wrapper, left open at the end of a ``with`` block: the cursor under it
    serves the connection's next hot-path statement."""

    def __exit__(self, type, value, traceback):
        pass


class _KeptDebugCursor(CursorDebugWrapper):
    """The same, when queries are logged (DEBUG, or a test counting them)."""

    def __exit__(self, type, value, traceback):
        pass


# The attribute of Django's connection wrapper (one per thread and alias) that keeps
# (psycopg connection, its preparing cursor): a reconnection makes a new cursor.
_KEPT = "_hotpath_cursor"


def prepared_cursor(using: str = DEFAULT_DB_ALIAS):
    """A Django cursor on which every statement is prepared (PostgreSQL) or plain (else).

    On PostgreSQL every call returns the same cursor of the connection: read what a
    statement returned before the next hot-path statement runs."""
    connection = connections[using]
    if (
        connection.vendor != "postgresql"
        or not settings.DATABASE_PREPARED_STATEMENTS
        # A connection per request would pay the extra round trip of preparing every time.
        or not connection.settings_dict["CONN_MAX_AGE"]
    ):
        return connection.cursor()
    connection.ensure_connection()
    connection.validate_thread_sharing()
    kept = getattr(connection, _KEPT, None)
    if kept is None or kept[0] is not connection.connection or kept[1].closed:
        with connection.wrap_database_errors:
            kept = (connection.connection, _PreparingCursor(connection.connection))
        setattr(connection, _KEPT, kept)
    return (_KeptDebugCursor if connection.queries_logged else _KeptCursor)(kept[1], connection)
