"""Recall records: one PostgreSQL partition per day (reviews/recall/partitions.py).

On PostgreSQL the plain table becomes a table partitioned by range of ``created_at``; on
SQLite nothing changes. The model is unchanged, so Django's state is too.

An existing install keeps its rows where they are: the old table is attached whole as the
partition ``reviews_recallrecord_legacy`` (from the beginning of time to the end of the
migration's UTC day) and is dropped whole once its newest row is past the retention. Cost
on a large table: no copy of the rows; one scan to check the partition's bound and one
index build on ``id`` (PostgreSQL 15 cannot keep a unique index on ``id`` alone across
partitions), both under the migration's exclusive lock: recalls wait for the migration
(measured on this project's bench: see docs/scaling.md). An empty table (a new install) is
simply replaced. ``id`` keeps counting from where the old table's identity was.

Going back leaves the table partitioned (the model works on either): turning it into one
plain table again would copy every row.
"""
from datetime import timedelta

from django.db import migrations
from django.utils import timezone

TABLE = "reviews_recallrecord"
LEGACY = TABLE + "_legacy"
SEQUENCE = TABLE + "_id_seq"


def convert(
    cursor, *, table: str = TABLE, by_subject: str = "recall_by_subject", tenant_table: str = "reviews_tenant", today=None
) -> bool:
    """Turn ``table`` into a partitioned table; False if it already is. Shared with the test."""
    cursor.execute("SELECT 1 FROM pg_partitioned_table WHERE partrelid = %s::regclass", [table])
    if cursor.fetchone():
        return False
    legacy, sequence = table + "_legacy", table + "_id_seq"
    today = today or timezone.now().date()
    cursor.execute(f"LOCK TABLE {table} IN ACCESS EXCLUSIVE MODE")
    cursor.execute(f"SELECT max(created_at) FROM {table}")
    newest = cursor.fetchone()[0]
    keep_rows = newest is not None
    cursor.execute(f"SELECT pg_sequence_last_value(pg_get_serial_sequence('{table}', 'id'))")
    last_id = cursor.fetchone()[0] or 0
    cursor.execute(
        "SELECT conname FROM pg_constraint WHERE conrelid = %s::regclass AND contype = 'f'", [table]
    )
    foreign_keys = [row[0] for row in cursor.fetchall()]
    cursor.execute(f"ALTER TABLE {table} RENAME TO {legacy}")
    cursor.execute(f"ALTER TABLE {legacy} ALTER COLUMN id DROP IDENTITY")
    cursor.execute(f"ALTER TABLE {legacy} RENAME CONSTRAINT {table}_pkey TO {legacy}_pkey")
    for name in foreign_keys:
        cursor.execute(f"ALTER TABLE {legacy} RENAME CONSTRAINT {name} TO {name}_legacy")
    cursor.execute("SELECT indexrelid::regclass::text FROM pg_index WHERE indrelid = %s::regclass "
                   "AND NOT indisprimary", [legacy])
    for (index,) in cursor.fetchall():
        cursor.execute(f"ALTER INDEX {index} RENAME TO {index}_legacy")

    cursor.execute(f"CREATE TABLE {table} (LIKE {legacy} INCLUDING DEFAULTS) PARTITION BY RANGE (created_at)")
    cursor.execute(f"CREATE SEQUENCE {sequence} OWNED BY {table}.id")
    cursor.execute(f"SELECT setval('{sequence}', %s + 1, false)", [last_id])
    cursor.execute(f"ALTER TABLE {table} ALTER COLUMN id SET DEFAULT nextval('{sequence}')")
    # Made before the old table is attached, so it adopts these instead of gaining copies
    # (only the id index is new to it: its unique primary key cannot serve a partitioned one).
    cursor.execute(f"CREATE INDEX {table}_id ON {table} (id)")
    cursor.execute(f"CREATE INDEX {by_subject} ON {table} (tenant_id, user_id, created_at)")
    cursor.execute(
        f"ALTER TABLE {table} ADD CONSTRAINT {table}_tenant_id_fk FOREIGN KEY (tenant_id) "
        f"REFERENCES {tenant_table} (id) DEFERRABLE INITIALLY DEFERRED"
    )
    if keep_rows:
        end = max(today, newest.date()) + timedelta(days=1)
        # The bound is written into the statement: DDL takes no parameters when they are
        # bound on the server (DATABASE_SERVER_SIDE_BINDING); an ISO date holds no quote.
        cursor.execute(f"ALTER TABLE {table} ATTACH PARTITION {legacy} "
                       f"FOR VALUES FROM (MINVALUE) TO ('{end.isoformat()} 00:00:00+00')")
    else:
        cursor.execute(f"DROP TABLE {legacy}")
    return True


def forwards(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    from reviews.recall.partitions import recall_partitions_ensure

    with schema_editor.connection.cursor() as cursor:
        convert(cursor)
    recall_partitions_ensure()


class Migration(migrations.Migration):
    atomic = True

    dependencies = [
        ("reviews", "0008_extraction_dry_run"),
    ]

    operations = [migrations.RunPython(forwards, migrations.RunPython.noop, elidable=False)]
