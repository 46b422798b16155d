"""The portal's own services: pause, contest, export (each with its audit event)."""
import json

import pytest

from reviews.actors import SYSTEM, Actor
from reviews.errors import Forbidden, InvalidTransition, NotFound, StaleVersion
from reviews.models import AuditEvent, AuditPayload, Candidate, Fact, Subject, SuppressedValue
from reviews.policy.normalize import value_digest
from reviews.services.candidates import candidate_approve, candidate_reject
from reviews.services.facts import fact_edit
from reviews.services.portal import fact_contest, subject_export, subject_set_paused
from tests.conftest import candidate

ALICE = Actor.subject("alice")


def events(tenant, action):
    return AuditEvent.objects.filter(tenant_id=tenant.pk, action=action)


class TestPause:
    def test_pause_and_resume_are_audited(self, tenant):
        subject = subject_set_paused(tenant=tenant, user_id="alice", paused=True, actor=ALICE)
        assert subject.collection_paused and Subject.objects.get(pk=subject.pk).collection_paused
        event = events(tenant, "subject.collection_paused").get()
        assert (event.actor, event.subject_user_id) == ("subject:alice", "alice")
        assert AuditPayload.objects.get(event=event).after == {"collection_paused": True}
        subject_set_paused(tenant=tenant, user_id="alice", paused=False, actor=ALICE)
        assert not Subject.objects.get(pk=subject.pk).collection_paused
        assert events(tenant, "subject.collection_resumed").count() == 1

    def test_a_no_op_writes_no_event(self, tenant):
        subject_set_paused(tenant=tenant, user_id="alice", paused=False, actor=ALICE)
        assert not events(tenant, "subject.collection_resumed").exists()

    def test_a_subject_cannot_pause_someone_else(self, tenant):
        with pytest.raises(Forbidden):
            subject_set_paused(tenant=tenant, user_id="bob", paused=True, actor=ALICE)
        assert not Subject.objects.filter(user_id="bob").exists()

    def test_it_only_touches_its_own_tenant(self, tenant, other_tenant):
        subject_set_paused(tenant=tenant, user_id="alice", paused=True, actor=SYSTEM)
        other = subject_set_paused(tenant=other_tenant, user_id="alice", paused=False, actor=SYSTEM)
        assert not other.collection_paused
        assert not events(other_tenant, "subject.collection_paused").exists()


class TestContest:
    def test_it_returns_a_reviewer_approved_fact_to_review(self, tenant, alice):
        role = alice.role
        contest = fact_contest(tenant=tenant, user_id="alice", fact_id=role.pk, actor=ALICE, note="I left that job")
        assert (contest.status, contest.reason, contest.flags) == ("pending_review", "needs_review", ["contested"])
        assert (contest.value, contest.field, contest.source, contest.note) == (
            "data engineer", "role", "chat", "I left that job"
        )
        assert contest.conflict_fact_id == role.pk and not contest.has_conflict
        role.refresh_from_db()
        assert role.status == "contested" and role.value == "data engineer"  # withdrawn, not erased
        assert not SuppressedValue.objects.filter(value_digest=value_digest("data engineer")).exists()
        contested = events(tenant, "fact.contested").get()
        assert (contested.actor, contested.object_id) == ("subject:alice", str(role.pk))
        assert AuditPayload.objects.get(event=contested).reason == "I left that job"
        assert events(tenant, "candidate.submitted").filter(object_id=str(contest.pk)).exists()

    def test_a_reviewer_who_agrees_with_the_subject_suppresses_the_value(self, tenant, alice, reviewer):
        contest = fact_contest(tenant=tenant, user_id="alice", fact_id=alice.role.pk, actor=ALICE)
        candidate_reject(tenant=tenant, candidate_id=contest.pk, version=contest.version, note="subject is right",
                         actor=Actor.reviewer(reviewer))
        assert not Fact.objects.filter(subject__user_id="alice", field="role", status="active").exists()
        assert SuppressedValue.objects.filter(value_digest=value_digest("data engineer")).exists()
        role = Fact.objects.get(pk=alice.role.pk)
        assert (role.status, role.value) == ("deleted", "")  # no longer contested: deleted, empty
        assert list(role.versions.values_list("value", flat=True)) == ["data engineer"]  # its history stays
        deleted = events(tenant, "fact.deleted").get()
        assert (deleted.object_id, deleted.reason_code) == (str(role.pk), "reviewer_rejected")

    def test_a_reviewer_who_disagrees_publishes_it_again_as_its_next_version(self, tenant, alice, reviewer):
        contest = fact_contest(tenant=tenant, user_id="alice", fact_id=alice.role.pk, actor=ALICE)
        candidate_approve(tenant=tenant, candidate_id=contest.pk, version=contest.version,
                          actor=Actor.reviewer(reviewer))
        fact = Fact.objects.get(subject__user_id="alice", field="role", status="active")
        assert (fact.pk, fact.value, fact.version) == (alice.role.pk, "data engineer", 2)  # its history goes on
        assert list(fact.versions.order_by("version").values_list("version", flat=True)) == [1, 2]
        reinstated = events(tenant, "fact.reinstated").get()
        assert (reinstated.object_id, reinstated.actor) == (str(fact.pk), f"reviewer:{reviewer.pk}")

    def test_a_reviewer_who_corrects_it_publishes_the_correction_on_the_same_fact(self, tenant, alice, reviewer):
        contest = fact_contest(tenant=tenant, user_id="alice", fact_id=alice.role.pk, actor=ALICE)
        candidate_approve(tenant=tenant, candidate_id=contest.pk, version=contest.version, value="product manager",
                          actor=Actor.reviewer(reviewer))
        fact = Fact.objects.get(pk=alice.role.pk)
        assert (fact.status, fact.value, fact.version) == ("active", "product manager", 2)
        assert AuditPayload.objects.get(event=events(tenant, "fact.reinstated").get()).before["value"] == "data engineer"

    def test_a_newer_value_published_meanwhile_settles_the_contest(self, tenant, alice, reviewer, submit):
        contest = fact_contest(tenant=tenant, user_id="alice", fact_id=alice.role.pk, actor=ALICE)
        [newer] = submit(tenant, "alice", candidate(field="role", value="product manager", confidence=0.9))
        candidate_approve(tenant=tenant, candidate_id=newer.candidate_id, version=1, actor=Actor.reviewer(reviewer))

        published = Fact.objects.get(subject__user_id="alice", field="role", status="active")
        assert (published.value, published.version) == ("product manager", 1) and published.pk != alice.role.pk
        assert Candidate.objects.get(pk=contest.pk).status == "superseded"
        with pytest.raises(StaleVersion):
            candidate_approve(tenant=tenant, candidate_id=contest.pk, version=contest.version,
                              actor=Actor.reviewer(reviewer))
        withdrawn = Fact.objects.get(pk=alice.role.pk)
        assert (withdrawn.status, withdrawn.value) == ("deleted", "")  # replaced: no longer contested
        assert events(tenant, "fact.deleted").get().reason_code == "newer_candidate"
        assert not events(tenant, "fact.reinstated").exists()

    def test_a_fact_no_reviewer_approved_is_edited_not_contested(self, tenant, alice):
        with pytest.raises(InvalidTransition):
            fact_contest(tenant=tenant, user_id="alice", fact_id=alice.name.pk, actor=ALICE)
        assert Fact.objects.get(pk=alice.name.pk).status == "active"
        assert not events(tenant, "fact.contested").exists()

    def test_another_subjects_or_tenants_fact_is_not_found(self, tenant, other_tenant, memory, alice):
        bob = memory(tenant, "bob")
        namesake = memory(other_tenant, "alice", prefix="t2alice")  # same user id, other tenant
        for on, fact_id in ((tenant, bob.role.pk), (tenant, namesake.role.pk), (other_tenant, alice.role.pk)):
            with pytest.raises(NotFound):
                fact_contest(tenant=on, user_id="alice", fact_id=fact_id, actor=ALICE)
        assert Fact.objects.filter(pk__in=[alice.role.pk, bob.role.pk, namesake.role.pk], status="active").count() == 3
        assert not events(tenant, "fact.contested").exists()

    def test_a_withdrawn_fact_cannot_be_contested_twice(self, tenant, alice):
        fact_contest(tenant=tenant, user_id="alice", fact_id=alice.role.pk, actor=ALICE)
        with pytest.raises(NotFound):
            fact_contest(tenant=tenant, user_id="alice", fact_id=alice.role.pk, actor=ALICE)

    def test_a_credential_in_the_note_is_masked(self, tenant, alice):
        contest = fact_contest(
            tenant=tenant, user_id="alice", fact_id=alice.role.pk, actor=ALICE, note="password: hunter2hunter2"
        )
        assert "hunter2" not in contest.note


class TestExport:
    def test_it_holds_everything_of_the_subject_and_nothing_else(self, tenant, other_tenant, memory):
        alice = memory(tenant, "alice")
        memory(tenant, "bob")
        memory(other_tenant, "alice", prefix="t2alice")
        fact_edit(tenant=tenant, fact_id=alice.name.pk, value="Alice Smith", actor=ALICE, user_id="alice")
        document = subject_export(tenant=tenant, user_id="alice", actor=ALICE)
        json.dumps(document)  # serialisable as it is
        assert (document["tenant"], document["user_id"]) == ("tenant-1", "alice")

        mine = Fact.objects.filter(subject__tenant=tenant, subject__user_id="alice")
        assert sorted(f["id"] for f in document["facts"]) == sorted(mine.values_list("pk", flat=True))
        name = next(f for f in document["facts"] if f["id"] == alice.name.pk)
        assert [(v["version"], v["value"], v["source"]) for v in name["versions"]] == [
            (1, "Alice", "chat"),
            (2, "Alice Smith", "self_service"),
        ]
        my_candidates = Candidate.objects.filter(subject__tenant=tenant, subject__user_id="alice")
        assert sorted(c["id"] for c in document["candidates"]) == sorted(my_candidates.values_list("pk", flat=True))
        assert sorted(c["id"] for c in document["pending_items"]) == sorted(alice.candidate_ids)
        assert sorted(m["message_id"] for m in document["messages"]) == [f"alice-m{i}" for i in range(1, 5)]
        assert {e["entity_type"] + ":" + e["entity_id"] for e in document["entities"]} == {
            "user:alice", "project:flask-migration"
        }
        flat = json.dumps(document)
        assert "bob-" not in flat and "t2alice" not in flat
        assert "reviewer:" not in flat  # who decided is a kind, not a staff id

    def test_it_is_audited(self, tenant, alice):
        subject_export(tenant=tenant, user_id="alice", actor=ALICE)
        event = events(tenant, "subject.exported").get()
        assert (event.actor, event.subject_user_id) == ("subject:alice", "alice")
        assert AuditPayload.objects.get(event=event).after["messages"] == 4

    def test_an_unknown_subject_is_not_found(self, tenant):
        with pytest.raises(NotFound):
            subject_export(tenant=tenant, user_id="nobody", actor=SYSTEM)

    def test_a_subject_cannot_export_someone_else(self, tenant, memory):
        memory(tenant, "bob")
        with pytest.raises(Forbidden):
            subject_export(tenant=tenant, user_id="bob", actor=ALICE)
        assert not events(tenant, "subject.exported").exists()
