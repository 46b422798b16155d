"""Every write service emits an audit event from the AuditAction vocabulary (SPEC §6).

The services are found, not listed by hand: every public function of a module of
``reviews.services`` that takes an ``actor``, runs in its own transaction (declared with
``reviews.services.boundary.service``) or names an audit action. Each must
have a scenario below (or be named, with the reason, among the building blocks), so a
new service without one fails here; each scenario calls the service in a minimal valid
situation and the test asserts it appended at least one event, every one of them a
member of :class:`AuditAction`.
"""
import importlib
import inspect
import pkgutil
from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.utils import timezone

import reviews.services
from reviews.actors import SYSTEM, Actor
from reviews.exports import ExportFilters
from reviews.extraction.rules import RuleExtractor
from reviews.models import AuditAction, AuditEvent, Candidate, Entity, Fact, Message, Role, Source
from reviews.services import (
    api_keys,
    audit_export,
    candidates,
    claims,
    comments,
    deletions,
    dry_run,
    entities,
    erasure,
    facts,
    governance,
    ingest,
    portal,
    retention,
    saved_views,
    tenants,
)
from tests.conftest import candidate, store_message
from tests.portal.conftest import link_path

ADMIN = Actor("reviewer", "99")
ALICE = Actor.subject("alice")

# Functions that take an actor but write nothing themselves: they hand their events to
# the service that calls them, inside its transaction (or only read and trace).
BUILDING_BLOCKS = {
    "facts.fact_publish": "appends its events to the calling service's list",
    "facts.contests_closed": "returns its events to candidate_reject / fact_publish",
    "erasure.forget_facts": "returns its events to fact_erase, facts_delete, subject_expire",
    "erasure.receipt_event": "builds the receipt event its caller records",
    "ingest.message_extract_until_settled": "loops message_extract, walked below",
    "deletions.fact_erase_preview": "a dry run: the erasure it runs is rolled back, nothing stays",
    "candidates.check_bulk_decision": "a check the pages run before confirming: raises or returns, writes nothing",
    "claims.candidates_claims_renew": "extends the actor's own live claims: activity, not a change of who holds what",
    "facts.slot_changed": "returns the re-judged items' events to the service that changed the published value",
    "waiting.waiting_rejudge": "returns its events (candidate.rejudged) to slot_changed's caller",
}


def write_services() -> set[str]:
    found = set()
    for info in pkgutil.iter_modules(reviews.services.__path__):
        module = importlib.import_module(f"reviews.services.{info.name}")
        for name, function in inspect.getmembers(module, inspect.isfunction):
            if name.startswith("_") or function.__module__ != module.__name__:
                continue
            takes_actor = "actor" in inspect.signature(function).parameters
            own_transaction = hasattr(function, "__wrapped__")
            source = inspect.getsource(function)
            records = "audit.record" in source or "AuditAction." in source
            if takes_actor or own_transaction or records:
                found.add(f"{info.name}.{name}")
    return found


class World:
    """A tenant with one subject's memory: a published name, an item for the subject, an
    item for a reviewer, a conflict, and a second project entity to merge."""

    def __init__(self, tenant, submit, reviewer):
        self.tenant, self.reviewer = tenant, reviewer
        store_message(tenant, "alice", "m1", "I'm Alice, data engineer, on MySQL.", thread_id="t1")
        name, unsure, review, database, other, thread_item = submit(
            tenant,
            "alice",
            candidate(value="Alice", confidence=0.99, source_message_id="m1", evidence="I'm Alice"),
            candidate(field="location", value="Berlin", confidence=0.6),
            candidate(field="role", value="data engineer", confidence=0.9),
            candidate(entity_type="project", entity_id="atlas", field="database", value="MySQL", confidence=0.97),
            candidate(entity_type="project", entity_id="星图", field="database", value="TiDB", confidence=0.97),
            candidate(field="preference", value="short answers", confidence=0.6, scope="thread", thread_id="t1"),
        )
        self.name = Fact.objects.get(pk=name.fact_id)
        self.unsure = Candidate.objects.get(pk=unsure.candidate_id)
        self.review = Candidate.objects.get(pk=review.candidate_id)
        self.database = Fact.objects.get(pk=database.fact_id)
        self.other_project = Fact.objects.get(pk=other.fact_id).entity
        self.thread_item = Candidate.objects.get(pk=thread_item.candidate_id)
        [conflict] = submit(tenant, "alice", candidate(entity_type="project", entity_id="atlas", field="database",
                                                       value="PostgreSQL", confidence=0.9))
        self.conflict = Candidate.objects.get(pk=conflict.candidate_id)
        self.message = Message.objects.get(tenant=tenant, message_id="m1")

    def approved_by_reviewer(self) -> Fact:
        candidates.candidate_approve(tenant=self.tenant, candidate_id=self.review.pk, version=self.review.version,
                                     actor=Actor.reviewer(self.reviewer))
        return Fact.objects.get(subject__user_id="alice", field="role", status="active")


def _ingest(w):
    message = ingest.MessageInput(id="m9", thread_id="t9", user_id="alice", role="user", content="I like tea.")
    ingest.messages_ingest(tenant=w.tenant, messages=[message], actor=ADMIN)


def _rerun(w):
    Message.objects.filter(pk=w.message.pk).update(extraction_status="failed")
    ingest.extractions_rerun(messages=Message.objects.filter(pk=w.message.pk), actor=SYSTEM, enqueue=False)


def _extract(w):
    Message.objects.filter(pk=w.message.pk).update(extraction_status="pending")
    ingest.message_extract(message_pk=w.message.pk, actor=SYSTEM, extractor=RuleExtractor())


def _expire(w):
    Fact.objects.filter(pk=w.name.pk).update(expires_at=timezone.now() - timedelta(days=1))
    retention.subject_expire(tenant=w.tenant, subject_id=w.name.subject_id, due={w.name.pk: "retention"},
                             actor=SYSTEM, now=timezone.now())


def _sweep(w):
    Fact.objects.filter(pk=w.name.pk).update(expires_at=timezone.now() - timedelta(days=1))
    retention.retention_sweep(tenants=[w.tenant], actor=SYSTEM)


def _messages_expire(w):
    Message.objects.filter(pk=w.message.pk).update(
        created_at=timezone.now() - timedelta(days=3650), extraction_status="done"
    )
    retention.messages_expire(tenant=w.tenant, actor=SYSTEM, now=timezone.now())


def _redeem(w):
    url, _ = portal.portal_link_create(tenant=w.tenant, user_id="alice", actor=SYSTEM)
    portal.portal_link_redeem(token=link_path(url).rstrip("/").rsplit("/", 1)[-1])


def _scheduled(w):
    return deletions.fact_deletion_schedule(tenant=w.tenant, user_id="alice", fact_id=w.name.pk, actor=ALICE)


def _carry_out(w):
    deletion = _scheduled(w)
    deletions.fact_deletion_carry_out(deletion_id=deletion.pk, now=deletion.due_at + timedelta(seconds=1))


def _value_added(w):
    """A value added beside the subject's own value of a ``many`` field."""
    [stack] = candidates.candidates_submit(
        tenant=w.tenant, user_id="alice", source=Source.CHAT, actor=ADMIN,
        candidates=[candidates.CandidateInput(
            entity_type="project", entity_id="atlas", field="tech_stack", value="Django", confidence=0.99)],
    )
    before = AuditEvent.objects.count()
    portal.fact_value_add(tenant=w.tenant, user_id="alice", fact_id=stack.fact_id, value="Celery", actor=ALICE)
    assert AuditEvent.objects.count() > before, "the added value itself wrote no event"


def _staff(w, then=None):
    user = tenants.staff_create(tenant=w.tenant, username="nina", role=Role.REVIEWER, password="pw-long-enough-1")
    if then:
        then(user)


def _staff_add(w):
    user = get_user_model().objects.create_user(username="omar", password="pw-long-enough-1")
    tenants.staff_add(tenant=w.tenant, user=user, role=Role.AUDITOR, actor=ADMIN)


SCENARIOS = {
    "tenants.tenant_create": lambda w: tenants.tenant_create(slug="tenant-walk", actor=ADMIN),
    "tenants.api_key_create": lambda w: tenants.api_key_create(tenant=w.tenant, scopes=["recall"], actor=ADMIN),
    "tenants.api_key_revoke": lambda w: tenants.api_key_revoke(
        tenant=w.tenant, prefix=tenants.api_key_create(tenant=w.tenant, scopes=["recall"])[0].prefix, actor=ADMIN
    ),
    "api_keys.api_key_rotate": lambda w: api_keys.api_key_rotate(
        tenant=w.tenant, prefix=tenants.api_key_create(tenant=w.tenant, scopes=["recall"])[0].prefix, actor=ADMIN
    ),
    "comments.candidate_comment_add": lambda w: comments.candidate_comment_add(
        tenant=w.tenant, candidate_id=w.review.pk, author=w.reviewer, body="ask alice", actor=Actor.reviewer(w.reviewer)
    ),
    "saved_views.saved_view_save": lambda w: saved_views.saved_view_save(
        tenant=w.tenant, owner=w.reviewer, name="mine", queue_query="field=location", actor=ADMIN
    ),
    "saved_views.saved_view_delete": lambda w: saved_views.saved_view_delete(
        tenant=w.tenant, owner=w.reviewer, actor=ADMIN, view_id=saved_views.saved_view_save(
            tenant=w.tenant, owner=w.reviewer, name="mine", queue_query="field=location", actor=ADMIN
        ).pk,
    ),
    "tenants.staff_create": _staff,
    "tenants.staff_add": _staff_add,
    "tenants.staff_role_change": lambda w: _staff(
        w, lambda user: tenants.staff_role_change(tenant=w.tenant, user_id=user.pk, role=Role.AUDITOR, actor=ADMIN)
    ),
    "tenants.staff_remove": lambda w: _staff(
        w, lambda user: tenants.staff_remove(tenant=w.tenant, user_id=user.pk, actor=ADMIN)
    ),
    "tenants.staff_lockout_record": lambda w: _staff(
        w, lambda user: tenants.staff_lockout_record(
            username=user.username, ip_address="192.0.2.1", failures=5, cool_off_minutes=15)
    ),
    "governance.field_add": lambda w: governance.field_add(
        tenant=w.tenant, entity_type="project", field="deadline", attributes={"category": "constraint"}, actor=ADMIN
    ),
    "governance.field_update": lambda w: governance.field_update(
        tenant=w.tenant, entity_type="user", field="name", changes={"auto_approve": False}, actor=ADMIN
    ),
    "governance.relation_labels_set": lambda w: governance.relation_labels_set(
        tenant=w.tenant, name="works_on", labels={"en": "is part of"}, actor=ADMIN
    ),
    "governance.tenant_policy_update": lambda w: governance.tenant_policy_update(
        tenant=w.tenant, changes={"confirm_below": 0.7}, actor=ADMIN
    ),
    "governance.tenant_extractor_set": lambda w: governance.tenant_extractor_set(
        tenant=w.tenant, extractor="rules", prompt_version="", actor=ADMIN
    ),
    "ingest.messages_ingest": _ingest,
    "ingest.extractions_rerun": _rerun,
    "ingest.message_extract": _extract,
    "candidates.candidates_submit": lambda w: candidates.candidates_submit(
        tenant=w.tenant, user_id="bob", candidates=[candidates.CandidateInput(
            entity_type="user", entity_id="me", field="name", value="Bob", confidence=0.99)],
        source=Source.CHAT, actor=ADMIN,
    ),
    "candidates.candidate_approve": lambda w: candidates.candidate_approve(
        tenant=w.tenant, candidate_id=w.review.pk, version=w.review.version, actor=ADMIN
    ),
    "candidates.candidate_reject": lambda w: candidates.candidate_reject(
        tenant=w.tenant, candidate_id=w.review.pk, version=w.review.version, note="wrong", actor=ADMIN
    ),
    "candidates.candidate_defer": lambda w: candidates.candidate_defer(
        tenant=w.tenant, candidate_id=w.review.pk, version=w.review.version, actor=ADMIN
    ),
    "candidates.candidate_settle_conflict": lambda w: candidates.candidate_settle_conflict(
        tenant=w.tenant, candidate_id=w.conflict.pk, version=w.conflict.version, resolution="take_new", actor=ADMIN
    ),
    "candidates.candidates_bulk_decide": lambda w: candidates.candidates_bulk_decide(
        tenant=w.tenant, items=[(w.review.pk, w.review.version)], decision="approve", actor=ADMIN
    ),
    "candidates.candidate_undo": lambda w: candidates.candidate_undo(
        tenant=w.tenant,
        candidate_id=candidates.candidate_approve(
            tenant=w.tenant, candidate_id=w.review.pk, version=w.review.version, actor=ADMIN
        ).pk,
        actor=ADMIN,
    ),
    "claims.candidates_claim": lambda w: claims.candidates_claim(tenant=w.tenant, actor=ADMIN, count=2),
    "claims.candidates_release": lambda w: (
        claims.candidates_claim(tenant=w.tenant, actor=ADMIN, count=2),
        claims.candidates_release(tenant=w.tenant, actor=ADMIN),
    ),
    "entities.entity_merge": lambda w: entities.entity_merge(
        tenant=w.tenant, source_id=w.other_project.pk, target_id=w.database.entity_id, actor=ADMIN
    ),
    "facts.fact_edit": lambda w: facts.fact_edit(tenant=w.tenant, fact_id=w.name.pk, value="Alicia", actor=ADMIN),
    "erasure.fact_delete": lambda w: erasure.fact_delete(tenant=w.tenant, fact_id=w.name.pk, actor=ADMIN),
    "erasure.fact_erase": lambda w: erasure.fact_erase(tenant=w.tenant, fact_id=w.name.pk, actor=ADMIN),
    "erasure.facts_delete": lambda w: erasure.facts_delete(
        tenant=w.tenant, user_id="alice", field="name", actor=ADMIN
    ),
    "erasure.subject_erase": lambda w: erasure.subject_erase(tenant=w.tenant, user_id="alice", actor=ADMIN),
    "retention.subject_expire": _expire,
    "retention.retention_sweep": _sweep,
    "retention.messages_expire": _messages_expire,
    "portal.portal_link_create": lambda w: portal.portal_link_create(tenant=w.tenant, user_id="alice", actor=SYSTEM),
    "portal.portal_link_redeem": _redeem,
    "portal.subject_set_paused": lambda w: portal.subject_set_paused(
        tenant=w.tenant, user_id="alice", paused=True, actor=ALICE
    ),
    "portal.fact_contest": lambda w: portal.fact_contest(
        tenant=w.tenant, user_id="alice", fact_id=w.approved_by_reviewer().pk, actor=ALICE
    ),
    "portal.fact_value_add": _value_added,
    "portal.subject_export": lambda w: portal.subject_export(tenant=w.tenant, user_id="alice", actor=ALICE),
    "dry_run.extraction_dry_run": lambda w: dry_run.extraction_dry_run(
        tenant=w.tenant, extractor=RuleExtractor(), actor=ADMIN
    ),
    "deletions.fact_deletion_schedule": _scheduled,
    "deletions.fact_deletion_undo": lambda w: deletions.fact_deletion_undo(
        tenant=w.tenant, user_id="alice", deletion_id=_scheduled(w).pk, actor=ALICE
    ),
    "deletions.fact_deletion_carry_out": _carry_out,
    "audit_export.audit_export_stream": lambda w: audit_export.audit_export_stream(
        tenant=w.tenant, filters=ExportFilters(), format="jsonl", actor=ADMIN
    ),
    "audit_export.audit_export_start": lambda w: audit_export.audit_export_start(
        tenant=w.tenant, filters=ExportFilters(), format="jsonl", actor=ADMIN
    ),
    "audit_export.audit_export_run": lambda w: audit_export.audit_export_run(
        export_id=audit_export.audit_export_start(
            tenant=w.tenant, filters=ExportFilters(), format="jsonl", actor=ADMIN
        ).pk
    ),
}


def test_every_write_service_has_a_scenario_or_a_reason():
    services = write_services()
    assert sorted(services - set(SCENARIOS) - set(BUILDING_BLOCKS)) == [], "a service without a scenario"
    assert sorted((set(SCENARIOS) | set(BUILDING_BLOCKS)) - services) == [], "a scenario for no service"


@pytest.mark.parametrize("service", sorted(SCENARIOS))
def test_the_service_emits_an_event_from_the_vocabulary(tenant, submit, reviewer, service, django_capture_on_commit_callbacks):
    world = World(tenant, submit, reviewer)
    last = AuditEvent.objects.order_by("-pk").values_list("pk", flat=True).first() or 0
    with django_capture_on_commit_callbacks(execute=True):
        SCENARIOS[service](world)
    actions = list(AuditEvent.objects.filter(pk__gt=last).values_list("action", flat=True))
    assert actions, f"{service} wrote no audit event"
    assert set(actions) <= set(AuditAction.values), sorted(set(actions) - set(AuditAction.values))


def test_the_world_is_what_the_scenarios_expect(tenant, submit, reviewer):
    world = World(tenant, submit, reviewer)
    assert (world.unsure.status, world.review.status, world.conflict.reason) == ("pending_user", "pending_review", "conflict")
    assert world.other_project != world.database.entity and isinstance(world.other_project, Entity)
    assert world.thread_item.scope == "thread"
