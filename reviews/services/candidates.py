"""Candidate lifecycle: submit through the policy, then the decisions people make.

Every decision is compare-and-set on ``Candidate.version`` under the subject's row lock:
of two reviewers acting on the same item one wins, the other gets :class:`StaleVersion`
(HTTP 409) naming who decided, and nothing is applied twice.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Annotated

from django.utils import timezone

from .. import audit
from ..policy import transitions
from ..actors import POLICY, Actor
from ..domain import UNDO_SECONDS, CandidateInput
from ..audit import EventDraft
from ..errors import InvalidInput, InvalidTransition, NotFound, StaleVersion
from ..models import (
    OPEN_CANDIDATE_STATUSES,
    ActorKind,
    AuditAction,
    BulkDecision,
    Candidate,
    DecisionUndo,
    CandidateFlag,
    CandidateStatus,
    Cardinality,
    Fact,
    FactStatus,
    MemoryScope,
    Message,
    Reason,
    ReviewDecision,
    Source,
    Subject,
    SuppressedValue,
    Tenant,
)
from ..policy.grounding import SourceMessage, grounding_flags
from ..policy.normalize import value_digest, value_digests
from ..policy.pipeline import (
    MAX_VALUE_LENGTH,
    ActiveFact,
    Decision,
    FieldRule,
    Proposal,
    Thresholds,
    evaluate,
)
from ..policy.schema import TenantSchema
from ..poisoning import inspect_text
from ..secrets import mask_field_value
from .entities import EntityResolver, subject_get_or_create
from ..publication import schedule_projection
from .facts import (
    _slot_facts,
    clean_value,
    contests_closed,
    fact_payload,
    fact_publish,
    slot_changed,
    suppress_value,
)
from ..models.locks import lock_subject, lock_subjects
from .boundary import masked_kinds, service
from .waiting import stale_details, stale_message
from ..screening import FactText, Identifier, Screen, Text



@dataclass
class SubmitResult:
    candidate_id: int | None  # None: nothing was stored (collection paused)
    status: str
    reason: str
    fact_id: int | None = None
    flags: list = field(default_factory=list)


def thresholds_for(tenant: Tenant) -> Thresholds:
    return Thresholds(
        reject_below=tenant.reject_below,
        confirm_below=tenant.confirm_below,
        auto_approve_at=tenant.auto_approve_at,
        source_priority={source: tenant.priority_of(source) for source in Source.values},
    )


def candidate_payload(candidate: Candidate) -> dict:
    return {
        "entity": f"{candidate.entity_type}:{candidate.entity_ref_id}",
        "field": candidate.field,
        "value": candidate.value,
        "confidence": candidate.confidence,
        "kind": candidate.kind,
        "scope": candidate.scope,
        "source": candidate.source,
        "status": candidate.status,
    }


@service
def candidates_submit(
    *,
    tenant: Tenant,
    user_id: Identifier,
    candidates: list[CandidateInput],
    source: Text,
    actor: Actor,
    extractor: Text = "",
    prompt_version: Text = "",
) -> list[SubmitResult]:
    """Run a batch of candidates for one subject through the policy (SPEC §3).

    1. Lock the subject: one writer at a time decides about one subject's memory.
    2. Load what every candidate is judged against once (:class:`_BatchMemory`: the
       schema, the subject's active facts and suppressed digests, the source messages).
    3. Per candidate (:func:`_judged`): mask credentials (:func:`_masked`), resolve the
       entity, evaluate the proposal against the snapshot, which stays current as the
       batch publishes, and build its row (:func:`_candidate_row`).
    4. Insert the rows, then apply the outcomes (publish, merge, conflict links:
       :func:`_apply_outcomes`) and append every event to the audit chain in one go.
    """
    subject = lock_subject(subject_get_or_create(tenant=tenant, user_id=user_id).pk)
    if subject.collection_paused:
        # The subject paused memory collection: nothing new is stored for them (SPEC §4).
        return [SubmitResult(None, CandidateStatus.WITHDRAWN, Reason.COLLECTION_PAUSED) for _ in candidates]
    memory = _BatchMemory.load(tenant, subject, candidates)
    origin = _Origin(source=source, extractor=extractor, prompt_version=prompt_version, now=timezone.now())
    rows = [_judged(index, item, memory=memory, origin=origin) for index, item in enumerate(candidates)]

    # One INSERT for the whole batch: the row count, not the policy, dominates the cost.
    Candidate.objects.bulk_create([candidate for candidate, _, _ in rows])
    events: list[EventDraft] = []
    for candidate, _, _ in rows:
        events += transitions.candidate_submitted(
            candidate, subject=subject, actor=actor, payload=candidate_payload(candidate)
        )

    _apply_outcomes(rows, subject=subject, events=events, now=origin.now)
    audit.record_many(tenant.pk, events)
    return [
        SubmitResult(candidate.pk, decision.status, decision.reason, candidate.fact_id, candidate.flags)
        for candidate, decision, _ in rows
    ]


@dataclass(frozen=True)
class _Origin:
    """Where a batch comes from, the same for each of its rows."""

    source: str
    extractor: str
    prompt_version: str
    now: datetime


@dataclass
class _BatchMemory:
    """What every candidate of one batch is judged against, read once: the tenant's schema
    and thresholds, the subject's active facts by slot and refused digests by (entity,
    field), and the stored messages the candidates name. ``active`` stays current as the
    batch publishes, so a later candidate sees what an earlier one published."""

    tenant: Tenant
    subject: Subject
    schema: TenantSchema
    thresholds: Thresholds
    resolver: EntityResolver
    active: dict[tuple[int, str, str], list[ActiveFact]]
    suppressed: dict[tuple[int, str], set[str]]
    sources: dict[str, SourceMessage]

    @classmethod
    def load(cls, tenant: Tenant, subject: Subject, candidates: list[CandidateInput]) -> _BatchMemory:
        active: dict[tuple[int, str, str], list[ActiveFact]] = {}
        for fact in Fact.objects.filter(subject=subject, status=FactStatus.ACTIVE).only(
            "pk", "entity_id", "field", "thread_id", "value_digest", "source"
        ):
            active.setdefault((fact.entity_id, fact.field, fact.thread_id), []).append(
                ActiveFact(fact.pk, fact.value_digest, fact.source)
            )
        suppressed: dict[tuple[int, str], set[str]] = {}
        for entity_id, field_name, digest in SuppressedValue.objects.filter(subject=subject).values_list(
            "entity_id", "field", "value_digest"
        ):
            suppressed.setdefault((entity_id, field_name), set()).add(digest)
        return cls(
            tenant=tenant,
            subject=subject,
            schema=TenantSchema.load(tenant),
            thresholds=thresholds_for(tenant),
            resolver=EntityResolver(subject),
            active=active,
            suppressed=suppressed,
            sources=_source_messages(tenant, subject, candidates),
        )

    def evaluate(self, proposal: Proposal, *, rule: FieldRule | None, slot, index: int) -> Decision:
        """The policy's decision on ``proposal`` in ``slot`` (None: no entity resolved)."""
        decision = evaluate(
            proposal,
            rule=rule,
            entity_type_known=self.schema.knows_entity_type(proposal.entity_type),
            thresholds=self.thresholds,
            active_facts=self.active.get(slot, []) if slot else [],
            suppressed_digests=self.suppressed.get(slot[:2], set()) if slot else set(),
        )
        if decision.publishes:
            self._remember_publication(
                slot, rule, ActiveFact(_placeholder(index), proposal.value_digest, proposal.source)
            )
        return decision

    def _remember_publication(self, slot, rule: FieldRule, published: ActiveFact) -> None:
        """A `one` field's row is updated in place, so it keeps the current fact's id."""
        current = self.active.get(slot, [])
        if rule.cardinality == Cardinality.ONE:
            fact_id = current[0].id if current else published.id
            self.active[slot] = [ActiveFact(fact_id, published.value_digest, published.source)]
        else:
            self.active[slot] = [published, *current]


@dataclass(frozen=True)
class _Masked:
    """A candidate's value, evidence and entity name with every credential cut out (by the
    boundary, and by the field's name here) and every hidden character removed: the policy,
    the stored row and the audit event see no original. What the poisoning checks found
    (reviews/poisoning) is in ``poisoning`` and, for the reviewer, ``flag_details``."""

    value: str
    evidence: str
    entity_name: str
    secret_kinds: tuple[str, ...]
    found: bool
    poisoning: tuple[str, ...] = ()
    flag_details: dict = field(default_factory=dict)


def _masked(item: CandidateInput) -> _Masked:
    # The service boundary masked the text already (around any hidden characters, so a key
    # split by a zero-width space was masked whole); its placeholders still say what was
    # there. The field's name is this step's own rule (a bare "hunter2" for `password`).
    inspected = {
        "value": inspect_text(item.value or ""),
        "evidence": inspect_text(item.evidence or ""),
        # A name gives no orders; the instruction scorer is for what the agent will read as a fact.
        "entity_name": inspect_text(item.entity_name or "", instructions=False),
    }
    value = mask_field_value(item.field, inspected["value"].clean)
    kinds = value.kinds or masked_kinds(value.text)
    evidence, entity_name = inspected["evidence"].clean, inspected["entity_name"].clean
    flags = tuple(dict.fromkeys(flag for inspection in inspected.values() for flag in inspection.flags))
    details: dict = {name: inspection.escaped for name, inspection in inspected.items() if inspection.escaped}
    confusable = [word for inspection in inspected.values() for word in inspection.confusable]
    if confusable:
        details["confusable"] = list(dict.fromkeys(confusable))
    cues = [reason for inspection in inspected.values() for reason in inspection.instruction_reasons]
    if cues:
        details["instruction_like"] = list(dict.fromkeys(cues))
    return _Masked(
        value.text, evidence, entity_name, kinds,
        bool(kinds or masked_kinds(evidence) or masked_kinds(entity_name)),
        poisoning=flags, flag_details=details,
    )


def _judged(
    index: int, item: CandidateInput, *, memory: _BatchMemory, origin: _Origin
) -> tuple[Candidate, Decision, FieldRule | None]:
    """One candidate through the pipeline: masked, its entity resolved (only for a field
    the schema knows), evaluated, and its row built (not yet saved)."""
    masked = _masked(item)
    rule = memory.schema.rule_for(item.entity_type, item.field)
    entity = (
        memory.resolver.resolve(entity_type=item.entity_type, entity_id=item.entity_id, entity_name=masked.entity_name)
        if rule is not None
        else None
    )
    thread_id = item.thread_id if item.scope == MemoryScope.THREAD else ""
    proposal = Proposal(
        entity_type=item.entity_type,
        field=item.field,
        value=masked.value,
        value_digest=value_digest(masked.value),
        old_key_digests=value_digests(masked.value),
        confidence=item.confidence,
        source=origin.source,
        kind=item.kind,
        scope=item.scope,
        supersedes=item.supersedes,
        secret_kinds=masked.secret_kinds,
        poisoning=masked.poisoning,
        value_too_long=len(masked.value) > MAX_VALUE_LENGTH,
        grounding=tuple(
            grounding_flags(
                value=masked.value, evidence=masked.evidence, source=memory.sources.get(item.source_message_id)
            )
        ),
    )
    slot = (entity.pk, item.field, thread_id) if entity else None
    decision = memory.evaluate(proposal, rule=rule, slot=slot, index=index)
    candidate = _candidate_row(
        item,
        masked,
        tenant=memory.tenant,
        subject=memory.subject,
        entity=entity,
        thread_id=thread_id,
        decision=decision,
        flags=_candidate_flags(masked=masked.found, entity=entity, proposal=proposal),
        origin=origin,
    )
    return candidate, decision, rule


def _candidate_row(
    item: CandidateInput,
    masked: _Masked,
    *,
    tenant: Tenant,
    subject: Subject,
    entity,
    thread_id: str,
    decision: Decision,
    flags: list[str],
    origin: _Origin,
) -> Candidate:
    """The stored row: what was proposed (masked, cut to the columns' sizes) and what the
    policy decided; a decided row names the policy as its decider."""
    decided = decision.status not in OPEN_CANDIDATE_STATUSES
    return Candidate(
        tenant=tenant,
        subject=subject,
        entity=entity,
        entity_type=item.entity_type[:64],
        entity_ref_id=(entity.entity_id if entity else item.entity_id)[:128],
        field=item.field[:80],
        # An over-long value is kept cut short: enough for a reviewer to see what it was.
        value=masked.value[:MAX_VALUE_LENGTH],
        confidence=item.confidence,
        kind=item.kind,
        scope=item.scope,
        thread_id=thread_id,
        supersedes=item.supersedes,
        source=origin.source,
        source_message_id=item.source_message_id,
        evidence=masked.evidence[:2000],
        extractor=origin.extractor,
        prompt_version=origin.prompt_version,
        status=decision.status,
        reason=decision.reason,
        flags=flags,
        flag_details=masked.flag_details,
        has_conflict=decision.conflict_with is not None,
        decided_by=str(POLICY) if decided else "",
        decided_at=origin.now if decided else None,
    )


def _candidate_flags(*, masked: bool, entity, proposal: Proposal) -> list[str]:
    """What the people deciding a candidate are shown about it: a credential cut out, an
    entity nobody has seen, the grounding and the poisoning flags."""
    flags = []
    if masked:
        flags.append(CandidateFlag.SECRET_MASKED)
    if entity is not None and entity.is_new:
        flags.append(CandidateFlag.NEW_ENTITY)
    flags.extend(proposal.grounding)
    flags.extend(proposal.poisoning)
    return flags


def _apply_outcomes(rows: list, *, subject: Subject, events: list[EventDraft], now) -> None:
    """Apply publications and merges in submission order, then point each candidate at its
    fact and each conflict at the fact it disagrees with (which may be one made above)."""
    fact_of_placeholder: dict[int, int] = {}
    # The batch judged each of its items against the values its earlier items published.
    batch = [candidate.pk for candidate, _, _ in rows]
    for index, (candidate, decision, rule) in enumerate(rows):
        if decision.publishes or decision.status == CandidateStatus.MERGED:
            fact, _ = fact_publish(
                candidate=candidate,
                rule=rule,
                subject=subject,
                value=candidate.value,
                actor=POLICY,
                reason=decision.reason,
                events=events,
                now=now,
                judged_already=batch,
            )
            candidate.fact = fact
            fact_of_placeholder[_placeholder(index)] = fact.pk
        if decision.conflict_with is not None:
            candidate.conflict_fact_id = fact_of_placeholder.get(decision.conflict_with, decision.conflict_with)
    linked = [c for c, _, _ in rows if c.fact_id is not None or c.conflict_fact_id is not None]
    Candidate.objects.bulk_update(linked, ["fact", "conflict_fact"])


def _source_messages(tenant: Tenant, subject: Subject, candidates: list[CandidateInput]) -> dict[str, SourceMessage]:
    """The stored (masked) messages the candidates name, for grounding: one query."""
    ids = {item.source_message_id for item in candidates if item.source_message_id}
    if not ids:
        return {}
    rows = Message.objects.filter(tenant=tenant, message_id__in=ids).values_list(
        "message_id", "role", "content", "subject_id"
    )
    return {
        message_id: SourceMessage(role, content, is_subjects=subject_id == subject.pk)
        for message_id, role, content, subject_id in rows
    }


def _placeholder(index: int) -> int:
    """A stand-in id for a fact this batch will create (real ids are positive)."""
    return -(index + 1)


# --- Decisions by people -------------------------------------------------------------------


def _locked_candidate(*, tenant: Tenant, candidate_id: int, user_id: str | None) -> tuple[Candidate, Subject]:
    """Lock the subject, then the candidate (always in that order: no deadlocks)."""
    row = Candidate.objects.filter(tenant=tenant, pk=candidate_id).select_related("subject").first()
    if row is None or (user_id is not None and row.subject.user_id != user_id):
        raise NotFound("Candidate not found.")
    subject = lock_subject(row.subject_id)
    # Read again under the lock: an erasure may have removed it while this one waited.
    candidate = Candidate.objects.select_for_update(of=("self",)).select_related("entity").filter(pk=row.pk).first()
    if candidate is None:
        raise NotFound("Candidate not found.")
    return candidate, subject


def _check_version(candidate: Candidate, version: int) -> None:
    """Someone else deciding first, or the item judged again since it was shown, is a stale
    version (409) naming the value published now; checked before the state."""
    if candidate.version != version:
        raise StaleVersion(stale_message(candidate), details=stale_details(candidate))


def _rule_of(tenant: Tenant, candidate: Candidate) -> FieldRule:
    rule = TenantSchema.load(tenant).rule_for(candidate.entity_type, candidate.field)
    if rule is None or candidate.entity_id is None:
        raise InvalidTransition("The tenant's schema no longer allows this field.", details={"field": candidate.field})
    return rule


@service
def candidate_approve(
    *,
    tenant: Tenant,
    candidate_id: int,
    version: int,
    actor: Actor,
    value: Annotated[str | None, Screen.CORRECTION] = None,
    note: Text = "",
    keep: bool = False,
    user_id: Annotated[str | None, Screen.IDENTIFIER] = None,
) -> Candidate:
    """Approve (or edit, then approve) a pending candidate and publish it.

    ``keep`` is the subject's choice for a sensitive item: keep until deleted instead of
    the field's retention. ``user_id`` restricts the action to one subject's items.
    """
    candidate, subject = _locked_candidate(tenant=tenant, candidate_id=candidate_id, user_id=user_id)
    _check_version(candidate, version)
    rule = _rule_of(tenant, candidate)
    snapshot = _state_before_decision(candidate, subject)
    edited = value is not None and value.strip() != candidate.value
    final_value = clean_value(value) if edited else candidate.value
    if actor.is_subject:
        reason = Reason.SUBJECT_CONFIRMED
    else:
        reason = Reason.REVIEWER_EDITED if edited else Reason.REVIEWER_APPROVED
    decided = transitions.candidate_decide(
        candidate,
        transitions.CANDIDATE_APPROVE,
        subject=subject,
        actor=actor,
        reason=reason,
        note=note,
        action=AuditAction.CANDIDATE_EDITED_APPROVED if edited else None,
        after={"value": final_value, "keep": keep},
        now=timezone.now(),
        value=final_value,
        has_conflict=False,
        # An edited value is the editor's words, and outranks chat accordingly (SPEC §4).
        source=actor.source if edited else candidate.source,
    )
    events: list[EventDraft] = [decided]
    fact, _ = fact_publish(
        candidate=candidate,
        rule=rule,
        subject=subject,
        value=final_value,
        actor=actor,
        reason=reason,
        keep=keep,
        events=events,
    )
    Candidate.objects.filter(pk=candidate.pk).update(fact=fact)
    candidate.fact = fact
    _keep_for_undo(candidate, snapshot, subject=subject, actor=actor, action=ReviewDecision.APPROVE, fact=fact)
    audit.record_many(tenant.pk, events)
    return candidate


@service
def candidate_reject(
    *,
    tenant: Tenant,
    candidate_id: int,
    version: int,
    actor: Actor,
    note: Text = "",
    reason_label: Text = "",
    user_id: Annotated[str | None, Screen.IDENTIFIER] = None,
) -> Candidate:
    """Reject a pending candidate; its value is suppressed for this slot (SPEC §3 step 6).

    ``reason_label``: one of the tenant's reject reasons (``Tenant.reject_reasons``), which
    stands for the reason a reviewer must give; ``note`` adds free text to it.
    """
    if actor.is_reviewer and not note.strip() and not reason_label:
        raise InvalidInput("A reason is required to reject.", details={"reason": "required"})
    candidate, subject = _locked_candidate(tenant=tenant, candidate_id=candidate_id, user_id=user_id)
    if reason_label:
        # Read now, not from the caller's tenant: an API key's is cached for a few seconds.
        listed = Tenant.objects.filter(pk=tenant.pk).values_list("reject_reasons", flat=True).get()
        if reason_label not in (listed or []):
            raise InvalidInput("Pick one of the tenant's reject reasons.", details={"reason_label": "unknown"})
        note = f"{reason_label}: {note.strip()}" if note.strip() else reason_label
    _check_version(candidate, version)
    reason = Reason.SUBJECT_REJECTED if actor.is_subject else Reason.REVIEWER_REJECTED
    snapshot = _state_before_decision(candidate, subject)
    events = [
        transitions.candidate_decide(
            candidate,
            transitions.CANDIDATE_REJECT,
            subject=subject,
            actor=actor,
            reason=reason,
            note=note,
            now=timezone.now(),
            after={"reject_reason": reason_label} if reason_label else None,
        )
    ]
    if candidate.entity_id is not None:
        suppress_value(subject=subject, entity_id=candidate.entity_id, field=candidate.field, value=candidate.value)
    # A contested fact is not published: closing the contest changes no projection.
    events += contests_closed(candidates=[candidate], subject=subject, actor=actor, reason=reason)
    _keep_for_undo(candidate, snapshot, subject=subject, actor=actor, action=ReviewDecision.REJECT)
    audit.record_many(tenant.pk, events)
    return candidate


@service
def candidate_defer(*, tenant: Tenant, candidate_id: int, version: int, actor: Actor, note: Text = "") -> Candidate:
    """Hand a candidate to the subject to confirm (SPEC §4)."""
    candidate, subject = _locked_candidate(tenant=tenant, candidate_id=candidate_id, user_id=None)
    _check_version(candidate, version)
    snapshot = _state_before_decision(candidate, subject)
    event = transitions.candidate_decide(
        candidate,
        transitions.CANDIDATE_DEFER,
        subject=subject,
        actor=actor,
        reason=Reason.DEFERRED,
        note=note,
        now=timezone.now(),
    )
    _keep_for_undo(candidate, snapshot, subject=subject, actor=actor, action=ReviewDecision.DEFER)
    audit.record(tenant.pk, event)
    return candidate


class Resolution:
    KEEP_OLD = "keep_old"
    TAKE_NEW = "take_new"
    EDIT = "edit"
    KEEP_BOTH = "keep_both"
    ALL = (KEEP_OLD, TAKE_NEW, EDIT, KEEP_BOTH)


@service
def candidate_settle_conflict(
    *,
    tenant: Tenant,
    candidate_id: int,
    version: int,
    resolution: Text,
    actor: Actor,
    value: Annotated[str | None, Screen.CORRECTION] = None,
    note: Text = "",
    user_id: Annotated[str | None, Screen.IDENTIFIER] = None,
) -> Candidate:
    """Settle a conflict side by side: keep the old value, take the new, write a merged one,
    or keep both where the field is `many`."""
    if resolution not in Resolution.ALL:
        raise InvalidInput("Unknown resolution.", details={"resolution": list(Resolution.ALL)})
    if resolution == Resolution.KEEP_OLD:
        return candidate_reject(
            tenant=tenant,
            candidate_id=candidate_id,
            version=version,
            actor=actor,
            note=note or "kept the current value",
            user_id=user_id,
        )
    if resolution == Resolution.EDIT:
        if value is None:
            raise InvalidInput("Write the value to keep.", details={"value": "required"})
        return candidate_approve(
            tenant=tenant, candidate_id=candidate_id, version=version, actor=actor, value=value, note=note, user_id=user_id
        )
    if resolution == Resolution.KEEP_BOTH:
        candidate = Candidate.objects.filter(tenant=tenant, pk=candidate_id).first()
        if candidate is None:
            raise NotFound("Candidate not found.")
        field_rule = TenantSchema.load(tenant).rule_for(candidate.entity_type, candidate.field)
        if field_rule is None or field_rule.cardinality != Cardinality.MANY:
            raise InvalidTransition("Both values can be kept only on a field that holds many values.")
    return candidate_approve(
        tenant=tenant, candidate_id=candidate_id, version=version, actor=actor, note=note, user_id=user_id
    )


# --- Bulk decisions by reviewers --------------------------------------------------------------

# What "select all in this filter" may take at once (one transaction, each item in a savepoint).
MAX_BULK_ITEMS = 500


@dataclass
class BulkOutcome:
    """Which items of a selection were decided, which someone else decided first, which failed."""

    decided: list[int] = field(default_factory=list)
    stale: list[dict] = field(default_factory=list)
    failed: list[dict] = field(default_factory=list)


BULK_FLAGGED = "flagged"
BULK_FLAGGED_MESSAGE = (
    "Flagged for hidden characters, a look-alike word or an instruction: open it and confirm it on its own."
)


def check_bulk_decision(*, items: list, decision: str, actor: Actor, note: str = "") -> None:
    """What refuses a bulk decision as a whole, before any item is touched (InvalidInput);
    the pages call it before asking the reviewer to confirm a large selection."""
    if decision not in BulkDecision.values:
        raise InvalidInput("Unknown bulk decision.", details={"decision": list(BulkDecision.values)})
    if not items:
        raise InvalidInput("Select at least one item.", details={"items": "empty"})
    if len(items) > MAX_BULK_ITEMS:
        raise InvalidInput(f"Select at most {MAX_BULK_ITEMS} items.", details={"items": "too_many"})
    if decision == BulkDecision.REJECT and actor.is_reviewer and not note.strip():
        raise InvalidInput("A reason is required to reject.", details={"reason": "required"})


@service
def candidates_bulk_decide(
    *,
    tenant: Tenant,
    items: list[tuple[int, int]],
    decision: Text,
    actor: Actor,
    note: Text = "",
    confirmed_flagged: frozenset[int] = frozenset(),
) -> BulkOutcome:
    """Approve or reject a selection of (candidate id, version) pairs, each on its own terms.

    1. Check the decision, the size and (to reject) the reason once, before touching anything.
    2. Decide item by item through candidate_approve / candidate_reject, each in a savepoint
       with its own compare-and-set: a stale item is reported and skipped, the others stand.
       Items run in subject order so two bulk decisions lock subjects in the same order.
       An item carrying a poisoning flag is approved only when its id is in
       ``confirmed_flagged`` (the reviewer confirmed that one, having seen why it was
       flagged); otherwise it is reported as failed (``flagged``) and left waiting.
    3. Record one summary event beside the per-item events the decisions wrote.
    """
    check_bulk_decision(items=items, decision=decision, actor=actor, note=note)
    versions = dict(items)
    rows = Candidate.objects.filter(tenant=tenant, pk__in=versions).values_list("pk", "subject_id", "flags")
    subject_of = {pk: subject_id for pk, subject_id, _flags in rows}
    unconfirmed = {
        pk for pk, _subject_id, flags in rows
        if set(flags or ()) & set(CandidateFlag.POISONING) and pk not in confirmed_flagged
    } if decision == BulkDecision.APPROVE else set()
    # Every subject first (models.locks.lock_subject): item by item, the second would be locked
    # after the chain head the first item's events took.
    lock_subjects(subject_of.values())
    outcome = BulkOutcome()
    for candidate_id in sorted(versions, key=lambda pk: (subject_of.get(pk, 0), pk)):
        if candidate_id in unconfirmed:
            outcome.failed.append({"id": candidate_id, "code": BULK_FLAGGED, "message": BULK_FLAGGED_MESSAGE})
            continue
        decide = candidate_approve if decision == BulkDecision.APPROVE else candidate_reject
        try:
            # Each service is atomic: nested here, it runs in its own savepoint.
            decide(tenant=tenant, candidate_id=candidate_id, version=versions[candidate_id], actor=actor, note=note)
        except StaleVersion as stale:
            outcome.stale.append({"id": candidate_id, **stale.details})
        except (NotFound, InvalidTransition, InvalidInput) as error:
            outcome.failed.append({"id": candidate_id, "code": error.code, "message": error.message})
        else:
            outcome.decided.append(candidate_id)
    audit.record(
        tenant.pk,
        EventDraft(
            actor=str(actor),
            action=AuditAction.bulk_decision(decision),
            object_type="candidate_selection",
            object_id=len(items),
            after={
                "decided": outcome.decided,
                "stale": [item["id"] for item in outcome.stale],
                "failed": [item["id"] for item in outcome.failed],
            },
            reason=note,
        ),
    )
    return outcome


# --- Undo ---------------------------------------------------------------------------------------
#
# A person's decision can be taken back by the same person for UNDO_SECONDS (SPEC §4), as
# compensating transitions (``reviews.policy.transitions``, ``*.decision_undone``): the candidate,
# the facts it changed (a contest it upheld or closed is open again), the candidates it
# superseded and the suppression it added go back to what they were, each change audited,
# and the projection follows. Versions only ever grow: a restored fact gets a new version
# saying so, and everything restored gets a new compare-and-set version, so a screen still
# holding the decided state is stale rather than silently right.

# Who may undo: people deciding in the queue (on the dashboard or through the review API).
UNDOABLE_ACTOR_KINDS = (ActorKind.REVIEWER, ActorKind.API_KEY)
_CANDIDATE_STATE = ("status", "reason", "note", "value", "source", "has_conflict", "decided_by", "decided_at", "fact_id")
_FACT_STATE = (
    "status", "value", "value_digest", "confidence", "kind", "source", "source_message_id", "evidence",
    "provenance", "expires_at", "approved_by", "updated_at",
)
_DATETIMES = {"decided_at", "expires_at", "updated_at"}


class UndoRefused:
    """Why an undo was refused: the ``undo`` detail of the InvalidTransition it raises."""

    NOTHING = "nothing_to_undo"  # no decision of this person on this item to take back
    EXPIRED = "expired"  # more than UNDO_SECONDS ago
    MOVED = "moved"  # something else changed the item or a fact it changed since


def _state(row, names) -> dict:
    state = {}
    for name in names:
        value = getattr(row, name)
        state[name] = value.isoformat() if name in _DATETIMES and value is not None else value
    return state


def _restored(state: dict) -> dict:
    """A kept state's fields to write back; the status goes back through its transition."""
    return {
        name: datetime.fromisoformat(value) if name in _DATETIMES and value is not None else value
        for name, value in state.items()
        if name != "status"
    }


def _touchable_facts(candidate: Candidate, subject: Subject) -> list[Fact]:
    """The facts a decision about the candidate may change, locked: its slot's, and the
    fact it contests or conflicts with."""
    facts = list(_slot_facts(candidate, subject)) if candidate.entity_id is not None else []
    if candidate.conflict_fact_id is not None and all(fact.pk != candidate.conflict_fact_id for fact in facts):
        facts += list(Fact.objects.select_for_update().filter(pk=candidate.conflict_fact_id, subject=subject))
    return facts


def _state_before_decision(candidate: Candidate, subject: Subject) -> dict:
    """What a decision may change, read under the subject's lock before it does."""
    open_in_slot, suppressed = [], False
    facts = {str(fact.pk): {**_state(fact, _FACT_STATE), "version": fact.version} for fact in _touchable_facts(candidate, subject)}
    if candidate.entity_id is not None:
        # Every other waiting item of the slot, older and newer: the decision may close any
        # of them (an older one as superseded, any one proposing the value it publishes),
        # and an undo reopens those it closed.
        open_in_slot = list(
            Candidate.objects.filter(
                subject=subject,
                entity_id=candidate.entity_id,
                field=candidate.field,
                thread_id=candidate.thread_id,
                status__in=OPEN_CANDIDATE_STATUSES,
            )
            .exclude(pk=candidate.pk)
            .values("pk", "status", "reason", "version")
        )
        suppressed = SuppressedValue.objects.filter(
            subject=subject, entity_id=candidate.entity_id, field=candidate.field, value_digest=value_digest(candidate.value)
        ).exists()
    return {
        "candidate": _state(candidate, _CANDIDATE_STATE),
        "facts": facts,
        "open_in_slot": open_in_slot,
        "suppressed": suppressed,
    }


def _keep_for_undo(
    candidate: Candidate, snapshot: dict, *, subject: Subject, actor: Actor, action: ReviewDecision,
    fact: Fact | None = None
) -> None:
    """Keep what the decision found, and the (status, version) of each fact it changed as it
    left them: an undo restores only those, and only while nothing else moved them."""
    if actor.kind not in UNDOABLE_ACTOR_KINDS:
        return
    found = snapshot["facts"]
    rows = _touchable_facts(candidate, subject)
    left = {
        str(row.pk): [row.status, row.version]
        for row in rows
        if (fact is not None and row.pk == fact.pk)
        or str(row.pk) not in found
        or [row.status, row.version] != [found[str(row.pk)]["status"], found[str(row.pk)]["version"]]
    }
    DecisionUndo.objects.create(
        tenant_id=candidate.tenant_id,
        candidate=candidate,
        actor=str(actor),
        action=action,
        candidate_version=candidate.version,
        fact_id=fact.pk if fact is not None else None,
        fact_version=fact.version if fact is not None else None,
        # "slot": every fact the item could touch as the decision left it, so that a value
        # published beside it meanwhile (a colleague's approval in the same slot) also counts
        # as the item having moved: restoring a rejected contest next to it would reopen a
        # question someone has since answered.
        before={**snapshot, "left": left, "slot": _facts_as_left(rows)},
        decided_at=candidate.decided_at,
    )


def _facts_as_left(rows) -> dict[str, list]:
    return {str(row.pk): [row.status, row.version] for row in rows}


# Why the re-judging of a slot closes a waiting item (services.waiting): the reasons an undo
# of the decision that changed the slot takes back.
_CLOSED_BY_REJUDGING = (Reason.NEWER_CANDIDATE, Reason.SAME_AS_PUBLISHED)


def _closed_by(before: dict) -> list[tuple[int, str, int, str, str]]:
    """The items the decision closed when it judged its slot again, locked, as
    :func:`transitions.candidates_reopen` takes them: each waiting item the decision found
    that is now superseded for one of those reasons, and (when the version was kept) moved
    exactly once since, by that closing; nothing else can have closed it while the slot
    stayed as the decision left it (:func:`undo_refusal`)."""
    # Decisions kept before newer items were recorded list the older ones only.
    found = {row["pk"]: row for row in before.get("open_in_slot", before.get("older_open", []))}
    closed = (
        Candidate.objects.select_for_update()
        .filter(pk__in=list(found), status=CandidateStatus.SUPERSEDED, reason__in=_CLOSED_BY_REJUDGING)
        .order_by("pk")
        .values_list("pk", "status", "version")
    )
    return [
        (pk, status, version, found[pk]["status"], found[pk]["reason"])
        for pk, status, version in closed
        if found[pk].get("version") in (None, version - 1)
    ]


def undo_refusal(undo: DecisionUndo | None, candidate: Candidate, *, subject: Subject, now) -> str | None:
    """Why this decision can no longer be undone, or None when it can (under ``subject``'s lock)."""
    if undo is None or undo.undone_at is not None:
        return UndoRefused.NOTHING
    if (now - undo.decided_at).total_seconds() > UNDO_SECONDS:
        return UndoRefused.EXPIRED
    if candidate.version != undo.candidate_version:
        return UndoRefused.MOVED
    left = undo.before.get("left", {})
    now_there = {
        str(pk): [status, version]
        for pk, status, version in Fact.objects.filter(pk__in=[int(pk) for pk in left]).values_list("pk", "status", "version")
    }
    if now_there != left:
        return UndoRefused.MOVED
    # Decisions kept before the slot was recorded are judged by what they changed alone.
    if "slot" in undo.before and _facts_as_left(_touchable_facts(candidate, subject)) != undo.before["slot"]:
        return UndoRefused.MOVED
    return None


def _fact_undone(
    fact: Fact,
    found: dict | None,
    *,
    candidate: Candidate,
    subject: Subject,
    actor: Actor,
    now,
) -> EventDraft:
    """One fact the undone decision changed, back to the state it found (none: it made it)."""
    before = {**fact_payload(fact), "status": fact.status}
    action = transitions.fact_decision_undone(fact, back_to=found["status"] if found is not None else None)
    if found is None:
        # A tombstone, like every deleted fact, keeps no value: it stays in the candidate,
        # back in review, and in the fact's version history.
        fact.value, fact.evidence, fact.updated_at = "", "", now
    else:
        for name, value in _restored({k: v for k, v in found.items() if k != "version"}).items():
            setattr(fact, name, value)
    fact.version += 1
    fact.save()
    if found is not None:
        fact.versions.create(
            version=fact.version,
            value=fact.value,
            confidence=fact.confidence,
            source=fact.source,
            source_message_id=fact.source_message_id,
            candidate=candidate,
            actor=str(actor),
            reason="undo",
            created_at=now,
        )
    return transitions.fact_event(
        fact, action, subject=subject, actor=actor, before=before, after={**fact_payload(fact), "status": fact.status}
    )


@service
def candidate_undo(*, tenant: Tenant, candidate_id: int, actor: Actor) -> Candidate:
    """Take back the actor's latest decision on a candidate (SPEC §4).

    1. Lock the subject, then the candidate; find the actor's latest decision on it.
    2. Refuse (InvalidTransition, ``undo`` detail) when there is none, when it is older
       than UNDO_SECONDS, or when anything moved the candidate or a fact it changed since.
    3. Restore each fact the decision changed: a fact it created leaves publication
       (status deleted, value emptied; rows are never removed), a fact it changed gets its former value,
       source and status back as its next version (a contest it upheld or closed is
       contested again).
    4. Reopen the waiting items it closed when it judged its slot again (superseded by it,
       or closed because it published their value: :func:`_closed_by`), each back to the
       state it was judged in against the value restored now, with a new version; lift the
       suppression it added, restore the candidate itself; audit each change and refresh
       the projection.
    """
    candidate, subject = _locked_candidate(tenant=tenant, candidate_id=candidate_id, user_id=None)
    now = timezone.now()
    undo = DecisionUndo.objects.filter(candidate=candidate, actor=str(actor)).order_by("-decided_at", "-pk").first()
    refusal = undo_refusal(undo, candidate, subject=subject, now=now)
    if refusal is not None:
        raise InvalidTransition("This decision can no longer be undone.", details={"undo": refusal, "status": candidate.status})
    before = undo.before
    changed = list(
        Fact.objects.select_for_update()
        .select_related("entity")
        .filter(pk__in=[int(pk) for pk in before.get("left", {})])
        .order_by("pk")
    )
    events = [
        _fact_undone(fact, before["facts"].get(str(fact.pk)), candidate=candidate, subject=subject, actor=actor, now=now)
        for fact in changed
    ]
    reopened = transitions.candidates_reopen(
        _closed_by(before), subject=subject, actor=actor, by_candidate=candidate.pk
    )
    if undo.action == ReviewDecision.REJECT and not before["suppressed"] and candidate.entity_id is not None:
        SuppressedValue.objects.filter(
            subject=subject, entity_id=candidate.entity_id, field=candidate.field, value_digest=value_digest(candidate.value)
        ).delete()
    found = before["candidate"]
    decided = transitions.candidate_decision_undone(
        candidate,
        back_to=found["status"],
        subject=subject,
        actor=actor,
        undone=undo.action,
        restore=_restored(found),
        after={"reopened": [event.object_id for event in reopened]},
    )
    undo.undone_at = now
    undo.save(update_fields=["undone_at"])
    # The items the decision judged again face the restored value now; the candidate and
    # those it reopened are back in the state they were judged in.
    restored = {candidate.pk, *(event.object_id for event in reopened)}
    rejudged = []
    for fact in {(fact.entity_id, fact.field, fact.thread_id): fact for fact in changed}.values():
        rejudged += slot_changed(subject=subject, fact=fact, actor=actor, now=now, judged_already=restored)
    audit.record_many(tenant.pk, [decided, *events, *reopened, *rejudged])
    if changed:
        schedule_projection(subject.pk)
    return candidate
