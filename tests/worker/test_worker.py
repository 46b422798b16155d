"""The durable path with a real Celery worker on a real Redis.

- A worker SIGKILLed in the middle of an extraction loses nothing and, once a worker runs
  again, duplicates nothing (not even when the lost task is delivered again later).
- With the broker unreachable, POST /api/v1/messages still answers 202 at once; after the
  broker is back, the sweep (the beat's task) gets everything extracted.
"""
import threading

import pytest

from reviews.models import Candidate, ExtractionStatus, Message
from reviews.services.ingest import extractions_drain
from reviews.tasks import extract_message, sweep_pending_extractions
from tests.extraction.fake_openai import FakeOpenAI, fact, facts, hold
from tests.worker.brokers import celery_using_broker, publisher_held, unused_port
from tests.worker.conftest import kill_hard, wait_for

URL = "/api/v1/messages"


def send(client, *items, user_id="alice", thread_id="t-1"):
    body = {
        "messages": [
            {"id": mid, "thread_id": thread_id, "user_id": user_id, "role": "user", "content": content,
             "created_at": f"2026-11-01T09:00:{index:02d}Z"}
            for index, (mid, content) in enumerate(items)
        ]
    }
    return client.post_json(URL, body)


def statuses() -> dict[str, str]:
    return dict(Message.objects.values_list("message_id", "extraction_status"))


def everything_done() -> bool:
    return set(statuses().values()) == {ExtractionStatus.DONE}


def remember_the_message(message: str):
    """The model's answer: one preference quoting the whole message."""
    return facts(fact("preference", message, message, confidence=0.9))


@pytest.fixture
def fake_llm():
    server = FakeOpenAI().start()
    yield server
    server.stop()


def test_a_worker_killed_mid_extraction_loses_nothing_and_duplicates_nothing(
    redis_server, celery_worker, fake_llm, ingest_client
):
    broker, _ = redis_server()
    llm_env = {
        "MEMORY_EXTRACTOR": "llm",
        "OPENAI_API_KEY": "test-key-not-a-secret",
        "OPENAI_BASE_URL": fake_llm.url,
        "MEMORY_EXTRACTOR_HTTP_RETRIES": 0,
        "MEMORY_EXTRACTION_SWEEP_GRACE_SECONDS": 0,
    }
    first = celery_worker(broker, **llm_env)
    stuck = threading.Event()
    fake_llm.answer(hold(stuck, remember_the_message("我负责 Flask 迁移项目。")))  # the first call hangs
    fake_llm.responder = remember_the_message

    with celery_using_broker(broker):
        response = send(ingest_client, ("m-1", "我负责 Flask 迁移项目。"), ("m-2", "以后回答尽量简洁。"), ("m-3", "我住在广州。"))
        extractions_drain()
        assert response.status_code == 202

        # The worker is inside m-1's extraction, waiting on the model: kill it there.
        wait_for(lambda: len(fake_llm.requests) == 1, 30, "the worker to call the model")
        kill_hard(first)
        stuck.set()
        assert statuses() == {"m-1": "pending", "m-2": "pending", "m-3": "pending"}
        assert not Candidate.objects.exists()

        # A new worker takes the queued tasks; the sweep re-sends the one that died with the worker.
        celery_worker(broker, **llm_env)
        sweep_pending_extractions.delay()
        wait_for(everything_done, 60, "every message to be extracted")

        assert sorted(Candidate.objects.values_list("source_message_id", flat=True)) == ["m-1", "m-2", "m-3"]
        assert set(Message.objects.values_list("extraction_attempts", flat=True)) == {1}

        # The killed task's broker message may still come back (visibility timeout): deliver it,
        # and every other task again, then one more message to know the queue got that far.
        for row in Message.objects.all():
            extract_message.delay(row.pk)
        sweep_pending_extractions.delay()
        send(ingest_client, ("m-4", "今天先用英文回答。"))
        extractions_drain()
        wait_for(everything_done, 60, "the last message to be extracted")

    assert sorted(Candidate.objects.values_list("source_message_id", flat=True)) == ["m-1", "m-2", "m-3", "m-4"]
    assert set(Message.objects.values_list("extraction_attempts", flat=True)) == {1}


def test_an_unreachable_broker_delays_extraction_and_loses_nothing(redis_server, celery_worker, ingest_client):
    port = unused_port()
    broker = f"redis://127.0.0.1:{port}/0"

    with celery_using_broker(broker):
        with publisher_held() as published_meanwhile:
            response = send(ingest_client, ("m-1", "你好，我叫 Alice。"), ("m-2", "我住在广州。"))
            assert not published_meanwhile.is_set()  # answered while nothing could be published
        extractions_drain()

        assert response.status_code == 202 and response.json()["accepted"] == 2
        assert statuses() == {"m-1": "pending", "m-2": "pending"}

        # The broker comes back; the beat's sweep sends what it never received.
        redis_server(port)
        celery_worker(broker)
        sweep_pending_extractions.delay()
        wait_for(everything_done, 60, "the sweep to get everything extracted")

    assert sorted(Candidate.objects.values_list("source_message_id", "field", "value")) == [
        ("m-1", "name", "Alice"),
        ("m-2", "location", "广州"),
    ]
