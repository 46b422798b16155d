"""Retention (SPEC §1, §3 step 5): memory that expires on its own.

- A fact whose ``expires_at`` has passed: set at publication from the field's
  ``retention_days`` (a sensitive field: the tenant's sensitive retention, 90 days by
  default) unless the subject chose "keep" (then it has none).
- A thread-scoped fact, and an open thread-scoped candidate, once the thread has been idle
  for the tenant's ``thread_idle_days``: no message, candidate or fact change since.
- A message ``message_retention_days`` after it was written (still waiting for extraction:
  kept until extracted, so no message is lost unread).

An expired fact becomes a tombstone (status ``expired``) and its value goes everywhere a
deletion reaches (:func:`reviews.services.erasure.forget_facts`), except that the
candidates stay, blanked, for the quality figures, and the value is not suppressed: it may
legitimately be said again. Every expiry is audited (actor ``system``) and re-projects the
subject, so the LangGraph Store drops the fact at the same time as recall does.
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Annotated

from django.db import transaction
from django.db.models import Max, Q
from django.utils import timezone

from .. import audit
from ..policy import transitions
from ..actors import SYSTEM, Actor
from ..audit import EventDraft
from ..models import (
    OPEN_CANDIDATE_STATUSES,
    AuditAction,
    Candidate,
    ExtractionStatus,
    Fact,
    FactStatus,
    MemoryScope,
    Message,
    Tenant,
)
from ..publication import schedule_projection
from .erasure import ErasureReceipt, forget_facts, purge_object_values, receipt_event
from ..models.locks import lock_subject, lock_subjects
from .boundary import service
from ..screening import Screen, Verbatim

RETENTION = "retention_expired"
THREAD_IDLE = "thread_idle"
MESSAGE_BATCH = 1000


@dataclass
class RetentionReport:
    facts_expired: int = 0
    candidates_withdrawn: int = 0
    messages_deleted: int = 0

    def add(self, other: "RetentionReport") -> None:
        self.facts_expired += other.facts_expired
        self.candidates_withdrawn += other.candidates_withdrawn
        self.messages_deleted += other.messages_deleted


def retention_sweep(*, now: datetime | None = None, tenants=None, actor: Actor = SYSTEM) -> RetentionReport:
    """Apply every retention rule to every tenant (or ``tenants``): the beat task and
    ``manage.py expire_facts``. Each subject is handled in its own short transaction."""
    now = now or timezone.now()
    report = RetentionReport()
    for tenant in tenants if tenants is not None else Tenant.objects.all():
        due = due_facts(tenant=tenant, now=now)
        idle = idle_threads(tenant=tenant, now=now)
        for subject_id, thread_id in idle:
            for fact_id in Fact.objects.filter(
                subject_id=subject_id, thread_id=thread_id, scope=MemoryScope.THREAD, status=FactStatus.ACTIVE
            ).values_list("pk", flat=True):
                due[subject_id].setdefault(fact_id, THREAD_IDLE)
        threads_by_subject = defaultdict(list)
        for subject_id, thread_id in idle:
            threads_by_subject[subject_id].append(thread_id)
        for subject_id in sorted(set(due) | set(threads_by_subject)):
            report.add(
                subject_expire(
                    tenant=tenant,
                    subject_id=subject_id,
                    due=due.get(subject_id, {}),
                    idle_threads=threads_by_subject.get(subject_id, []),
                    actor=actor,
                    now=now,
                )
            )
        report.messages_deleted += messages_expire(tenant=tenant, actor=actor, now=now)
    return report


def due_facts(*, tenant: Tenant, now: datetime) -> defaultdict[int, dict[int, str]]:
    """{subject id: {fact id: reason}} of active facts past their ``expires_at``."""
    due: defaultdict[int, dict[int, str]] = defaultdict(dict)
    rows = Fact.objects.filter(tenant=tenant, status=FactStatus.ACTIVE, expires_at__lte=now)
    for subject_id, fact_id in rows.values_list("subject_id", "pk"):
        due[subject_id][fact_id] = RETENTION
    return due


def idle_threads(*, tenant: Tenant, now: datetime) -> list[tuple[int, str]]:
    """(subject id, thread id) of threads holding thread-scoped memory, idle too long."""
    cutoff = now - timedelta(days=tenant.thread_idle_days)
    with_memory = set(
        Fact.objects.filter(tenant=tenant, status=FactStatus.ACTIVE, scope=MemoryScope.THREAD).values_list(
            "subject_id", "thread_id"
        )
    ) | set(
        Candidate.objects.filter(
            tenant=tenant, scope=MemoryScope.THREAD, status__in=OPEN_CANDIDATE_STATUSES
        ).values_list("subject_id", "thread_id")
    )
    idle = []
    for subject_id, thread_id in sorted(with_memory):
        if thread_last_activity(subject_id=subject_id, thread_id=thread_id) <= cutoff:
            idle.append((subject_id, thread_id))
    return idle


def thread_last_activity(*, subject_id: int, thread_id: str) -> datetime:
    in_thread = {"subject_id": subject_id, "thread_id": thread_id}
    moments = [
        Message.objects.filter(**in_thread).aggregate(at=Max("created_at"))["at"],
        Candidate.objects.filter(**in_thread).aggregate(at=Max("created_at"))["at"],
        Fact.objects.filter(**in_thread).aggregate(at=Max("updated_at"))["at"],
    ]
    return max(moment for moment in moments if moment is not None)


@service
def subject_expire(
    *,
    tenant: Tenant,
    subject_id: int,
    due: Annotated[dict[int, str], Screen.TEXT],
    idle_threads: Annotated[list[str], Screen.IDENTIFIER] = (),
    actor: Actor = SYSTEM,
    now: datetime,
) -> RetentionReport:
    """Expire one subject's due facts and withdraw the open candidates of idle threads.

    1. Lock the subject and re-check under the lock (a fact re-published meanwhile has a
       new ``expires_at``; a thread that woke up has a new message).
    2. Tombstone the facts and purge their values (:func:`forget_facts`).
    3. Withdraw the idle threads' open candidates, their values blanked.
    4. Audit one event per fact and candidate plus the receipt; re-project the subject.
    """
    subject = lock_subject(subject_id)
    report = RetentionReport()
    idle_cutoff = now - timedelta(days=tenant.thread_idle_days)
    idle = [t for t in idle_threads if thread_last_activity(subject_id=subject_id, thread_id=t) <= idle_cutoff]
    facts = [
        fact
        for fact in Fact.objects.select_for_update()
        .select_related("entity")
        .filter(pk__in=list(due), status=FactStatus.ACTIVE)
        .order_by("pk")
        if (fact.expires_at is not None and fact.expires_at <= now) or fact.thread_id in idle
    ]
    receipt = ErasureReceipt(scope={"user_id": subject.user_id, "expired": True}, at=now)
    events: list[EventDraft] = []
    if facts:
        events += forget_facts(
            subject=subject,
            facts=facts,
            transition=transitions.FACT_EXPIRE,
            actor=actor,
            candidates=Q(pk__in=[]),
            receipt=receipt,
            delete_candidates=False,
            reason_code=lambda fact: RETENTION if fact.expires_at is not None and fact.expires_at <= now else THREAD_IDLE,
        )
    report.facts_expired = len(facts)

    stale = Candidate.objects.select_for_update().filter(
        subject=subject, scope=MemoryScope.THREAD, thread_id__in=idle, status__in=OPEN_CANDIDATE_STATUSES
    )
    for thread_id in idle:
        withdrawn = transitions.candidates_close(
            stale.filter(thread_id=thread_id).order_by("pk").values_list("pk", "status", "version"),
            transitions.CANDIDATE_WITHDRAW,
            subject=subject,
            actor=actor,
            reason=THREAD_IDLE,
            now=now,
            after={"thread_id": thread_id},
            blank_values=True,
        )
        events += withdrawn
        report.candidates_withdrawn += len(withdrawn)
    if not events:
        return report
    if facts:
        events.append(
            receipt_event(action=AuditAction.MEMORY_EXPIRED, subject=subject, actor=actor, receipt=receipt, reason_code=RETENTION)
        )
    audit.record_many(tenant.pk, events)
    schedule_projection(subject.pk)
    return report


def messages_expire(*, tenant: Tenant, actor: Actor = SYSTEM, now: datetime) -> int:
    """Delete the tenant's messages older than its message retention, in batches."""
    cutoff = now - timedelta(days=tenant.message_retention_days)
    expired = Message.objects.filter(tenant=tenant, created_at__lt=cutoff).exclude(
        extraction_status=ExtractionStatus.PENDING
    )
    deleted = 0
    while True:
        batch = list(
            expired.order_by("pk").values_list("pk", "message_id", "subject_id", "subject__user_id")[:MESSAGE_BATCH]
        )
        if not batch:
            return deleted
        deleted += _messages_delete_batch(tenant=tenant, batch=batch, cutoff=cutoff, actor=actor)


@service
def _messages_delete_batch(
    *,
    tenant: Tenant,
    batch: Annotated[list[tuple], Verbatim('message rows read from the database (retention), not input')],
    cutoff: datetime,
    actor: Actor,
) -> int:
    per_subject: defaultdict[tuple[int, str], int] = defaultdict(int)
    for _, _, subject_id, user_id in batch:
        per_subject[subject_id, user_id] += 1
    lock_subjects(subject_id for subject_id, _ in per_subject)  # the lock order: facts.lock_subject
    deleted = Message.objects.filter(pk__in=[row[0] for row in batch]).delete()[0]
    purge_object_values(
        tenant_id=tenant.pk,
        object_type="message",
        object_ids=[str(row[0]) for row in batch] + [row[1] for row in batch],
    )
    audit.record_many(
        tenant.pk,
        [
            EventDraft(
                actor=str(actor),
                action=AuditAction.MESSAGES_EXPIRED,
                object_type="subject",
                object_id=subject_id,
                subject_user_id=user_id,
                after={"messages": count, "written_before": cutoff.isoformat()},
                reason_code=RETENTION,
            )
            for (subject_id, user_id), count in sorted(per_subject.items())
        ],
    )
    return deleted
