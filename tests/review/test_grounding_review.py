"""Grounding flags through the API and the queue page (SPEC §3, §4): shown, filterable,
never auto-approved."""
import pytest

from reviews.models import AuditEvent, Candidate, CandidateFlag, Fact, Scope
from tests.conftest import candidate
from tests.review.conftest import store_thread, with_bodies

SUBMIT = "/api/v1/candidates"
QUEUE_API = "/api/v1/review/candidates"
QUEUE_PAGE = "/review/"


@pytest.fixture
def thread(tenant):
    return store_thread(tenant, "alice", "t-1", [
        ("m-1", "user", "I live in Berlin and my name is <b>Alice</b>."),
        ("m-2", "assistant", "So you are a data scientist?"),
    ])


@pytest.fixture
def submitted(thread, ingest_client):
    response = ingest_client.post_json(SUBMIT, {"user_id": "alice", "candidates": [
        # Grounded: the evidence is in the user's message and states the value.
        candidate(field="name", value="Alice", confidence=0.99, source_message_id="m-1", evidence="my name is <b>Alice</b>"),
        # The quoted evidence is not in the message: would have been auto-approved.
        candidate(field="role", value="engineer", confidence=0.99, source_message_id="m-1",
                  evidence="I am an <i>engineer</i>"),
        # In the message, but it does not say this value.
        candidate(field="language", value="German", confidence=0.99, source_message_id="m-1",
                  evidence="I live in Berlin"),
        # The assistant said it, not the user.
        candidate(field="role", value="data scientist", confidence=0.99, source_message_id="m-2",
                  evidence="you are a data scientist"),
    ]})
    assert response.status_code == 201, response.content
    return response.json()["results"]


def test_the_api_flags_and_holds_what_is_not_grounded(submitted, tenant):
    assert [(r["status"], r["reason"], r.get("flags", [])) for r in submitted] == [
        ("auto_approved", "auto_approve", []),
        ("pending_review", "ungrounded", [CandidateFlag.UNSUPPORTED]),
        ("pending_review", "ungrounded", [CandidateFlag.UNSUPPORTED]),
        ("pending_review", "ungrounded", [CandidateFlag.NOT_FROM_USER]),
    ]
    assert list(Fact.objects.values_list("field", "value")) == [("name", "Alice")]
    stored = Candidate.objects.get(pk=submitted[3]["candidate_id"])
    assert stored.flags == [CandidateFlag.NOT_FROM_USER]
    event = AuditEvent.objects.get(tenant_id=tenant.pk, object_id=stored.pk, action="policy.pending_review")
    assert event.reason_code == "ungrounded"


def test_the_queue_api_filters_by_flag(submitted, tenant, make_client, other_tenant):
    client = make_client(tenant, [Scope.REVIEW])

    unsupported = client.get(QUEUE_API, {"flag": "unsupported"}).json()["results"]
    not_from_user = client.get(QUEUE_API, {"flag": "not_from_user"}).json()["results"]

    assert [row["id"] for row in unsupported] == [submitted[1]["candidate_id"], submitted[2]["candidate_id"]]
    assert [row["id"] for row in not_from_user] == [submitted[3]["candidate_id"]]
    assert unsupported[0]["flags"] == ["unsupported"]
    outsider = make_client(other_tenant, [Scope.REVIEW])
    assert outsider.get(QUEUE_API, {"flag": "unsupported"}).json()["results"] == []


def test_an_unknown_flag_is_a_400(submitted, tenant, make_client):
    response = make_client(tenant, [Scope.REVIEW]).get(QUEUE_API, {"flag": "bogus"})

    assert response.status_code == 400
    assert response.json()["error"]["code"] == "invalid"


def test_the_card_shows_the_flag_and_the_evidence_or_its_absence(submitted, reviewer_client):
    page = with_bodies(reviewer_client, reviewer_client.get(QUEUE_PAGE, {"flag": "unsupported"}).content.decode())

    assert page.count('data-flag="unsupported"') == 2
    assert f'id="item-{submitted[3]["candidate_id"]}"' not in page  # filtered out
    # The evidence quoted but absent from the message: said so, and quoted escaped.
    assert "The quoted evidence is not in the source message:" in page
    assert "I am an &lt;i&gt;engineer&lt;/i&gt;" in page and "<i>engineer" not in page
    # The evidence that is in the message is highlighted, and the card says it does not state the value.
    assert "<mark>I live in Berlin</mark>" in page
    assert "The highlighted evidence does not state this value." in page


def test_the_card_says_who_wrote_the_source(submitted, reviewer_client):
    page = with_bodies(reviewer_client, reviewer_client.get(QUEUE_PAGE, {"flag": "not_from_user"}).content.decode())

    assert 'data-flag="not_from_user"' in page
    assert "The source message was not written by the user." in page
    assert "<mark>you are a data scientist</mark>" in page  # the assistant's words, highlighted where they are


def test_the_flag_filter_is_on_the_page(submitted, reviewer_client):
    page = reviewer_client.get(QUEUE_PAGE).content.decode()

    assert 'name="flag"' in page and 'value="unsupported"' in page
