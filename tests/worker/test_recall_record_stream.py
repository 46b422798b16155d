"""Recall records handed off through a Redis stream (reviews/recall/records.py).

A real Redis per test, the real drain and the real partitioned table: a recall's record
arrives once, under the id the recall returned; nothing is lost when a drain dies before
or after its batch commits; nothing is written twice; tenants stay apart; a record of a
deleted tenant or past the retention is not resurrected; an erasure sees records that were
still in the stream.
"""
import json
import logging
import os
import signal
import subprocess
import sys
import threading
from datetime import datetime, timedelta

import pytest
import redis
from django.core.management import call_command
from django.db import connection
from django.utils import timezone

from reviews.models import RecallRecord, Scope, Tenant
from reviews.recall.query import RecallQuery
from reviews.recall import records as recall_records
from reviews.services.erasure import subject_erase
from reviews.recall.service import recall_perform
from reviews.recall.partitions import partitions
from reviews.recall.records import GROUP, recall_records_drain
from reviews.tasks import drain_recall_records
from tests.recall.conftest import AGENT
from tests.worker.brokers import unused_port
from tests.worker.conftest import BASE_DIR, wait_for

URL = "/api/v1/recall"
KEY = "test:recall-records"
pytestmark = [
    pytest.mark.skipif(connection.vendor != "postgresql", reason="the hand-off is for PostgreSQL"),
    # Committed for real: the drain acknowledges after its commit, as in production.
    pytest.mark.django_db(transaction=True),
]


@pytest.fixture
def stream(redis_server, settings):
    """The hand-off on, to a throwaway Redis: returns a client of that Redis."""
    url, _ = redis_server()
    settings.MEMORY_RECALL_RECORD_STREAM_URL = url
    settings.MEMORY_RECALL_RECORD_STREAM_KEY = KEY
    return redis.Redis.from_url(url)


@pytest.fixture
def memory(tenant, other_tenant, publish):
    publish(tenant, "u1", field="preference", value="green tea")
    publish(other_tenant, "u1", field="preference", value="black coffee")


@pytest.fixture
def recall_client(tenant, make_client):
    return make_client(tenant, [Scope.RECALL])


def recall(client, **params):
    response = client.get(URL, {"user_id": "u1", **params})
    assert response.status_code == 200, response.content
    return response.json()


def pending(client) -> int:
    return client.xpending(KEY, GROUP)["pending"]


def test_a_recall_hands_its_record_over_and_the_drain_writes_it_once(stream, memory, recall_client):
    body = recall(recall_client, q="tea")

    assert not RecallRecord.objects.filter(pk=body["recall_id"]).exists()
    assert stream.xlen(KEY) == 1

    report = recall_records_drain()

    assert (report.written, report.skipped, report.batches) == (1, 0, 1)
    record = RecallRecord.objects.get(pk=body["recall_id"])
    assert record.tenant_id == recall_client.key.tenant_id and record.user_id == "u1"
    assert record.caller == f"api_key:{recall_client.key.prefix}"
    assert record.query["q"] == "tea"
    assert record.facts == [{"id": fact["id"], "version": fact["version"]} for fact in body["facts"]]
    assert (stream.xlen(KEY), pending(stream)) == (0, 0)  # acknowledged and deleted
    assert recall_records_drain().written == 0


def test_the_answer_is_the_same_with_or_without_the_stream(memory, recall_client, redis_server, settings):
    direct = recall(recall_client, q="tea")
    settings.MEMORY_RECALL_RECORD_STREAM_URL, _ = redis_server()
    settings.MEMORY_RECALL_RECORD_STREAM_KEY = KEY

    handed = recall(recall_client, q="tea")

    assert handed["facts"] == direct["facts"] and handed["user_id"] == direct["user_id"]
    assert handed["recall_id"] != direct["recall_id"]
    recall_records_drain()
    assert RecallRecord.objects.filter(pk__in=[direct["recall_id"], handed["recall_id"]]).count() == 2


def test_a_drained_record_keeps_its_query_and_time_exactly_as_a_direct_one(
    memory, recall_client, redis_server, settings
):
    """The batch reaches PostgreSQL as one JSON document: text that JSON, an array literal
    or SQL would each have to escape, and CJK, arrive unchanged, and so does the time to
    the microsecond."""
    awkward = '绿茶 "tea" \\ {a,b} NULL \'; 🍵'
    direct = RecallRecord.objects.get(pk=recall(recall_client, q=awkward)["recall_id"])
    url, _ = redis_server()
    settings.MEMORY_RECALL_RECORD_STREAM_URL, settings.MEMORY_RECALL_RECORD_STREAM_KEY = url, KEY
    handed_id = recall(recall_client, q=awkward)["recall_id"]
    [(_, fields)] = redis.Redis.from_url(url).xrange(KEY)
    recalled_at = datetime.fromisoformat(json.loads(fields[b"r"])["created_at"])

    assert recall_records_drain().written == 1

    handed = RecallRecord.objects.get(pk=handed_id)
    assert handed.query == direct.query and handed.query["q"] == awkward
    assert (handed.user_id, handed.caller, handed.facts) == (direct.user_id, direct.caller, direct.facts)
    assert handed.created_at == recalled_at  # to the microsecond


def test_ids_come_from_one_sequence_so_direct_and_handed_off_records_never_collide(
    memory, recall_client, stream, settings
):
    handed = [recall(recall_client)["recall_id"] for _ in range(3)]
    settings.MEMORY_RECALL_RECORD_STREAM_URL = ""
    direct = [recall(recall_client)["recall_id"] for _ in range(3)]

    assert len(set(handed + direct)) == 6


def test_a_drain_that_dies_before_its_commit_leaves_the_records_for_the_next(
    stream, memory, recall_client, monkeypatch
):
    ids = [recall(recall_client)["recall_id"] for _ in range(3)]
    recall_records._ensure_group(stream, KEY)
    # A drain read them and died: delivered to its consumer, never acknowledged.
    stream.xreadgroup(GROUP, "crashed-drain", {KEY: ">"}, count=10)
    assert pending(stream) == 3

    assert recall_records_drain().written == 0  # held by the dead drain, not idle long enough yet
    monkeypatch.setattr(recall_records, "RECLAIM_IDLE_MS", 0)
    report = recall_records_drain()

    assert report.written == 3
    assert sorted(RecallRecord.objects.values_list("pk", flat=True)) == sorted(ids)
    assert (stream.xlen(KEY), pending(stream)) == (0, 0)


def test_follow_passes_without_taking_over_write_new_records_a_batch_at_a_time(
    stream, tenant, memory, recall_client, monkeypatch
):
    """The follow mode reads one batch per pass and looks for other drains' stale entries
    only now and then: a pass without take-over leaves them, a later pass takes them."""
    stale = [recall(recall_client)["recall_id"] for _ in range(2)]
    recall_records._ensure_group(stream, KEY)
    stream.xreadgroup(GROUP, "crashed-drain", {KEY: ">"}, count=10)
    monkeypatch.setattr(recall_records, "RECLAIM_IDLE_MS", 0)
    monkeypatch.setattr(recall_records, "DRAIN_BATCH", 3)
    fresh = [recall(recall_client)["recall_id"] for _ in range(5)]

    first = recall_records_drain(max_batches=1, take_over=False)

    assert (first.batches, first.taken, first.written) == (1, 3, 3)
    assert set(RecallRecord.objects.values_list("pk", flat=True)) == set(fresh[:3])
    assert pending(stream) == 2  # the crashed drain's, left alone
    second = recall_records_drain(max_batches=1, take_over=True)
    assert (second.taken, second.written) == (2, 2)
    assert set(RecallRecord.objects.values_list("pk", flat=True)) == set(fresh[:3] + stale)
    assert recall_records_drain(take_over=False).written == 2
    assert (stream.xlen(KEY), pending(stream)) == (0, 0)


def test_a_drain_that_dies_after_its_commit_writes_nothing_twice(stream, memory, recall_client, monkeypatch):
    ids = [recall(recall_client)["recall_id"] for _ in range(4)]

    def redis_gone(*args, **kwargs):
        raise redis.ConnectionError("Redis went away before the acknowledgement")

    with monkeypatch.context() as patch:
        patch.setattr(redis.Redis, "pipeline", redis_gone)
        with pytest.raises(redis.ConnectionError):
            recall_records_drain()
    assert RecallRecord.objects.count() == 4  # the batch committed
    assert pending(stream) == 4  # and was never acknowledged

    monkeypatch.setattr(recall_records, "RECLAIM_IDLE_MS", 0)
    report = recall_records_drain()

    assert (report.written, report.skipped) == (0, 4)
    assert sorted(RecallRecord.objects.values_list("pk", flat=True)) == sorted(ids)
    assert (stream.xlen(KEY), pending(stream)) == (0, 0)


def test_drains_running_at_once_write_each_record_once(stream, tenant, memory):
    from reviews.recall.query import RecallQuery
    from reviews.recall.service import recall_perform

    ids = [recall_perform(tenant=tenant, query=RecallQuery(user_id="u1"), actor=AGENT, may_see_sensitive=False)[0].pk
           for _ in range(1200)]
    reports, errors = [], []

    def drain():
        try:
            reports.append(recall_records_drain())
        except Exception as error:  # surfaced below: a thread's exception is otherwise lost
            errors.append(error)
        finally:
            connection.close()

    threads = [threading.Thread(target=drain) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)

    assert errors == []
    assert sum(report.written for report in reports) == 1200
    assert sorted(RecallRecord.objects.values_list("pk", flat=True)) == sorted(ids)
    assert stream.xlen(KEY) == 0


def test_records_go_to_their_own_tenant_and_stay_out_of_the_others_pages(
    stream, tenant, other_tenant, memory, make_client, client, auditor
):
    mine = recall(make_client(tenant, [Scope.RECALL]))["recall_id"]
    theirs = recall(make_client(other_tenant, [Scope.RECALL]))["recall_id"]
    recall_records_drain()

    assert RecallRecord.objects.get(pk=mine).tenant_id == tenant.pk
    assert RecallRecord.objects.get(pk=theirs).tenant_id == other_tenant.pk
    client.force_login(auditor)
    assert client.get(f"/audit/recalls/{mine}/").status_code == 200
    assert client.get(f"/audit/recalls/{theirs}/").status_code == 404


def test_the_record_page_finds_a_recall_still_in_the_stream(stream, memory, recall_client, client, auditor):
    recall_id = recall(recall_client)["recall_id"]
    assert not RecallRecord.objects.filter(pk=recall_id).exists()
    client.force_login(auditor)

    response = client.get(f"/audit/recalls/{recall_id}/")

    assert response.status_code == 200
    assert RecallRecord.objects.filter(pk=recall_id).exists()
    assert client.get(f"/audit/recalls/{recall_id + 10_000}/").status_code == 404


def handed_over(stream, *, tenant_id, created_at, record_id=10**12):
    """An entry as a recall would have handed it over."""
    recall_records._ensure_group(stream, KEY)
    stream.xadd(KEY, {"r": json.dumps({"id": record_id, "tenant_id": tenant_id, "user_id": "u1",
                                       "caller": "api_key:x", "query": {}, "facts": [],
                                       "created_at": created_at.isoformat()})})


def test_a_deleted_tenants_records_are_not_resurrected(stream, tenant, memory, make_client):
    kept = recall(make_client(tenant, [Scope.RECALL]))["recall_id"]
    # Recalled, then the tenant was deleted (its records with it) before the drain ran.
    handed_over(stream, tenant_id=Tenant.objects.order_by("-pk").first().pk + 1000, created_at=timezone.now())

    report = recall_records_drain()

    assert (report.written, report.skipped) == (1, 1)
    assert list(RecallRecord.objects.values_list("pk", flat=True)) == [kept]
    assert stream.xlen(KEY) == 0


def test_records_past_the_retention_are_dropped_not_written(stream, tenant, settings):
    settings.MEMORY_RECALL_RETENTION_DAYS = 90
    handed_over(stream, tenant_id=tenant.pk, created_at=timezone.now() - timedelta(days=91))

    report = recall_records_drain()

    assert (report.written, report.skipped) == (0, 1)
    assert not RecallRecord.objects.exists()
    assert stream.xlen(KEY) == 0


def test_a_batch_reaching_days_without_a_partition_makes_them_and_writes_every_record(stream, tenant):
    """The beat makes partitions a week ahead; a batch holding records of days it never
    made (here two such days and today) makes them and writes the whole batch."""
    now = timezone.now()
    days = [now, now + timedelta(days=40), now + timedelta(days=41)]
    for number, moment in enumerate(days):
        handed_over(stream, tenant_id=tenant.pk, created_at=moment, record_id=10**12 + number)
    before = {name for name, _, _ in partitions()}
    try:
        report = recall_records_drain()

        assert (report.written, report.skipped, report.batches) == (3, 0, 1)
        assert sorted(RecallRecord.objects.values_list("created_at", flat=True)) == days
        assert stream.xlen(KEY) == 0
    finally:  # committed for real: other tests expect the usual days only
        with connection.cursor() as cursor:
            for name in {name for name, _, _ in partitions()} - before:
                cursor.execute(f'DROP TABLE "{name}"')


def test_an_unreadable_entry_is_set_aside_and_does_not_block_the_rest(stream, memory, recall_client, caplog):
    recall_records._ensure_group(stream, KEY)
    stream.xadd(KEY, {"r": "{not json"})
    recall_id = recall(recall_client)["recall_id"]

    with caplog.at_level(logging.ERROR, logger="reviews.recall.records"):
        report = recall_records_drain()

    assert (report.written, report.unreadable) == (1, 1)
    assert RecallRecord.objects.filter(pk=recall_id).exists()
    assert stream.xlen(KEY) == 0
    assert [fields[b"r"] for _, fields in stream.xrange(f"{KEY}:dead")] == [b"{not json"]
    assert "cannot be read" in caplog.text


def test_the_recalls_own_entries_are_written_as_sent_without_reading_each(
    stream, memory, recall_client, monkeypatch
):
    """The common batch goes to PostgreSQL as the recalls encoded it: no entry is decoded
    and encoded again in Python."""
    recall_ids = [recall(recall_client, q=f"tea {number}")["recall_id"] for number in range(3)]
    read_one_by_one = []
    decode = recall_records._decode
    monkeypatch.setattr(recall_records, "_decode", lambda fields: read_one_by_one.append(fields) or decode(fields))

    report = recall_records_drain()

    assert (report.written, report.skipped, report.unreadable, report.batches) == (3, 0, 0, 1)
    assert read_one_by_one == []
    assert sorted(RecallRecord.objects.values_list("pk", flat=True)) == sorted(recall_ids)
    assert [record.query["q"] for record in RecallRecord.objects.order_by("pk")] == ["tea 0", "tea 1", "tea 2"]


def _foreign(tenant, changes: dict) -> str:
    """An entry a recall would have written, then changed: ``None`` leaves the key out."""
    entry = {"id": 10**12 + 7, "tenant_id": tenant.pk, "user_id": "u1", "caller": "api_key:x",
             "query": {}, "facts": [], "created_at": timezone.now().isoformat()}
    entry.update(changes)
    return json.dumps({name: value for name, value in entry.items() if value is not None})


@pytest.mark.parametrize(
    "change",
    [
        {"created_at": "2026-12-06T10:00:00"},  # no time zone: would be taken as UTC
        {"created_at": "2026-12-06"},  # a day, not a moment
        {"created_at": "2026-13-45T10:00:00+00:00"},
        {"created_at": 1765015200},
        {"tenant_id": None},  # left out
        {"caller": None},
        {"id": "not a number"},
        {"id": 10**30},
        {"query": "a string"},
        {"facts": {"not": "a list"}},
    ],
    ids=["naive time", "date only", "impossible date", "number for a time", "no tenant", "no caller",
         "text for the id", "id too large", "query not an object", "facts not a list"],
)
def test_an_entry_no_recall_would_write_is_set_aside_and_its_batch_is_written(
    stream, tenant, memory, recall_client, change, caplog
):
    """PostgreSQL refuses the batch as sent; the drain then reads it entry by entry, sets
    the foreign entry aside and writes the others, as before."""
    before = recall(recall_client)["recall_id"]
    stream.xadd(KEY, {"r": _foreign(tenant, change)})
    after = recall(recall_client)["recall_id"]

    with caplog.at_level(logging.ERROR, logger="reviews.recall.records"):
        report = recall_records_drain()

    assert (report.written, report.skipped, report.unreadable) == (2, 0, 1)
    assert sorted(RecallRecord.objects.values_list("pk", flat=True)) == sorted([before, after])
    assert len(stream.xrange(f"{KEY}:dead")) == 1
    assert (stream.xlen(KEY), pending(stream)) == (0, 0)


def test_with_redis_down_the_recall_writes_its_record_itself(memory, recall_client, settings, caplog):
    settings.MEMORY_RECALL_RECORD_STREAM_URL = f"redis://127.0.0.1:{unused_port()}/0"

    with caplog.at_level(logging.WARNING, logger="reviews.recall.records"):
        body = recall(recall_client)

    assert RecallRecord.objects.filter(pk=body["recall_id"]).exists()
    assert "written directly" in caplog.text


def test_the_process_kept_connection_outlives_a_redis_restart_and_a_redis_gone(
    redis_server, memory, recall_client, settings, caplog
):
    """Each process keeps one connection to the stream: a Redis that restarts (the kept
    connection now broken) is reconnected to, and one that stays down makes the recall
    write its record itself, as with no connection at all."""
    url, port = redis_server()
    settings.MEMORY_RECALL_RECORD_STREAM_URL = url
    settings.MEMORY_RECALL_RECORD_STREAM_KEY = KEY
    before_restart = recall(recall_client)["recall_id"]
    redis.Redis.from_url(url).shutdown(nosave=True)
    redis_server(port)

    after_restart = recall(recall_client)["recall_id"]

    assert recall_records_drain().written == 1  # the first record went with the old Redis
    assert RecallRecord.objects.filter(pk=after_restart).exists()
    assert not RecallRecord.objects.filter(pk=before_restart).exists()
    redis.Redis.from_url(url).shutdown(nosave=True)

    with caplog.at_level(logging.WARNING, logger="reviews.recall.records"):
        gone = recall(recall_client)["recall_id"]

    assert RecallRecord.objects.filter(pk=gone).exists()
    assert f"the stream did not take record {gone} (" in caplog.text


@pytest.mark.parametrize("caller", ["the API", "the service"])
def test_a_record_redis_refuses_is_written_by_the_recall_itself(stream, tenant, memory, recall_client, caller, caplog):
    """A refusal (here the key holds something that is not a stream) leaves the record
    written directly, whether the API or another caller of the service (MCP, the mem0
    surface) made the recall."""
    stream.set(KEY, "not a stream")

    with caplog.at_level(logging.WARNING, logger="reviews.recall.records"):
        if caller == "the service":
            recall_id = recall_perform(
                tenant=tenant, query=RecallQuery(user_id="u1"), actor=AGENT, may_see_sensitive=False
            )[0].pk
        else:
            recall_id = recall(recall_client)["recall_id"]

    assert RecallRecord.objects.filter(pk=recall_id, tenant=tenant, user_id="u1").exists()
    assert f"the stream did not take record {recall_id} (WRONGTYPE" in caplog.text


def test_a_record_is_in_the_stream_when_the_recall_returns(stream, tenant, memory):
    record = recall_perform(tenant=tenant, query=RecallQuery(user_id="u1"), actor=AGENT, may_see_sensitive=False)[0]

    assert [json.loads(fields[b"r"])["id"] for _, fields in stream.xrange(KEY)] == [record.pk]
    assert not RecallRecord.objects.filter(pk=record.pk).exists()


def test_an_erasure_rewrites_queries_that_were_still_in_the_stream(stream, tenant, memory, recall_client):
    recall_id = recall(recall_client, q="green tea at home")["recall_id"]

    subject_erase(tenant=tenant, user_id="u1", actor=AGENT)

    assert RecallRecord.objects.get(pk=recall_id).query["q"] == ""
    assert (stream.xlen(KEY), pending(stream)) == (0, 0)  # acknowledged once the erasure committed


def test_the_beat_task_drains(stream, memory, recall_client):
    recall_id = recall(recall_client)["recall_id"]

    assert drain_recall_records() == 1
    assert RecallRecord.objects.filter(pk=recall_id).exists()


def test_the_command_drains_once_and_says_what_it_did(stream, memory, recall_client, capsys):
    recall(recall_client)
    recall(recall_client)

    call_command("recall_records_drain")

    assert "wrote 2 recall records in 1 batches" in capsys.readouterr().out
    assert RecallRecord.objects.count() == 2


def test_the_command_says_when_there_is_nothing_to_drain(settings, capsys):
    settings.MEMORY_RECALL_RECORD_STREAM_URL = ""

    call_command("recall_records_drain")

    assert "nothing to drain" in capsys.readouterr().out


def test_the_follow_process_writes_records_as_they_come_and_stops_on_sigterm(
    stream, memory, recall_client, settings, tmp_path
):
    env = {
        **os.environ,
        "PYTHONPATH": str(BASE_DIR),
        "DJANGO_SETTINGS_MODULE": "memory_portal.settings",
        "DATABASE_URL": "postgres://{USER}@{HOST}:{PORT}/{NAME}".format(**connection.settings_dict),
        "MEMORY_RECALL_RECORD_STREAM_URL": settings.MEMORY_RECALL_RECORD_STREAM_URL,
        "MEMORY_RECALL_RECORD_STREAM_KEY": KEY,
    }
    log = tmp_path / "drain.log"
    process = subprocess.Popen([sys.executable, "manage.py", "recall_records_drain", "--follow"], cwd=BASE_DIR,
                               env=env, stdout=log.open("w"), stderr=subprocess.STDOUT)
    try:
        wait_for(lambda: "draining" in log.read_text() or process.poll() is not None, 30, "the drain to start")
        ids = [recall(recall_client)["recall_id"] for _ in range(5)]
        wait_for(lambda: RecallRecord.objects.filter(pk__in=ids).count() == 5, 15, "the records to be written")
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(15)
    assert process.returncode == 0, log.read_text()
    assert "wrote 5 recall records" in log.read_text()


def test_consumers_of_drains_long_gone_are_forgotten_unless_they_hold_records(
    stream, memory, recall_client, monkeypatch
):
    recall(recall_client)
    recall_records._ensure_group(stream, KEY)
    stream.xreadgroup(GROUP, "gone-holding", {KEY: ">"}, count=1)  # holds the one record
    stream.xreadgroup(GROUP, "gone-empty", {KEY: ">"}, count=1)  # found nothing left
    monkeypatch.setattr(recall_records, "CONSUMER_FORGET_MS", 0)
    monkeypatch.setattr(recall_records, "_forgotten_at", 0.0)

    recall_records_drain()

    names = {consumer["name"].decode() for consumer in stream.xinfo_consumers(KEY, GROUP)}
    assert "gone-empty" not in names and "gone-holding" in names


def test_an_erasure_refuses_while_the_stream_is_out_of_reach_and_changes_nothing(tenant, memory, settings, recall_client):
    from reviews.errors import Unavailable
    from reviews.models import Fact

    settings.MEMORY_RECALL_RECORD_STREAM_URL = f"redis://127.0.0.1:{unused_port()}/0"
    facts_before = Fact.objects.filter(tenant=tenant).count()

    with pytest.raises(Unavailable):
        subject_erase(tenant=tenant, user_id="u1", actor=AGENT)

    assert Fact.objects.filter(tenant=tenant).count() == facts_before
    assert Fact.objects.filter(tenant=tenant, value="green tea").exists()


def test_the_erasure_api_answers_503_in_the_error_shape_while_the_stream_is_out_of_reach(
    tenant, memory, settings, make_client
):
    settings.MEMORY_RECALL_RECORD_STREAM_URL = f"redis://127.0.0.1:{unused_port()}/0"
    admin = make_client(tenant, [Scope.ADMIN])

    response = admin.delete("/api/v1/users/u1/facts")

    assert response.status_code == 503, response.content
    assert response.json()["error"]["code"] == "unavailable"


def test_readiness_reports_the_drains_backlog(stream, memory, recall_client, client):
    recall(recall_client)
    recall(recall_client)

    body = client.get("/readyz").json()

    assert body["checks"]["recall_record_stream"] == "ok"
    assert body["recall_records_waiting"] == 2
    recall_records_drain()
    assert client.get("/readyz").json()["recall_records_waiting"] == 0


def test_readiness_stays_ready_with_the_stream_down_and_says_how_recall_copes(db, settings, client):
    settings.MEMORY_RECALL_RECORD_STREAM_URL = f"redis://127.0.0.1:{unused_port()}/0"

    response = client.get("/readyz")

    assert response.status_code == 200
    assert response.json()["checks"]["recall_record_stream"].startswith("degraded: ConnectionError")
