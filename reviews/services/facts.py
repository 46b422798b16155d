"""Writes to published facts: publish, merge, edit (deletion is reviews/services/erasure.py).

Every function here expects the caller to hold the subject's row lock
(:func:`lock_subject`), which serialises all writes to one subject's memory; the partial
unique constraints on :class:`Fact` hold the invariants even if a caller forgot.
"""
from __future__ import annotations

from collections.abc import Collection
from datetime import timedelta
from typing import Annotated

from django.utils import timezone

from .. import audit
from ..policy import transitions
from ..actors import POLICY, Actor
from ..audit import EventDraft
from ..errors import InvalidInput, NotFound, StaleVersion
from ..models import (
    AuditAction,
    Candidate,
    CandidateFlag,
    Cardinality,
    Entity,
    Fact,
    FactStatus,
    FactVersion,
    Reason,
    Sensitivity,
    Subject,
    SuppressedValue,
    Tenant,
)
from ..policy.normalize import value_digest, value_digests
from ..policy.pipeline import MAX_VALUE_LENGTH, RELATION_PREFIX, FieldRule
from ..publication import schedule_projection
from ..policy.schema import TenantSchema
from ..policy.transitions import fact_payload
from .entities import EntityResolver
from ..models.locks import lock_subject
from .boundary import service
from .waiting import Slot, waiting_rejudge
from ..screening import Correction, Screen, Text


def clean_value(value: str) -> str:
    """Validate a value a person typed: not empty, not too long."""
    value = (value or "").strip()
    if not value:
        raise InvalidInput("The value cannot be empty.", details={"value": "empty"})
    if len(value) > MAX_VALUE_LENGTH:
        raise InvalidInput(
            f"The value is longer than {MAX_VALUE_LENGTH} characters.", details={"value": "too_long"}
        )
    # A NUL or a credential in it was refused at the service boundary (boundary.CORRECTION).
    return value


def expiry_for(*, rule: FieldRule, tenant: Tenant, now, keep: bool):
    """When a newly published value expires (SPEC §3 step 5, §2 retention_days)."""
    if keep:
        return None
    days = rule.retention_days
    if days is None and rule.sensitivity == Sensitivity.SENSITIVE:
        days = tenant.sensitive_retention_days
    return now + timedelta(days=days) if days else None


# A fact re-extracted from every conversation would otherwise gain an entry per mention,
# each merge rewriting the whole list. The first entry (where the fact came from) and the
# latest ones are kept; the rest stay on record elsewhere: each merged candidate points
# at its fact, and each merge is an audit event.
PROVENANCE_KEPT = 20


def _with_provenance(provenance: list, entry: dict) -> list:
    kept = [*provenance, entry]
    return kept if len(kept) <= PROVENANCE_KEPT else [kept[0], *kept[-(PROVENANCE_KEPT - 1) :]]


def _provenance_entry(candidate: Candidate, now) -> dict:
    return {
        "source": candidate.source,
        "candidate_id": candidate.pk,
        "source_message_id": candidate.source_message_id,
        "at": now.isoformat(),
    }


def fact_publish(
    *,
    candidate: Candidate,
    rule: FieldRule,
    subject: Subject,
    value: str,
    actor: Actor,
    reason: str,
    keep: bool = False,
    events: list[EventDraft],
    now=None,
    judged_already: Collection[int] = (),
) -> tuple[Fact, bool]:
    """Publish ``value`` for the candidate's slot; returns (fact, merged).

    1. Find the active fact(s) of the slot (same subject, entity, field and thread).
    2. Same normalised value: merge (:func:`_merge_duplicate`; no new version).
    3. A `one` field with another value, or the contested fact this candidate upholds: a
       new version of the same fact row (a contested one is reinstated).
    4. Otherwise: a new fact (for `many` fields, one row per distinct value).
    5. Record the version and its event, then judge the slot's other waiting items again
       (:func:`slot_changed`; ``judged_already``: ids a batch judged against this value).
    """
    now = now or timezone.now()
    slot = _slot_facts(candidate, subject).filter(status=FactStatus.ACTIVE)
    known = value_digests(value)
    same = next((f for f in slot if f.value_digest in known), None)
    if same is not None:
        events.append(_merge_duplicate(same, candidate=candidate, subject=subject, actor=actor, reason=reason, now=now))
        return same, True

    current = next(iter(slot), None) if rule.cardinality == Cardinality.ONE else None
    # A contested fact that review upholds continues its own history (same row, the next
    # version, its recalls still linked) rather than starting over at version 1.
    reinstated = _withdrawn_by_contest(candidate=candidate, subject=subject) if current is None else None
    published = _published_values(
        candidate,
        value=value,
        actor=actor,
        now=now,
        expires_at=expiry_for(rule=rule, tenant=subject.tenant, now=now, keep=keep),
    )
    fact = current or reinstated
    if fact is not None:
        before = fact_payload(fact)
        action = transitions.fact_reinstate(fact) if reinstated is not None else AuditAction.FACT_UPDATED
        for name, published_value in published.items():
            setattr(fact, name, published_value)
        fact.version += 1
        fact.save()
    else:
        before, action = None, AuditAction.FACT_CREATED
        fact = Fact.objects.create(
            tenant_id=subject.tenant_id,
            subject=subject,
            entity_id=candidate.entity_id,
            field=candidate.field,
            cardinality=rule.cardinality,
            sensitivity=rule.sensitivity,
            category=rule.category,
            scope=candidate.scope,
            thread_id=candidate.thread_id,
            **published,
        )
    FactVersion.objects.create(
        fact=fact,
        version=fact.version,
        value=value,
        confidence=fact.confidence,
        source=fact.source,
        source_message_id=fact.source_message_id,
        candidate=candidate,
        actor=str(actor),
        reason=reason,
        created_at=now,
    )
    fact.entity = candidate.entity
    events.append(
        transitions.fact_event(
            fact, action, subject=subject, actor=actor, before=before, after=fact_payload(fact), reason_code=reason
        )
    )
    events += slot_changed(
        subject=subject, fact=fact, actor=actor, now=now, published_by=candidate, judged_already=judged_already
    )
    schedule_projection(subject.pk)
    return fact, False


def _merge_duplicate(
    fact: Fact, *, candidate: Candidate, subject: Subject, actor: Actor, reason: str, now
) -> EventDraft:
    """SPEC §3 step 6: confidence = max, the source added to the provenance, no new version."""
    before = {"confidence": fact.confidence, "sources": len(fact.provenance)}
    fact.confidence = max(fact.confidence, candidate.confidence)
    fact.provenance = _with_provenance(fact.provenance, _provenance_entry(candidate, now))
    fact.updated_at = now
    fact.save(update_fields=["confidence", "provenance", "updated_at"])
    return transitions.fact_event(
        fact,
        AuditAction.FACT_MERGED,
        subject=subject,
        actor=actor,
        before=before,
        after={"confidence": fact.confidence, "candidate_id": candidate.pk},
        reason_code=reason,
    )


def _published_values(candidate: Candidate, *, value: str, actor: Actor, now, expires_at) -> dict:
    """What a publication writes on its fact, whether a new row or the slot's next version."""
    return {
        "value": value,
        "value_digest": value_digest(value),
        "confidence": candidate.confidence,
        "kind": candidate.kind,
        "source": candidate.source,
        "source_message_id": candidate.source_message_id,
        "evidence": candidate.evidence,
        "provenance": [_provenance_entry(candidate, now)],
        "expires_at": expires_at,
        "approved_by": str(actor),
        "updated_at": now,
    }


def _withdrawn_by_contest(*, candidate: Candidate, subject: Subject) -> Fact | None:
    """The fact a contest candidate withdrew from publication, if it is still contested
    and in the candidate's slot (a reviewer may have edited the value, not the slot)."""
    if CandidateFlag.CONTESTED not in (candidate.flags or []) or candidate.conflict_fact_id is None:
        return None
    return _slot_facts(candidate, subject).filter(pk=candidate.conflict_fact_id, status=FactStatus.CONTESTED).first()


def contests_closed(*, candidates: list[Candidate], subject: Subject, actor: Actor, reason: str) -> list[EventDraft]:
    """Contest candidates closed without upholding their fact (rejected: review agreed with
    the subject; superseded: a newer value was published): each contested fact is deleted,
    its value emptied (its versions stay as history)."""
    fact_ids = [
        candidate.conflict_fact_id
        for candidate in candidates
        if CandidateFlag.CONTESTED in (candidate.flags or []) and candidate.conflict_fact_id is not None
    ]
    if not fact_ids:
        return []
    facts = list(
        Fact.objects.select_for_update()
        .select_related("entity")
        .filter(pk__in=fact_ids, subject=subject, status=FactStatus.CONTESTED)
        .order_by("pk")
    )
    events = transitions.facts_end(
        facts, transitions.FACT_DELETE, subject=subject, actor=actor, at=timezone.now(), reason_code=lambda _f: reason
    )
    Fact.objects.filter(pk__in=[fact.pk for fact in facts]).update(value="", evidence="")
    return events


def _slot_facts(candidate: Candidate, subject: Subject):
    """The facts of the candidate's slot (subject, entity, field, thread), locked."""
    return Fact.objects.select_for_update().filter(
        subject=subject, entity_id=candidate.entity_id, field=candidate.field, thread_id=candidate.thread_id
    )


def slot_changed(
    *,
    subject: Subject,
    fact: Fact,
    actor: Actor,
    now,
    published_by: Candidate | None = None,
    judged_already: Collection[int] = (),
) -> list[EventDraft]:
    """The published value of ``fact``'s slot changed: its waiting items are judged again
    (``services.waiting``) and the contests that made moot are closed with their facts."""
    rejudged = waiting_rejudge(
        subject=subject,
        slot=Slot.of_fact(fact),
        actor=actor,
        now=now,
        published_by=published_by,
        judged_already=judged_already,
    )
    return rejudged.events + contests_closed(
        candidates=rejudged.closed, subject=subject, actor=POLICY, reason=Reason.NEWER_CANDIDATE
    )


def suppress_value(*, subject: Subject, entity_id: int, field: str, value: str) -> None:
    SuppressedValue.objects.get_or_create(
        tenant_id=subject.tenant_id,
        subject=subject,
        entity_id=entity_id,
        field=field,
        value_digest=value_digest(value),
    )


def _get_fact_for_update(
    *, tenant: Tenant, fact_id: int, user_id: str | None, statuses=(FactStatus.ACTIVE,)
) -> tuple[Fact, Subject]:
    fact = Fact.objects.filter(tenant=tenant, pk=fact_id).select_related("subject").first()
    if fact is None or (user_id is not None and fact.subject.user_id != user_id):
        raise NotFound("Fact not found.")
    subject = lock_subject(fact.subject_id)
    # Read again under the lock: an erasure may have removed it while this one waited.
    fact = Fact.objects.select_for_update().select_related("entity").filter(pk=fact.pk).first()
    if fact is None or fact.status not in statuses:
        raise NotFound("Fact not found.")
    return fact, subject


def relation_target(
    *,
    subject: Subject,
    value: str,
    new_entity_type: str = "",
    new_entity_name: str = "",
) -> tuple[str, bool]:
    """The value of a relation: a reference ``type:id`` to one of the subject's entities
    (SPEC §2: "the target entity as value"), never free text. Returns (value, created).

    With ``new_entity_type`` and ``new_entity_name`` the target is that entity, found by
    its name or alias or created (type from the tenant's schema); otherwise ``value`` must
    name an entity the subject already has.
    """
    if new_entity_type or new_entity_name:
        name = clean_value(new_entity_name)
        if not TenantSchema.load(subject.tenant).knows_entity_type(new_entity_type) or new_entity_type == "user":
            raise InvalidInput("Choose the kind of the new entry.", details={"entity_type": "unknown"})
        existing = Entity.objects.filter(subject=subject).count()
        entity = EntityResolver(subject).resolve(entity_type=new_entity_type, entity_id="", entity_name=name)
        return entity.ref, Entity.objects.filter(subject=subject).count() > existing
    entity_type, _, entity_id = (value or "").partition(":")
    if not Entity.objects.filter(subject=subject, entity_type=entity_type, entity_id=entity_id).exists():
        raise InvalidInput(
            "A relation points to one of your entries: choose one, or create it.", details={"value": "unknown_entity"}
        )
    return value, False


@service
def fact_edit(
    *,
    tenant: Tenant,
    fact_id: int,
    value: Correction,
    actor: Actor,
    expected_version: int | None = None,
    user_id: Annotated[str | None, Screen.IDENTIFIER] = None,
    reason: Text = "",
    new_entity_type: Correction = "",
    new_entity_name: Correction = "",
) -> Fact:
    """Correct a published fact: a new version whose source is the editor's (SPEC §4).

    ``user_id`` restricts the lookup to one subject (the self-service page). A relation's
    value is an entity (:func:`relation_target`): one of the subject's, or a new one
    named by ``new_entity_type`` and ``new_entity_name``.
    """
    fact, subject = _get_fact_for_update(tenant=tenant, fact_id=fact_id, user_id=user_id)
    created = False
    if fact.field.startswith(RELATION_PREFIX):
        value, created = relation_target(
            subject=subject, value=value, new_entity_type=new_entity_type, new_entity_name=new_entity_name
        )
    value = clean_value(value)
    if expected_version is not None and fact.version != expected_version:
        raise StaleVersion(
            "This fact changed since you loaded it.", details={"current_version": fact.version}
        )
    digest = value_digest(value)
    if fact.value_digest in value_digests(value) and fact.value == value:
        return fact
    clash = (
        Fact.objects.filter(
            subject=subject,
            entity_id=fact.entity_id,
            field=fact.field,
            thread_id=fact.thread_id,
            status=FactStatus.ACTIVE,
            value_digest__in=value_digests(value),
        )
        .exclude(pk=fact.pk)
        .exists()
    )
    if clash:
        raise InvalidInput("Another fact already holds this value.", details={"value": "duplicate"})
    now = timezone.now()
    before = fact_payload(fact)
    fact.value = value
    fact.value_digest = digest
    fact.source = actor.source
    fact.confidence = 1.0
    fact.version += 1
    fact.approved_by = str(actor)
    fact.provenance = _with_provenance(
        fact.provenance, {"source": actor.source, "actor": str(actor), "at": now.isoformat()}
    )
    fact.updated_at = now
    fact.save()
    FactVersion.objects.create(
        fact=fact,
        version=fact.version,
        value=value,
        confidence=1.0,
        source=fact.source,
        actor=str(actor),
        reason=reason[:200],
        created_at=now,
    )
    edited = transitions.fact_event(
        fact,
        AuditAction.FACT_EDITED,
        subject=subject,
        actor=actor,
        before=before,
        after={**fact_payload(fact), **({"entity_created": value} if created else {})},
        reason=reason,
    )
    audit.record_many(tenant.pk, [edited, *slot_changed(subject=subject, fact=fact, actor=actor, now=now)])
    schedule_projection(subject.pk)
    return fact
