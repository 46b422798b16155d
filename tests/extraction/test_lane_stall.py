"""One bad model answer never stalls the messages behind it (the embedded default, no broker).

The LLM extractor runs on one in-process lane. A message whose answer is malformed or
times out used to be retried on that lane, sleeping through its backoff, and every message
behind it waited. Its retry is now scheduled for its due time; the lane goes on. Each run
posts the failing message, then good ones from the same subject (so each good message's
catch-up meets the failing one too), and expects the good ones extracted while the failing
one's retry is still ahead of it (a 30 s backoff): had they waited it out, it would be past.
"""
import time

import pytest
from django.utils import timezone

from reviews.models import ExtractionStatus, Message
from reviews.services.ingest import extractions_drain
from tests.extraction.fake_openai import facts, message_of, raw, slow

pytestmark = pytest.mark.django_db(transaction=True)

URL = "/api/v1/messages"
FAILING = "请帮我记住这个：我们的工单项目很复杂。"
GOOD = ["我住在广州。", "以后回答尽量简洁。", "我叫 Alice。"]
# How long to poll for the good ones: under the backoff, so waiting it out cannot pass.
WITHIN_SECONDS = 25.0


def post(client, message_id, content, second):
    body = {"messages": [{"id": message_id, "thread_id": "t-1", "user_id": "alice", "role": "user",
                          "content": content, "created_at": f"2026-11-01T09:00:{second:02d}Z"}]}
    response = client.post_json(URL, body)
    assert response.status_code == 202, response.content


def wait_until(predicate, seconds):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return predicate()


@pytest.fixture
def lane_settings(llm_settings):
    # A real backoff: a retry that slept on the lane would hold the good messages 24 s or more.
    llm_settings.MEMORY_EXTRACTION_RETRY_BASE_SECONDS = 30
    llm_settings.MEMORY_EXTRACTION_RETRY_MAX_SECONDS = 60
    llm_settings.MEMORY_EXTRACTOR_TIMEOUT = 1.0
    llm_settings.MEMORY_EXTRACTOR_HTTP_RETRIES = 0
    return llm_settings


@pytest.mark.parametrize("run", range(10))
@pytest.mark.parametrize("failure", ["malformed", "timeout"])
def test_good_messages_are_extracted_while_a_bad_answer_waits_for_its_retry(
    failure, run, lane_settings, fake_llm, ingest_client
):
    bad_answer = raw("{not json") if failure == "malformed" else slow(3.0, facts())
    fake_llm.responder = lambda message: bad_answer if FAILING in message else facts()

    post(ingest_client, "m-bad", FAILING, 0)
    for index, content in enumerate(GOOD, start=1):
        post(ingest_client, f"m-{index}", content, index)

    def good_ones_done():
        return set(Message.objects.filter(message_id__in=["m-1", "m-2", "m-3"])
                   .values_list("extraction_status", flat=True)) == {ExtractionStatus.DONE}

    assert wait_until(good_ones_done, WITHIN_SECONDS), dict(Message.objects.values_list("message_id", "extraction_status"))
    bad = Message.objects.get(message_id="m-bad")
    # The failing message waits for its own due time, asked once, not once more per good message.
    assert (bad.extraction_status, bad.extraction_attempts) == (ExtractionStatus.PENDING, 1)
    assert bad.extraction_due_at is not None and bad.extraction_error
    assert sum(FAILING in message_of(request.body) for request in fake_llm.requests) == 1
    assert bad.extraction_due_at > timezone.now()  # its retry is still to come: nobody waited for it


def test_a_scheduled_retry_runs_at_its_due_time_and_extracts_once_the_model_behaves(llm_settings, fake_llm, ingest_client):
    llm_settings.MEMORY_EXTRACTION_RETRY_BASE_SECONDS = 0.3
    llm_settings.MEMORY_EXTRACTION_RETRY_MAX_SECONDS = 0.3
    fake_llm.answer(raw("{not json"))  # the first answer only; then well-formed ones

    post(ingest_client, "m-bad", FAILING, 0)
    extractions_drain(retries=True)

    row = Message.objects.get(message_id="m-bad")
    assert (row.extraction_status, row.extraction_attempts) == (ExtractionStatus.DONE, 2)
    assert sum(FAILING in message_of(request.body) for request in fake_llm.requests) == 2
