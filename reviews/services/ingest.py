"""Ingestion and extraction: messages in, candidate facts out, nothing lost (SPEC §1, §3, §7, §8).

The message row is the record of work. :func:`messages_ingest` writes it (credentials
already masked) and hands it to the broker once the transaction commits; if the broker is
down the row simply stays ``pending`` and :func:`pending_extractions_sweep` sends it later.
:func:`message_extract` turns one row into candidates at most once, however many times a
worker, a redelivery or the sweep runs it. Failures are counted on the row; named,
transient ones are retried with backoff until a ceiling, then the row is ``failed`` with
its error shown in the admin, where (or with ``manage.py extract --failed``)
:func:`extractions_rerun` sends it round again.
"""
from __future__ import annotations

import logging
import random
import time
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.conf import settings
from django.db import DatabaseError, transaction
from django.db.models import Q, QuerySet
from django.utils import timezone

from .. import audit
from ..actors import SYSTEM, Actor
from ..audit import EventDraft
from ..domain import HISTORY_MESSAGES, SELF_ALIASES, CandidateInput, MessageInput
from ..background import BackgroundLane, TaskName, publish_tasks, publisher, runs_in_process
from ..scheduled import DueJobs
from ..errors import InvalidInput
from ..extraction import (
    ExtractionContext,
    ExtractionError,
    ExtractionResult,
    Extractor,
    KnownEntity,
    PriorMessage,
    get_extractor,
)
from ..extraction.base import field_line
from ..models import (
    AuditAction,
    CandidateStatus,
    Entity,
    EntityAlias,
    ExtractionStatus,
    Message,
    Source,
    Subject,
    Tenant,
)
from ..policy.schema import TenantSchema
from .candidates import SubmitResult, candidates_submit
from .entities import USER_ENTITY_TYPE, alias_add
from .boundary import masked_kinds, service
from ..models.locks import lock_subject, lock_subjects
from ..screening import Identifier, Text

logger = logging.getLogger(__name__)

MESSAGE_ROLES = ("user", "assistant", "system", "tool")
MAX_MESSAGE_ID_LENGTH = 128
MAX_CONTENT_LENGTH = 32_000
# How many known entities an extractor sees.
KNOWN_ENTITIES = 100
# Earlier pending messages of the same subject extracted first, so a correction
# ("现在迁到 PostgreSQL") meets the value it corrects even when workers race.
CATCH_UP_LIMIT = 20
SWEEP_BATCH = 1000


@dataclass(frozen=True)
class IngestResult:
    accepted: int
    duplicates: int
    # Messages of subjects who paused collection: answered, not kept (SPEC §4).
    paused: int = 0


@dataclass
class ExtractOutcome:
    """What one call of :func:`message_extract` did. ``retry_in`` is set when it should run again."""

    status: str
    candidates: int = 0
    retry_in: float | None = None
    error: str = ""
    results: list[SubmitResult] = field(default_factory=list)


# --- Ingest -------------------------------------------------------------------------------


def _validate(messages: list[MessageInput]) -> None:
    problems = {}
    for index, message in enumerate(messages):
        errors = []
        for name in ("id", "thread_id", "user_id"):
            value = getattr(message, name)
            if not value or not value.strip() or len(value) > MAX_MESSAGE_ID_LENGTH:
                errors.append(f"{name}: 1 to {MAX_MESSAGE_ID_LENGTH} characters")
        if message.role not in MESSAGE_ROLES:
            errors.append(f"role: one of {', '.join(MESSAGE_ROLES)}")
        if len(message.content) > MAX_CONTENT_LENGTH or "\x00" in message.content:
            errors.append(f"content: at most {MAX_CONTENT_LENGTH} characters, no null characters")
        if errors:
            problems[str(index)] = errors
    if problems:
        raise InvalidInput("Some messages are not valid; none was stored.", details={"messages": problems})


def _subjects_for(tenant: Tenant, user_ids: set[str]) -> dict[str, Subject]:
    subjects = {s.user_id: s for s in Subject.objects.filter(tenant=tenant, user_id__in=user_ids)}
    missing = user_ids - subjects.keys()
    if missing:
        # In one order, so two batches creating the same subjects wait rather than cross.
        Subject.objects.bulk_create(
            [Subject(tenant=tenant, user_id=user_id) for user_id in sorted(missing)], ignore_conflicts=True
        )
        subjects.update({s.user_id: s for s in Subject.objects.filter(tenant=tenant, user_id__in=missing)})
    return subjects


@service
def messages_ingest(*, tenant: Tenant, messages: list[MessageInput], actor: Actor) -> IngestResult:
    """Store a batch of chat messages and schedule their extraction.

    1. Validate the whole batch first: a bad item stores nothing.
    2. Lock the batch's subjects (created if new) before anything else: the lock order of
       every writer (models.locks.lock_subject), and what makes two batches carrying the same
       message id take turns.
    3. A message id already stored for the tenant, or repeated in the batch, is a
       duplicate; a paused subject's messages are not kept.
    4. Mask credentials, then insert; messages that are not the user's are kept as context
       but need no extraction.
    5. One audit event per subject (ids and masked-credential kinds, never content).
    6. After commit, hand the rows to the broker; a broker failure is logged, not raised.
    """
    _validate(messages)
    subjects = {
        subject.user_id: subject
        for subject in lock_subjects(s.pk for s in _subjects_for(tenant, {m.user_id for m in messages}).values())
    }
    seen: set[str] = set()
    fresh: list[MessageInput] = []
    duplicates = 0
    for message in messages:
        if message.id in seen:
            duplicates += 1
        else:
            seen.add(message.id)
            fresh.append(message)
    stored = set(Message.objects.filter(tenant=tenant, message_id__in=seen).values_list("message_id", flat=True))
    duplicates += sum(1 for message in fresh if message.id in stored)
    fresh = [message for message in fresh if message.id not in stored]

    paused = sum(1 for message in fresh if subjects[message.user_id].collection_paused)
    fresh = [message for message in fresh if not subjects[message.user_id].collection_paused]
    if not fresh:
        return IngestResult(accepted=0, duplicates=duplicates, paused=paused)

    now = timezone.now()
    rows, masked_by_subject = [], {}
    # A message sent without a time, after timed ones of its thread in the same batch (an
    # assistant's reply, say), is dated just after them, not "now": otherwise a reply
    # would read as a month younger than the question it answers.
    last_in_thread: dict[tuple[str, str], datetime] = {}
    for message in fresh:
        thread = (message.user_id, message.thread_id)
        created_at = message.created_at
        if created_at is None:
            created_at = last_in_thread[thread] + timedelta(microseconds=1) if thread in last_in_thread else now
        last_in_thread[thread] = created_at
        # The boundary masked the content; its placeholders say what it found.
        masked_credentials = masked_kinds(message.content)
        extractable = message.role == "user" and message.content.strip()
        rows.append(
            Message(
                tenant=tenant,
                subject=subjects[message.user_id],
                message_id=message.id,
                thread_id=message.thread_id,
                role=message.role,
                content=message.content,
                created_at=created_at,
                extraction_status=ExtractionStatus.PENDING if extractable else ExtractionStatus.SKIPPED,
                extraction_due_at=now if extractable else None,
            )
        )
        entry = masked_by_subject.setdefault(message.user_id, {"messages": [], "masked_credentials": {}})
        entry["messages"].append(message.id)
        if masked_credentials:
            entry["masked_credentials"][message.id] = list(masked_credentials)
    # A concurrent request with the same ids loses quietly rather than failing the batch.
    Message.objects.bulk_create(rows, ignore_conflicts=True)
    audit.record_many(
        tenant.pk,
        [
            EventDraft(
                actor=str(actor),
                action=AuditAction.MESSAGES_INGESTED,
                object_type="subject",
                object_id=subjects[user_id].pk,
                subject_user_id=user_id,
                after={"count": len(entry["messages"]), **entry},
            )
            for user_id, entry in masked_by_subject.items()
        ],
    )
    to_extract = list(
        Message.objects.filter(
            tenant=tenant,
            message_id__in=[row.message_id for row in rows if row.extraction_status == ExtractionStatus.PENDING],
            extraction_status=ExtractionStatus.PENDING,
        )
        .order_by("created_at", "pk")
        .values_list("pk", flat=True)
    )
    if to_extract:
        transaction.on_commit(lambda: extractions_enqueue(to_extract))
    return IngestResult(accepted=len(rows), duplicates=duplicates, paused=paused)


# --- Handing work to the workers -------------------------------------------------------------

_in_process_extractor = BackgroundLane("extraction-in-process")
# A failed attempt's retry waits here for its due time, not on the lane (reviews/scheduled.py).
_in_process_retries = DueJobs("extraction-retries", _in_process_extractor)


def extractions_enqueue(message_pks: list[int], *, wait: bool = False) -> int:
    """Hand messages to extraction; never raises. Returns how many were handed over.

    Without a broker (the embedded default) the rule extractor runs right here, after the
    commit, and the LLM extractor on a background thread so nobody waits on a model. With
    a broker, tasks are published from a background thread (``wait=True``: here, as the
    sweep and the commands do); a failure to publish leaves the rows pending with no due
    time, which the sweep treats as "send now".
    """
    if not message_pks:
        return 0
    pks = list(message_pks)
    if runs_in_process():
        if settings.MEMORY_EXTRACTOR == "llm" and not wait:
            _in_process_extractor.submit(_extract_all, pks)
        else:
            _extract_all(pks)
        return len(pks)
    if not wait:
        publisher.submit(_publish, pks)
        return len(pks)
    return _publish(pks)


def extractions_drain(*, retries: bool = False) -> None:
    """Wait until what was handed to the background lanes has been published or extracted;
    ``retries``: and the in-process retries scheduled meanwhile, at their due times (the
    demo waits for them; a test of one request need not wait out a backoff)."""
    publisher.drain()
    _in_process_extractor.drain()
    if retries:
        _in_process_retries.drain()


def extraction_retries_cancel() -> int:
    """Drop the in-process retries not yet due; returns how many. Their messages stay
    pending with their due time, for ``manage.py extract --pending`` (what a restart leaves)."""
    return _in_process_retries.cancel()


def _extract_all(message_pks: list[int]) -> None:
    """One attempt each, in order. A failed attempt's retry is scheduled for its due time:
    the lane goes on with the messages behind it instead of sleeping through the backoff."""
    for pk in message_pks:
        try:
            outcome = message_extract(message_pk=pk)
        except Exception:  # noqa: BLE001 - the row stays pending; the sweep or a re-run retries it
            logger.exception("in-process extraction of message %s failed", pk)
            continue
        if outcome.retry_in is not None:
            _in_process_retries.submit_in(outcome.retry_in, _extract_all, [pk])


def _publish(message_pks: list[int]) -> int:
    sent = publish_tasks(TaskName.EXTRACT_MESSAGE, [(pk,) for pk in message_pks])
    if sent < len(message_pks):
        logger.warning("%d message(s) left pending for the extraction sweep", len(message_pks) - sent)
        try:
            Message.objects.filter(
                pk__in=message_pks[sent:], extraction_status=ExtractionStatus.PENDING
            ).update(extraction_due_at=None)
        except DatabaseError:
            logger.exception("could not mark messages for the sweep; it finds them after its grace period")
    return sent


def pending_extractions_sweep(*, grace_seconds: float | None = None, limit: int = SWEEP_BATCH) -> int:
    """Re-send pending messages the broker lost (Celery beat, ``manage.py extract --pending``).

    A row is lost when it was never handed over (no due time) or is well past its due
    time. Its due time moves to now, so a slow queue is not flooded with copies; should a
    copy run anyway, extraction is idempotent.
    """
    grace = settings.MEMORY_EXTRACTION_SWEEP_GRACE_SECONDS if grace_seconds is None else grace_seconds
    now = timezone.now()
    cutoff = now - timedelta(seconds=grace)
    pks = list(
        Message.objects.filter(extraction_status=ExtractionStatus.PENDING)
        .filter(models_q_due_before(cutoff))
        .order_by("created_at", "pk")
        .values_list("pk", flat=True)[:limit]
    )
    if not pks:
        return 0
    Message.objects.filter(pk__in=pks).update(extraction_due_at=now)
    logger.info("sweep: re-sending %d pending extraction(s)", len(pks))
    extractions_enqueue(pks, wait=True)
    return len(pks)


def models_q_due_before(cutoff):
    return Q(extraction_due_at__isnull=True) | Q(extraction_due_at__lte=cutoff)


@service
def extractions_rerun(*, messages: QuerySet, actor: Actor, enqueue: bool = True) -> int:
    """Send failed (or stuck) extractions round again: attempts reset, error cleared.

    ``messages`` is a queryset of :class:`Message` (the admin action passes its selection,
    the command its filter). Messages already extracted are left alone. Audited per tenant.
    ``enqueue=False`` only resets them, for a caller that runs them itself.
    """
    rows = list(
        messages.exclude(extraction_status__in=(ExtractionStatus.DONE, ExtractionStatus.SKIPPED))
        .select_related("subject")
        .order_by("created_at", "pk")
    )
    if not rows:
        return 0
    lock_subjects(row.subject_id for row in rows)  # the lock order: subjects before their messages
    now = timezone.now()
    Message.objects.filter(pk__in=[row.pk for row in rows]).update(
        extraction_status=ExtractionStatus.PENDING, extraction_attempts=0, extraction_error="", extraction_due_at=now
    )
    by_tenant: dict[int, list[EventDraft]] = {}
    for row in rows:
        by_tenant.setdefault(row.tenant_id, []).append(
            EventDraft.about(
                "message", row.pk, AuditAction.MESSAGE_EXTRACTION_RERUN, subject=row.subject, actor=actor,
                before={"status": row.extraction_status, "attempts": row.extraction_attempts,
                        "error": row.extraction_error},
                after={"status": ExtractionStatus.PENDING},
            )
        )
    for tenant_id, events in by_tenant.items():
        audit.record_many(tenant_id, events)
    if enqueue:
        pks = [row.pk for row in rows]
        transaction.on_commit(lambda: extractions_enqueue(pks))
    return len(rows)


# --- Extraction ---------------------------------------------------------------------------------


def extraction_retry_delay(attempt: int) -> float:
    """Seconds before attempt ``attempt + 1``: exponential, capped, with jitter."""
    base = settings.MEMORY_EXTRACTION_RETRY_BASE_SECONDS
    delay = min(settings.MEMORY_EXTRACTION_RETRY_MAX_SECONDS, base * (2 ** max(attempt - 1, 0)))
    return delay * random.uniform(0.8, 1.2)


def extraction_context_build(message: Message, *, with_fields: bool = True) -> ExtractionContext:
    """What an extractor sees: the (masked) message, its thread so far, known entities, fields.

    ``with_fields=False`` skips the tenant's fields for an extractor that has its own.
    """
    subject = message.subject
    history = list(
        Message.objects.filter(subject=subject, thread_id=message.thread_id, created_at__lte=message.created_at)
        .exclude(pk=message.pk)
        .exclude(created_at=message.created_at, pk__gt=message.pk)
        .order_by("-created_at", "-pk")
        .values_list("message_id", "role", "content")[:HISTORY_MESSAGES]
    )
    entities = list(
        Entity.objects.filter(subject=subject).order_by("entity_type", "entity_id")[:KNOWN_ENTITIES]
    )
    aliases: dict[int, list[str]] = {}
    for entity_pk, alias in EntityAlias.objects.filter(entity__in=entities).values_list("entity_id", "alias"):
        aliases.setdefault(entity_pk, []).append(alias)
    known = [KnownEntity(e.entity_type, e.entity_id, e.display_name, tuple(aliases.get(e.pk, ()))) for e in entities]
    if not any(entity.entity_type == USER_ENTITY_TYPE for entity in known):
        # The subject is always known, before their first fact too.
        known.insert(0, KnownEntity(USER_ENTITY_TYPE, subject.user_id, "", (subject.user_id, *SELF_ALIASES)))
    allowed = ()
    if with_fields:
        allowed = tuple(
            field_line(rule.entity_type, rule.field, rule.cardinality, rule.sensitivity)
            for (_, _), rule in sorted(TenantSchema.load(subject.tenant).rules.items())
        )
    return ExtractionContext(
        user_id=subject.user_id,
        thread_id=message.thread_id,
        message_id=message.message_id,
        role=message.role,
        content=message.content,
        known_entities=tuple(known),
        thread_history=tuple(PriorMessage(*row) for row in reversed(history)),
        allowed_fields=allowed,
    )


def message_extract(*, message_pk: int, actor: Actor = SYSTEM, extractor: Extractor | None = None) -> ExtractOutcome:
    """Extract candidate facts from one stored message, at most once (one attempt).

    1. Catch up: earlier pending messages of the same subject go first, in order.
    2. Skip unless the message is still pending (no lock held for the model call).
    3. Run the extractor outside any transaction: a model may take seconds.
    4. In one transaction, claim the row by compare-and-set (pending → done) and submit
       the candidates through the policy. Only the claimant submits: a second run (another
       worker, a redelivered task, the sweep) finds nothing to claim and creates nothing;
       a failure rolls the claim back with the candidates.
    5. On a named, transient error, count the attempt and say when to retry; at the
       ceiling, or on any other error, mark the message failed with the error visible.
    """
    message = Message.objects.select_related("subject__tenant").filter(pk=message_pk).first()
    if message is None:
        return ExtractOutcome("missing")
    if message.extraction_status != ExtractionStatus.PENDING:
        return ExtractOutcome("not_pending")
    extractor = extractor or get_extractor(message.subject.tenant)
    _catch_up(message, extractor=extractor, actor=actor)
    return _extract_one(message, extractor=extractor, actor=actor)


def message_extract_until_settled(*, message_pk: int, actor: Actor = SYSTEM, extractor: Extractor | None = None,
                                  sleep=time.sleep) -> ExtractOutcome:
    """Attempts with backoff until done, skipped or failed: the in-process and command path."""
    while True:
        outcome = message_extract(message_pk=message_pk, actor=actor, extractor=extractor)
        if outcome.retry_in is None:
            return outcome
        sleep(outcome.retry_in)


def _catch_up(message: Message, *, extractor: Extractor, actor: Actor) -> None:
    # Not a message with a failed attempt on record: its retry is scheduled for its own due
    # time, and asking the model again here would make every later message wait on it.
    earlier = list(
        Message.objects.select_related("subject__tenant")
        .filter(subject=message.subject, extraction_status=ExtractionStatus.PENDING, created_at__lt=message.created_at,
                extraction_attempts=0)
        .order_by("created_at", "pk")[:CATCH_UP_LIMIT]
    )
    for row in earlier:
        # Their own tasks count their failures; here a failure just ends the catch-up.
        if _extract_one(row, extractor=extractor, actor=actor, count_failures=False).status != "done":
            return


def _extract_one(
    message: Message,
    *,
    extractor: Extractor,
    actor: Actor,
    count_failures: bool = True,
) -> ExtractOutcome:
    try:
        context = extraction_context_build(message, with_fields=getattr(extractor, "reads_fields", True))
        result = extractor.extract(context)
        return _commit_extraction(message, result=result, extractor=extractor, actor=actor)
    except ExtractionError as exc:
        error, retryable = str(exc), exc.retryable
    except DatabaseError as exc:  # a lost connection, a deadlock: worth another attempt
        error, retryable = f"database error: {type(exc).__name__}", True
    except Exception as exc:  # noqa: BLE001 - a bug must not leave the row pending forever
        logger.exception("extraction of message %s failed unexpectedly", message.pk)
        error, retryable = f"internal error: {type(exc).__name__}", False
    if not count_failures:
        return ExtractOutcome("pending", error=error)
    return _record_failure(message, error=error, retryable=retryable, actor=actor)


@service
def _commit_extraction(
    message: Message,
    *,
    result: ExtractionResult,
    extractor: Extractor,
    actor: Actor,
) -> ExtractOutcome:
    # The subject before its message row (models.locks.lock_subject): an erasure takes them in that order.
    subject = lock_subject(message.subject_id)
    now = timezone.now()
    claimed = Message.objects.filter(pk=message.pk, extraction_status=ExtractionStatus.PENDING).update(
        extraction_status=ExtractionStatus.DONE,
        extracted_at=now,
        extraction_error="",
        extraction_due_at=None,
        extraction_attempts=message.extraction_attempts + 1,
        extractor=extractor.name,
        prompt_version=extractor.prompt_version,
        extraction_dropped=len(result.dropped),
    )
    if not claimed:
        return ExtractOutcome("not_pending")
    if subject.collection_paused:
        # Paused after the message came in: extraction would store something new.
        Message.objects.filter(pk=message.pk).update(extraction_status=ExtractionStatus.SKIPPED)
        return ExtractOutcome("skipped")
    results: list[SubmitResult] = []
    if result.candidates:
        results = candidates_submit(
            tenant=subject.tenant,
            user_id=subject.user_id,
            candidates=result.candidates,
            source=Source.CHAT,
            actor=actor,
            extractor=extractor.name,
            prompt_version=extractor.prompt_version,
        )
        _learn_user_names(subject, result.candidates, results)
    audit.record(
        subject.tenant_id,
        EventDraft.about(
            "message", message.pk, AuditAction.MESSAGE_EXTRACTED, subject=subject, actor=actor,
            after={
                "message_id": message.message_id,
                "extractor": extractor.name,
                "prompt_version": extractor.prompt_version,
                "candidates": [r.candidate_id for r in results],
                "dropped": result.dropped,
            },
        ),
    )
    return ExtractOutcome("done", candidates=len(results), results=results)


def _learn_user_names(subject: Subject, candidates: list[CandidateInput], results: list[SubmitResult]) -> None:
    """A name the user gave themselves becomes an alias of their own entity ("Alice" → user)."""
    names = [
        item.value
        for item, result in zip(candidates, results)
        if item.entity_type == USER_ENTITY_TYPE and item.field == "name" and result.status != CandidateStatus.REJECTED
    ]
    if names:
        user_entity = Entity.objects.filter(subject=subject, entity_type=USER_ENTITY_TYPE).first()
        if user_entity is not None:
            alias_add(entity=user_entity, names=names)


@service
def _record_failure(message: Message, *, error: Text, retryable: bool, actor: Actor) -> ExtractOutcome:
    """Count a failed attempt; schedule the next one or, at the ceiling, fail for good."""
    lock_subject(message.subject_id)  # the subject before its message row (models.locks.lock_subject)
    row = Message.objects.select_for_update().select_related("subject").filter(pk=message.pk).first()
    if row is None or row.extraction_status != ExtractionStatus.PENDING:
        return ExtractOutcome("not_pending")
    attempts = row.extraction_attempts + 1
    # The error text names the failure, never the content; the boundary masked it.
    error = error[:500]
    if retryable and attempts < settings.MEMORY_EXTRACTION_MAX_ATTEMPTS:
        delay = extraction_retry_delay(attempts)
        Message.objects.filter(pk=row.pk).update(
            extraction_attempts=attempts,
            extraction_error=error,
            extraction_due_at=timezone.now() + timedelta(seconds=delay),
        )
        logger.warning("extraction of message %s failed (attempt %d): %s; retry in %.1fs", row.pk, attempts, error, delay)
        return ExtractOutcome("pending", retry_in=delay, error=error)
    Message.objects.filter(pk=row.pk).update(
        extraction_status=ExtractionStatus.FAILED,
        extraction_attempts=attempts,
        extraction_error=error,
        extraction_due_at=None,
    )
    audit.record(
        row.tenant_id,
        EventDraft.about(
            "message", row.pk, AuditAction.MESSAGE_EXTRACTION_FAILED, subject=row.subject, actor=actor,
            after={"message_id": row.message_id, "attempts": attempts, "error": error},
        ),
    )
    logger.error("extraction of message %s failed for good after %d attempt(s): %s", row.pk, attempts, error)
    return ExtractOutcome("failed", error=error)
