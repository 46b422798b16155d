"""candidates_submit on PostgreSQL: every policy outcome lands, with its facts and audit."""
import pytest
from django.db import IntegrityError, transaction

from reviews.actors import Actor
from reviews.models import AuditEvent, AuditPayload, Candidate, Fact, FactVersion, Source
from reviews.services.candidates import candidate_reject
from reviews.services.facts import PROVENANCE_KEPT
from tests.conftest import candidate


def actions(tenant, object_type=None):
    events = AuditEvent.objects.filter(tenant_id=tenant.pk).order_by("seq")
    if object_type:
        events = events.filter(object_type=object_type)
    return list(events.values_list("action", flat=True))


def test_every_candidate_is_audited_as_submitted_and_decided(tenant, submit):
    [result] = submit(tenant, "alice", candidate(value="Alice", confidence=0.9))
    events = AuditEvent.objects.filter(tenant_id=tenant.pk, object_type="candidate", object_id=str(result.candidate_id))
    assert [(e.action, e.actor) for e in events.order_by("seq")] == [
        ("candidate.submitted", "api_key:test"),
        ("policy.pending_review", "policy"),
    ]
    submitted = events.get(action="candidate.submitted")
    assert AuditPayload.objects.get(event=submitted).after["value"] == "Alice"


@pytest.mark.parametrize(
    "item,status,reason",
    [
        (candidate(entity_type="spaceship", field="name"), "rejected", "field_not_allowed"),
        (candidate(field="favourite_colour"), "rejected", "field_not_allowed"),
        (candidate(value=""), "rejected", "invalid"),
        (candidate(value="x" * 1001), "rejected", "invalid"),
        (candidate(field="preference", value="my key is sk-proj-4fQ9xT2mLr8vKp0aZ7wYc3Hn"), "rejected", "secret_detected"),
        (candidate(confidence=0.3), "rejected", "below_confidence"),
        (candidate(confidence=0.6), "pending_user", "needs_confirmation"),
        (
            candidate(entity_type="project", entity_id="cache", field="database", value="Redis", kind="plan", confidence=0.99),
            "pending_user",
            "unconfirmed_kind",
        ),
        (candidate(field="health", value="diabetes", confidence=0.99), "pending_user", "sensitive_consent"),
        (candidate(field="location", value="Berlin", confidence=0.99), "pending_review", "needs_review"),
        (candidate(confidence=0.9), "pending_review", "needs_review"),
        (candidate(confidence=0.97), "auto_approved", "auto_approve"),
        (candidate(field="relation:pen_name", value="莫尔索", confidence=0.97), "auto_approved", "auto_approve"),
    ],
)
def test_each_outcome_and_reason_is_stored_and_returned(tenant, submit, item, status, reason):
    [result] = submit(tenant, "alice", item)
    stored = Candidate.objects.get(pk=result.candidate_id)
    assert (result.status, result.reason) == (status, reason)
    assert (stored.status, stored.reason) == (status, reason)
    assert f"policy.{status}" in actions(tenant, "candidate")
    published = Fact.objects.filter(subject__user_id="alice").count()
    assert published == (1 if status == "auto_approved" else 0)


def test_over_long_value_is_kept_cut_short_for_the_reviewer(tenant, submit):
    [result] = submit(tenant, "alice", candidate(value="y" * 5000))
    assert len(Candidate.objects.get(pk=result.candidate_id).value) == 1000


def test_duplicate_merges_without_a_new_version(tenant, submit):
    [first] = submit(tenant, "alice", candidate(value="Alice", confidence=0.96))
    [again] = submit(tenant, "alice", candidate(value="  ALICE ", confidence=0.99, source_message_id="m-2"))
    fact = Fact.objects.get(pk=first.fact_id)
    assert (again.status, again.reason, again.fact_id) == ("merged", "duplicate", fact.pk)
    assert fact.version == 1 and fact.value == "Alice"
    assert fact.confidence == 0.99
    assert [p["source_message_id"] for p in fact.provenance] == ["", "m-2"]
    assert FactVersion.objects.filter(fact=fact).count() == 1
    assert "fact.merged" in actions(tenant, "fact")


def test_a_fact_merged_again_and_again_keeps_its_origin_and_latest_sources(tenant, submit):
    [first] = submit(tenant, "alice", candidate(value="Alice", confidence=0.96, source_message_id="m-0"))
    merges = PROVENANCE_KEPT + 5
    for index in range(1, merges + 1):
        submit(tenant, "alice", candidate(value="Alice", confidence=0.96, source_message_id=f"m-{index}"))

    fact = Fact.objects.get(pk=first.fact_id)
    kept = [entry["source_message_id"] for entry in fact.provenance]
    assert kept == ["m-0", *(f"m-{index}" for index in range(merges - PROVENANCE_KEPT + 2, merges + 1))]
    # Nothing is lost: every merged candidate names the fact, every merge is audited.
    assert Candidate.objects.filter(tenant=tenant, fact=fact, status="merged").count() == merges
    assert actions(tenant, "fact").count("fact.merged") == merges


def test_rejected_value_comes_back_suppressed_and_only_a_digest_is_kept(tenant, submit, reviewer):
    [first] = submit(tenant, "alice", candidate(field="location", value="Atlantis", confidence=0.9))
    candidate_reject(
        tenant=tenant,
        candidate_id=first.candidate_id,
        version=1,
        actor=Actor.reviewer(reviewer),
        note="not a real place",
    )
    [again] = submit(tenant, "alice", candidate(field="location", value="atlantis", confidence=0.99))
    assert (again.status, again.reason) == ("rejected", "suppressed")
    from reviews.models import SuppressedValue

    row = SuppressedValue.objects.get()
    assert "atlantis" not in row.value_digest.lower() and len(row.value_digest) == 64


def test_conflict_goes_to_review_and_keeps_the_active_fact(tenant, submit):
    [mysql] = submit(tenant, "alice", candidate(entity_type="project", entity_id="flask", field="database", value="MySQL", confidence=0.97))
    [pg] = submit(tenant, "alice", candidate(entity_type="project", entity_id="flask", field="database", value="PostgreSQL", confidence=0.97))
    stored = Candidate.objects.get(pk=pg.candidate_id)
    assert (pg.status, pg.reason) == ("pending_review", "conflict")
    assert stored.has_conflict and stored.conflict_fact_id == mysql.fact_id
    assert Fact.objects.get(pk=mysql.fact_id).value == "MySQL"


def test_explicit_correction_replaces_and_keeps_the_prior_version(tenant, submit):
    [mysql] = submit(tenant, "alice", candidate(entity_type="project", entity_id="flask", field="database", value="MySQL", confidence=0.97))
    [pg] = submit(
        tenant,
        "alice",
        candidate(entity_type="project", entity_id="flask", field="database", value="PostgreSQL", confidence=0.9, supersedes=True),
    )
    assert (pg.status, pg.reason, pg.fact_id) == ("auto_approved", "correction", mysql.fact_id)
    fact = Fact.objects.get(pk=mysql.fact_id)
    assert (fact.value, fact.version) == ("PostgreSQL", 2)
    assert list(fact.versions.values_list("version", "value")) == [(1, "MySQL"), (2, "PostgreSQL")]
    updated = AuditEvent.objects.get(tenant_id=tenant.pk, action="fact.updated")
    assert AuditPayload.objects.get(event=updated).before["value"] == "MySQL"


def test_chat_correction_never_overrides_a_business_system_value(tenant, submit):
    item = dict(entity_type="project", entity_id="billing", field="database", confidence=0.99)
    [crm] = submit(tenant, "bob", candidate(value="PostgreSQL", **item), source=Source.BUSINESS_SYSTEM)
    [chat] = submit(tenant, "bob", candidate(value="CockroachDB", supersedes=True, **item), source=Source.CHAT)
    assert (chat.status, chat.reason) == ("pending_review", "conflict")
    assert Fact.objects.get(pk=crm.fact_id).value == "PostgreSQL"


def test_business_system_correction_overrides_chat(tenant, submit):
    item = dict(entity_type="project", entity_id="billing", field="database", confidence=0.9)
    [chat] = submit(tenant, "bob", candidate(value="PostgreSQL", **item, ), source=Source.CHAT)
    assert chat.status == "pending_review"  # 0.9 < auto_approve_at
    [crm] = submit(tenant, "bob", candidate(value="CockroachDB", supersedes=True, **item), source=Source.BUSINESS_SYSTEM)
    # No active fact yet: a correction of nothing is simply a confident new value for review.
    assert crm.status == "pending_review"


def test_thread_scoped_candidates_never_touch_long_term_facts(tenant, submit):
    [lasting] = submit(tenant, "alice", candidate(entity_type="preference", entity_id="style", field="answer_style", value="detailed", confidence=0.97))
    [oneoff] = submit(
        tenant,
        "alice",
        candidate(
            entity_type="preference",
            entity_id="style",
            field="answer_style",
            value="short",
            confidence=0.97,
            scope="thread",
            thread_id="t-2",
            supersedes=True,
        ),
    )
    assert oneoff.status == "auto_approved" and oneoff.fact_id != lasting.fact_id
    assert Fact.objects.get(pk=lasting.fact_id).value == "detailed"
    assert Fact.objects.get(pk=oneoff.fact_id).thread_id == "t-2"
    [same_as_lasting] = submit(
        tenant,
        "alice",
        candidate(entity_type="preference", entity_id="style", field="answer_style", value="detailed", confidence=0.97, scope="thread", thread_id="t-3"),
    )
    assert same_as_lasting.status == "auto_approved"  # not merged into the long-term fact


def test_newer_published_value_supersedes_older_open_candidates(tenant, submit):
    item = dict(entity_type="project", entity_id="flask", field="database")
    [older] = submit(tenant, "alice", candidate(value="MySQL", confidence=0.9, **item))
    [newer] = submit(tenant, "alice", candidate(value="PostgreSQL", confidence=0.99, **item))
    assert newer.status == "auto_approved"
    stale = Candidate.objects.get(pk=older.candidate_id)
    assert (stale.status, stale.reason, stale.version) == ("superseded", "newer_candidate", 2)
    assert "candidate.superseded" in actions(tenant, "candidate")


def test_database_refuses_two_active_facts_for_a_one_field(tenant, submit):
    [first] = submit(tenant, "alice", candidate(value="Alice", confidence=0.97))
    fact = Fact.objects.get(pk=first.fact_id)
    with pytest.raises(IntegrityError), transaction.atomic():
        Fact.objects.create(
            tenant=tenant,
            subject=fact.subject,
            entity=fact.entity,
            field="name",
            value="Alicia",
            value_digest="other",
            cardinality="one",
            sensitivity="normal",
            category="identity",
            confidence=1,
            source="chat",
            updated_at=fact.updated_at,
        )


def test_many_field_keeps_one_fact_per_distinct_value(tenant, submit):
    results = submit(
        tenant,
        "alice",
        candidate(field="preference", value="Python", confidence=0.97),
        candidate(field="preference", value="production examples", confidence=0.97),
        candidate(field="preference", value="python", confidence=0.97),
    )
    assert [r.status for r in results] == ["auto_approved", "auto_approved", "merged"]
    assert Fact.objects.filter(field="preference").count() == 2


def test_aliases_reach_one_user_entity(tenant, submit):
    results = submit(
        tenant,
        "alice",
        candidate(entity_id="alice", value="Alice", confidence=0.97),
        candidate(entity_id="我", field="role", value="engineer", confidence=0.97),
        candidate(entity_id="me", field="language", value="Chinese", confidence=0.97),
    )
    assert len({Fact.objects.get(pk=r.fact_id).entity_id for r in results}) == 1


def test_subjects_and_tenants_are_separate(tenant, other_tenant, submit):
    [a] = submit(tenant, "alice", candidate(value="Alice", confidence=0.97))
    [b] = submit(other_tenant, "alice", candidate(value="Alice", confidence=0.97))
    [c] = submit(tenant, "bob", candidate(value="Alice", confidence=0.97))
    assert a.status == b.status == c.status == "auto_approved"
    assert len({a.fact_id, b.fact_id, c.fact_id}) == 3
    assert AuditEvent.objects.filter(tenant_id=other_tenant.pk, action="fact.created").count() == 1


def test_a_paused_subject_gets_nothing_new_stored(tenant, submit):
    from reviews.models import Subject

    submit(tenant, "alice", candidate(value="Alice", confidence=0.97))
    Subject.objects.filter(tenant=tenant, user_id="alice").update(collection_paused=True)
    before = (Candidate.objects.count(), AuditEvent.objects.count())
    results = submit(tenant, "alice", candidate(field="role", value="engineer", confidence=0.97))
    assert [(r.candidate_id, r.status, r.reason) for r in results] == [(None, "withdrawn", "collection_paused")]
    assert (Candidate.objects.count(), AuditEvent.objects.count()) == before
    assert not Fact.objects.filter(field="role").exists()
