"""POST /api/v1/candidates: auth, scopes, the error shape, and nothing stored on bad input."""
import json

import pytest
from django.core.cache import cache

from reviews.models import ApiKey, AuditEvent, Candidate, Fact, Scope, Source, Subject
from reviews.services.tenants import api_key_revoke
from tests.conftest import API_ACTOR, candidate

URL = "/api/v1/candidates"


def body(*items, user_id="alice"):
    return {"user_id": user_id, "candidates": list(items) or [candidate()]}


def assert_error(response, status, code):
    assert response.status_code == status, response.content
    payload = response.json()
    assert set(payload) == {"error"}
    assert payload["error"]["code"] == code
    assert isinstance(payload["error"]["message"], str) and payload["error"]["message"]
    assert isinstance(payload["error"]["details"], (dict, list))
    return payload["error"]


def test_it_runs_the_policy_and_returns_each_outcome(ingest_client, tenant):
    response = ingest_client.post_json(
        URL,
        body(
            candidate(value="Alice", confidence=0.97, source_message_id="m-a1", evidence="我叫 Alice"),
            candidate(field="location", value="广州", confidence=0.9),
            candidate(field="shoe_size", value="42"),
        ),
    )
    assert response.status_code == 201
    results = response.json()["results"]
    assert [(r["status"], r["reason"]) for r in results] == [
        ("auto_approved", "auto_approve"),
        ("pending_review", "needs_review"),
        ("rejected", "field_not_allowed"),
    ]
    assert results[0]["fact_id"] == Fact.objects.get().pk
    assert "fact_id" not in results[1]
    stored = Candidate.objects.get(pk=results[0]["candidate_id"])
    assert (stored.source, stored.source_message_id, stored.evidence) == ("chat", "m-a1", "我叫 Alice")
    actor = f"api_key:{ingest_client.key.prefix}"
    assert AuditEvent.objects.filter(tenant_id=tenant.pk, action="candidate.submitted", actor=actor).count() == 3


def test_the_source_is_the_keys(tenant, make_client):
    client = make_client(tenant, [Scope.INGEST], source=Source.BUSINESS_SYSTEM)
    response = client.post_json(URL, body(candidate(value="Alice", confidence=0.97)))
    assert Candidate.objects.get(pk=response.json()["results"][0]["candidate_id"]).source == "business_system"


@pytest.mark.parametrize(
    "value,reason",
    [("", "invalid"), ("   ", "invalid"), ("x" * 1001, "invalid")],
)
def test_well_formed_but_unusable_values_are_rejected_candidates(ingest_client, value, reason):
    response = ingest_client.post_json(URL, body(candidate(value=value)))
    assert response.status_code == 201
    assert response.json()["results"][0] | {"candidate_id": 0} == {
        "candidate_id": 0,
        "status": "rejected",
        "reason": reason,
    }


class TestAuth:
    def test_it_requires_a_key(self, client, db):
        assert_error(client.post(URL, data=body(), content_type="application/json"), 401, "unauthenticated")

    def test_it_refuses_an_unknown_key(self, client, db):
        response = client.post(
            URL, data=body(), content_type="application/json", HTTP_AUTHORIZATION="Bearer mp_nope_nope"
        )
        assert_error(response, 401, "unauthenticated")

    def test_it_refuses_a_malformed_header(self, client, db):
        response = client.post(URL, data=body(), content_type="application/json", HTTP_AUTHORIZATION="Token abc")
        assert_error(response, 401, "unauthenticated")

    def test_it_refuses_a_revoked_key(self, ingest_client, tenant):
        api_key_revoke(tenant=tenant, prefix=ingest_client.key.prefix, actor=API_ACTOR)
        assert_error(ingest_client.post_json(URL, body()), 401, "unauthenticated")

    def test_it_requires_ingest_scope(self, tenant, make_client):
        client = make_client(tenant, [Scope.RECALL, Scope.REVIEW, Scope.ADMIN])
        error = assert_error(client.post_json(URL, body()), 403, "forbidden")
        assert "ingest" in error["message"]
        assert not Candidate.objects.exists()

    def test_keys_are_stored_hashed(self, tenant, make_client):
        client = make_client(tenant, [Scope.INGEST])
        raw = client.raw_key
        stored = ApiKey.objects.get(pk=client.key.pk)
        assert raw not in (stored.key_hash, stored.prefix, stored.name) and len(stored.key_hash) == 64


BAD_BODIES = [
    ("malformed json", "{not json", 400, "malformed_request"),
    ("truncated json", '{"user_id": "a", "candidates": [', 400, "malformed_request"),
    ("not an object", "[1, 2]", 400, "invalid"),
    ("empty body", "", 400, "invalid"),
    ("empty list", body() | {"candidates": []}, 400, "invalid"),
    ("candidates not a list", body() | {"candidates": "x"}, 400, "invalid"),
    ("missing user_id", {"candidates": [candidate()]}, 400, "invalid"),
    ("user_id wrong type", body() | {"user_id": ["a"]}, 400, "invalid"),
    ("unknown top-level field", body() | {"tenant": "tenant-2"}, 400, "invalid"),
    ("unknown candidate field", body(candidate(status="approved")), 400, "invalid"),
    ("confidence above 1", body(candidate(confidence=1.5)), 400, "invalid"),
    ("confidence below 0", body(candidate(confidence=-0.1)), 400, "invalid"),
    ("confidence a string", body(candidate(confidence="high")), 400, "invalid"),
    ("confidence NaN", '{"user_id":"a","candidates":[{"entity_type":"user","entity_id":"me","field":"name","value":"A","confidence":NaN}]}', 400, "malformed_request"),
    ("value wrong type", body(candidate(value={"x": 1})), 400, "invalid"),
    ("null value", body(candidate(value=None)), 400, "invalid"),
    ("unknown kind", body(candidate(kind="rumour")), 400, "invalid"),
    ("unknown scope", body(candidate(scope="forever")), 400, "invalid"),
    ("thread scope without thread", body(candidate(scope="thread")), 400, "invalid"),
    ("null byte in value", body(candidate(value="Al\u0000ice")), 400, "malformed_request"),
    ("null byte in key", '{"user_id\\u0000":"a","candidates":[]}', 400, "malformed_request"),
    ("too many candidates", body(*[candidate()] * 501), 400, "invalid"),
    ("entity id too long", body(candidate(entity_id="e" * 129)), 400, "invalid"),
]


@pytest.mark.parametrize("label,payload,status,code", BAD_BODIES, ids=[b[0] for b in BAD_BODIES])
def test_bad_input_gets_a_4xx_in_the_error_shape_and_stores_nothing(ingest_client, tenant, label, payload, status, code):
    # One good candidate next to the bad part: nothing partial may be stored.
    before = AuditEvent.objects.filter(tenant_id=tenant.pk).count()
    response = ingest_client.post_json(URL, payload)
    assert_error(response, status, code)
    assert not Candidate.objects.exists()
    assert not Subject.objects.exists()
    assert AuditEvent.objects.filter(tenant_id=tenant.pk).count() == before


def test_one_bad_item_refuses_the_whole_batch(ingest_client):
    response = ingest_client.post_json(URL, body(candidate(value="Alice", confidence=0.97), candidate(confidence=7)))
    error = assert_error(response, 400, "invalid")
    assert "candidates" in json.dumps(error["details"])
    assert not Candidate.objects.exists() and not Fact.objects.exists()


def test_a_10_mb_body_is_refused_with_413(ingest_client):
    huge = json.dumps(body(candidate(value="x" * (10 * 1024 * 1024))))
    assert_error(ingest_client.post_json(URL, huge), 413, "payload_too_large")
    assert not Candidate.objects.exists()


def test_wrong_content_type_is_415(ingest_client):
    response = ingest_client.post(URL, data="user_id=a", content_type="application/x-www-form-urlencoded")
    assert_error(response, 415, "unsupported_media_type")


def test_wrong_method_is_405(ingest_client):
    assert_error(ingest_client.get(URL), 405, "method_not_allowed")


def test_rate_limit_answers_429(ingest_client, api_rate):
    cache.clear()
    api_rate("2/min")
    for _ in range(2):
        assert ingest_client.post_json(URL, body()).status_code == 201
    error = assert_error(ingest_client.post_json(URL, body()), 429, "rate_limited")
    assert error["details"]["retry_after"] > 0
    cache.clear()


def test_tenants_never_meet(ingest_client, outsider_client, tenant, other_tenant):
    mine = ingest_client.post_json(URL, body(candidate(value="Alice", confidence=0.97))).json()["results"][0]
    theirs = outsider_client.post_json(URL, body(candidate(value="Mallory", confidence=0.97))).json()["results"][0]
    assert theirs["status"] == "auto_approved"  # a separate subject: no conflict with tenant-1's alice
    assert Fact.objects.get(pk=mine["fact_id"]).value == "Alice"
    assert Fact.objects.get(pk=theirs["fact_id"]).tenant_id == other_tenant.pk
    assert Subject.objects.filter(user_id="alice").count() == 2


def test_unknown_api_path_answers_in_the_error_shape(ingest_client):
    assert_error(ingest_client.get("/api/v1/nothing-here"), 404, "not_found")


class TestSchemaAndHealth:
    def test_openapi_schema_lists_the_endpoint(self, client, db):
        response = client.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
        assert response.status_code == 200
        schema = json.loads(response.content)
        assert "/api/v1/candidates" in schema["paths"]
        assert schema["components"]["securitySchemes"]["ApiKey"]["scheme"] == "bearer"

    def test_docs_page_uses_no_cdn(self, client, db):
        response = client.get("/api/docs/")
        assert response.status_code == 200
        html = response.content.decode()
        assert "cdn.jsdelivr" not in html and "unpkg.com" not in html

    def test_healthz(self, client, db):
        assert client.get("/healthz").json() == {"status": "ok"}

    def test_readyz_checks_the_database(self, client, db):
        response = client.get("/readyz")
        assert response.status_code == 200
        assert response.json()["checks"]["database"] == "ok"


def test_a_paused_subject_is_answered_but_nothing_is_stored(ingest_client, tenant):
    Subject.objects.create(tenant=tenant, user_id="alice", collection_paused=True)
    response = ingest_client.post_json(URL, body(candidate(value="Alice", confidence=0.97)))
    assert response.status_code == 201
    assert response.json()["results"] == [{"candidate_id": None, "status": "withdrawn", "reason": "collection_paused"}]
    assert not Candidate.objects.exists()
