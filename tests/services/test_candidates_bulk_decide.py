"""candidates_bulk_decide: a selection decided item by item, each checked against its version."""
import pytest

from reviews.actors import Actor
from reviews.errors import InvalidInput
from reviews.models import AuditEvent, AuditPayload, Candidate
from reviews.services.candidates import MAX_BULK_ITEMS, candidates_bulk_decide
from tests.conftest import candidate
from tests.review.conftest import approve_as, propose


def selection(*items):
    return [(item.pk, item.version) for item in items]


@pytest.fixture
def three(tenant):
    return propose(tenant, "alice", *[candidate(field="preference", value=f"likes {n}") for n in ("tea", "jazz", "rain")])


def test_bulk_approve_decides_each_and_reports_the_stale_one(tenant, three, reviewer, second_reviewer):
    approve_as(second_reviewer, three[1])
    outcome = candidates_bulk_decide(
        tenant=tenant, items=selection(*three), decision="approve", actor=Actor.reviewer(reviewer)
    )
    assert outcome.decided == [three[0].pk, three[2].pk]
    [stale] = outcome.stale
    assert (stale["id"], stale["status"], stale["decided_by"]) == (three[1].pk, "approved", f"reviewer:{second_reviewer.pk}")
    assert outcome.failed == []
    assert Candidate.objects.filter(decided_by=f"reviewer:{reviewer.pk}").count() == 2
    assert AuditEvent.objects.filter(action="candidate.approved", actor=f"reviewer:{reviewer.pk}").count() == 2
    summary = AuditEvent.objects.get(action="candidates.bulk_approve")
    assert AuditPayload.objects.get(event=summary).after == {
        "decided": [three[0].pk, three[2].pk], "stale": [three[1].pk], "failed": []
    }


def test_bulk_reject_needs_a_reason_and_records_it(tenant, three, reviewer):
    with pytest.raises(InvalidInput):
        candidates_bulk_decide(tenant=tenant, items=selection(*three), decision="reject", actor=Actor.reviewer(reviewer))
    assert not AuditEvent.objects.filter(action__startswith="candidates.bulk").exists()
    outcome = candidates_bulk_decide(
        tenant=tenant, items=selection(*three), decision="reject", note="not preferences", actor=Actor.reviewer(reviewer)
    )
    assert len(outcome.decided) == 3
    assert set(Candidate.objects.filter(pk__in=outcome.decided).values_list("status", "note")) == {
        ("rejected", "not preferences")
    }
    assert AuditPayload.objects.get(event__action="candidates.bulk_reject").reason == "not preferences"


def test_another_tenants_items_fail_without_saying_why(tenant, other_tenant, three, reviewer):
    [theirs] = propose(other_tenant, "zed", candidate())
    outcome = candidates_bulk_decide(
        tenant=tenant, items=selection(three[0], theirs), decision="approve", actor=Actor.reviewer(reviewer)
    )
    assert outcome.decided == [three[0].pk]
    assert outcome.failed == [{"id": theirs.pk, "code": "not_found", "message": "Candidate not found."}]
    assert Candidate.objects.get(pk=theirs.pk).status == "pending_review"


def test_an_item_no_longer_open_fails_and_the_rest_stand(tenant, three, reviewer):
    Candidate.objects.filter(pk=three[0].pk).update(status="withdrawn")
    outcome = candidates_bulk_decide(
        tenant=tenant, items=selection(*three), decision="approve", actor=Actor.reviewer(reviewer)
    )
    assert [item["code"] for item in outcome.failed] == ["invalid_transition"]
    assert outcome.decided == [three[1].pk, three[2].pk]


@pytest.mark.parametrize(
    "items,decision", [([], "approve"), ([(n, 1) for n in range(MAX_BULK_ITEMS + 1)], "approve"), ([(1, 1)], "delete")]
)
def test_bad_selections_are_refused_before_anything_changes(tenant, reviewer, items, decision):
    with pytest.raises(InvalidInput):
        candidates_bulk_decide(tenant=tenant, items=items, decision=decision, note="x", actor=Actor.reviewer(reviewer))
