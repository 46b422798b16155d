"""The events a change owes to host apps (SPEC §7b), written in the change's transaction.

Every change of the product writes its audit event through ``reviews.audit.record_many``;
that is also the one place that turns the changes host apps care about into outbox rows
(:func:`emit`), so no service can change a fact or ask a subject without its event, and a
rolled-back change takes its event with it. Sending waits for the commit (:func:`emit`
registers ``reviews.webhooks.dispatch.send_soon`` with ``on_commit``), and
``reviews.webhooks.delivery`` sends.

Which audit actions become which event:

- ``fact.published``: a fact created, or a contested one upheld (back in publication),
  or a subject's scheduled deletion undone;
- ``fact.updated``: a new version of a published fact (a correction, an edit);
- ``fact.deleted``: a fact that left publication: deleted, expired, retired by a merge,
  contested by its subject, or scheduled for deletion by its subject (it leaves recall at
  once). A fact host apps last heard of as deleted is not announced deleted again: the
  scheduled deletion carried out later, or a contested fact a reviewer then deletes, sends
  nothing more;
- ``candidate.pending_user``: an item the subject is asked about (by the policy, a
  reviewer's deferral, an undo that gives it back to them);
- ``subject.erased``: everything about a subject erased.

A decision undone reports where it left the fact: published again (``fact.updated``) or
out of publication (``fact.deleted``).

The value of a ``sensitive`` field never enters a body. And what erasure removes leaves
the outbox too: a deleted fact's value and an erased subject's values are cut from every
event still held about them, delivered or not.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass

from django.db import transaction
from django.utils import timezone

from ..models import (
    AuditAction,
    Candidate,
    CandidateStatus,
    DeliveryStatus,
    Fact,
    FactStatus,
    FieldDefinition,
    Sensitivity,
    Tenant,
    WebhookDelivery,
    WebhookEndpoint,
    WebhookEvent,
    WebhookEventType,
)
from .dispatch import send_soon
from .signing import new_webhook_id

logger = logging.getLogger(__name__)

FACT_EVENT_OF_ACTION = {
    AuditAction.FACT_CREATED: WebhookEventType.FACT_PUBLISHED,
    AuditAction.FACT_REINSTATED: WebhookEventType.FACT_PUBLISHED,
    AuditAction.FACT_DELETION_UNDONE: WebhookEventType.FACT_PUBLISHED,
    AuditAction.FACT_UPDATED: WebhookEventType.FACT_UPDATED,
    AuditAction.FACT_EDITED: WebhookEventType.FACT_UPDATED,
    AuditAction.FACT_CLEANED: WebhookEventType.FACT_UPDATED,
    AuditAction.FACT_DELETED: WebhookEventType.FACT_DELETED,
    AuditAction.FACT_EXPIRED: WebhookEventType.FACT_DELETED,
    AuditAction.FACT_RETIRED: WebhookEventType.FACT_DELETED,
    AuditAction.FACT_CONTESTED: WebhookEventType.FACT_DELETED,
    AuditAction.FACT_DELETION_SCHEDULED: WebhookEventType.FACT_DELETED,
}
CANDIDATE_ACTIONS = (
    AuditAction.POLICY_PENDING_USER,
    AuditAction.CANDIDATE_DEFERRED,
    AuditAction.CANDIDATE_DECISION_UNDONE,
)
FACT_ACTIONS = (*FACT_EVENT_OF_ACTION, AuditAction.FACT_DECISION_UNDONE)
ACTIONS = frozenset((*FACT_ACTIONS, *CANDIDATE_ACTIONS, AuditAction.SUBJECT_ERASED))
# A fact's events whose earlier bodies lose the value: it is gone from the product.
VALUE_ERASING_ACTIONS = (AuditAction.FACT_DELETED, AuditAction.FACT_RETIRED, AuditAction.FACT_EXPIRED)


@dataclass(frozen=True)
class _Change:
    event_type: WebhookEventType
    user_id: str
    data: dict


def emit(tenant_id: int, drafts) -> None:
    """Write the outbox rows the audit ``drafts`` owe; send them once the transaction commits.

    Costs nothing for changes no host app hears of, and one query for a tenant with no
    endpoint (most of them)."""
    relevant = [d for d in drafts if d.action in ACTIONS and _names_its_object(d)]
    if not relevant:
        return
    endpoints = list(
        WebhookEndpoint.objects.filter(tenant_id=tenant_id, disabled_at__isnull=True).only("pk", "events")
    )
    _forget_erased_values(tenant_id, relevant)
    if not endpoints:
        return
    changes = _changes(tenant_id, relevant)
    if not changes:
        return
    slug = Tenant.objects.values_list("slug", flat=True).get(pk=tenant_id)
    now = timezone.now()
    deliveries = []
    for change in changes:
        subscribed = [e for e in endpoints if change.event_type in e.events]
        if not subscribed:
            continue
        event = WebhookEvent.objects.create(
            tenant_id=tenant_id,
            webhook_id=new_webhook_id(),
            event_type=change.event_type,
            user_id=change.user_id,
            created_at=now,
            body={
                "type": change.event_type.value,
                "timestamp": now.isoformat(),
                "data": {"tenant": slug, "user_id": change.user_id, **change.data},
            },
        )
        deliveries += [
            WebhookDelivery(event=event, endpoint=e, status=DeliveryStatus.PENDING, next_attempt_at=now)
            for e in subscribed
        ]
    if deliveries:
        WebhookDelivery.objects.bulk_create(deliveries)
        transaction.on_commit(send_soon)


def _names_its_object(draft) -> bool:
    """A fact's or a candidate's event names it by its id (a subject's erasure by the subject)."""
    expected = "subject" if draft.action == AuditAction.SUBJECT_ERASED else (
        "fact" if draft.action in FACT_ACTIONS else "candidate"
    )
    return draft.object_type == expected and str(draft.object_id).isdigit()


def _changes(tenant_id: int, drafts) -> list[_Change]:
    fact_ids = {int(d.object_id) for d in drafts if d.action in FACT_ACTIONS}
    candidate_ids = {int(d.object_id) for d in drafts if d.action in CANDIDATE_ACTIONS}
    facts = Fact.objects.select_related("entity").in_bulk(fact_ids) if fact_ids else {}
    candidates = Candidate.objects.select_related("entity").in_bulk(candidate_ids) if candidate_ids else {}
    sensitive = _sensitive_fields(tenant_id, candidates.values())
    already_deleted = _last_heard_deleted(tenant_id, fact_ids) if fact_ids else set()
    changes = []
    for draft in drafts:
        if draft.action == AuditAction.SUBJECT_ERASED:
            changes.append(
                _Change(WebhookEventType.SUBJECT_ERASED, draft.subject_user_id, {"id": str(draft.object_id)})
            )
        elif draft.action in FACT_ACTIONS and (fact := facts.get(int(draft.object_id))) is not None:
            change = _fact_change(draft.action, fact, draft.subject_user_id)
            if change.event_type == WebhookEventType.FACT_DELETED:
                if fact.pk in already_deleted:
                    continue
                already_deleted.add(fact.pk)
            else:
                already_deleted.discard(fact.pk)
            changes.append(change)
        elif draft.action in CANDIDATE_ACTIONS and (candidate := candidates.get(int(draft.object_id))) is not None:
            if candidate.status == CandidateStatus.PENDING_USER:
                changes.append(_candidate_change(candidate, draft.subject_user_id, sensitive))
    return changes


def _last_heard_deleted(tenant_id: int, fact_ids: set[int]) -> set[int]:
    """The facts whose newest event (delivered or not) says they were deleted."""
    newest = {}
    events = WebhookEvent.objects.filter(
        tenant_id=tenant_id,
        event_type__in=[WebhookEventType.FACT_PUBLISHED, WebhookEventType.FACT_UPDATED, WebhookEventType.FACT_DELETED],
        body__data__id__in=list(fact_ids),
    ).order_by("pk")
    for event_type, fact_id in events.values_list("event_type", "body__data__id"):
        newest[int(fact_id)] = event_type
    return {fact_id for fact_id, event_type in newest.items() if event_type == WebhookEventType.FACT_DELETED}


def _fact_change(action: AuditAction, fact: Fact, user_id: str) -> _Change:
    event_type = FACT_EVENT_OF_ACTION.get(action)
    if event_type is None:  # a decision undone: where it left the fact
        published = fact.status == FactStatus.ACTIVE
        event_type = WebhookEventType.FACT_UPDATED if published else WebhookEventType.FACT_DELETED
    data = {
        "id": fact.pk,
        "entity_type": fact.entity.entity_type,
        "entity_id": fact.entity.entity_id,
        "field": fact.field,
        "version": fact.version,
    }
    if event_type != WebhookEventType.FACT_DELETED and fact.sensitivity != Sensitivity.SENSITIVE:
        data["value"] = fact.value
    return _Change(event_type, user_id, data)


def _candidate_change(candidate: Candidate, user_id: str, sensitive: set) -> _Change:
    data = {
        "id": candidate.pk,
        "entity_type": candidate.entity_type,
        # The resolved entity's id ("me" names the subject's own entity, by their user id).
        "entity_id": candidate.entity.entity_id if candidate.entity else candidate.entity_ref_id,
        "field": candidate.field,
        "version": candidate.version,
    }
    if (candidate.entity_type, candidate.field) not in sensitive:
        data["value"] = candidate.value
    return _Change(WebhookEventType.CANDIDATE_PENDING_USER, user_id, data)


def _sensitive_fields(tenant_id: int, candidates) -> set[tuple[str, str]]:
    if not candidates:
        return set()
    return set(
        FieldDefinition.objects.filter(
            tenant_id=tenant_id,
            sensitivity=Sensitivity.SENSITIVE,
            field__in={c.field for c in candidates},
        ).values_list("entity_type", "field")
    )


def _forget_erased_values(tenant_id: int, drafts) -> None:
    """Cut the values erasure removed out of the events still held about them."""
    erased_users = {d.subject_user_id for d in drafts if d.action == AuditAction.SUBJECT_ERASED}
    erased_facts = {int(d.object_id) for d in drafts if d.action in VALUE_ERASING_ACTIONS}
    if not erased_users and not erased_facts:
        return
    held = WebhookEvent.objects.filter(tenant_id=tenant_id)
    if erased_users:
        rows = list(held.filter(user_id__in=erased_users))
    else:
        fact_types = [t for t in WebhookEventType if t.startswith("fact.")]
        rows = list(held.filter(event_type__in=fact_types, body__data__id__in=list(erased_facts)))
    for row in rows:
        if "value" in row.body.get("data", {}):
            del row.body["data"]["value"]
            row.save(update_fields=["body"])
