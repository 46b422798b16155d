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
and their errors are Django's.
"""
from __future__ import annotations

import psycopg
from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, connections
from django.db.backends.postgresql.base import ServerBindingCursor
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


def prepared_cursor(using: str = DEFAULT_DB_ALIAS):
    """A Django cursor on which every statement is prepared (PostgreSQL) or plain (else)."""
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
    with connection.wrap_database_errors:
        cursor = _PreparingCursor(connection.connection)
    return connection.make_debug_cursor(cursor) if connection.queries_logged else connection.make_cursor(cursor)
