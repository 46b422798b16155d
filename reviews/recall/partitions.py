"""Recall records kept by day, and dropped a whole day at a time (PostgreSQL).

Every recall writes a recall record; at 1,000 recalls/s that is 86 million rows a day. On
PostgreSQL the table is partitioned by range of ``created_at``, one partition per UTC day
(``reviews_recallrecord_pYYYYMMDD``): retention drops the partitions whose whole day is
older than ``MEMORY_RECALL_RETENTION_DAYS`` instead of deleting rows (no dead tuples, no
vacuum debt, no index churn), and an install converted from the plain table keeps its
earlier rows in one ``…_legacy`` partition, dropped whole once its newest row has expired.
A day, not a month: a month's partition would hold billions of rows and keep them up to a
month past their retention.

Partitions are made ahead (``RECALL_PARTITIONS_AHEAD_DAYS``) by the beat (hourly), by
``manage.py recall_partitions`` and by the migration; a record whose day has no partition
yet (the beat stopped for a week) makes it on the spot (:func:`recall_partition_for`).
A partition is detached ``CONCURRENTLY`` before it is dropped, so recalls writing to
today's partition are not blocked behind the drop's lock.

Recall records are not part of the audit chain (a recall writes no audit event: its
record is its trace), so dropping them leaves every tenant's chain verifiable. A drop is a
maintenance action over all tenants at once (a partition holds every tenant's day), so it
is logged, not written as a per-tenant audit event.

SQLite keeps the plain table; these functions do nothing there.
"""
from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta, timezone as dt_timezone

from django.conf import settings
from django.db import connection
from django.utils import timezone

from ..models import RecallRecord
from ..transactions import in_transaction

log = logging.getLogger(__name__)

RECALL_PARTITIONS_AHEAD_DAYS = 7
TABLE = RecallRecord._meta.db_table
LEGACY_SUFFIX = "_legacy"
_BOUND = re.compile(r"FROM \((.+?)\) TO \((.+?)\)")


@dataclass
class PartitionReport:
    created: list[str] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)


def partitioned() -> bool:
    if connection.vendor != "postgresql":
        return False
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1 FROM pg_partitioned_table WHERE partrelid = %s::regclass", [TABLE])
        return cursor.fetchone() is not None


def partition_name(day: date) -> str:
    return f"{TABLE}_p{day:%Y%m%d}"


def _midnight(day: date) -> datetime:
    return datetime.combine(day, time.min, tzinfo=dt_timezone.utc)


def partitions() -> list[tuple[str, datetime | None, datetime]]:
    """(name, lower bound or None for MINVALUE, upper bound) of each partition, oldest first."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT c.relname, pg_get_expr(c.relpartbound, c.oid) FROM pg_inherits i "
            "JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = %s::regclass",
            [TABLE],
        )
        rows = cursor.fetchall()
    found = []
    for name, bound in rows:
        match = _BOUND.search(bound)
        if match is None:  # a DEFAULT partition: never made here, never dropped here
            continue
        lower, upper = (
            None if value == "MINVALUE" else datetime.fromisoformat(value.strip("'")) for value in match.groups()
        )
        found.append((name, lower, upper))
    return sorted(found, key=lambda item: item[2])


def recall_partitions_ensure(*, ahead_days: int = RECALL_PARTITIONS_AHEAD_DAYS, today: date | None = None) -> list[str]:
    """Make the partitions of ``today`` and the next ``ahead_days`` days that are missing."""
    if not partitioned():
        return []
    today = today or timezone.now().date()
    return [name for offset in range(ahead_days + 1) if (name := _ensure_day(today + timedelta(days=offset)))]


def _ensure_day(day: date) -> str | None:
    start, end = _midnight(day), _midnight(day + timedelta(days=1))
    covered = [(low, high) for _, low, high in partitions() if (low is None or low < end) and high > start]
    if covered:
        if any((low is None or low <= start) and high >= end for low, high in covered):
            return None
        # Part of the day is covered (the legacy partition ends mid-range): start after it.
        start = max(high for _, high in covered)
    name = partition_name(day)
    # The bounds are written into the statement: DDL takes no parameters when they are bound
    # on the server (DATABASE_SERVER_SIDE_BINDING), and an ISO timestamp holds no quote.
    with connection.cursor() as cursor:
        cursor.execute(
            f"CREATE TABLE IF NOT EXISTS {name} PARTITION OF {TABLE} "
            f"FOR VALUES FROM ('{start.isoformat()}') TO ('{end.isoformat()}')"
        )
    log.info("recall records: partition %s made for %s", name, day)
    return name


def recall_partition_for(moment: datetime) -> None:
    """Make the partition a record written at ``moment`` needs (the beat has not)."""
    _ensure_day(moment.astimezone(dt_timezone.utc).date())


def no_partition_for_row(error: Exception) -> bool:
    """PostgreSQL refused a row because no partition takes its ``created_at``."""
    return getattr(error.__cause__, "sqlstate", None) == "23514" and "no partition" in str(error)


def recall_partitions_drop_expired(
    *, retention_days: int | None = None, now: datetime | None = None
) -> list[str]:
    """Drop every partition whose rows are all older than the retention. Returns their names."""
    if not partitioned():
        return []
    retention_days = settings.MEMORY_RECALL_RETENTION_DAYS if retention_days is None else retention_days
    cutoff = (now or timezone.now()) - timedelta(days=retention_days)
    dropped = []
    for name, _, upper in partitions():
        if upper > cutoff:
            break
        _detach_and_drop(name)
        log.info("recall records: partition %s dropped (records before %s, retention %d days)",
                 name, upper.isoformat(), retention_days)
        dropped.append(name)
    return dropped


def _detach_and_drop(name: str) -> None:
    with connection.cursor() as cursor:
        if in_transaction():
            # CONCURRENTLY cannot run inside a transaction block (tests, a caller's atomic()).
            cursor.execute(f"ALTER TABLE {TABLE} DETACH PARTITION {name}")
        else:
            cursor.execute(f"ALTER TABLE {TABLE} DETACH PARTITION {name} CONCURRENTLY")
        cursor.execute(f"DROP TABLE {name}")


def recall_partitions_maintain() -> PartitionReport:
    """The beat's hourly run: drop what retention allows, then make the days ahead."""
    report = PartitionReport()
    report.dropped = recall_partitions_drop_expired()
    report.created = recall_partitions_ensure()
    return report
