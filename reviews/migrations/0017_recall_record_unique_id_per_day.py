"""Recall records: a unique index on (id, created_at) in place of the plain one on id.

A record handed off through the Redis stream (reviews/recall/records.py) carries
the id its recall returned, and may be delivered twice (its batch committed, the drain died
before acknowledging it): ``ON CONFLICT (id, created_at) DO NOTHING`` needs a unique index
to meet. PostgreSQL cannot keep one on ``id`` alone across partitions (a partitioned
table's unique index must hold the partition key); ``created_at`` is fixed when the id is
given, so the pair is as unique as the id. Lookups by id use the index's first column, so
the old index goes and a recall's INSERT still pays for the same number of indexes.

Built on every partition under the migration's lock (one index build per day kept, and on
an attached legacy table). SQLite keeps its primary key, which is unique already.
"""
from django.db import migrations

TABLE = "reviews_recallrecord"


def _partitioned(cursor) -> bool:
    """A plain table (never converted) keeps its primary key, which is unique already."""
    cursor.execute("SELECT 1 FROM pg_partitioned_table WHERE partrelid = %s::regclass", [TABLE])
    return cursor.fetchone() is not None


def forwards(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    with schema_editor.connection.cursor() as cursor:
        if _partitioned(cursor):
            cursor.execute(f"CREATE UNIQUE INDEX IF NOT EXISTS {TABLE}_id_created ON {TABLE} (id, created_at)")
            cursor.execute(f"DROP INDEX IF EXISTS {TABLE}_id")


def backwards(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    with schema_editor.connection.cursor() as cursor:
        if _partitioned(cursor):
            cursor.execute(f"CREATE INDEX IF NOT EXISTS {TABLE}_id ON {TABLE} (id)")
            cursor.execute(f"DROP INDEX IF EXISTS {TABLE}_id_created")


class Migration(migrations.Migration):
    dependencies = [
        ("reviews", "0016_recall_record_tenant_no_constraint"),
    ]

    operations = [migrations.RunPython(forwards, backwards, elidable=False)]
