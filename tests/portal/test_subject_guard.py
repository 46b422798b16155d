"""The subject decides only `pending_user` items and their own facts, never an item waiting
for a reviewer, a conflict with their own fact included (SPEC §4)."""
import pytest

from reviews.actors import Actor
from reviews.errors import Forbidden
from reviews.models import AuditEvent, Candidate, Fact, Source
from reviews.services.candidates import candidate_approve, candidate_reject, candidate_settle_conflict
from tests.conftest import candidate

ACTIONS = [
    ("confirm", {}),
    ("correct", {"value": "SQLite"}),
    ("reject", {}),
    ("settle", {"resolution": "take_new", "value": ""}),
    ("settle", {"resolution": "keep_old", "value": ""}),
    ("settle", {"resolution": "edit", "value": "SQLite"}),
]


@pytest.fixture
def for_review(tenant, submit, say, alice):
    """Every kind of item waiting for a reviewer in alice's memory, by name."""
    say(tenant, "alice", "a-bot", "Your name is Alicia, right?", role="assistant")
    [crm] = submit(tenant, "alice", candidate(entity_type="organization", entity_id="acme", field="name",
                                              value="ACME Corp", confidence=0.99), source=Source.BUSINESS_SYSTEM)
    [claimed] = submit(tenant, "alice", candidate(value="Alicia", confidence=0.99, source_message_id="a-bot",
                                                  evidence="Your name is Alicia"))
    [against_crm] = submit(tenant, "alice", candidate(entity_type="organization", entity_id="acme", field="name",
                                                      value="Acme Ltd", confidence=0.9, supersedes=True))
    [plain] = submit(tenant, "alice", candidate(field="language", value="French", confidence=0.9))
    items = {
        "conflict": alice.conflict,
        "assistant_claim": Candidate.objects.get(pk=claimed.candidate_id),
        "business_system_conflict": Candidate.objects.get(pk=against_crm.candidate_id),
        "plain": Candidate.objects.get(pk=plain.candidate_id),
    }
    assert crm.status == "auto_approved"
    assert all(item.status == "pending_review" for item in items.values())
    assert items["assistant_claim"].has_conflict and items["business_system_conflict"].has_conflict
    return items


def snapshot(tenant):
    return (
        sorted(Candidate.objects.filter(subject__user_id="alice").values_list("pk", "status", "version", "value")),
        sorted(Fact.objects.filter(subject__user_id="alice").values_list("pk", "status", "version", "value")),
        AuditEvent.objects.filter(tenant_id=tenant.pk).count(),
    )


@pytest.mark.parametrize("name", ["conflict", "assistant_claim", "business_system_conflict", "plain"])
@pytest.mark.parametrize("action,data", ACTIONS, ids=lambda a: a if isinstance(a, str) else a.get("resolution", ""))
def test_the_page_refuses_every_decision_on_an_item_for_a_reviewer(tenant, for_review, alice_client, name, action, data):
    item = for_review[name]
    before = snapshot(tenant)
    response = alice_client.post(f"/me/waiting/{item.pk}/{action}/", {"version": item.version, **data})
    assert response.status_code == 403
    assert "This item is waiting for a reviewer, not for you." in response.content.decode()
    assert snapshot(tenant) == before


@pytest.mark.parametrize("name", ["conflict", "assistant_claim", "business_system_conflict", "plain"])
def test_the_services_refuse_the_subject(tenant, for_review, name):
    item = for_review[name]
    subject = Actor.subject("alice")
    before = snapshot(tenant)
    attempts = [
        lambda: candidate_approve(tenant=tenant, candidate_id=item.pk, version=item.version, actor=subject, user_id="alice"),
        lambda: candidate_approve(tenant=tenant, candidate_id=item.pk, version=item.version, actor=subject,
                                  value="SQLite", user_id="alice"),
        lambda: candidate_reject(tenant=tenant, candidate_id=item.pk, version=item.version, actor=subject, user_id="alice"),
        *[
            lambda resolution=resolution: candidate_settle_conflict(
                tenant=tenant, candidate_id=item.pk, version=item.version, resolution=resolution, actor=subject,
                value="SQLite", user_id="alice",
            )
            for resolution in ("keep_old", "take_new", "edit")
        ],
    ]
    for attempt in attempts:
        with pytest.raises(Forbidden) as refused:
            attempt()
        assert refused.value.http_status == 403 and refused.value.details == {"status": "pending_review"}
    assert snapshot(tenant) == before


def test_the_waiting_page_shows_a_conflict_for_review_without_decisions(tenant, for_review, alice_client):
    html = alice_client.get("/me/waiting/").content.decode()
    conflict = for_review["conflict"]
    assert f'data-candidate="{conflict.pk}"' in html
    assert f"/me/waiting/{conflict.pk}/settle/" not in html
    assert f"/me/facts/{conflict.conflict_fact_id}/" in html  # where they may contest or correct the fact


def test_the_badge_counts_only_what_waits_for_the_subject(tenant, for_review, alice_client):
    html = alice_client.get("/me/waiting/").content.decode()
    waiting_for_alice = Candidate.objects.filter(subject__user_id="alice", status="pending_user").count()
    assert waiting_for_alice == 3
    assert f'<span class="badge" aria-label="{waiting_for_alice} items">{waiting_for_alice}</span>' in html


def test_their_own_pending_user_item_is_still_theirs(tenant, alice, alice_client):
    response = alice_client.post(f"/me/waiting/{alice.unsure.pk}/confirm/", {"version": alice.unsure.version})
    assert response.status_code == 302
    assert Candidate.objects.get(pk=alice.unsure.pk).status == "approved"
    assert AuditEvent.objects.filter(actor="subject:alice", action="candidate.approved").count() == 1
