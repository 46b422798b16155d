"""Undo (SPEC §4): the decider takes a decision back within 30 seconds, as an audited
compensating transition that restores the candidate, the fact, the projection, the
candidates it superseded and the suppression it added; later, or once something else
moved the item, it is refused with the reason."""
from datetime import timedelta

import pytest
import time_machine
from django.utils import timezone

from reviews.actors import Actor
from reviews.errors import InvalidTransition
from reviews.models import AuditEvent, AuditPayload, Candidate, Fact, FactStatus, SuppressedValue
from reviews.services.portal import fact_contest
from reviews.domain import UNDO_SECONDS
from reviews.services.candidates import (
    UndoRefused,
    candidate_approve,
    candidate_defer,
    candidate_reject,
    candidate_settle_conflict,
    candidate_undo,
    candidates_bulk_decide,
)
from tests.conftest import candidate
from tests.publication.conftest import store, user_item  # noqa: F401 (fixture)
from tests.review.conftest import approve_as, propose


def pending(tenant, user_id="alice", **item):
    [row] = propose(tenant, user_id, candidate(**{"confidence": 0.9, "field": "location", "value": "Berlin", **item}))
    assert row.status == "pending_review"
    return row


def undo(reviewer, item):
    return candidate_undo(tenant=item.tenant, candidate_id=item.pk, actor=Actor.reviewer(reviewer))


def refusal(reviewer, item) -> str:
    with pytest.raises(InvalidTransition) as error:
        undo(reviewer, item)
    return error.value.details["undo"]


def audit_of(tenant, action):
    return list(AuditEvent.objects.filter(tenant_id=tenant.pk, action=action).order_by("seq"))


def payload(event):
    return AuditPayload.objects.get(event=event)


class TestUndoApprove:
    def test_a_new_fact_leaves_publication_and_the_projection(
        self, tenant, reviewer, store, django_capture_on_commit_callbacks  # noqa: F811
    ):
        item = pending(tenant)
        with django_capture_on_commit_callbacks(execute=True):
            approved = approve_as(reviewer, item)
        fact = Fact.objects.get(pk=approved.fact_id)
        assert user_item(store, "alice")["facts"]["location"]["value"] == "Berlin"
        with django_capture_on_commit_callbacks(execute=True):
            restored = undo(reviewer, item)
        assert (restored.status, restored.reason, restored.decided_by, restored.fact_id) == (
            "pending_review", "needs_review", "", None
        )
        assert restored.version == approved.version + 1
        fact.refresh_from_db()
        assert fact.status == FactStatus.DELETED  # the row stays: a fact row is never removed
        assert (fact.value, fact.evidence) == ("", "")  # a tombstone keeps no value, like any deleted fact
        assert "location" not in (user_item(store, "alice") or {"facts": {}})["facts"]
        [event] = audit_of(tenant, "candidate.decision_undone")
        assert event.actor == f"reviewer:{reviewer.pk}"
        assert payload(event).before["status"] == "approved" and payload(event).after["status"] == "pending_review"
        [fact_event] = audit_of(tenant, "fact.decision_undone")
        assert fact_event.object_id == str(fact.pk) and payload(fact_event).after["status"] == "deleted"

    def test_the_item_can_be_approved_again_after_the_undo(
        self, tenant, reviewer, store, django_capture_on_commit_callbacks  # noqa: F811
    ):
        item = pending(tenant)
        with django_capture_on_commit_callbacks(execute=True):  # each its own transaction, committed
            approve_as(reviewer, item)
        with django_capture_on_commit_callbacks(execute=True):
            undo(reviewer, item)
        with django_capture_on_commit_callbacks(execute=True):
            again = approve_as(reviewer, Candidate.objects.get(pk=item.pk))
        fact = Fact.objects.get(pk=again.fact_id)
        assert (fact.status, fact.value) == (FactStatus.ACTIVE, "Berlin")
        assert user_item(store, "alice")["facts"]["location"]["value"] == "Berlin"

    def test_a_changed_fact_gets_its_former_value_back_as_its_next_version(
        self, tenant, reviewer, store, django_capture_on_commit_callbacks  # noqa: F811
    ):
        with django_capture_on_commit_callbacks(execute=True):
            approve_as(reviewer, pending(tenant, value="Montreal"))
        conflict = pending(tenant, value="Vancouver")
        assert conflict.has_conflict
        before = Fact.objects.get(pk=conflict.conflict_fact_id)
        with django_capture_on_commit_callbacks(execute=True):
            candidate_settle_conflict(
                tenant=tenant, candidate_id=conflict.pk, version=conflict.version, resolution="take_new",
                actor=Actor.reviewer(reviewer),
            )
        assert user_item(store, "alice")["facts"]["location"]["value"] == "Vancouver"
        with django_capture_on_commit_callbacks(execute=True):
            restored = undo(reviewer, conflict)
        fact = Fact.objects.get(pk=before.pk)
        assert (fact.value, fact.source, fact.status, fact.approved_by, fact.provenance) == (
            before.value, before.source, before.status, before.approved_by, before.provenance
        )
        assert fact.version == before.version + 2  # Vancouver, then Montreal again
        assert fact.versions.get(version=fact.version).reason == "undo"
        assert user_item(store, "alice")["facts"]["location"]["value"] == "Montreal"
        assert restored.status == "pending_review" and restored.has_conflict

    def test_the_candidates_it_superseded_are_reopened(self, tenant, reviewer):
        older = pending(tenant, value="Paris")
        newer = pending(tenant, value="Lyon")
        approve_as(reviewer, newer)
        older.refresh_from_db()
        assert older.status == "superseded"
        undo(reviewer, newer)
        older.refresh_from_db()
        assert (older.status, older.reason) == ("pending_review", "needs_review")


    def test_the_items_it_closed_as_published_are_reopened_and_audited(self, tenant, reviewer):
        # Both judged when nothing was published; approving one publishes the other's value.
        older = pending(tenant, value="Berlin", source_message_id="m-1")
        approved = pending(tenant, value="Lyon")
        newer = pending(tenant, value="Lyon", source_message_id="m-2", confidence=0.85)
        waiting = {item.pk: item.version for item in (older, newer)}
        approve_as(reviewer, approved)
        closed = {item.pk: item for item in Candidate.objects.filter(pk__in=waiting)}
        assert (closed[newer.pk].status, closed[newer.pk].reason) == ("superseded", "same_as_published")
        assert (closed[older.pk].status, closed[older.pk].reason) == ("superseded", "newer_candidate")

        undo(reviewer, approved)
        for item in Candidate.objects.filter(pk__in=waiting):
            assert (item.status, item.reason, item.has_conflict) == ("pending_review", "needs_review", False)
            assert item.version == waiting[item.pk] + 2  # closed, then reopened: a held version is stale
        reopened = {
            event.object_id: payload(event)
            for event in audit_of(tenant, "candidate.decision_undone") if event.object_id != str(approved.pk)
        }
        assert set(reopened) == {str(older.pk), str(newer.pk)}
        assert reopened[str(newer.pk)].after == {
            "status": "pending_review", "version": waiting[newer.pk] + 2, "by_undo_of": approved.pk
        }
        assert all(event.actor == f"reviewer:{reviewer.pk}" for event in audit_of(tenant, "candidate.decision_undone"))

    def test_an_item_waiting_for_the_user_goes_back_to_them(self, tenant, reviewer):
        approved = pending(tenant, value="Lyon")
        [asked] = propose(tenant, "alice", candidate(field="location", value="Lyon", confidence=0.6,
                                                      source_message_id="m-2"))
        assert asked.status == "pending_user"
        approve_as(reviewer, approved)
        asked.refresh_from_db()
        assert (asked.status, asked.reason) == ("superseded", "same_as_published")
        undo(reviewer, approved)
        asked.refresh_from_db()
        assert (asked.status, asked.reason, asked.version) == ("pending_user", "needs_confirmation", 3)

    def test_only_the_decider_reopens_them(self, tenant, reviewer, second_reviewer):
        approved = pending(tenant, value="Lyon")
        same = pending(tenant, value="Lyon", source_message_id="m-2", confidence=0.85)
        approve_as(reviewer, approved)
        assert refusal(second_reviewer, approved) == UndoRefused.NOTHING
        same.refresh_from_db()
        assert (same.status, same.reason) == ("superseded", "same_as_published")
        assert not audit_of(tenant, "candidate.decision_undone")


class TestUndoRejectAndDefer:
    def test_a_rejection_lifts_the_suppression_it_added(self, tenant, reviewer):
        item = pending(tenant)
        candidate_reject(tenant=tenant, candidate_id=item.pk, version=1, actor=Actor.reviewer(reviewer), note="wrong")
        assert SuppressedValue.objects.filter(subject=item.subject).count() == 1
        restored = undo(reviewer, item)
        assert (restored.status, restored.note) == ("pending_review", "")
        assert not SuppressedValue.objects.filter(subject=item.subject).exists()

    def test_asking_the_user_is_taken_back(self, tenant, reviewer):
        item = pending(tenant)
        candidate_defer(tenant=tenant, candidate_id=item.pk, version=1, actor=Actor.reviewer(reviewer))
        assert undo(reviewer, item).status == "pending_review"

    def test_a_bulk_decision_is_undone_item_by_item(self, tenant, reviewer):
        items = [pending(tenant, user_id=f"u{index}") for index in range(3)]
        candidates_bulk_decide(
            tenant=tenant, items=[(c.pk, c.version) for c in items], decision="approve", actor=Actor.reviewer(reviewer)
        )
        for item in items:
            assert undo(reviewer, item).status == "pending_review"
        assert Fact.objects.filter(tenant=tenant, status=FactStatus.ACTIVE).count() == 0


# --- A contest: the subject sent a reviewer's fact back to review --------------------------------

ALICE = Actor.subject("alice")
_FACT_FIELDS = ("status", "value", "value_digest", "confidence", "source", "evidence", "provenance", "expires_at",
                "approved_by", "updated_at")
_CANDIDATE_FIELDS = ("status", "reason", "note", "value", "flags", "has_conflict", "conflict_fact_id", "decided_by",
                     "decided_at", "fact_id")


def fact_state(fact_id):
    return Fact.objects.filter(pk=fact_id).values(*_FACT_FIELDS).get()


def candidate_state(candidate_id):
    return Candidate.objects.filter(pk=candidate_id).values(*_CANDIDATE_FIELDS).get()


@pytest.fixture
def contest(tenant, reviewer, store, django_capture_on_commit_callbacks):  # noqa: F811
    """alice's role, approved by a reviewer and published, then contested by alice: the
    contest candidate waits for review and the fact is out of the projection."""
    item = pending(tenant, field="role", value="data engineer", evidence="I work as a data engineer")
    with django_capture_on_commit_callbacks(execute=True):
        approve_as(reviewer, item)
    fact_id = Candidate.objects.get(pk=item.pk).fact_id
    assert user_item(store, "alice")["facts"]["role"]["value"] == "data engineer"
    with django_capture_on_commit_callbacks(execute=True):
        contested = fact_contest(tenant=tenant, user_id="alice", fact_id=fact_id, actor=ALICE, note="I left that job")
    assert contested.status == "pending_review" and "contested" in contested.flags
    assert Fact.objects.get(pk=fact_id).status == FactStatus.CONTESTED
    return contested


def projected_role(store):  # noqa: F811
    return ((user_item(store, "alice") or {}).get("facts") or {}).get("role")


class TestUndoContest:
    """Undo of a decision on a contested item puts the contest back exactly as it was: the
    candidate waiting for review with the subject's note, the fact contested with its value,
    out of publication, and nothing suppressed that was not before."""

    def _decide_then_undo(self, reviewer, contest, store, capture, decide, *, published):  # noqa: F811
        """Decide, check what the projection shows meanwhile (``published``: the role's
        value, or None), undo, and compare everything with the moment before deciding."""
        fact_before, candidate_before = fact_state(contest.conflict_fact_id), candidate_state(contest.pk)
        projected_before = projected_role(store)
        suppressed_before = SuppressedValue.objects.filter(subject=contest.subject).count()
        with capture(execute=True):
            decide()
        assert (projected_role(store) or {}).get("value") == published
        decided = fact_state(contest.conflict_fact_id)
        with capture(execute=True):
            restored = undo(reviewer, contest)
        assert fact_state(contest.conflict_fact_id) == fact_before
        assert candidate_state(contest.pk) == candidate_before
        assert restored.version == contest.version + 2  # decided, then undone: a held screen is stale
        assert projected_role(store) == projected_before is None
        assert SuppressedValue.objects.filter(subject=contest.subject).count() == suppressed_before
        return decided

    def test_upholding_it_unpublishes_the_fact_again(
        self, tenant, reviewer, contest, store, django_capture_on_commit_callbacks  # noqa: F811
    ):
        decided = self._decide_then_undo(reviewer, contest, store, django_capture_on_commit_callbacks,
                                         lambda: approve_as(reviewer, contest), published="data engineer")
        assert decided["status"] == FactStatus.ACTIVE
        fact = Fact.objects.get(pk=contest.conflict_fact_id)
        assert fact.status == FactStatus.CONTESTED and fact.value == "data engineer"
        [fact_event] = audit_of(tenant, "fact.decision_undone")
        assert payload(fact_event).before["status"] == "active" and payload(fact_event).after["status"] == "contested"

    def test_a_correction_of_it_gives_the_fact_its_contested_value_back(
        self, tenant, reviewer, contest, store, django_capture_on_commit_callbacks  # noqa: F811
    ):
        decided = self._decide_then_undo(reviewer, contest, store, django_capture_on_commit_callbacks,
                                         lambda: approve_as(reviewer, contest, value="product manager"),
                                         published="product manager")
        assert decided["value"] == "product manager"
        fact = Fact.objects.get(pk=contest.conflict_fact_id)
        assert (fact.status, fact.value) == (FactStatus.CONTESTED, "data engineer")
        assert fact.versions.get(version=fact.version).reason == "undo"

    def test_agreeing_with_the_subject_is_taken_back_value_and_suppression_included(
        self, tenant, reviewer, contest, store, django_capture_on_commit_callbacks  # noqa: F811
    ):
        def agree():
            candidate_reject(tenant=tenant, candidate_id=contest.pk, version=contest.version, note="subject is right",
                             actor=Actor.reviewer(reviewer))
            assert SuppressedValue.objects.filter(subject=contest.subject).count() == 1

        decided = self._decide_then_undo(reviewer, contest, store, django_capture_on_commit_callbacks, agree,
                                         published=None)
        assert (decided["status"], decided["value"]) == (FactStatus.DELETED, "")  # the contest closed it, emptied
        fact = Fact.objects.get(pk=contest.conflict_fact_id)
        assert (fact.status, fact.value) == (FactStatus.CONTESTED, "data engineer")
        assert Candidate.objects.get(pk=contest.pk).note == "I left that job"  # the subject's words, not the reason

    def test_it_is_refused_after_thirty_seconds(self, tenant, reviewer, contest):
        approve_as(reviewer, contest)
        with time_machine.travel(timezone.now() + timedelta(seconds=UNDO_SECONDS + 1)):
            assert refusal(reviewer, contest) == UndoRefused.EXPIRED
        assert Fact.objects.get(pk=contest.conflict_fact_id).status == FactStatus.ACTIVE
        assert Candidate.objects.get(pk=contest.pk).status == "approved"
        assert not audit_of(tenant, "candidate.decision_undone")

    def test_it_is_refused_once_the_subject_contested_the_fact_again(self, tenant, reviewer, contest):
        approve_as(reviewer, contest)
        again = fact_contest(tenant=tenant, user_id="alice", fact_id=contest.conflict_fact_id, actor=ALICE)
        assert refusal(reviewer, contest) == UndoRefused.MOVED
        assert Fact.objects.get(pk=contest.conflict_fact_id).status == FactStatus.CONTESTED  # by the new contest
        assert Candidate.objects.get(pk=contest.pk).status == "approved"
        assert Candidate.objects.get(pk=again.pk).status == "pending_review"

    def test_it_is_refused_once_a_colleague_published_another_value_in_the_slot(
        self, tenant, reviewer, second_reviewer, contest
    ):
        # The rejection left the contested fact as it was; the new value is a fact beside it.
        candidate_reject(tenant=tenant, candidate_id=contest.pk, version=contest.version, note="subject is right",
                         actor=Actor.reviewer(reviewer))
        newer = pending(tenant, field="role", value="product manager")
        approve_as(second_reviewer, newer)
        assert refusal(reviewer, contest) == UndoRefused.MOVED
        assert Fact.objects.get(pk=contest.conflict_fact_id).status == FactStatus.DELETED
        assert list(Fact.objects.filter(subject=contest.subject, field="role", status="active")
                    .values_list("value", flat=True)) == ["product manager"]


class TestUndoRefused:
    def test_after_thirty_seconds(self, tenant, reviewer):
        item = pending(tenant)
        approve_as(reviewer, item)
        with time_machine.travel(timezone.now() + timedelta(seconds=UNDO_SECONDS + 1)):
            assert refusal(reviewer, item) == UndoRefused.EXPIRED
        assert Candidate.objects.get(pk=item.pk).status == "approved"

    def test_once_something_else_moved_the_fact(self, tenant, reviewer, second_reviewer):
        item = pending(tenant)
        approve_as(reviewer, item)
        later = pending(tenant, value="Hamburg")
        candidate_settle_conflict(
            tenant=tenant, candidate_id=later.pk, version=later.version, resolution="take_new",
            actor=Actor.reviewer(second_reviewer),
        )
        assert refusal(reviewer, item) == UndoRefused.MOVED
        assert Fact.objects.get(pk=Candidate.objects.get(pk=item.pk).fact_id).value == "Hamburg"

    def test_only_by_who_decided(self, tenant, reviewer, second_reviewer):
        item = pending(tenant)
        approve_as(reviewer, item)
        assert refusal(second_reviewer, item) == UndoRefused.NOTHING

    def test_only_once(self, tenant, reviewer):
        item = pending(tenant)
        approve_as(reviewer, item)
        undo(reviewer, item)
        assert refusal(reviewer, item) == UndoRefused.NOTHING
        assert len(audit_of(tenant, "candidate.decision_undone")) == 1

    def test_another_tenant_finds_nothing(self, tenant, other_tenant, reviewer, outsider):
        item = pending(tenant)
        approve_as(reviewer, item)
        from reviews.errors import NotFound

        with pytest.raises(NotFound):
            candidate_undo(tenant=other_tenant, candidate_id=item.pk, actor=Actor.reviewer(outsider))
