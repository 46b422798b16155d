"""Dump every table of the test database as text, to prove a value is stored nowhere, or
(rows in key order) that a request changed nothing."""
from django.db import connection

# Columns a call writes as bookkeeping, whatever it asks: an API key's last use is recorded
# on its first call of the minute, a refused one included. Left out of every comparison.
BOOKKEEPING_COLUMNS = {"reviews_apikey": {"last_used_at"}}


def _rows(cursor, table: str) -> str:
    """``table``'s rows as a subquery, without its bookkeeping columns."""
    quote = connection.ops.quote_name
    left_out = BOOKKEEPING_COLUMNS.get(table)
    if not left_out:
        return quote(table)
    columns = [c.name for c in connection.introspection.get_table_description(cursor, table) if c.name not in left_out]
    return f"(SELECT {', '.join(quote(c) for c in columns)} FROM {quote(table)})"


def dump_all_tables(*, skip: tuple[str, ...] = ()) -> str:
    """Every row of every table, tables by name and rows by their first column; tables
    whose name starts with one of ``skip`` are left out."""
    chunks = []
    with connection.cursor() as cursor:
        for table in sorted(connection.introspection.table_names(cursor)):
            if table.startswith(skip):
                continue
            cursor.execute(f"SELECT * FROM {_rows(cursor, table)} t ORDER BY 1")
            chunks.append(f"== {table}\n" + "\n".join(repr(row) for row in cursor.fetchall()))
    return "\n".join(chunks)


def _tables(cursor, skip: tuple[str, ...]) -> list[str]:
    return [t for t in sorted(connection.introspection.table_names(cursor)) if not t.startswith(skip)]


def table_digests(*, skip: tuple[str, ...] = ()) -> dict[str, str]:
    """Each table's rows as one digest, to tell that a request changed no table (and which
    it changed). PostgreSQL computes them in one query, a fraction of the time dumping the
    rows takes: the page fuzz asks after every refused request."""
    with connection.cursor() as cursor:
        tables, quote = _tables(cursor, skip), connection.ops.quote_name
        if connection.vendor != "postgresql":
            return {table: dump_all_tables(skip=tuple(set(tables) - {table})) for table in tables}
        cursor.execute(" UNION ALL ".join(
            f"SELECT %s, md5(coalesce(string_agg(t::text, E'\\n' ORDER BY t::text), '')) FROM {_rows(cursor, table)} t"
            for table in tables
        ), tables)
        return dict(cursor.fetchall())


def tables_holding(text: str, *, skip: tuple[str, ...] = ()) -> list[str]:
    """The tables with a row holding ``text`` anywhere (one query on PostgreSQL)."""
    with connection.cursor() as cursor:
        tables, quote = _tables(cursor, skip), connection.ops.quote_name
        if connection.vendor != "postgresql":
            return [table for table in tables if text in dump_all_tables(skip=tuple(set(tables) - {table}))]
        cursor.execute(" UNION ALL ".join(
            f"SELECT %s FROM {quote(table)} t WHERE strpos(t::text, %s) > 0" for table in tables
        ), [value for table in tables for value in (table, text)])
        return sorted({table for table, in cursor.fetchall()})
