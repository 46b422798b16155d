"""Decisions by people: approve, edit, reject, defer, settle, and the stale path."""
import threading
from datetime import timedelta

import pytest
from django.db import connection

from reviews.actors import Actor
from reviews.errors import InvalidInput, InvalidTransition, NotFound, StaleVersion
from reviews.models import AuditEvent, AuditPayload, Candidate, Fact, SuppressedValue
from reviews.services.candidates import (
    candidate_approve,
    candidate_defer,
    candidate_reject,
    candidate_settle_conflict,
)
from tests.conftest import candidate


def pending(tenant, submit, user_id="alice", **item):
    [result] = submit(tenant, user_id, candidate(**({"confidence": 0.9} | item)))
    assert result.status in ("pending_review", "pending_user")
    return Candidate.objects.get(pk=result.candidate_id)


def audit_of(tenant, action):
    return AuditEvent.objects.filter(tenant_id=tenant.pk, action=action)


class TestApprove:
    def test_it_publishes_and_audits(self, tenant, submit, reviewer):
        item = pending(tenant, submit, field="location", value="Berlin")
        decided = candidate_approve(tenant=tenant, candidate_id=item.pk, version=1, actor=Actor.reviewer(reviewer))
        assert (decided.status, decided.reason, decided.version) == ("approved", "reviewer_approved", 2)
        fact = Fact.objects.get(pk=decided.fact_id)
        assert (fact.value, fact.version, fact.approved_by) == ("Berlin", 1, f"reviewer:{reviewer.pk}")
        event = audit_of(tenant, "candidate.approved").get()
        assert event.actor == f"reviewer:{reviewer.pk}" and event.object_id == str(item.pk)
        assert audit_of(tenant, "fact.created").count() == 1

    def test_edit_then_approve_publishes_the_edited_value(self, tenant, submit, reviewer):
        item = pending(tenant, submit, value="alice smth")
        decided = candidate_approve(
            tenant=tenant, candidate_id=item.pk, version=1, value="Alice Smith", actor=Actor.reviewer(reviewer)
        )
        assert decided.reason == "reviewer_edited"
        assert Fact.objects.get(pk=decided.fact_id).value == "Alice Smith"
        payload = AuditPayload.objects.get(event=audit_of(tenant, "candidate.edited_approved").get())
        assert (payload.before["value"], payload.after["value"]) == ("alice smth", "Alice Smith")

    @pytest.mark.parametrize(
        "value,problem",
        [("", "empty"), ("x" * 1001, "too_long"), ("pwd: hunter2", "secret_detected"), ("a\x00b", "null_character")],
    )
    def test_an_edit_is_validated_and_nothing_changes(self, tenant, submit, reviewer, value, problem):
        item = pending(tenant, submit)
        with pytest.raises(InvalidInput) as error:
            candidate_approve(tenant=tenant, candidate_id=item.pk, version=1, value=value, actor=Actor.reviewer(reviewer))
        assert error.value.details == {"value": problem}
        item.refresh_from_db()
        assert (item.status, item.version) == ("pending_review", 1)
        assert not Fact.objects.exists()
        if problem == "secret_detected":
            assert "hunter2" not in str(error.value)

    def test_stale_version_is_refused_with_who_decided(self, tenant, submit, reviewer, second_reviewer):
        item = pending(tenant, submit)
        candidate_approve(tenant=tenant, candidate_id=item.pk, version=1, actor=Actor.reviewer(reviewer))
        with pytest.raises(StaleVersion) as error:
            candidate_reject(
                tenant=tenant, candidate_id=item.pk, version=1, actor=Actor.reviewer(second_reviewer), note="no"
            )
        assert error.value.details["decided_by"] == f"reviewer:{reviewer.pk}"
        assert error.value.details["status"] == "approved"
        assert audit_of(tenant, "candidate.rejected").count() == 0

    def test_a_decided_candidate_cannot_be_decided_again_even_with_its_version(self, tenant, submit, reviewer):
        item = pending(tenant, submit)
        done = candidate_approve(tenant=tenant, candidate_id=item.pk, version=1, actor=Actor.reviewer(reviewer))
        with pytest.raises(InvalidTransition):
            candidate_approve(tenant=tenant, candidate_id=item.pk, version=done.version, actor=Actor.reviewer(reviewer))

    def test_another_tenant_cannot_see_it(self, tenant, other_tenant, submit, outsider):
        item = pending(tenant, submit)
        with pytest.raises(NotFound):
            candidate_approve(tenant=other_tenant, candidate_id=item.pk, version=1, actor=Actor.reviewer(outsider))
        item.refresh_from_db()
        assert item.status == "pending_review"

    def test_a_subject_only_reaches_their_own_items(self, tenant, submit):
        item = pending(tenant, submit, user_id="alice", confidence=0.6)
        with pytest.raises(NotFound):
            candidate_approve(
                tenant=tenant, candidate_id=item.pk, version=1, actor=Actor.subject("bob"), user_id="bob"
            )
        confirmed = candidate_approve(
            tenant=tenant, candidate_id=item.pk, version=1, actor=Actor.subject("alice"), user_id="alice"
        )
        assert confirmed.reason == "subject_confirmed"
        assert audit_of(tenant, "candidate.approved").get().actor == "subject:alice"

    def test_sensitive_item_gets_retention_unless_kept(self, tenant, submit):
        kept = pending(tenant, submit, field="health", value="diabetes", confidence=0.99)
        timed = pending(tenant, submit, field="health", value="asthma", confidence=0.99)
        subject = Actor.subject("alice")
        a = candidate_approve(tenant=tenant, candidate_id=kept.pk, version=1, actor=subject, keep=True, user_id="alice")
        b = candidate_approve(tenant=tenant, candidate_id=timed.pk, version=1, actor=subject, user_id="alice")
        assert Fact.objects.get(pk=a.fact_id).expires_at is None
        fact = Fact.objects.get(pk=b.fact_id)
        assert fact.expires_at - fact.updated_at == timedelta(days=90)


class TestReject:
    def test_it_requires_a_reason_from_a_reviewer(self, tenant, submit, reviewer):
        item = pending(tenant, submit)
        with pytest.raises(InvalidInput):
            candidate_reject(tenant=tenant, candidate_id=item.pk, version=1, actor=Actor.reviewer(reviewer), note="  ")
        assert audit_of(tenant, "candidate.rejected").count() == 0

    def test_it_suppresses_the_value_and_audits_the_reason(self, tenant, submit, reviewer):
        item = pending(tenant, submit)
        candidate_reject(tenant=tenant, candidate_id=item.pk, version=1, actor=Actor.reviewer(reviewer), note="typo")
        assert SuppressedValue.objects.filter(field="name").count() == 1
        event = audit_of(tenant, "candidate.rejected").get()
        assert event.reason_code == "reviewer_rejected"
        assert AuditPayload.objects.get(event=event).reason == "typo"


class TestDefer:
    def test_it_hands_the_item_to_the_subject(self, tenant, submit, reviewer):
        item = pending(tenant, submit)
        deferred = candidate_defer(tenant=tenant, candidate_id=item.pk, version=1, actor=Actor.reviewer(reviewer))
        assert (deferred.status, deferred.reason) == ("pending_user", "deferred")
        assert audit_of(tenant, "candidate.deferred").count() == 1

    def test_only_review_items_can_be_deferred(self, tenant, submit, reviewer):
        item = pending(tenant, submit, confidence=0.6)  # already pending_user
        with pytest.raises(InvalidTransition):
            candidate_defer(tenant=tenant, candidate_id=item.pk, version=1, actor=Actor.reviewer(reviewer))


class TestSettleConflict:
    @pytest.fixture
    def conflict(self, tenant, submit):
        item = dict(entity_type="project", entity_id="flask", field="database")
        submit(tenant, "alice", candidate(value="MySQL", confidence=0.97, **item))
        [new] = submit(tenant, "alice", candidate(value="PostgreSQL", confidence=0.97, **item))
        assert new.reason == "conflict"
        return Candidate.objects.get(pk=new.candidate_id)

    def settle(self, tenant, conflict, reviewer, resolution, value=None):
        return candidate_settle_conflict(
            tenant=tenant,
            candidate_id=conflict.pk,
            version=conflict.version,
            resolution=resolution,
            value=value,
            actor=Actor.reviewer(reviewer),
        )

    def test_keep_old(self, tenant, conflict, reviewer):
        self.settle(tenant, conflict, reviewer, "keep_old")
        assert list(Fact.objects.values_list("value", "version")) == [("MySQL", 1)]
        assert audit_of(tenant, "candidate.rejected").count() == 1

    def test_take_new(self, tenant, conflict, reviewer):
        settled = self.settle(tenant, conflict, reviewer, "take_new")
        fact = Fact.objects.get(pk=settled.fact_id)
        assert (fact.value, fact.version, fact.status) == ("PostgreSQL", 2, "active")
        assert not Candidate.objects.get(pk=conflict.pk).has_conflict
        assert audit_of(tenant, "fact.updated").count() == 1

    def test_edit(self, tenant, conflict, reviewer):
        settled = self.settle(tenant, conflict, reviewer, "edit", value="PostgreSQL 16")
        assert Fact.objects.get(pk=settled.fact_id).value == "PostgreSQL 16"

    def test_keep_both_only_on_many_fields(self, tenant, conflict, reviewer):
        with pytest.raises(InvalidTransition):
            self.settle(tenant, conflict, reviewer, "keep_both")
        assert Fact.objects.get().value == "MySQL"

    def test_unknown_resolution(self, tenant, conflict, reviewer):
        with pytest.raises(InvalidInput):
            self.settle(tenant, conflict, reviewer, "flip_a_coin")


@pytest.mark.django_db(transaction=True)
def test_two_concurrent_approvals_one_wins_and_one_is_stale(tenant, submit, reviewer, second_reviewer):
    item = pending(tenant, submit)
    barrier = threading.Barrier(2)
    outcomes = []

    def approve(user):
        barrier.wait()
        try:
            candidate_approve(tenant=tenant, candidate_id=item.pk, version=1, actor=Actor.reviewer(user))
            outcomes.append("approved")
        except StaleVersion:
            outcomes.append("stale")
        finally:
            connection.close()

    threads = [threading.Thread(target=approve, args=(user,)) for user in (reviewer, second_reviewer)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(outcomes) == ["approved", "stale"]
    assert audit_of(tenant, "candidate.approved").count() == 1
    assert Fact.objects.count() == 1
    assert Fact.objects.get().versions.count() == 1


@pytest.mark.django_db(transaction=True)
def test_concurrent_submissions_never_make_two_active_facts(tenant, submit):
    values = ["MySQL", "PostgreSQL", "SQLite", "Oracle"]
    barrier = threading.Barrier(len(values))
    errors = []

    def send(value):
        barrier.wait()
        try:
            submit(tenant, "alice", candidate(entity_type="project", entity_id="p", field="database", value=value, confidence=0.99))
        except Exception as exc:  # noqa: BLE001 - any failure is the test's failure
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=send, args=(v,)) for v in values]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert Fact.objects.filter(field="database", status="active").count() == 1
    statuses = sorted(Candidate.objects.values_list("status", flat=True))
    assert statuses.count("auto_approved") == 1
    assert statuses.count("pending_review") == 3  # the later three conflict with the first


class TestSourceOfAnEdit:
    def test_a_subjects_correction_of_a_waiting_item_is_self_service(self, tenant, submit):
        item = pending(tenant, submit, confidence=0.6, value="Alise")
        decided = candidate_approve(
            tenant=tenant, candidate_id=item.pk, version=1, value="Alice", actor=Actor.subject("alice"), user_id="alice"
        )
        assert Fact.objects.get(pk=decided.fact_id).source == "self_service"
        assert decided.source == "self_service"

    def test_a_reviewers_edit_is_the_reviewers(self, tenant, submit, reviewer):
        item = pending(tenant, submit, value="Alise")
        decided = candidate_approve(
            tenant=tenant, candidate_id=item.pk, version=1, value="Alice", actor=Actor.reviewer(reviewer)
        )
        assert Fact.objects.get(pk=decided.fact_id).source == "reviewer"

    def test_a_plain_approval_keeps_the_proposals_source(self, tenant, submit, reviewer):
        item = pending(tenant, submit)
        decided = candidate_approve(tenant=tenant, candidate_id=item.pk, version=1, actor=Actor.reviewer(reviewer))
        assert Fact.objects.get(pk=decided.fact_id).source == "chat"
