"""Recall records: written by the recall itself, or handed off through a Redis stream.

Every recall leaves a record (SPEC §5). Written on the request, that INSERT and its commit
are a third of a recall's cost. With ``MEMORY_RECALL_RECORD_STREAM_URL`` (PostgreSQL only)
the request hands the record to a Redis stream instead (one ``XADD``) and a drain writes
them to the database in batches, one multi-row statement per batch:

* **Nothing lost on a crash.** The response is sent only after Redis has the record (the
  recall reads Redis's answer to its ``XADD`` before it returns). A
  drain acknowledges entries (``XACK``, then ``XDEL``) only after its batch committed; a
  drain that dies before that leaves them pending in the consumer group, and the next
  drain takes them over once they have been idle ``RECLAIM_IDLE_MS``. Redis itself keeps
  them as durably as its persistence is configured (``appendonly yes``; with
  ``appendfsync everysec`` a crash of the Redis server can lose up to a second of them).
  If Redis cannot be reached the record is written directly, as without the stream.
* **Never twice.** The id is the recall's ``recall_id``, known before the record is
  written: each process reserves ids from the table's sequence in blocks
  (``RECALL_ID_BLOCK``, one round trip per block). A record delivered again (its batch
  committed, the drain died before the ack) meets the unique index on
  ``(id, created_at)`` and is skipped.
* **Nothing resurrected.** A batch skips records whose tenant has been deleted meanwhile
  and records already past the retention (their day's partition may be gone). An erasure
  writes out everything still in the stream first (``recall_records_flush``) so its rewrite
  of the subject's recall queries sees every recall made before it.

What a reader sees: a recall's record appears when the next drain has run (the drain
process blocks on the stream, and after a batch that did not fill waits 50 ms for the next
to gather, so within about that; the beat's backstop runs every few seconds). The one page
that looks a record up by the id a recall just returned flushes the stream when the id is
not there yet.

Drains run as ``manage.py recall_records_drain --follow`` (a process of its own, next to the
Celery worker) and from the beat (``reviews.tasks.drain_recall_records``). Any number may
run at once: the consumer group gives each entry to one of them.
"""
from __future__ import annotations

import json
import logging
import os
import socket
import threading
import time
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone as dt_timezone

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry
from django.conf import settings
from django.db import DataError, IntegrityError, connection, transaction
from django.utils import timezone

from ..errors import Unavailable
from ..models import RecallRecord, Tenant
from ..transactions import in_transaction
from .partitions import no_partition_for_row, recall_partition_for

log = logging.getLogger(__name__)

TABLE = RecallRecord._meta.db_table
SEQUENCE = TABLE + "_id_seq"
COLUMNS = ("tenant_id", "user_id", "caller", "query", "facts", "created_at")
# Ids reserved per round trip to the sequence; a process that stops leaves the rest of its
# block unused (a gap in the ids, as a rolled-back INSERT leaves one).
RECALL_ID_BLOCK = 200
GROUP = "recall-records"
BIGINT_END = 2**63  # the ids' column type, bigint, holds less than this
# A batch per statement: large enough that a statement's fixed cost is spread thin, small
# enough that a batch is a few hundred kilobytes.
DRAIN_BATCH = 500
# An entry delivered to a drain and not acknowledged this long is taken over by another:
# that drain has died (or is stuck), and its batch never committed or was never acked.
RECLAIM_IDLE_MS = 30_000
# A consumer with nothing pending that has not read for this long is forgotten.
CONSUMER_FORGET_MS = 3_600_000


def handed_off() -> bool:
    """Are recall records handed to the stream (configured, and on PostgreSQL)?"""
    return bool(settings.MEMORY_RECALL_RECORD_STREAM_URL) and connection.vendor == "postgresql"


def recall_record_write(record: RecallRecord) -> None:
    """Give ``record`` its id and see that it is written: now, or by the next drain.

    Handed to the stream, the record is settled before this returns: Redis has it (its
    answer to the ``XADD`` read), or it was written directly. A broken connection (Redis
    restarted since it was last used) is replaced and the command sent once more
    (``_stream()``'s retry policy); a copy the first attempt may have delivered is
    written once all the same: the id is fixed, and the drain skips an id written already.
    """
    if not handed_off():
        _insert(record)
        return
    record.pk = _ids.take()
    payload = _encode(record)
    record._state.adding = False
    try:
        _stream().client.xadd(settings.MEMORY_RECALL_RECORD_STREAM_KEY, {"r": payload})
    except redis.RedisError as error:
        _write_directly(record, error)


def _write_directly(record: RecallRecord, error: redis.RedisError) -> None:
    log.warning("recall records: the stream did not take record %s (%s); written directly", record.pk, error)
    _insert(record)


# --- Writing one record ---------------------------------------------------------------------


def _insert(record: RecallRecord) -> None:
    """One INSERT written out: on the hot path the ORM's save() cost a third of a recall.

    With ``MEMORY_RECALL_ASYNC_COMMIT`` the statement itself turns off
    ``synchronous_commit`` for its own transaction (``set_config(..., true)`` in a CTE),
    so the commit does not wait for the WAL flush and no extra round trip is spent on a
    ``SET``. That is done only in autocommit, where the statement is its whole
    transaction: inside an atomic block it would also weaken every other write of that
    transaction, so there the record is committed durably with the rest. A record that
    already has its id (reserved for the stream) is written with it.
    """
    columns = (("id",) if record.pk else ()) + COLUMNS
    values = ([record.pk] if record.pk else []) + [
        record.tenant_id,
        record.user_id,
        record.caller,
        json.dumps(record.query, ensure_ascii=False),
        json.dumps(record.facts),
        connection.ops.adapt_datetimefield_value(record.created_at),
    ]
    if settings.MEMORY_RECALL_ASYNC_COMMIT and connection.vendor == "postgresql" and not in_transaction():
        types = (("%s::bigint",) if record.pk else ()) + (
            "%s::bigint", "%s", "%s", "%s::jsonb", "%s::jsonb", "%s::timestamptz")
        sql = (
            "WITH commit_mode AS (SELECT set_config('synchronous_commit', 'off', true)) "
            # Typed: unlike VALUES, a SELECT list does not take its types from the columns.
            f"INSERT INTO {TABLE} ({', '.join(columns)}) SELECT {', '.join(types)} FROM commit_mode RETURNING id"
        )
    else:
        sql = f"INSERT INTO {TABLE} ({', '.join(columns)}) VALUES ({', '.join(['%s'] * len(columns))}) RETURNING id"
    with connection.cursor() as cursor:
        try:
            cursor.execute(sql, values)
        except IntegrityError as error:
            # The record's day has no partition (the beat, which makes them a week ahead,
            # has not run for that long): make it and write again. Inside a transaction the
            # failed statement has aborted it, so there the error stands.
            if in_transaction() or not no_partition_for_row(error):
                raise
            recall_partition_for(record.created_at)
            cursor.execute(sql, values)
        record.pk = cursor.fetchone()[0]
    record._state.adding = False


class _IdBlock:
    """Recall ids reserved from the table's sequence, handed out one by one (thread-safe:
    a gthread worker serves several recalls at once)."""

    def __init__(self):
        self._lock = threading.Lock()
        self._free: list[int] = []
        self._pid = os.getpid()

    def take(self) -> int:
        with self._lock:
            if self._pid != os.getpid():  # forked: the parent's block is the parent's
                self._free, self._pid = [], os.getpid()
            if not self._free:
                with connection.cursor() as cursor:
                    cursor.execute("SELECT nextval(%s) FROM generate_series(1, %s)", [SEQUENCE, RECALL_ID_BLOCK])
                    self._free = [row[0] for row in cursor.fetchall()][::-1]
            return self._free.pop()


_ids = _IdBlock()


# --- The stream -------------------------------------------------------------------------------


@dataclass
class _Connection:
    url: str
    pid: int
    client: redis.Redis


_connection: _Connection | None = None


def _stream() -> _Connection:
    """This process's Redis client (made after a fork, and again if the setting changed):
    the recalls' hand-off, the drain's, the flush's and the health check's.

    One retry at once, not redis-py's default of several with growing pauses: a recall
    waits on this, and with Redis out of reach it writes its record itself instead.
    """
    global _connection
    url = settings.MEMORY_RECALL_RECORD_STREAM_URL
    if _connection is None or _connection.pid != os.getpid() or _connection.url != url:
        client = redis.Redis.from_url(url, socket_timeout=2, socket_connect_timeout=2, health_check_interval=30,
                                      retry=Retry(NoBackoff(), retries=1))
        _connection = _Connection(url, os.getpid(), client)
    return _connection


# Made once: json.dumps with options makes an encoder per call.
_RECORD_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))


def _encode(record: RecallRecord) -> bytes:
    return _RECORD_ENCODER.encode(
        {"id": record.pk, "tenant_id": record.tenant_id, "user_id": record.user_id, "caller": record.caller,
         "query": record.query, "facts": record.facts, "created_at": record.created_at.isoformat()}
    ).encode()


# --- Draining ---------------------------------------------------------------------------------


@dataclass
class DrainReport:
    written: int = 0
    skipped: int = 0  # already written (delivered again), tenant gone, or past the retention
    unreadable: int = 0  # moved to the dead-letter stream
    batches: int = 0
    taken: int = 0  # stream entries taken in (a batch that took DRAIN_BATCH left more behind)

    def add(self, other: DrainReport) -> None:
        self.written += other.written
        self.skipped += other.skipped
        self.unreadable += other.unreadable
        self.batches += other.batches
        self.taken += other.taken


def recall_records_drain(*, block_ms: int | None = None, take_over_all: bool = False,
                         max_batches: int | None = None, take_over: bool = True) -> DrainReport:
    """Write what the stream holds to the database, a batch per statement, until it is empty
    (or ``max_batches`` were written).

    ``take_over_all`` also takes entries other drains hold and have not acknowledged,
    however recently (an erasure must not miss one); otherwise only those idle for
    ``RECLAIM_IDLE_MS``, and none with ``take_over=False`` (the follow mode looks for them
    only now and then: asking before every batch is a round trip to Redis per batch).
    ``block_ms`` waits that long for the first entry (the follow mode).
    """
    report = DrainReport()
    if not handed_off():
        return report
    client, key = _stream().client, settings.MEMORY_RECALL_RECORD_STREAM_KEY
    consumer = f"{socket.gethostname()}:{os.getpid()}"
    _ensure_group(client, key)
    block = block_ms
    # Inside a transaction the acks wait for its commit, so what this drain wrote is still
    # pending meanwhile: taken over again, it would come round for ever.
    done: set[bytes] = set()
    while max_batches is None or report.batches < max_batches:
        entries = []
        if take_over or take_over_all:
            claimed = client.xautoclaim(key, GROUP, consumer, min_idle_time=0 if take_over_all else RECLAIM_IDLE_MS,
                                        start_id="0-0", count=DRAIN_BATCH)
            entries = [entry for entry in claimed[1] if entry[0] not in done]
        if not entries:
            answer = client.xreadgroup(GROUP, consumer, {key: ">"}, count=DRAIN_BATCH, block=block)
            entries = answer[0][1] if answer else []
        if not entries:
            break
        done.update(entry_id for entry_id, _ in entries)
        report.add(_write_batch(client, key, entries))
        report.taken += len(entries)
        block = None  # once something came, drain what is there and stop when it is empty
    _forget_idle_consumers(client, key, keep=consumer)
    return report


def recall_records_flush() -> DrainReport:
    """Everything handed off so far is in the database when this returns (erasure).

    With Redis out of reach this refuses rather than carry on: records still in the stream
    would be written later, after an erasure that never saw them."""
    try:
        return recall_records_drain(take_over_all=True)
    except redis.RedisError as error:
        log.error("recall records: the stream cannot be flushed (%s)", error)
        raise Unavailable(
            "Recall records waiting to be written cannot be reached (Redis is down); nothing was changed. "
            "Try again once it is back."
        ) from error


def _ensure_group(client: redis.Redis, key: str) -> None:
    try:
        client.xgroup_create(key, GROUP, id="0", mkstream=True)
    except redis.ResponseError as error:
        if "BUSYGROUP" not in str(error):
            raise


def _write_batch(client: redis.Redis, key: str, entries: list) -> DrainReport:
    report = DrainReport(batches=1)
    # Entries deleted from the stream while pending come with no fields (Redis 6.2 still
    # lists them): nothing to write.
    sent = [fields.get(b"r") for _, fields in entries if fields]
    written = _insert_as_sent(sent) if None not in sent else None
    unreadable = []
    if written is not None:
        report.written, report.skipped = written, len(sent) - written
    else:
        rows = []
        for entry_id, fields in entries:
            if not fields:
                continue
            try:
                rows.append(_decode(fields))
            except (KeyError, TypeError, ValueError) as error:
                log.error("recall records: entry %s cannot be read (%s); kept in %s:dead", entry_id, error, key)
                unreadable.append((entry_id, fields))
        if rows:
            report.written = _insert_many(rows)
            report.skipped = len(rows) - report.written
    report.unreadable = len(unreadable)
    ids = [entry_id for entry_id, _ in entries]

    def acknowledge():
        with client.pipeline(transaction=True) as pipe:
            for entry_id, fields in unreadable:
                pipe.xadd(f"{key}:dead", fields)
            pipe.xack(key, GROUP, *ids)
            pipe.xdel(key, *ids)
            pipe.execute()

    # After the commit: inside a caller's transaction (an erasure) that is when it commits;
    # in autocommit the statement has committed already and this runs at once.
    transaction.on_commit(acknowledge)
    return report


def _decode(fields: dict) -> dict:
    """One stream entry as a row of the batch, its types checked: a value of the wrong type
    raises here and moves the entry to the dead-letter stream, where in the statement it
    would fail the whole batch."""
    data = json.loads(fields[b"r"])
    created_at = datetime.fromisoformat(data["created_at"])
    if created_at.tzinfo is None:
        raise ValueError("created_at has no time zone")
    if not isinstance(data["query"], dict) or not isinstance(data["facts"], list):
        raise TypeError("query must be an object and facts a list")
    record_id, tenant_id = int(data["id"]), int(data["tenant_id"])
    if not (0 < record_id < BIGINT_END and 0 < tenant_id < BIGINT_END):
        raise ValueError("an id out of range")
    return {"id": record_id, "tenant_id": tenant_id, "user_id": str(data["user_id"]),
            "caller": str(data["caller"]), "query": data["query"], "facts": data["facts"], "created_at": created_at}


# An ISO 8601 moment with its offset, as ``_encode`` writes it: the statement reads no
# other ``created_at`` (a time without a zone would silently be taken as UTC).
_AWARE_MOMENT = r"^\d{4}-\d\d-\d\d[T ]\d\d:\d\d(:\d\d(\.\d+)?)?([zZ]|[+-]\d\d(:?\d\d){0,2})$"

# The batch arrives as one JSON array that PostgreSQL unpacks (jsonb_to_recordset): passed
# as seven arrays instead, psycopg escaped every quote of every record's JSON in Python
# (a regular expression per element), which cost the drain more CPU than the rest of it.
# Records past the retention and those of deleted tenants are skipped. A record that
# ``_decode`` would refuse (a key missing, a value of the wrong type, a time without a
# zone) makes the statement fail instead: a missing or refused value reaches a NOT NULL
# column as NULL (the guards let NULLs through to it), a value of the wrong type fails
# its cast.
_INSERT_MANY = f"""
    INSERT INTO {TABLE} (id, {', '.join(COLUMNS)})
    SELECT r.id, r.tenant_id, r.user_id, r.caller, r.query, r.facts, r.created_at
    FROM (
        SELECT s.id, s.tenant_id, s.user_id, s.caller,
               CASE WHEN jsonb_typeof(s.query) = 'object' THEN s.query END AS query,
               CASE WHEN jsonb_typeof(s.facts) = 'array' THEN s.facts END AS facts,
               CASE WHEN s.created_at ~ '{_AWARE_MOMENT}' THEN s.created_at::timestamptz END AS created_at
        FROM jsonb_to_recordset(%s::jsonb)
             AS s(id bigint, tenant_id bigint, user_id text, caller text, query jsonb, facts jsonb, created_at text)
    ) r
    WHERE (r.created_at IS NULL OR r.created_at >= %s)
      AND (r.tenant_id IS NULL OR EXISTS (SELECT 1 FROM {Tenant._meta.db_table} t WHERE t.id = r.tenant_id))
    ON CONFLICT (id, created_at) DO NOTHING
"""


def _insert_as_sent(payloads: list[bytes]) -> int | None:
    """The batch written from the entries' JSON as the recalls sent it: how many rows it
    wrote, or None when PostgreSQL refused it (an entry not of ``_encode``'s making, a day
    without a partition), for ``_insert_many`` to sort out entry by entry.

    Decoding each entry and encoding it again, only to hand PostgreSQL the JSON it came
    as, cost the drain 14-28 µs a record of CPU, about as much as the rest of its Python.
    """
    if not payloads:
        return 0
    try:
        batch = "[" + ",".join(payload.decode() for payload in payloads) + "]"
        return _execute_insert_many(batch)
    except (UnicodeDecodeError, DataError, IntegrityError):
        return None


def _insert_many(rows: list[dict]) -> int:
    """One statement for the batch of checked rows; returns how many it wrote. A day
    without a partition gets one (the beat, which makes them a week ahead, has not run for
    that long) and the batch is written again."""
    batch = _RECORD_ENCODER.encode([{**row, "created_at": row["created_at"].isoformat()} for row in rows])
    try:
        return _execute_insert_many(batch)
    except IntegrityError as error:
        if not no_partition_for_row(error):
            raise
    one_per_day = {row["created_at"].astimezone(dt_timezone.utc).date(): row["created_at"] for row in rows}
    for moment in one_per_day.values():
        recall_partition_for(moment)
    return _execute_insert_many(batch)


def _execute_insert_many(batch: str) -> int:
    cutoff = timezone.now() - timedelta(days=settings.MEMORY_RECALL_RETENTION_DAYS)
    # In a transaction of its own, or a savepoint of the caller's (an erasure's flush): a
    # refused batch leaves the caller's transaction usable.
    with connection.cursor() as cursor:
        with transaction.atomic():
            cursor.execute(_INSERT_MANY, [batch, cutoff])
        return cursor.rowcount


_forgotten_at = 0.0


def _forget_idle_consumers(client: redis.Redis, key: str, *, keep: str) -> None:
    """Once a minute per process: every drain process leaves a consumer name in the group."""
    global _forgotten_at
    if time.monotonic() - _forgotten_at < 60:
        return
    _forgotten_at = time.monotonic()
    for consumer in client.xinfo_consumers(key, GROUP):
        name = consumer["name"].decode() if isinstance(consumer["name"], bytes) else consumer["name"]
        if name != keep and not consumer["pending"] and consumer["idle"] >= CONSUMER_FORGET_MS:
            client.xgroup_delconsumer(key, GROUP, name)


def recall_record_find(*, tenant: Tenant, pk: int) -> RecallRecord | None:
    """The tenant's record ``pk``, read on the primary; one still in the stream is written
    out first (a caller looks up the id its recall has just returned)."""
    record = RecallRecord.objects.filter(tenant=tenant, pk=pk).first()
    if record is None and handed_off():
        recall_records_flush()
        record = RecallRecord.objects.filter(tenant=tenant, pk=pk).first()
    return record


def recall_records_waiting() -> int:
    """How many records the stream holds that are not written yet (0 without a stream)."""
    if not handed_off():
        return 0
    return _stream().client.xlen(settings.MEMORY_RECALL_RECORD_STREAM_KEY)
