"""GET · POST /api/v1/review/candidates/{id}/comments (issue 38.6): the review scope, another
tenant's item a 404, bad input a 400 in SPEC §7's shape, the audit event, the OpenAPI entry."""
import pytest
from drf_spectacular.generators import SchemaGenerator

from reviews.actors import Actor
from reviews.models import AuditEvent, AuditPayload, CandidateComment, Scope
from reviews.models.comments import MAX_COMMENT_LENGTH
from reviews.services.comments import candidate_comment_add
from tests.conftest import candidate
from tests.review.conftest import propose

OPENAI_KEY = "sk-proj-" + "Ab3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dF3hJ5"


@pytest.fixture
def item(tenant):
    [item] = propose(tenant, "alice", candidate(field="location", value="Berlin"))
    return item


@pytest.fixture
def review_client(tenant, make_client):
    return make_client(tenant, [Scope.REVIEW])


def path(item) -> str:
    return f"/api/v1/review/candidates/{item.pk}/comments"


def test_a_review_key_adds_a_comment_and_it_is_audited(review_client, item):
    response = review_client.post_json(path(item), {"body": "Ask alice which Berlin."})
    assert response.status_code == 201
    body = response.json()
    assert body["body"] == "Ask alice which Berlin." and body["actor"] == f"api_key:{review_client.key.prefix}"
    assert body["author"].startswith("API key")
    comment = CandidateComment.objects.get()
    assert comment.author is None and comment.actor == body["actor"]
    event = AuditEvent.objects.get(action="candidate.commented", object_id=str(item.pk))
    assert event.actor == body["actor"]
    assert AuditPayload.objects.get(event=event).after == {"comment_id": comment.pk, "body": "Ask alice which Berlin."}


def test_the_list_names_people_oldest_first(tenant, reviewer, review_client, item):
    candidate_comment_add(tenant=tenant, candidate_id=item.pk, author=reviewer, body="first", actor=Actor.reviewer(reviewer))
    review_client.post_json(path(item), {"body": "second"})
    response = review_client.get(path(item))
    assert response.status_code == 200
    results = response.json()["results"]
    assert [(row["author"], row["body"]) for row in results][0] == ("rita", "first")
    assert [row["body"] for row in results] == ["first", "second"]
    assert results[0]["actor"] == f"reviewer:{reviewer.pk}" and results[0]["created_at"].endswith("Z")


def test_a_credential_is_masked(review_client, item):
    response = review_client.post_json(path(item), {"body": f"pasted {OPENAI_KEY}"})
    assert response.status_code == 201 and OPENAI_KEY not in response.json()["body"]
    assert OPENAI_KEY not in CandidateComment.objects.get().body


@pytest.mark.parametrize(
    "payload", [{"body": ""}, {"body": "   "}, {}, {"body": "x" * (MAX_COMMENT_LENGTH + 1)}, {"body": None}, {"body": "a", "extra": 1}]
)
def test_bad_input_is_a_400_in_the_error_shape(review_client, item, payload):
    response = review_client.post_json(path(item), payload)
    assert response.status_code == 400
    assert set(response.json()["error"]) >= {"code", "message", "details"}
    assert not CandidateComment.objects.exists() and not AuditEvent.objects.filter(action="candidate.commented").exists()


@pytest.mark.parametrize("scopes", [[Scope.INGEST], [Scope.RECALL], [Scope.ADMIN]])
def test_it_requires_the_review_scope(tenant, make_client, item, scopes):
    client = make_client(tenant, scopes)
    assert client.post_json(path(item), {"body": "hi"}).status_code == 403
    assert client.get(path(item)).status_code == 403
    assert not CandidateComment.objects.exists()


def test_another_tenants_key_finds_nothing(tenant, reviewer, other_tenant, make_client, item):
    candidate_comment_add(tenant=tenant, candidate_id=item.pk, author=reviewer, body="internal", actor=Actor.reviewer(reviewer))
    outsider = make_client(other_tenant, [Scope.REVIEW])
    assert outsider.get(path(item)).status_code == 404
    assert outsider.post_json(path(item), {"body": "hello"}).status_code == 404
    assert CandidateComment.objects.count() == 1


def test_no_key_is_a_401(client, item):
    assert client.get(path(item)).status_code == 401


def test_the_schema_documents_both_operations():
    schema = SchemaGenerator().get_schema(request=None, public=True)
    operations = schema["paths"]["/api/v1/review/candidates/{candidate_id}/comments"]
    assert {"get", "post"} <= set(operations)
    assert "201" in operations["post"]["responses"] and "404" in operations["post"]["responses"]
