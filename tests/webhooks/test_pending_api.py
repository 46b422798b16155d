"""GET /api/v1/users/{user_id}/pending and POST …/pending/{id}/confirm · /reject (SPEC §7):
a host app asks its signed-in user inside the chat, with the same rules as "my memories"."""
import pytest

from reviews.models import AuditAction, AuditEvent, Candidate, CandidateStatus, Fact, Scope, Source
from tests.api.test_recall_api import assert_error
from tests.conftest import candidate


def pending_url(user_id, candidate_id=None, answer=""):
    url = f"/api/v1/users/{user_id}/pending"
    return f"{url}/{candidate_id}/{answer}" if candidate_id else url


@pytest.fixture
def asked(tenant, submit):
    """An item waiting for u1 (a guess the policy asks them about)."""
    (result,) = submit(tenant, "u1", candidate(field="location", value="Berlin", confidence=0.6))
    item = Candidate.objects.get(pk=result.candidate_id)
    assert item.status == CandidateStatus.PENDING_USER
    return item


@pytest.fixture
def for_review(tenant, submit):
    """An item of u1 waiting for a reviewer."""
    (result,) = submit(tenant, "u1", candidate(field="role", value="engineer", confidence=0.9))
    item = Candidate.objects.get(pk=result.candidate_id)
    assert item.status == CandidateStatus.PENDING_REVIEW
    return item


def test_it_lists_the_subjects_items_with_a_question_ready_to_show(subject_client, asked, for_review):
    response = subject_client.get(pending_url("u1"))
    assert response.status_code == 200, response.content
    (item,) = response.json()["results"]  # not the reviewer's item
    assert item["id"] == asked.pk and item["version"] == asked.version and item["value"] == "Berlin"
    assert (item["entity_type"], item["entity_id"], item["field"]) == ("user", "u1", "location")
    assert item["label"] == "Location" and item["question"] == "We are not sure we understood you. Is this right?"
    assert item["reason"] == "needs_confirmation" and item["created_at"]


def test_the_question_is_in_the_language_asked_for(subject_client, asked):
    (item,) = subject_client.get(pending_url("u1"), HTTP_ACCEPT_LANGUAGE="zh-hans").json()["results"]
    assert item["label"] != "Location" and item["question"] != "We are not sure we understood you. Is this right?"
    assert any("\u4e00" <= ch <= "\u9fff" for ch in item["question"])


def test_an_unknown_user_has_nothing_pending(subject_client, db):
    assert subject_client.get(pending_url("nobody")).json() == {"results": []}


def test_confirming_publishes_as_the_subject_with_the_keys_prefix(subject_client, tenant, asked):
    response = subject_client.post_json(pending_url("u1", asked.pk, "confirm"), {"version": asked.version})
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["status"] == CandidateStatus.APPROVED and body["version"] == asked.version + 1
    fact = Fact.objects.get(pk=body["fact_id"])
    assert fact.value == "Berlin" and fact.approved_by == "subject:u1"
    event = AuditEvent.objects.select_related("payload").get(
        tenant_id=tenant.pk, action=AuditAction.CANDIDATE_APPROVED, object_id=str(asked.pk)
    )
    assert event.actor == "subject:u1" and event.reason_code == "subject_confirmed"
    assert event.payload.after["via"] == f"api_key:{subject_client.key.prefix}"
    assert subject_client.get(pending_url("u1")).json() == {"results": []}


def test_a_correction_is_the_subjects_own_words(subject_client, asked):
    response = subject_client.post_json(pending_url("u1", asked.pk, "confirm"), {"version": asked.version, "value": "Munich"})
    fact = Fact.objects.get(pk=response.json()["fact_id"])
    assert (fact.value, fact.source) == ("Munich", Source.SELF_SERVICE)


def test_rejecting_closes_it_as_the_subject(subject_client, tenant, asked):
    response = subject_client.post_json(pending_url("u1", asked.pk, "reject"), {"version": asked.version})
    assert response.status_code == 200, response.content
    asked.refresh_from_db()
    assert (asked.status, asked.reason, asked.decided_by) == (CandidateStatus.REJECTED, "subject_rejected", "subject:u1")
    event = AuditEvent.objects.select_related("payload").get(
        tenant_id=tenant.pk, action=AuditAction.CANDIDATE_REJECTED, object_id=str(asked.pk)
    )
    assert event.payload.after["via"] == f"api_key:{subject_client.key.prefix}"


def test_a_stale_version_is_a_409_and_changes_nothing(subject_client, asked):
    assert_error(subject_client.post_json(pending_url("u1", asked.pk, "confirm"), {"version": asked.version + 1}), 409, "stale_version")
    asked.refresh_from_db()
    assert asked.status == CandidateStatus.PENDING_USER and not Fact.objects.exists()


@pytest.mark.parametrize("answer", ["confirm", "reject"])
def test_a_reviewers_item_is_refused(subject_client, for_review, answer):
    assert_error(subject_client.post_json(pending_url("u1", for_review.pk, answer), {"version": for_review.version}), 403, "forbidden")
    for_review.refresh_from_db()
    assert for_review.status == CandidateStatus.PENDING_REVIEW


@pytest.mark.parametrize("answer", ["confirm", "reject"])
def test_another_subjects_item_is_not_found(subject_client, asked, answer):
    assert_error(subject_client.post_json(pending_url("u2", asked.pk, answer), {"version": asked.version}), 404, "not_found")
    asked.refresh_from_db()
    assert asked.status == CandidateStatus.PENDING_USER


def test_another_tenants_key_sees_and_decides_nothing(outsider_client, asked):
    assert outsider_client.get(pending_url("u1")).json() == {"results": []}
    assert_error(outsider_client.post_json(pending_url("u1", asked.pk, "confirm"), {"version": asked.version}), 404, "not_found")
    asked.refresh_from_db()
    assert asked.status == CandidateStatus.PENDING_USER


def test_it_requires_the_subject_scope(tenant, make_client, asked):
    client = make_client(tenant, [s for s in Scope.values if s != Scope.SUBJECT])
    assert_error(client.get(pending_url("u1")), 403, "forbidden")
    assert_error(client.post_json(pending_url("u1", asked.pk, "confirm"), {"version": asked.version}), 403, "forbidden")
    asked.refresh_from_db()
    assert asked.status == CandidateStatus.PENDING_USER


@pytest.mark.parametrize("body", [{}, {"version": "x"}, {"version": True}, {"version": 1, "keep": True}, {"version": 0}])
def test_bad_input_is_a_400(subject_client, asked, body):
    assert_error(subject_client.post_json(pending_url("u1", asked.pk, "confirm"), body), 400, "invalid")


def test_a_malformed_user_id_is_a_400(subject_client, db):
    assert_error(subject_client.get("/api/v1/users/a%00b/pending"), 400, "invalid")
