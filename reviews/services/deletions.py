"""A subject's "delete this memory", undoable for a while (SPEC §4, §6).

One tap never erases: :func:`fact_deletion_schedule` records a :class:`FactDeletion`
due ``MEMORY_UNDO_SECONDS`` later; from then on recall and the store leave the fact out
(the subject said "delete it": no agent should read it again), but the fact row itself is
untouched, so Undo simply brings it back; :func:`fact_deletion_undo`
cancels it inside the window; :func:`fact_deletion_carry_out` runs the erasure proper
(:func:`reviews.services.erasure.fact_erase`, the one every other deletion uses) once the
window has passed. Who carries it out: a delayed task when a broker is configured, else
(and as a safety net) the subject's next page load (:func:`due_deletions_carry_out`) and
the beat's retention sweep. Each step is audited; the row keeps the receipt's counts.
"""
from __future__ import annotations

import logging
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from .. import audit
from ..actors import SYSTEM, Actor
from ..background import TaskName, publish_tasks, publisher, runs_in_process
from ..errors import InvalidTransition, NotFound
from ..models import AuditAction, DeletionStatus, Fact, FactDeletion, Subject, Tenant
from ..publication import schedule_projection
from ..policy.transitions import fact_retired_event
from .erasure import ErasureReceipt, fact_erase
from .facts import _get_fact_for_update
from ..models.locks import lock_subject
from .boundary import service
from ..screening import Identifier

logger = logging.getLogger(__name__)


class _DryRun(Exception):
    """Rolls a preview's transaction back."""


def fact_erase_preview(*, tenant: Tenant, user_id: str, fact_id: int, actor: Actor) -> ErasureReceipt:
    """What deleting this fact would remove, counted by running the erasure and rolling it back.

    The same code as the deletion, so the preview cannot drift from it; nothing is
    written (the audit events, suppression and projection go with the rollback).
    """
    receipt = None
    try:
        with transaction.atomic():
            receipt = fact_erase(tenant=tenant, fact_id=fact_id, user_id=user_id, actor=actor)
            raise _DryRun
    except _DryRun:
        pass
    return receipt


def _event(deletion: FactDeletion, fact: Fact, subject: Subject, actor: Actor, action: AuditAction):
    draft = fact_retired_event(fact=fact, subject=subject, actor=actor, action=action)
    draft.after = {"deletion": deletion.pk, "due_at": deletion.due_at.isoformat(), "status": deletion.status}
    return draft


@service
def fact_deletion_schedule(*, tenant: Tenant, user_id: Identifier, fact_id: int, actor: Actor) -> FactDeletion:
    """Schedule the deletion of one of the subject's facts; asking twice returns the same one."""
    fact, subject = _get_fact_for_update(tenant=tenant, fact_id=fact_id, user_id=user_id)
    existing = FactDeletion.objects.filter(fact=fact, status=DeletionStatus.SCHEDULED).first()
    if existing is not None:
        return existing
    now = timezone.now()
    deletion = FactDeletion.objects.create(
        tenant=tenant,
        subject=subject,
        fact=fact,
        requested_by=str(actor),
        requested_at=now,
        due_at=now + timedelta(seconds=settings.MEMORY_UNDO_SECONDS),
    )
    audit.record(tenant.pk, _event(deletion, fact, subject, actor, AuditAction.FACT_DELETION_SCHEDULED))
    # Recall leaves it out from now on (it reads the scheduled deletion); the store too.
    schedule_projection(subject.pk)
    if not runs_in_process():
        transaction.on_commit(lambda: publisher.submit(_publish_carry_out, deletion.pk))
    return deletion


def _publish_carry_out(deletion_id: int) -> None:
    # A second late: the task must find the window closed. Lost? The sweeps carry it out.
    publish_tasks(TaskName.CARRY_OUT_FACT_DELETION, [(deletion_id,)], countdown=settings.MEMORY_UNDO_SECONDS + 1)


def _locked_deletion(*, tenant: Tenant, deletion_id: int, user_id: str | None) -> FactDeletion:
    deletion = FactDeletion.objects.filter(tenant=tenant, pk=deletion_id).select_related("subject").first()
    if deletion is None or (user_id is not None and deletion.subject.user_id != user_id):
        raise NotFound("Nothing to undo here.")
    lock_subject(deletion.subject_id)
    return FactDeletion.objects.select_for_update().select_related("fact__entity", "subject").get(pk=deletion.pk)


@service
def fact_deletion_undo(*, tenant: Tenant, user_id: Identifier, deletion_id: int, actor: Actor) -> FactDeletion:
    """Cancel a scheduled deletion inside its window; the fact was never touched."""
    deletion = _locked_deletion(tenant=tenant, deletion_id=deletion_id, user_id=user_id)
    if deletion.status == DeletionStatus.UNDONE:
        return deletion
    if deletion.status != DeletionStatus.SCHEDULED or timezone.now() >= deletion.due_at:
        raise InvalidTransition("Too late to undo: this memory is already deleted.")
    deletion.status, deletion.settled_at = DeletionStatus.UNDONE, timezone.now()
    deletion.save(update_fields=["status", "settled_at"])
    audit.record(
        tenant.pk, _event(deletion, deletion.fact, deletion.subject, actor, AuditAction.FACT_DELETION_UNDONE)
    )
    schedule_projection(deletion.subject_id)  # back in the store, as it is back in recall
    return deletion


@service
def fact_deletion_carry_out(*, deletion_id: int, now: datetime | None = None) -> FactDeletion | None:
    """Erase the fact of a scheduled deletion whose window has passed; otherwise nothing.

    Idempotent: an undone, done or not-yet-due deletion is left as it is. The erasure's
    events name the subject who asked (``requested_by``), as a direct deletion would.
    """
    deletion = FactDeletion.objects.filter(pk=deletion_id).select_related("tenant", "subject").first()
    if deletion is None:
        return None
    deletion = _locked_deletion(tenant=deletion.tenant, deletion_id=deletion.pk, user_id=None)
    if deletion.status != DeletionStatus.SCHEDULED or (now or timezone.now()) < deletion.due_at:
        return deletion
    try:
        receipt = fact_erase(
            tenant=deletion.tenant, fact_id=deletion.fact_id, actor=Actor.parse(deletion.requested_by) or SYSTEM
        )
        deletion.receipt = receipt.as_dict()
    except NotFound:
        # Gone meanwhile (expired, or deleted with its conversation): nothing left to erase.
        deletion.receipt = ErasureReceipt(scope={"fact_id": deletion.fact_id}).as_dict()
    deletion.status, deletion.settled_at = DeletionStatus.DONE, timezone.now()
    deletion.save(update_fields=["status", "settled_at", "receipt"])
    return deletion


def due_deletions_carry_out(
    *, subject: Subject | None = None, tenants: list[Tenant] | None = None, now: datetime | None = None
) -> int:
    """Carry out every scheduled deletion past its window (one subject's, some tenants', or all)."""
    due = FactDeletion.objects.filter(status=DeletionStatus.SCHEDULED, due_at__lte=now or timezone.now())
    if subject is not None:
        due = due.filter(subject=subject)
    if tenants is not None:
        due = due.filter(tenant__in=tenants)
    done = 0
    for deletion_id in due.order_by("due_at").values_list("pk", flat=True):
        deletion = fact_deletion_carry_out(deletion_id=deletion_id, now=now)
        done += deletion is not None and deletion.status == DeletionStatus.DONE
    return done
