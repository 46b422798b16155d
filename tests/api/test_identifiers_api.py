"""SPEC §1 identifiers at the API's edge: any identifier ingest accepts is reachable,
percent-encoded, on every /api/v1/users/{user_id}/… route; a malformed one is a 400,
wherever it is sent, with nothing stored."""
import json
from urllib.parse import quote

import pytest

from reviews.audit import verify_tenant
from reviews.policy.identifiers import MAX_IDENTIFIER_LENGTH
from reviews.models import AuditEvent, Candidate, Fact, FactStatus, Message, RecallRecord, Scope, Subject
from tests.conftest import candidate
from tests.dump import dump_all_tables

pytestmark = pytest.mark.django_db

REACHABLE = ["org/7", "a@b.com", "张三/项目", "x" * MAX_IDENTIFIER_LENGTH, "a b", "50%", "q?x#y", "/leading", "trailing/", "a/facts"]


def users_url(user_id: str, rest: str = "facts") -> str:
    return f"/api/v1/users/{quote(user_id, safe='')}/{rest}"


@pytest.fixture
def every_scope(tenant, make_client):
    return make_client(tenant, list(Scope.values))


def _ingest_and_publish(client, user_id) -> int:
    message = {"id": "m-1", "thread_id": "t-1", "user_id": user_id, "role": "user", "content": "My name is Alice."}
    assert client.post_json("/api/v1/messages", {"messages": [message]}).status_code == 202
    submitted = client.post_json(
        "/api/v1/candidates", {"user_id": user_id, "candidates": [candidate(confidence=0.97, source_message_id="m-1")]}
    )
    assert submitted.status_code == 201, submitted.content
    [result] = submitted.json()["results"]
    if "fact_id" in result:
        return result["fact_id"]
    approved = client.post_json(f"/api/v1/review/candidates/{result['candidate_id']}/approve", {"version": 1})
    assert approved.status_code == 200, approved.content
    return Fact.objects.get(subject__user_id=user_id).pk


@pytest.mark.parametrize("user_id", REACHABLE, ids=lambda value: value[:12])
def test_an_identifier_accepted_at_ingest_is_reachable_on_every_users_route(every_scope, tenant, user_id):
    fact_id = _ingest_and_publish(every_scope, user_id)

    listed = every_scope.get(users_url(user_id))
    link = every_scope.post_json(users_url(user_id, "portal-link"), {})
    one_deleted = every_scope.delete(users_url(user_id, f"facts/{fact_id}"))
    erased = every_scope.delete(users_url(user_id))

    assert listed.status_code == 200, listed.content
    assert listed.json()["user_id"] == user_id
    assert [fact["id"] for fact in listed.json()["facts"]] == [fact_id]
    assert link.status_code == 201 and link.json()["url"]
    assert one_deleted.status_code == 200, one_deleted.content
    assert not Fact.objects.filter(pk=fact_id, status=FactStatus.ACTIVE).exists()
    assert erased.status_code == 200 and erased.json()["scope"] == {"user_id": user_id, "all": True}
    assert verify_tenant(tenant.pk).ok


def test_the_identifier_is_kept_exactly_as_sent(every_scope):
    _ingest_and_publish(every_scope, " padded ")
    assert Subject.objects.get().user_id == " padded "
    assert every_scope.get(users_url(" padded ")).json()["facts"]


def test_another_tenant_reaches_nothing_under_the_same_identifier(every_scope, outsider_client):
    fact_id = _ingest_and_publish(every_scope, "org/7")

    listed = outsider_client.get(users_url("org/7"))
    deleted = outsider_client.delete(users_url("org/7", f"facts/{fact_id}"))

    assert listed.status_code in (200, 404) and not listed.json().get("facts")
    assert deleted.status_code == 404
    assert Fact.objects.get(pk=fact_id).status == FactStatus.ACTIVE


MALFORMED = {
    "129 characters": "x" * (MAX_IDENTIFIER_LENGTH + 1),
    "NUL": "a\x00b",
    "newline": "a\nb",
    "tab": "a\tb",
    "right-to-left override": "\u202eabc",
    "only spaces": "   ",
}


@pytest.mark.parametrize("route", ["facts", "facts/1", "portal-link"])
@pytest.mark.parametrize("user_id", MALFORMED.values(), ids=MALFORMED.keys())
def test_a_malformed_path_identifier_is_a_400_not_a_404_or_500(every_scope, user_id, route):
    before = dump_all_tables()
    method = every_scope.post if route == "portal-link" else every_scope.delete

    responses = [method(users_url(user_id, route))]
    if route == "facts":
        responses.append(every_scope.get(users_url(user_id, route)))

    for response in responses:
        assert response.status_code == 400, response.content
        assert response.json()["error"]["code"] == "invalid"
        assert "user_id" in response.json()["error"]["message"]
    assert dump_all_tables() == before


def test_a_malformed_path_identifier_without_a_key_is_still_a_401(client):
    assert client.get("/api/v1/users/%00/facts").status_code == 401


def _bodies(bad):
    message = {"id": "m-1", "thread_id": "t-1", "user_id": "u1", "role": "user", "content": "hi"}
    return [
        ("/api/v1/messages", {"messages": [{**message, "user_id": bad}]}),
        ("/api/v1/messages", {"messages": [{**message, "thread_id": bad}]}),
        ("/api/v1/messages", {"messages": [{**message, "id": bad}]}),
        ("/api/v1/candidates", {"user_id": bad, "candidates": [candidate()]}),
        ("/api/v1/candidates", {"user_id": "u1", "candidates": [candidate(entity_id=bad)]}),
        ("/api/v1/candidates", {"user_id": "u1", "candidates": [candidate(thread_id=bad, scope="thread")]}),
        ("/api/v1/candidates", {"user_id": "u1", "candidates": [candidate(source_message_id=bad)]}),
        ("/compat/mem0/v3/memories/add/", {"messages": [{"role": "user", "content": "hi"}], "user_id": bad}),
        ("/compat/mem0/v3/memories/add/", {"messages": [{"role": "user", "content": "hi"}], "filters": {"user_id": bad}}),
        ("/compat/mem0/v3/memories/search/", {"query": "x", "user_id": "u1", "run_id": bad}),
    ]


BODY_CASES = [
    (label, path, body)
    for label, bad in MALFORMED.items()
    if "\x00" not in bad  # NUL in a body is the parser's refusal (test_input_limits)
    for path, body in _bodies(bad)
]


@pytest.mark.parametrize("label,path,body", BODY_CASES, ids=[f"{c[0]}-{c[1]}" for c in BODY_CASES])
def test_a_malformed_identifier_in_a_body_is_a_400_and_nothing_is_stored(every_scope, tenant, label, path, body):
    events = AuditEvent.objects.filter(tenant_id=tenant.pk).count()

    response = every_scope.post_json(path, body)

    assert response.status_code == 400, response.content
    assert response.json()["error"]["code"] == "invalid"
    assert not Message.objects.exists() and not Candidate.objects.exists() and not Subject.objects.exists()
    assert AuditEvent.objects.filter(tenant_id=tenant.pk).count() == events


# Every operation that takes an identifier in its query string; {} is where it goes.
IDENTIFIER_QUERIES = [
    "/api/v1/recall?user_id={}", "/api/v1/recall?user_id=u1&thread_id={}", "/api/v1/review/candidates?user_id={}",
    "/api/v1/audit/events?user_id={}", "/api/v1/audit/export?user_id={}",
]


@pytest.mark.parametrize("path", IDENTIFIER_QUERIES)
@pytest.mark.parametrize("user_id", MALFORMED.values(), ids=MALFORMED.keys())
def test_a_malformed_identifier_in_a_query_is_a_400(every_scope, path, user_id):
    response = every_scope.get(path.format(quote(user_id, safe="")))

    assert response.status_code == 400, response.content
    assert "user_id" in json.dumps(response.json()["error"]) or "thread_id" in json.dumps(response.json()["error"])


@pytest.mark.parametrize("path", IDENTIFIER_QUERIES)
def test_an_identifier_in_a_query_that_is_not_utf8_is_a_400_not_another_identifier(every_scope, path):
    """"Müller" sent in Latin-1 (%FC) would reach the view as "M\ufffdller": refused, and
    no recall is recorded for a subject nobody named."""
    response = every_scope.get(path.format("M%FCller"))

    assert response.status_code == 400, response.content
    details = json.dumps(response.json()["error"]["details"])
    assert "not_utf8" in details or "U+FFFD" in details
    assert not RecallRecord.objects.exists()
