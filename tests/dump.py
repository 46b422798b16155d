"""Dump every table of the test database as text, to prove a value is stored nowhere."""
from django.db import connection


def dump_all_tables() -> str:
    chunks = []
    with connection.cursor() as cursor:
        for table in connection.introspection.table_names(cursor):
            cursor.execute(f"SELECT * FROM {connection.ops.quote_name(table)}")
            chunks.append(f"== {table}\n" + "\n".join(repr(row) for row in cursor.fetchall()))
    return "\n".join(chunks)
