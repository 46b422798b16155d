"""One bad model answer never stalls the rest, under Celery with one worker process.

The failing message's task schedules its retry with the broker (a countdown) and the
worker goes on; a later message of the same subject does not ask the model again about
the failing one on its way (its catch-up skips a message with a failed attempt on record).
"""

import pytest
from django.utils import timezone

from reviews.models import ExtractionStatus, Message
from reviews.services.ingest import extractions_drain
from tests.extraction.fake_openai import FakeOpenAI, facts, message_of, raw, slow
from tests.worker.brokers import celery_using_broker
from tests.worker.conftest import wait_for

URL = "/api/v1/messages"
FAILING = "请帮我记住这个：我们的工单项目很复杂。"
GOOD = ["我住在广州。", "以后回答尽量简洁。", "我叫 Alice。"]


@pytest.fixture
def fake_llm():
    server = FakeOpenAI().start()
    yield server
    server.stop()


def post(client, message_id, content, second):
    body = {"messages": [{"id": message_id, "thread_id": "t-1", "user_id": "alice", "role": "user",
                          "content": content, "created_at": f"2026-11-01T09:00:{second:02d}Z"}]}
    assert client.post_json(URL, body).status_code == 202


@pytest.mark.parametrize("failure", ["malformed", "timeout"])
def test_good_messages_pass_a_failing_one_on_a_single_worker(failure, redis_server, celery_worker, fake_llm,
                                                              ingest_client):
    broker, _ = redis_server()
    celery_worker(broker, MEMORY_EXTRACTOR="llm", OPENAI_API_KEY="test-key-not-a-secret", OPENAI_BASE_URL=fake_llm.url,
                  MEMORY_EXTRACTOR_HTTP_RETRIES=0, MEMORY_EXTRACTOR_TIMEOUT=1, MEMORY_EXTRACTION_RETRY_BASE_SECONDS=30,
                  MEMORY_EXTRACTION_RETRY_MAX_SECONDS=60)
    bad_answer = raw("{not json") if failure == "malformed" else slow(3.0, facts())
    fake_llm.responder = lambda message: bad_answer if FAILING in message else facts()

    with celery_using_broker(broker):
        post(ingest_client, "m-bad", FAILING, 0)
        for index, content in enumerate(GOOD, start=1):
            post(ingest_client, f"m-{index}", content, index)
        extractions_drain()  # the tasks are published

        def good_ones_done():
            return set(Message.objects.filter(message_id__in=["m-1", "m-2", "m-3"])
                       .values_list("extraction_status", flat=True)) == {ExtractionStatus.DONE}

        # Polled for less than the 30 s backoff, so waiting the failing one out cannot pass.
        wait_for(good_ones_done, 25, "the good messages to be extracted")

    bad = Message.objects.get(message_id="m-bad")
    assert (bad.extraction_status, bad.extraction_attempts) == (ExtractionStatus.PENDING, 1)
    assert bad.extraction_due_at > timezone.now()  # its retry is still to come: nobody waited for it
    assert sum(FAILING in message_of(request.body) for request in fake_llm.requests) == 1
