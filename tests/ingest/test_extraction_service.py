"""message_extract and friends: at most once, in order, retried with a ceiling, swept, re-run."""
import threading
from datetime import timedelta

import pytest
from django.conf import settings
from django.db import connection
from django.utils import timezone

from memory_portal.celery import app
from reviews.extraction import ExtractionResult, ExtractorRefused, ExtractorUnavailable
from reviews.extraction.rules import RuleExtractor
from reviews.models import AuditEvent, Candidate, ExtractionStatus, Fact, Message, Subject
from reviews.services.ingest import (
    extraction_retry_delay,
    extractions_drain,
    extractions_rerun,
    message_extract,
    message_extract_until_settled,
    pending_extractions_sweep,
)
from tests.ingest.helpers import ACTOR, ingest, message
from tests.worker.brokers import celery_using_broker

pytestmark = pytest.mark.django_db


def row(message_id):
    return Message.objects.get(message_id=message_id)


class Failing:
    """An extractor whose model server is down (or refuses): the service's bookkeeping is under test."""

    name, prompt_version = "failing", "v0"

    def __init__(self, error=ExtractorUnavailable("model server error: HTTP 503")):
        self.error = error
        self.calls = 0

    def extract(self, context):
        self.calls += 1
        raise self.error


class SlowRules(RuleExtractor):
    """The real rule extractor, slowed down so two runs overlap."""

    def __init__(self, barrier):
        self.barrier = barrier

    def extract(self, context) -> ExtractionResult:
        result = super().extract(context)
        self.barrier.wait(timeout=10)  # both runs have extracted before either commits
        return result


def test_it_creates_candidates_once_however_often_it_runs(tenant):
    ingest(tenant, message("m-1", "我负责 Flask 迁移项目，项目使用 MySQL。"))
    pk = row("m-1").pk

    first = message_extract(message_pk=pk)
    second = message_extract(message_pk=pk)

    assert (first.status, first.candidates) == ("done", 2)
    assert second.status == "not_pending"
    assert Candidate.objects.count() == 2
    event = AuditEvent.objects.get(tenant_id=tenant.pk, action="message.extracted")
    assert event.payload.after["candidates"] == sorted(Candidate.objects.values_list("pk", flat=True))
    assert event.payload.after["extractor"] == "rules"


@pytest.mark.django_db(transaction=True)
def test_two_concurrent_runs_create_one_set_of_candidates(tenant):
    """Both pass the status check and extract; the claim in the database lets one commit."""
    if connection.vendor != "postgresql":
        pytest.skip("SQLite's in-memory test database refuses a second writer instead of making it wait")
    with celery_using_broker("memory://"):  # queued in memory, where no worker takes it
        ingest(tenant, message("m-1", "我负责 Flask 迁移项目，项目使用 MySQL。"))
        extractions_drain()
    pk = row("m-1").pk
    barrier = threading.Barrier(2)
    outcomes = []

    def run():
        try:
            outcomes.append(message_extract(message_pk=pk, extractor=SlowRules(barrier)).status)
        except Exception as exc:  # noqa: BLE001 - reported by the assertion below
            outcomes.append(repr(exc))
        finally:
            connection.close()

    threads = [threading.Thread(target=run) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(20)

    assert sorted(outcomes) == ["done", "not_pending"]
    assert Candidate.objects.count() == 2
    assert row("m-1").extraction_attempts == 1


def test_earlier_messages_of_the_subject_go_first(tenant):
    """A worker that picks up the correction first still meets the value it corrects."""
    now = timezone.now()
    ingest(tenant, message("m-1", "我负责 Flask 迁移项目，项目使用 MySQL。", created_at=now - timedelta(minutes=5)))
    ingest(tenant, message("m-2", "更新一下：Flask 迁移项目现在迁到 PostgreSQL 了。", thread_id="t-2", created_at=now))

    message_extract(message_pk=row("m-2").pk)

    assert {row("m-1").extraction_status, row("m-2").extraction_status} == {ExtractionStatus.DONE}
    correction = Candidate.objects.get(source_message_id="m-2")
    assert (correction.status, correction.reason) == ("auto_approved", "correction")
    assert list(Fact.objects.get(field="database").versions.values_list("value", flat=True)) == ["MySQL", "PostgreSQL"]


def test_a_subject_who_paused_after_ingest_gets_nothing_new(tenant):
    ingest(tenant, message("m-1", "我叫 Alice。"))
    Subject.objects.filter(user_id="alice").update(collection_paused=True)

    assert message_extract(message_pk=row("m-1").pk).status == "skipped"
    assert row("m-1").extraction_status == ExtractionStatus.SKIPPED
    assert not Candidate.objects.exists()


def test_a_message_erased_before_extraction_is_simply_gone(tenant):
    ingest(tenant, message("m-1", "我叫 Alice。"))
    pk = row("m-1").pk
    Message.objects.filter(pk=pk).delete()

    assert message_extract(message_pk=pk).status == "missing"


def test_transient_failures_are_retried_with_backoff_up_to_the_ceiling(tenant, settings):
    settings.MEMORY_EXTRACTION_MAX_ATTEMPTS = 4
    ingest(tenant, message("m-1", "我叫 Alice。"))
    failing, delays = Failing(), []

    outcome = message_extract_until_settled(message_pk=row("m-1").pk, extractor=failing, sleep=delays.append)

    assert outcome.status == "failed" and failing.calls == 4
    assert len(delays) == 3 and delays[0] < delays[1] < delays[2]
    failed = row("m-1")
    assert (failed.extraction_status, failed.extraction_attempts) == (ExtractionStatus.FAILED, 4)
    assert failed.extraction_error == "model server error: HTTP 503"
    assert AuditEvent.objects.filter(tenant_id=tenant.pk, action="message.extraction_failed").count() == 1


def test_a_retry_is_scheduled_on_the_row(tenant):
    ingest(tenant, message("m-1", "我叫 Alice。"))

    outcome = message_extract(message_pk=row("m-1").pk, extractor=Failing())

    waiting = row("m-1")
    assert outcome.status == "pending" and outcome.retry_in > 0
    assert waiting.extraction_status == ExtractionStatus.PENDING and waiting.extraction_attempts == 1
    assert waiting.extraction_due_at > timezone.now()


def test_a_refusal_is_not_retried(tenant):
    ingest(tenant, message("m-1", "我叫 Alice。"))

    outcome = message_extract(message_pk=row("m-1").pk, extractor=Failing(ExtractorRefused("HTTP 401")))

    assert outcome.status == "failed" and row("m-1").extraction_attempts == 1


def test_the_retry_delay_grows_and_is_capped(settings):
    settings.MEMORY_EXTRACTION_RETRY_BASE_SECONDS = 10
    settings.MEMORY_EXTRACTION_RETRY_MAX_SECONDS = 60
    delays = [extraction_retry_delay(attempt) for attempt in range(1, 7)]
    assert 8 <= delays[0] <= 12 and 16 <= delays[1] <= 24 and 32 <= delays[2] <= 48
    assert max(delays) <= 72  # the cap, with jitter


def test_rerun_sends_failed_messages_round_again_and_leaves_done_ones(tenant, django_capture_on_commit_callbacks):
    ingest(tenant, message("m-1", "我叫 Alice。"), message("m-2", "我住在广州。"))
    message_extract_until_settled(message_pk=row("m-1").pk, extractor=Failing(ExtractorRefused("HTTP 401")))
    message_extract(message_pk=row("m-2").pk)

    with django_capture_on_commit_callbacks(execute=True):
        count = extractions_rerun(messages=Message.objects.all(), actor=ACTOR)

    assert count == 1
    assert row("m-1").extraction_status == ExtractionStatus.DONE
    assert Candidate.objects.filter(source_message_id="m-2").count() == 1  # not extracted twice
    event = AuditEvent.objects.get(tenant_id=tenant.pk, action="message.extraction_rerun")
    assert event.payload.before["status"] == "failed" and event.payload.before["error"] == "HTTP 401"


class TestSweep:
    def test_it_sends_rows_the_broker_lost_and_leaves_fresh_or_waiting_ones(self, tenant, settings):
        settings.MEMORY_EXTRACTION_SWEEP_GRACE_SECONDS = 60
        ingest(tenant, *(message(f"m-{i}", "我叫 Alice。", user_id=f"u{i}") for i in range(1, 5)))
        now = timezone.now()
        Message.objects.filter(message_id="m-1").update(extraction_due_at=None)  # the publish failed
        Message.objects.filter(message_id="m-2").update(extraction_due_at=now - timedelta(minutes=5))  # lost
        Message.objects.filter(message_id="m-3").update(extraction_due_at=now + timedelta(minutes=5))  # retry later
        # m-4: just ingested, its task is on its way.

        assert pending_extractions_sweep() == 2

        statuses = dict(Message.objects.values_list("message_id", "extraction_status"))
        assert statuses == {"m-1": "done", "m-2": "done", "m-3": "pending", "m-4": "pending"}

    def test_it_is_the_task_the_beat_runs(self):
        entry = settings.CELERY_BEAT_SCHEDULE["extract-pending-sweep"]
        assert entry["task"] == "reviews.tasks.sweep_pending_extractions"
        assert entry["task"] in app.tasks


def test_a_whole_batch_is_extracted_in_order_on_the_default(tenant, django_capture_on_commit_callbacks):
    ingest(
        tenant,
        message("m-1", "我负责 Flask 迁移项目，项目使用 MySQL。", created_at=timezone.now() - timedelta(seconds=2)),
        message("m-2", "更新一下：Flask 迁移项目现在迁到 PostgreSQL 了。"),
        capture=django_capture_on_commit_callbacks,
    )

    assert Fact.objects.get(field="database").value == "PostgreSQL"
    # Each message extracted at its first attempt: no retry, no backoff wait.
    assert set(Message.objects.values_list("extraction_attempts", flat=True)) == {1}


def test_an_unexpected_error_fails_visibly_instead_of_looping(tenant):
    class Broken:
        name, prompt_version = "broken", "v0"

        def extract(self, context):
            raise KeyError("a bug")

    ingest(tenant, message("m-1", "我叫 Alice。"))

    outcome = message_extract(message_pk=row("m-1").pk, extractor=Broken())

    assert outcome.status == "failed"
    assert row("m-1").extraction_error == "internal error: KeyError"
