"""POST /api/v1/messages: 202 at once, idempotent, masked, paused subjects, errors, isolation."""
import json
from datetime import timedelta

import pytest
from django.utils import timezone

from reviews.models import AuditEvent, Candidate, ExtractionStatus, Message, Scope, Subject
from reviews.services.ingest import extractions_drain
from tests.dump import dump_all_tables
from tests.worker.brokers import celery_using_broker, publisher_held, unused_port

URL = "/api/v1/messages"
KEY = "sk-proj-4fQ9xT2mLr8vKp0aZ7wYc3Hn"

pytestmark = pytest.mark.django_db


def msg(id="m-1", content="你好，我叫 Alice。", user_id="alice", thread_id="t-1", role="user", **extra):
    return {"id": id, "thread_id": thread_id, "user_id": user_id, "role": role, "content": content, **extra}


def post(client, *messages):
    return client.post_json(URL, {"messages": list(messages)})


def assert_error(response, status, code):
    assert response.status_code == status, response.content
    error = response.json()["error"]
    assert error["code"] == code and error["message"]
    return error


def test_it_answers_202_and_stores_the_messages_masked(ingest_client, tenant):
    response = post(
        ingest_client,
        msg("m-1", created_at="2026-11-01T09:00:00Z"),
        msg("m-2", f"顺便记一下我的 OpenAI key：{KEY}"),
    )

    assert response.status_code == 202
    assert response.json() == {"accepted": 2, "duplicates": 0, "paused": 0}
    rows = {m.message_id: m for m in Message.objects.filter(tenant=tenant)}
    assert rows["m-1"].created_at.isoformat() == "2026-11-01T09:00:00+00:00"
    assert rows["m-2"].content == "顺便记一下我的 OpenAI key：[redacted api_key]"
    assert {m.extraction_status for m in rows.values()} == {ExtractionStatus.PENDING}
    assert KEY not in dump_all_tables()
    event = AuditEvent.objects.get(tenant_id=tenant.pk, action="messages.ingested")
    assert event.actor == f"api_key:{ingest_client.key.prefix}" and event.subject_user_id == "alice"
    assert event.payload.after == {"count": 2, "messages": ["m-1", "m-2"], "masked_credentials": {"m-2": ["api_key"]}}


def test_extraction_runs_once_the_request_commits(ingest_client, tenant, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        response = post(ingest_client, msg("m-1", "我负责 Flask 迁移项目，项目使用 MySQL。"))

    assert response.status_code == 202
    assert Message.objects.get(message_id="m-1").extraction_status == ExtractionStatus.DONE
    assert sorted(Candidate.objects.values_list("field", "value", "source", "extractor")) == [
        ("database", "MySQL", "chat", "rules"),
        ("relation:works_on", "project:flask-migration", "chat", "rules"),
    ]


def test_it_is_idempotent_by_message_id(ingest_client, tenant, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        post(ingest_client, msg("m-1"), msg("m-2", "我住在广州。"))
    candidates = Candidate.objects.count()

    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        again = post(ingest_client, msg("m-1", "something else"), msg("m-2"), msg("m-3", "Hi"), msg("m-3", "Hi"))

    assert again.status_code == 202
    assert again.json() == {"accepted": 1, "duplicates": 3, "paused": 0}
    assert Message.objects.count() == 3
    assert Message.objects.get(message_id="m-1").content == "你好，我叫 Alice。"  # the first one stays
    assert Candidate.objects.count() == candidates
    assert len(callbacks) == 1  # only the new message is sent to extraction


def test_a_paused_subject_stores_nothing(ingest_client, tenant):
    Subject.objects.create(tenant=tenant, user_id="alice", collection_paused=True)

    response = post(ingest_client, msg("m-1"), msg("m-2", user_id="bob"))

    assert response.status_code == 202
    assert response.json() == {"accepted": 1, "duplicates": 0, "paused": 1}
    assert list(Message.objects.values_list("message_id", flat=True)) == ["m-2"]


def test_messages_that_are_not_the_users_are_kept_as_context_without_extraction(ingest_client, tenant):
    post(ingest_client, msg("m-1", role="assistant"), msg("m-2", "", role="user"), msg("m-3", role="system"))

    assert set(Message.objects.values_list("extraction_status", flat=True)) == {ExtractionStatus.SKIPPED}


def test_a_reply_without_a_time_is_dated_after_the_messages_before_it(ingest_client, tenant):
    before = timezone.now()
    post(
        ingest_client,
        msg("m-1", "I live in Berlin.", created_at="2026-11-01T09:00:00Z"),
        msg("m-2", "Noted.", role="assistant"),
        msg("m-3", "Hello again.", thread_id="t-2"),
    )
    dates = dict(Message.objects.values_list("message_id", "created_at"))
    assert dates["m-2"] - dates["m-1"] == timedelta(microseconds=1)  # not "now", a month later
    assert dates["m-3"] >= before  # alone in its thread: the time it arrived


@pytest.mark.parametrize(
    "body,where",
    [
        ({"messages": []}, "messages"),
        ({"messages": "m-1"}, "messages"),
        ({}, "messages"),
        ({"messages": [msg(), {**msg("m-2"), "role": "robot"}]}, "messages"),
        ({"messages": [msg(), {**msg("m-2"), "tenant": "tenant-2"}]}, "messages"),
        ({"messages": [{k: v for k, v in msg().items() if k != "thread_id"}]}, "messages"),
        ({"messages": [msg(id="x" * 129)]}, "messages"),
        ({"messages": [msg(content="x" * 32_001)]}, "messages"),
        ({"messages": [msg(created_at="yesterday")]}, "messages"),
        ({"messages": [msg()], "extra": 1}, "extra"),
        ({"messages": [msg(str(i)) for i in range(1001)]}, "messages"),
    ],
)
def test_bad_input_is_a_400_and_stores_nothing(ingest_client, tenant, body, where):
    error = assert_error(ingest_client.post_json(URL, body), 400, "invalid")

    assert where in error["details"]
    assert not Message.objects.exists()
    assert not AuditEvent.objects.filter(action="messages.ingested").exists()


def test_malformed_json_and_null_characters_are_refused(ingest_client):
    assert_error(ingest_client.post_json(URL, "{not json"), 400, "malformed_request")
    assert_error(ingest_client.post_json(URL, json.dumps({"messages": [msg(content="a\x00b")]})), 400, "malformed_request")
    assert not Message.objects.exists()


def test_an_oversized_body_is_a_413(ingest_client, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1000
    assert_error(post(ingest_client, msg(content="x" * 2000)), 413, "payload_too_large")


class TestAccess:
    def test_it_requires_a_key(self, client, db):
        response = client.post(URL, data={"messages": [msg()]}, content_type="application/json")
        assert_error(response, 401, "unauthenticated")

    def test_it_requires_the_ingest_scope(self, tenant, make_client):
        client = make_client(tenant, [Scope.RECALL, Scope.REVIEW, Scope.ADMIN])
        assert_error(post(client, msg()), 403, "forbidden")
        assert not Message.objects.exists()

    def test_tenants_are_isolated(self, ingest_client, outsider_client, tenant, other_tenant):
        post(ingest_client, msg("m-1", "我叫 Alice。"))

        # The same ids in another tenant are new messages there: no hint the first tenant has them.
        response = post(outsider_client, msg("m-1", "I'm Olga."))

        assert response.json() == {"accepted": 1, "duplicates": 0, "paused": 0}
        assert Message.objects.get(tenant=tenant).content == "我叫 Alice。"
        assert Message.objects.get(tenant=other_tenant).content == "I'm Olga."
        assert Subject.objects.filter(user_id="alice").count() == 2


@pytest.mark.django_db(transaction=True)
def test_an_unreachable_broker_does_not_hold_the_request(ingest_client, tenant):
    """With a broker configured but down, the messages are stored and left for the sweep."""
    with celery_using_broker(f"redis://127.0.0.1:{unused_port()}/0"):
        with publisher_held() as published_meanwhile:
            response = post(ingest_client, msg("m-1"), msg("m-2", "我住在广州。"))
            assert not published_meanwhile.is_set()  # answered while nothing could be published
        extractions_drain()  # the background publisher has tried, and given up

    assert response.status_code == 202 and response.json()["accepted"] == 2
    rows = Message.objects.filter(tenant=tenant)
    # No due time: the sweep sends them as soon as it runs.
    assert {(m.extraction_status, m.extraction_due_at) for m in rows} == {(ExtractionStatus.PENDING, None)}
    assert not Candidate.objects.exists()
