"""No decision replaces what it was not compared with (SPEC §4): when the published value of
a field changes, every waiting item of that field is judged again in the same transaction."""
import pytest

from reviews.actors import Actor
from reviews.errors import StaleVersion
from reviews.models import AuditEvent, AuditPayload, Candidate, Fact, Source
from reviews.services.candidates import candidate_approve, candidate_undo, candidates_bulk_decide
from reviews.services.erasure import fact_erase
from reviews.services.facts import fact_edit
from tests.conftest import candidate


def proposed(tenant, submit, *values, field="name", confidence=0.9, source=Source.CHAT, **item):
    results = submit(
        tenant, "alice", *[candidate(field=field, value=v, confidence=confidence, **item) for v in values], source=source
    )
    return [Candidate.objects.get(pk=r.candidate_id) for r in results]


def rejudged_events(tenant, item):
    return AuditEvent.objects.filter(tenant_id=tenant.pk, action="candidate.rejudged", object_id=str(item.pk))


def payload(event):
    return AuditPayload.objects.get(event=event)


class TestApprovalOfAnotherItem:
    def test_the_newer_item_becomes_a_conflict_with_the_approved_value(self, tenant, submit, reviewer):
        first, second = proposed(tenant, submit, "Dana", "Daniela")
        assert not second.has_conflict  # both judged when nothing was published
        candidate_approve(tenant=tenant, candidate_id=first.pk, version=1, actor=Actor.reviewer(reviewer))

        second.refresh_from_db()
        fact = Fact.objects.get(subject__user_id="alice", field="name", status="active")
        assert (second.status, second.version, second.has_conflict) == ("pending_review", 2, True)
        assert (second.conflict_fact_id, second.reason) == (fact.pk, "conflict")
        [event] = rejudged_events(tenant, second)
        assert event.actor == "policy"
        recorded = payload(event)
        assert recorded.before == {"status": "pending_review", "version": 1, "conflict_fact": None}
        assert recorded.after["conflict_fact"] == fact.pk and recorded.after["by"] == f"reviewer:{reviewer.pk}"
        assert recorded.after["by_candidate"] == first.pk

    def test_a_decision_with_the_old_version_is_a_409_naming_the_published_value(
        self, tenant, submit, reviewer, second_reviewer
    ):
        first, second = proposed(tenant, submit, "Dana", "Daniela")
        candidate_approve(tenant=tenant, candidate_id=first.pk, version=1, actor=Actor.reviewer(reviewer))
        with pytest.raises(StaleVersion) as stale:
            candidate_approve(tenant=tenant, candidate_id=second.pk, version=1, actor=Actor.reviewer(second_reviewer))
        assert stale.value.details["current_value"] == "Dana"
        assert stale.value.details["current_version"] == 2 and stale.value.details["status"] == "pending_review"
        assert stale.value.message == "This item changed since you loaded it: look at it again before deciding."
        assert Fact.objects.get(subject__user_id="alice", field="name", status="active").value == "Dana"
        assert not AuditEvent.objects.filter(action="candidate.approved", object_id=str(second.pk)).exists()

    def test_with_the_new_version_the_reviewer_takes_the_new_value_knowingly(self, tenant, submit, reviewer):
        first, second = proposed(tenant, submit, "Dana", "Daniela")
        candidate_approve(tenant=tenant, candidate_id=first.pk, version=1, actor=Actor.reviewer(reviewer))
        candidate_approve(tenant=tenant, candidate_id=second.pk, version=2, actor=Actor.reviewer(reviewer))
        fact = Fact.objects.get(subject__user_id="alice", field="name", status="active")
        assert (fact.value, fact.version) == ("Daniela", 2)

    def test_the_older_item_is_superseded_by_a_newer_approval(self, tenant, submit, reviewer):
        first, second = proposed(tenant, submit, "Dana", "Daniela")
        candidate_approve(tenant=tenant, candidate_id=second.pk, version=1, actor=Actor.reviewer(reviewer))
        first.refresh_from_db()
        assert (first.status, first.reason, first.version) == ("superseded", "newer_candidate", 2)
        with pytest.raises(StaleVersion) as stale:
            candidate_approve(tenant=tenant, candidate_id=first.pk, version=1, actor=Actor.reviewer(reviewer))
        assert stale.value.details["current_value"] == "Daniela"
        assert stale.value.message == "This item was closed: a newer value for its field was published."

    def test_an_item_proposing_the_published_value_is_closed(self, tenant, submit, reviewer):
        first, second = proposed(tenant, submit, "Dana", "dana")
        candidate_approve(tenant=tenant, candidate_id=first.pk, version=1, actor=Actor.reviewer(reviewer))
        second.refresh_from_db()
        assert (second.status, second.reason, second.version) == ("superseded", "same_as_published", 2)
        event = AuditEvent.objects.get(action="candidate.superseded", object_id=str(second.pk))
        assert event.reason_code == "same_as_published"

    def test_on_a_many_field_only_the_same_value_is_touched(self, tenant, submit, reviewer):
        python, same, rust = proposed(
            tenant, submit, "Python", "python", "Rust", field="tech_stack", entity_type="project", entity_id="p"
        )
        candidate_approve(tenant=tenant, candidate_id=python.pk, version=1, actor=Actor.reviewer(reviewer))
        same.refresh_from_db(), rust.refresh_from_db()
        assert (same.status, same.reason) == ("superseded", "same_as_published")
        assert (rust.status, rust.version, rust.has_conflict) == ("pending_review", 1, False)
        assert not rejudged_events(tenant, rust).exists()

    def test_the_subjects_confirmation_judges_the_others_again(self, tenant, submit, reviewer):
        [mine] = proposed(tenant, submit, "Lyon", field="location", confidence=0.9)
        [theirs] = proposed(tenant, submit, "Paris", field="location", confidence=0.6)
        assert theirs.status == "pending_user"
        candidate_approve(
            tenant=tenant, candidate_id=theirs.pk, version=1, actor=Actor.subject("alice"), user_id="alice"
        )
        mine.refresh_from_db()
        # Older than the confirmed value: a newer one came first.
        assert (mine.status, mine.reason, mine.version) == ("superseded", "newer_candidate", 2)

    def test_a_business_system_value_supersedes_what_waited(self, tenant, submit):
        [chat] = proposed(tenant, submit, "Dana")
        [crm] = proposed(tenant, submit, "Daniela", confidence=0.99, source=Source.BUSINESS_SYSTEM)
        assert crm.status == "auto_approved"
        chat.refresh_from_db()
        assert (chat.status, chat.reason, chat.version) == ("superseded", "newer_candidate", 2)

    def test_items_of_one_batch_are_not_judged_twice(self, tenant, submit):
        published, waiting = proposed(tenant, submit, "Dana", "Daniela", confidence=0.97)
        # The first was published; the second, judged against it in the same batch, is a
        # conflict from the start: its version is its first.
        assert published.status == "auto_approved"
        waiting.refresh_from_db()
        assert (waiting.status, waiting.version, waiting.has_conflict) == ("pending_review", 1, True)
        assert not rejudged_events(tenant, waiting).exists()


@pytest.fixture
def conflict(tenant, submit):
    """A published name (Dana) and a waiting conflict with it (Daniela)."""
    [published] = proposed(tenant, submit, "Dana", confidence=0.97)
    [waiting] = proposed(tenant, submit, "Daniela")
    assert waiting.has_conflict and waiting.version == 1
    return Fact.objects.get(pk=published.fact_id), waiting


class TestEditAndDeletion:
    def test_an_edit_moves_the_conflict_on(self, tenant, reviewer, conflict):
        fact, waiting = conflict
        fact_edit(tenant=tenant, fact_id=fact.pk, value="Dana Smith", actor=Actor.reviewer(reviewer))
        waiting.refresh_from_db()
        assert (waiting.status, waiting.version, waiting.conflict_fact_id) == ("pending_review", 2, fact.pk)
        [event] = rejudged_events(tenant, waiting)
        assert payload(event).after["conflict_fact_version"] == 2
        with pytest.raises(StaleVersion) as stale:
            candidate_approve(tenant=tenant, candidate_id=waiting.pk, version=1, actor=Actor.reviewer(reviewer))
        assert stale.value.details["current_value"] == "Dana Smith"

    def test_the_subjects_edit_to_the_proposed_value_closes_the_item(self, tenant, conflict):
        fact, waiting = conflict
        fact_edit(tenant=tenant, fact_id=fact.pk, value="Daniela", actor=Actor.subject("alice"), user_id="alice")
        waiting.refresh_from_db()
        assert (waiting.status, waiting.reason, waiting.version) == ("superseded", "same_as_published", 2)

    def test_a_deletion_leaves_no_conflict(self, tenant, reviewer, conflict):
        fact, waiting = conflict
        fact_erase(tenant=tenant, fact_id=fact.pk, actor=Actor.subject("alice"), user_id="alice")
        waiting.refresh_from_db()
        assert (waiting.status, waiting.version, waiting.has_conflict, waiting.conflict_fact_id) == (
            "pending_review", 2, False, None
        )
        [event] = rejudged_events(tenant, waiting)
        assert payload(event).after["conflict_fact"] is None and event.actor == "policy"
        with pytest.raises(StaleVersion) as stale:
            candidate_approve(tenant=tenant, candidate_id=waiting.pk, version=1, actor=Actor.reviewer(reviewer))
        assert stale.value.details["current_value"] is None


class TestBulkAndUndo:
    def test_bulk_reports_the_item_judged_again_and_decides_the_rest(self, tenant, submit, reviewer):
        first, second = proposed(tenant, submit, "Dana", "Daniela")
        [other] = proposed(tenant, submit, "Berlin", field="location")
        outcome = candidates_bulk_decide(
            tenant=tenant,
            items=[(first.pk, 1), (second.pk, 1), (other.pk, 1)],
            decision="approve",
            actor=Actor.reviewer(reviewer),
        )
        assert sorted(outcome.decided) == sorted([first.pk, other.pk])
        [stale] = outcome.stale
        assert (stale["id"], stale["current_value"], stale["status"]) == (second.pk, "Dana", "pending_review")
        assert Fact.objects.get(subject__user_id="alice", field="name", status="active").value == "Dana"
        assert rejudged_events(tenant, second).count() == 1
        summary = AuditEvent.objects.get(action="candidates.bulk_approve")
        assert payload(summary).after["stale"] == [second.pk]

    def test_an_undo_judges_them_again_against_what_it_restored(self, tenant, submit, reviewer):
        first, second = proposed(tenant, submit, "Dana", "Daniela")
        candidate_approve(tenant=tenant, candidate_id=first.pk, version=1, actor=Actor.reviewer(reviewer))
        candidate_undo(tenant=tenant, candidate_id=first.pk, actor=Actor.reviewer(reviewer))
        second.refresh_from_db()
        assert (second.status, second.version, second.has_conflict) == ("pending_review", 3, False)
        assert rejudged_events(tenant, second).count() == 2
