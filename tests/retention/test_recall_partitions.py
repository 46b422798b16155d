"""Recall records by day (PostgreSQL partitions): made ahead, dropped whole past the
retention, recall unaffected across a day's boundary, the audit chain still verifying."""
from datetime import datetime, time, timedelta, timezone as dt_timezone

import pytest
import time_machine
from django.core.management import call_command
from django.db import connection

from reviews import audit
from reviews.models import RecallRecord
from reviews.recall.query import RecallQuery
from reviews.selectors.recall_history import recall_records_page
from reviews.recall.service import recall_perform
from reviews.recall.partitions import (
    RECALL_PARTITIONS_AHEAD_DAYS,
    partition_name,
    partitioned,
    partitions,
    recall_partitions_drop_expired,
    recall_partitions_ensure,
)
from tests.recall.conftest import AGENT

pytestmark = pytest.mark.skipif(
    connection.vendor != "postgresql", reason="SQLite keeps recall records in one plain table"
)


def utc_day(moment: datetime):
    return moment.astimezone(dt_timezone.utc).date()


def names():
    return [name for name, _, _ in partitions()]


def recall(tenant, user_id="u1"):
    return recall_perform(tenant=tenant, query=RecallQuery(user_id=user_id), actor=AGENT, may_see_sensitive=False)


def write_records(tenant, *moments):
    """Records at given moments, as recalls at those moments would have written them."""
    for moment in moments:
        with time_machine.travel(moment, tick=False):
            recall(tenant)


@pytest.mark.django_db
def test_the_migration_leaves_a_partitioned_table_with_the_days_ahead(tenant):
    assert partitioned()
    made = set(names())
    # The days ahead count from the day the test database was migrated: the day the run
    # began, which is yesterday when the run crossed midnight UTC.
    today = datetime.now(dt_timezone.utc).date()
    migrated_on = (today, today - timedelta(days=1))
    assert any(
        all(partition_name(day + timedelta(days=offset)) in made for offset in range(RECALL_PARTITIONS_AHEAD_DAYS + 1))
        for day in migrated_on
    ), sorted(made)


@pytest.mark.django_db
def test_partitions_are_made_ahead_once(tenant):
    later = datetime.now(dt_timezone.utc).date() + timedelta(days=30)

    made = recall_partitions_ensure(today=later, ahead_days=2)

    assert made == [partition_name(later + timedelta(days=n)) for n in range(3)]
    assert recall_partitions_ensure(today=later, ahead_days=2) == []


@pytest.mark.django_db
def test_the_command_makes_partitions_ahead(tenant, capsys):
    call_command("recall_partitions", "--ahead", "12", "--keep")

    assert partition_name(datetime.now(dt_timezone.utc).date() + timedelta(days=12)) in names()
    assert "made" in capsys.readouterr().out


@pytest.mark.django_db(transaction=True)  # as the beat runs it: DETACH … CONCURRENTLY in autocommit
def test_retention_drops_whole_old_days_only(tenant, publish):
    publish(tenant, "u1", field="preference", value="green tea")
    now = datetime.now(dt_timezone.utc)
    old, expired_edge, kept_edge = (now - timedelta(days=days) for days in (120, 91, 89))
    for moment in (old, expired_edge, kept_edge):
        recall_partitions_ensure(today=utc_day(moment), ahead_days=0)
    write_records(tenant, old, expired_edge, kept_edge, now)
    assert RecallRecord.objects.count() == 4

    dropped = recall_partitions_drop_expired(retention_days=90)

    assert dropped == [partition_name(utc_day(old)), partition_name(utc_day(expired_edge))]
    remaining = sorted(RecallRecord.objects.values_list("created_at", flat=True))
    assert [utc_day(moment) for moment in remaining] == [utc_day(kept_edge), utc_day(now)]
    assert partition_name(utc_day(kept_edge)) in names() and partition_name(utc_day(now)) in names()
    # Recall records are not in the audit chain: it verifies as before, and recall goes on.
    assert audit.verify_tenant(tenant.pk).ok
    record, result = recall(tenant)
    assert [fact["value"] for fact in result.facts] == ["green tea"]
    assert RecallRecord.objects.filter(pk=record.pk).exists()


@pytest.mark.django_db
def test_nothing_is_dropped_within_the_retention(tenant):
    recall_partitions_ensure(today=utc_day(datetime.now(dt_timezone.utc) - timedelta(days=10)), ahead_days=0)
    before = names()

    assert recall_partitions_drop_expired(retention_days=90) == []
    assert names() == before


@pytest.mark.django_db
def test_recall_keeps_working_across_midnight(tenant, publish):
    fact = publish(tenant, "u1", field="preference", value="green tea")
    tomorrow = datetime.now(dt_timezone.utc).date() + timedelta(days=1)
    midnight = datetime.combine(tomorrow, time.min, tzinfo=dt_timezone.utc)

    write_records(tenant, midnight - timedelta(microseconds=1), midnight)

    before, after = RecallRecord.objects.order_by("id")
    assert (utc_day(before.created_at), utc_day(after.created_at)) == (tomorrow - timedelta(days=1), tomorrow)
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT tableoid::regclass::text FROM {RecallRecord._meta.db_table} ORDER BY id")
        assert [row[0] for row in cursor.fetchall()] == [
            partition_name(tomorrow - timedelta(days=1)),
            partition_name(tomorrow),
        ]
    # The auditors' listing and a fact's recalls read across the two days.
    assert [r.pk for r in recall_records_page(tenant=tenant).records] == [after.pk, before.pk]
    assert before.facts == after.facts == [{"id": fact.pk, "version": 1}]


@pytest.mark.django_db(transaction=True)
def test_a_recall_on_a_day_without_a_partition_makes_it(tenant, publish):
    publish(tenant, "u1", field="preference", value="green tea")
    far = datetime.now(dt_timezone.utc) + timedelta(days=40)
    assert partition_name(utc_day(far)) not in names()

    write_records(tenant, far)

    assert partition_name(utc_day(far)) in names()
    assert utc_day(RecallRecord.objects.get().created_at) == utc_day(far)


@pytest.mark.django_db
def test_the_migration_keeps_an_existing_installs_rows_in_a_legacy_partition(tenant):
    """The conversion of migration 0009, run on a plain table shaped like the old one."""
    from importlib import import_module

    convert = import_module("reviews.migrations.0009_recall_records_partitioned_by_day").convert
    table = "recall_conversion_probe"
    with connection.cursor() as cursor:
        cursor.execute(
            f"CREATE TABLE {table} (id bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY, "
            "user_id varchar(128) NOT NULL, caller varchar(160) NOT NULL, query jsonb NOT NULL, "
            "facts jsonb NOT NULL, created_at timestamptz NOT NULL, tenant_id bigint NOT NULL "
            f"REFERENCES reviews_tenant (id) DEFERRABLE INITIALLY DEFERRED)"
        )
        cursor.execute(f"CREATE INDEX {table}_subject ON {table} (tenant_id, user_id, created_at)")
        cursor.execute(
            f"INSERT INTO {table} (user_id, caller, query, facts, created_at, tenant_id) "
            "SELECT 'u' || g, 'api_key:x', '{}', '[]', now() - g * interval '1 day', %s::bigint FROM generate_series(0, 99) g",
            [tenant.pk],
        )
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")  # the test's own inserts, checked now

        assert convert(cursor, table=table, by_subject=f"{table}_by_subject") is True
        assert convert(cursor, table=table, by_subject=f"{table}_by_subject") is False  # already done

        cursor.execute(
            "SELECT c.relname, pg_get_expr(c.relpartbound, c.oid) FROM pg_inherits i "
            "JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = %s::regclass",
            [table],
        )
        [(legacy, bound)] = cursor.fetchall()
        assert legacy == f"{table}_legacy" and bound.startswith("FOR VALUES FROM (MINVALUE) TO (")
        cursor.execute(f"SELECT count(*), max(id) FROM {table}")
        assert cursor.fetchone() == (100, 100)
        # New rows carry on the old identity's numbering.
        cursor.execute(
            f"INSERT INTO {table} (user_id, caller, query, facts, created_at, tenant_id) "
            "VALUES ('u', 'x', '{}', '[]', now(), %s) RETURNING id, tableoid::regclass::text",
            [tenant.pk],
        )
        assert cursor.fetchone() == (101, legacy)


@pytest.mark.django_db
def test_every_partition_refuses_a_second_record_with_the_same_id(tenant):
    """The unique (id, created_at) index that makes a redelivered record a no-op (0017)."""
    from django.db import IntegrityError, transaction

    record, _ = recall(tenant)
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_index i JOIN pg_inherits p ON p.inhrelid = i.indrelid "
            "WHERE p.inhparent = %s::regclass AND i.indisunique "
            "AND i.indkey::text = (SELECT indkey::text FROM pg_index WHERE indexrelid = %s::regclass)",
            [RecallRecord._meta.db_table, "reviews_recallrecord_id_created"],
        )
        unique_on_partitions = cursor.fetchone()[0]
        with pytest.raises(IntegrityError), transaction.atomic():
            cursor.execute(
                "INSERT INTO reviews_recallrecord (id, tenant_id, user_id, caller, query, facts, created_at) "
                "VALUES (%s, %s, 'u1', 'x', '{}', '[]', %s)",
                [record.pk, tenant.pk, record.created_at],
            )
    assert unique_on_partitions == len(partitions())
