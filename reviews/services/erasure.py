"""Deletion and erasure (SPEC §4, §6, §7): no copy of a deleted value survives.

A value lives in more places than its fact: the fact's versions, the candidates that
proposed it, the quoted evidence of other candidates, the source messages, recall
queries, the audit trail's readable payloads, the LangGraph Store projection and export
files. Each deletion here reaches all of them and returns an :class:`ErasureReceipt`.

Decisions (documented in docs/operations.md, "Deletion and erasure"):

- Precise deletion (one fact, a thread, an entity, a field) keeps a *tombstone* per fact:
  status ``deleted``, no value, no versions. The id stays valid for recall records and the
  audit trail. Erasing a subject deletes the rows outright.
- A deleted value is cut out of the free text that stays (message content, evidence,
  notes, recall queries) as ``[deleted]``; deleting a thread deletes its messages.
- Audit events are never touched: the readable payloads of events that carried a deleted
  value are deleted, the digests stay, so ``verify_audit`` still passes.
- Deleting one fact, an entity or a field suppresses the deleted values (a keyed digest,
  SPEC §3 step 6): the subject said "not this", so extraction must not bring it back.
  Deleting a thread or erasing the subject forgets without refusing: the subject can be
  learned about afresh (pausing collection is how they stop that). Digests kept from
  earlier refusals stay: they are keyed HMACs, not values.
- The Subject row stays (it is the host's id and holds the pause flag); so do entity ids
  (stable slugs, identifiers like the user id), while display names and aliases go.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import datetime
from typing import Annotated

from django.db.models import Q, QuerySet
from django.utils import timezone

from .. import audit
from ..policy import transitions
from ..actors import Actor
from ..audit import EventDraft
from ..errors import NotFound
from ..models import (
    AuditAction,
    AuditEvent,
    AuditPayload,
    Candidate,
    Entity,
    EntityAlias,
    FactEmbedding,
    Fact,
    FactStatus,
    FactVersion,
    MemoryScope,
    Message,
    Reason,
    RecallRecord,
    Sensitivity,
    Subject,
    SuppressedValue,
    Tenant,
)
from ..models.choices import RECEIPT_ACTIONS
from ..policy.normalize import normalize_text, value_digest
from ..publication import schedule_projection
from ..policy.transitions import LIVE_FACT_STATUSES, Transition
from .audit_export import audit_exports_purge
from .dry_run import dry_run_examples_forget
from ..domain import SELF_ALIASES
from .entities import USER_ENTITY_TYPE
from .facts import _get_fact_for_update, slot_changed, suppress_value
from ..models.locks import lock_subject
from ..recall.records import recall_records_flush
from ..selectors.erasure import deletion_scope
from .boundary import service
from ..screening import Identifier, Screen, Text

REDACTED = "[deleted]"
DELETED_KEYS = (
    "facts",
    "fact_versions",
    "candidates",
    "messages",
    "recall_records",
    "store_items",
    "embeddings",
    "audit_values",
    "export_files",
    "dry_run_examples",
)
# Rows kept with the deleted values cut out of their text.
REDACTED_KEYS = ("messages", "candidates", "facts", "recall_records")


@dataclass
class ErasureReceipt:
    """What one deletion removed, where, and when (SPEC §4)."""

    scope: dict
    deleted: dict = field(default_factory=lambda: dict.fromkeys(DELETED_KEYS, 0))
    redacted: dict = field(default_factory=lambda: dict.fromkeys(REDACTED_KEYS, 0))
    at: datetime = field(default_factory=timezone.now)

    def count(self, key: str, n: int) -> None:
        self.deleted[key] += n

    def as_dict(self) -> dict:
        return {
            "deleted": dict(self.deleted),
            "redacted": dict(self.redacted),
            "scope": dict(self.scope),
            "at": self.at.isoformat(),
        }


# --- Finding and cutting out values -----------------------------------------------------


def value_pattern(values) -> re.Pattern | None:
    """A case-insensitive pattern for every value; Latin words match whole, CJK anywhere."""
    parts = []
    for value in sorted({v.strip() for v in values if v and v.strip()}, key=len, reverse=True):
        part = re.escape(value)
        if value[0].isascii() and value[0].isalnum():
            part = r"(?<![A-Za-z0-9])" + part
        if value[-1].isascii() and value[-1].isalnum():
            part += r"(?![A-Za-z0-9])"
        parts.append(part)
    return re.compile("|".join(parts), re.IGNORECASE) if parts else None


def rows_deleted(queryset: QuerySet) -> int:
    """How many rows of the queryset's own model a delete removed.

    Not ``delete()[0]``: that total includes rows deleted by cascade (a candidate's undo
    records, say), which a receipt must not count as candidates.
    """
    return queryset.delete()[1].get(queryset.model._meta.label, 0)


def _cut(pattern: re.Pattern, text: str) -> str:
    return pattern.sub(REDACTED, text) if text else text


def _cut_json(pattern: re.Pattern, data):
    if isinstance(data, str):
        return _cut(pattern, data)
    if isinstance(data, list):
        return [_cut_json(pattern, item) for item in data]
    if isinstance(data, dict):
        return {key: _cut_json(pattern, item) for key, item in data.items()}
    return data


def _mentions(pattern: re.Pattern, *parts) -> bool:
    return any(
        part is not None and pattern.search(part if isinstance(part, str) else json.dumps(part, ensure_ascii=False))
        for part in parts
    )


def _redact_rows(queryset, fields: list[str], pattern: re.Pattern) -> int:
    """Cut the values out of these text columns; returns how many rows changed.

    Changes are written after the read: SQLite does not isolate a cursor from writes to
    the table it iterates."""
    changes = []
    for row in queryset.only("pk", *fields).iterator(chunk_size=500):
        updates = {name: _cut(pattern, getattr(row, name)) for name in fields}
        if any(updates[name] != getattr(row, name) for name in fields):
            changes.append((row.pk, updates))
    for pk, updates in changes:
        queryset.model.objects.filter(pk=pk).update(**updates)
    return len(changes)


def _rewrite_recall_queries(*, subject: Subject, rewrite) -> int:
    # Records still in the stream are written first, or they would escape the rewrite.
    recall_records_flush()
    records = RecallRecord.objects.filter(tenant_id=subject.tenant_id, user_id=subject.user_id)
    changes = []
    for pk, query in records.values_list("pk", "query").iterator(chunk_size=500):
        rewritten = rewrite(query)
        if rewritten != query:
            changes.append((pk, rewritten))
    for pk, query in changes:
        RecallRecord.objects.filter(pk=pk).update(query=query)
    return len(changes)


def _purge_audit_values(*, subject: Subject, objects: Q, pattern: re.Pattern | None) -> list[int]:
    """Delete the readable payloads of events about deleted objects or carrying a deleted
    value. The events (and their digests) stay. Returns the events' ids."""
    payloads = AuditPayload.objects.filter(tenant_id=subject.tenant_id)
    event_ids = set(
        payloads.filter(event_id__in=audit_event_ids(tenant_id=subject.tenant_id, objects=objects)).values_list(
            "event_id", flat=True
        )
    )
    if pattern is not None:
        for payload in payloads.filter(subject_user_id=subject.user_id).exclude(event_id__in=event_ids).iterator():
            if _mentions(pattern, payload.before, payload.after, payload.reason):
                event_ids.add(payload.event_id)
    AuditPayload.objects.filter(tenant_id=subject.tenant_id, event_id__in=event_ids).delete()
    return sorted(event_ids)


def audit_event_ids(*, tenant_id: int, objects: Q):
    return AuditEvent.objects.filter(objects, tenant_id=tenant_id).values("pk")


def purge_object_values(*, tenant_id: int, object_type: str, object_ids) -> int:
    """Delete the readable payloads of events about these objects (and export files that
    carried them), e.g. expired messages; returns how many payloads went."""
    about = audit_event_ids(tenant_id=tenant_id, objects=_objects(object_type, object_ids))
    event_ids = list(
        AuditPayload.objects.filter(tenant_id=tenant_id, event_id__in=about).values_list("event_id", flat=True)
    )
    if not event_ids:
        return 0
    AuditPayload.objects.filter(tenant_id=tenant_id, event_id__in=event_ids).delete()
    audit_exports_purge(tenant_id=tenant_id, erased=Q(pk__in=event_ids))
    return len(event_ids)


def _objects(object_type: str, ids) -> Q:
    ids = [str(pk) for pk in ids]
    return Q(object_type=object_type, object_id__in=ids) if ids else Q(pk__in=[])


def _projection_keys(facts) -> int:
    """How many store items a set of facts fed (one per entity; SPEC §5 layout)."""
    return len(
        {
            fact.entity_id
            for fact in facts
            if fact.status == FactStatus.ACTIVE
            and fact.scope == MemoryScope.LONG_TERM
            and fact.sensitivity != Sensitivity.SENSITIVE
        }
    )


# --- Forgetting a set of facts (precise deletion and expiry) -------------------------------


def forget_facts(
    *,
    subject: Subject,
    facts: list[Fact],
    transition: Transition,
    actor: Actor,
    candidates: Q,
    receipt: ErasureReceipt,
    delete_candidates: bool,
    extra_values=(),
    objects: Q | None = None,
    reason: str = "",
    reason_code=lambda fact: "",
) -> list[EventDraft]:
    """Turn ``facts`` into tombstones and remove every copy of their values.

    1. Collect the values: each fact's and each earlier version's (and ``extra_values``),
       then those of the candidates that go (step 3).
    2. Live facts take ``transition`` (deleted or expired, one event each, returned);
       tombstones that still hold a value or versions (a merge's history) stay what they
       are. All lose their value and evidence, and their versions are deleted.
    3. The candidates matched by ``candidates`` or holding one of the values in the same
       slot: deleted, or (``delete_candidates=False``, expiry) kept with the value blanked
       so quality figures still count them. What still waits in an ended fact's slot is
       judged again (:func:`reviews.services.facts.slot_changed`).
    4. Cut the values out of the subject's remaining text; delete the readable audit
       payloads that carried them or were about the deleted objects (and ``objects``);
       retire export files holding those rows.
    """
    # A tombstone that already lost its value and versions has nothing left to forget.
    with_history = set(
        FactVersion.objects.filter(fact_id__in=[fact.pk for fact in facts]).values_list("fact_id", flat=True)
    )
    facts = [fact for fact in facts if fact.status in LIVE_FACT_STATUSES or fact.value or fact.pk in with_history]
    fact_ids = [fact.pk for fact in facts]
    versions = FactVersion.objects.filter(fact_id__in=fact_ids)
    values = {fact.value for fact in facts} | set(versions.values_list("value", flat=True)) | set(extra_values)
    receipt.count("fact_versions", rows_deleted(versions))
    receipt.count("store_items", _projection_keys(facts))
    receipt.count("embeddings", rows_deleted(FactEmbedding.objects.filter(fact_id__in=fact_ids)))
    receipt.count("facts", len(facts))
    live = [fact for fact in facts if fact.status in LIVE_FACT_STATUSES]
    events = transitions.facts_end(
        live,
        transition,
        subject=subject,
        actor=actor,
        at=receipt.at,
        reason=reason,
        reason_code=reason_code,
    )
    Fact.objects.filter(pk__in=fact_ids).update(value="", evidence="", updated_at=receipt.at)

    digests = {value_digest(v) for v in values}
    slots = {(fact.entity_id, fact.field, fact.thread_id) for fact in facts}
    held = Q(fact_id__in=fact_ids)
    for entity_id, field_name, thread_id in slots:
        slot = Candidate.objects.filter(subject=subject, entity_id=entity_id, field=field_name, thread_id=thread_id)
        same_value = [pk for pk, value in slot.values_list("pk", "value") if value and value_digest(value) in digests]
        held |= Q(pk__in=same_value)
    doomed = Candidate.objects.filter(Q(subject=subject) & (held | candidates))
    candidate_ids = []
    for pk, value in doomed.values_list("pk", "value"):
        candidate_ids.append(pk)
        values.add(value)
    values.discard("")
    if delete_candidates:
        FactVersion.objects.filter(candidate_id__in=candidate_ids).update(candidate=None)
        receipt.count("candidates", rows_deleted(Candidate.objects.filter(pk__in=candidate_ids)))
    else:
        receipt.redacted["candidates"] += Candidate.objects.filter(pk__in=candidate_ids).update(
            value="", evidence="", note=""
        )

    # What is left waiting in those slots faces a value no longer published (SPEC §4).
    for fact in {(fact.entity_id, fact.field, fact.thread_id): fact for fact in live}.values():
        events += slot_changed(subject=subject, fact=fact, actor=actor, now=receipt.at)

    pattern = value_pattern(values)
    if pattern is not None:
        redact_subject_text(subject=subject, pattern=pattern, receipt=receipt)
    about = _objects("fact", fact_ids) | _objects("candidate", candidate_ids)
    erased = _purge_audit_values(subject=subject, objects=about | objects if objects else about, pattern=pattern)
    receipt.count("audit_values", len(erased))
    receipt.count("export_files", audit_exports_purge(tenant_id=subject.tenant_id, erased=Q(pk__in=erased)))
    if pattern is not None:
        receipt.count(
            "dry_run_examples",
            dry_run_examples_forget(tenant_id=subject.tenant_id, user_id=subject.user_id, pattern=pattern),
        )
    return events


def redact_subject_text(*, subject: Subject, pattern: re.Pattern, receipt: ErasureReceipt) -> None:
    receipt.redacted["messages"] += _redact_rows(Message.objects.filter(subject=subject), ["content"], pattern)
    # Not other candidates' values: a value of another field is that field's memory.
    receipt.redacted["candidates"] += _redact_rows(
        Candidate.objects.filter(subject=subject), ["evidence", "note"], pattern
    )
    receipt.redacted["facts"] += _redact_rows(Fact.objects.filter(subject=subject), ["evidence"], pattern)
    _redact_rows(FactVersion.objects.filter(fact__subject=subject), ["reason"], pattern)
    receipt.redacted["recall_records"] += _rewrite_recall_queries(
        subject=subject, rewrite=lambda query: _cut_json(pattern, query)
    )


def receipt_event(
    *, action: str, subject: Subject, actor: Actor, receipt: ErasureReceipt, reason_code: str = Reason.ERASED
) -> EventDraft:
    return EventDraft.about(
        "subject", subject.pk, action, subject=subject, actor=actor,
        after=receipt.as_dict(),
        reason_code=reason_code,
    )


def _subject_or_404(*, tenant: Tenant, user_id: str) -> Subject:
    subject = Subject.objects.filter(tenant=tenant, user_id=user_id).only("pk").first()
    if subject is None:
        raise NotFound("No memory for this user.")
    return lock_subject(subject.pk)


def _suppress(subject: Subject, facts: list[Fact]) -> None:
    for fact in facts:
        if fact.value:
            suppress_value(subject=subject, entity_id=fact.entity_id, field=fact.field, value=fact.value)


# --- Precise deletion ----------------------------------------------------------------------


@service
def fact_erase(
    *,
    tenant: Tenant,
    fact_id: int,
    actor: Actor,
    user_id: Annotated[str | None, Screen.IDENTIFIER] = None,
    reason: Text = "",
) -> ErasureReceipt:
    """Delete one published fact and every copy of its value; suppress the value.

    ``user_id`` restricts the lookup to one subject (the API and the self-service page).
    """
    fact, subject = _get_fact_for_update(
        tenant=tenant, fact_id=fact_id, user_id=user_id, statuses=transitions.FACT_DELETE.sources
    )
    receipt = ErasureReceipt(scope={"user_id": subject.user_id, "fact_id": fact.pk})
    _suppress(subject, [fact])
    events = forget_facts(
        subject=subject,
        facts=[fact],
        transition=transitions.FACT_DELETE,
        actor=actor,
        candidates=Q(pk__in=[]),
        receipt=receipt,
        delete_candidates=True,
        reason=reason,
    )
    events.append(receipt_event(action=AuditAction.MEMORY_DELETED, subject=subject, actor=actor, receipt=receipt))
    audit.record_many(tenant.pk, events)
    schedule_projection(subject.pk)
    return receipt


@service
def facts_delete(
    *,
    tenant: Tenant,
    user_id: Identifier,
    actor: Actor,
    thread_id: Annotated[str | None, Screen.IDENTIFIER] = None,
    entity: Annotated[str | None, Screen.TEXT] = None,
    field: Annotated[str | None, Screen.TEXT] = None,
) -> ErasureReceipt:
    """Delete a subject's memory by thread, entity and/or field (they combine); with no
    filter at all, erase the subject (:func:`subject_erase`).

    1. Lock the subject; resolve the scope (:func:`deletion_scope`; 404 for what is not there).
    2. Select the facts in scope (every status: old tombstones may still hold a value).
    3. Forget them (:func:`forget_facts`) with the candidates in scope; a thread alone
       also deletes its messages, and versions its messages were the source of.
    4. Suppress the values unless the scope is a thread; audit one event per fact and
       the receipt; re-project the subject.
    """
    if not (thread_id or entity or field):
        return subject_erase(tenant=tenant, user_id=user_id, actor=actor)
    subject = _subject_or_404(tenant=tenant, user_id=user_id)
    scope = deletion_scope(subject, thread_id=thread_id, entity=entity, field=field)
    receipt = ErasureReceipt(
        scope={"user_id": user_id, "thread_id": thread_id or None, "entity": entity or None, "field": field or None}
    )
    facts = list(Fact.objects.select_for_update().filter(scope.facts).select_related("entity").order_by("pk"))
    if not thread_id:
        _suppress(subject, [fact for fact in facts if fact.status in LIVE_FACT_STATUSES])
    extra_values = []
    if scope.message_ids:
        # Earlier versions a thread's messages were the source of go with the thread.
        from_thread = FactVersion.objects.filter(
            fact__subject=subject, source_message_id__in=scope.message_ids
        ).exclude(fact__in=facts)
        extra_values = list(from_thread.values_list("value", flat=True))
        receipt.count("fact_versions", rows_deleted(from_thread))
    message_events = None
    if scope.messages is not None:
        message_events = _objects("message", [*scope.messages.values_list("pk", flat=True), *scope.message_ids])
        receipt.count("messages", rows_deleted(scope.messages))
    whole_entity = scope.entity is not None and not (thread_id or field)
    if whole_entity:
        extra_values += _entity_names(scope.entity)
    events = forget_facts(
        subject=subject,
        facts=facts,
        transition=transitions.FACT_DELETE,
        actor=actor,
        candidates=scope.candidates,
        receipt=receipt,
        delete_candidates=True,
        extra_values=extra_values,
        objects=message_events,
    )
    if whole_entity:
        _forget_entity_names(scope.entity)
    events.append(receipt_event(action=AuditAction.MEMORY_DELETED, subject=subject, actor=actor, receipt=receipt))
    audit.record_many(tenant.pk, events)
    schedule_projection(subject.pk)
    return receipt


def _kept_names(entity: Entity) -> set[str]:
    keep = {normalize_text(entity.entity_id)}
    if entity.entity_type == USER_ENTITY_TYPE:
        keep |= {normalize_text(alias) for alias in SELF_ALIASES}
    return keep


def _entity_names(entity: Entity) -> list[str]:
    """The names the subject gave an entity (its id and 我 / I / me excepted)."""
    keep = _kept_names(entity)
    names = [entity.display_name, *entity.aliases.values_list("alias", flat=True)]
    return [name for name in names if name and normalize_text(name) not in keep]


def _forget_entity_names(entity: Entity) -> None:
    """An entity's display name and aliases are the subject's words: they go; its id stays."""
    EntityAlias.objects.filter(entity=entity).exclude(normalized__in=_kept_names(entity)).delete()
    Entity.objects.filter(pk=entity.pk).update(display_name="")


# --- Erasing a subject ---------------------------------------------------------------------


@service
def subject_erase(*, tenant: Tenant, user_id: Identifier, actor: Actor) -> ErasureReceipt:
    """Forget everything about one subject ("forget me"), keeping only what SPEC §6 needs.

    1. Lock the subject (404 if the tenant never saw them).
    2. Delete fact versions, candidates, facts and messages.
    3. Entities: delete those no refusal (suppressed digest) hangs on; the rest lose
       their display names and aliases.
    4. Recall records keep which fact ids went where, lose the query text.
    5. Delete the readable audit payloads of the subject's events (digests stay; earlier
       receipts stay); retire export files holding the subject's rows.
    6. Audit the receipt; re-project the subject (the projection deletes every key).
    """
    subject = _subject_or_404(tenant=tenant, user_id=user_id)
    receipt = ErasureReceipt(scope={"user_id": user_id, "all": True})
    facts = list(Fact.objects.filter(subject=subject).only("pk", "entity_id", "status", "scope", "sensitivity"))
    receipt.count("store_items", _projection_keys(facts))
    receipt.count("fact_versions", rows_deleted(FactVersion.objects.filter(fact__subject=subject)))
    receipt.count("candidates", rows_deleted(Candidate.objects.filter(subject=subject)))
    receipt.count("embeddings", rows_deleted(FactEmbedding.objects.filter(subject=subject)))
    receipt.count("facts", rows_deleted(Fact.objects.filter(subject=subject)))
    receipt.count("messages", rows_deleted(Message.objects.filter(subject=subject)))

    refused = set(SuppressedValue.objects.filter(subject=subject).values_list("entity_id", flat=True))
    Entity.objects.filter(subject=subject).exclude(pk__in=refused).delete()
    for entity in Entity.objects.filter(subject=subject):
        _forget_entity_names(entity)

    receipt.count(
        "recall_records",
        _rewrite_recall_queries(
            subject=subject, rewrite=lambda query: {k: "" if k == "q" else v for k, v in (query or {}).items()}
        ),
    )

    payloads = AuditPayload.objects.filter(tenant_id=tenant.pk, subject_user_id=user_id).exclude(
        event__action__in=RECEIPT_ACTIONS
    )
    receipt.count("audit_values", rows_deleted(payloads))
    receipt.count(
        "export_files",
        audit_exports_purge(tenant_id=tenant.pk, erased=Q(subject_user_id=user_id) & ~Q(action__in=RECEIPT_ACTIONS)),
    )
    receipt.count("dry_run_examples", dry_run_examples_forget(tenant_id=tenant.pk, user_id=user_id))
    audit.record(tenant.pk, receipt_event(action=AuditAction.SUBJECT_ERASED, subject=subject, actor=actor, receipt=receipt))
    schedule_projection(subject.pk)
    return receipt


@service
def fact_delete(
    *,
    tenant: Tenant,
    fact_id: int,
    actor: Actor,
    user_id: Annotated[str | None, Screen.IDENTIFIER] = None,
    reason: Text = "",
) -> Fact:
    """Delete a published fact and every copy of its value (see :func:`fact_erase`,
    which also returns the receipt); the value is suppressed so extraction cannot bring it
    back. Returns the tombstone."""
    fact_erase(tenant=tenant, fact_id=fact_id, actor=actor, user_id=user_id, reason=reason)
    return Fact.objects.get(pk=fact_id)
