"""The deterministic candidate pipeline of SPEC §3.

:func:`evaluate` is pure: it takes a proposed fact and a snapshot of everything the
policy may look at (the field's rule, the tenant's thresholds, the active facts of the
same slot, the suppressed digests) and returns one :class:`Decision`. The steps run in
the SPEC's order and the first that decides wins; read it top to bottom.

The service layer (``services/candidates.py``) builds the snapshot, persists the outcome
and writes the audit events; nothing here touches the database.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..models import CandidateStatus, Cardinality, Kind, MemoryScope, Reason, Sensitivity

MAX_VALUE_LENGTH = 1000
RELATION_PREFIX = "relation:"


@dataclass(frozen=True)
class FieldRule:
    """A field of the tenant's schema, as the policy needs it."""

    entity_type: str
    field: str
    cardinality: str
    sensitivity: str
    category: str
    auto_approve: bool
    retention_days: int | None = None


@dataclass(frozen=True)
class Thresholds:
    reject_below: float = 0.5
    confirm_below: float = 0.8
    auto_approve_at: float | None = 0.95
    source_priority: dict = field(default_factory=dict)

    def priority(self, source: str) -> int:
        return int(self.source_priority.get(source, 0))


@dataclass(frozen=True)
class Proposal:
    """A candidate as submitted, its value already masked."""

    entity_type: str
    field: str
    value: str
    value_digest: str
    confidence: float
    source: str
    kind: str = Kind.FACT
    scope: str = MemoryScope.LONG_TERM
    supersedes: bool = False
    secret_kinds: tuple[str, ...] = ()
    # The value's digest under the old digest keys too (after a key rotation, stored
    # digests may predate the current key); empty: only ``value_digest``.
    old_key_digests: frozenset[str] = frozenset()
    value_too_long: bool = False
    # Grounding flags (SPEC §3, reviews/policy/grounding.py): any of them keeps a person deciding.
    grounding: tuple[str, ...] = ()
    # Poisoning flags (SPEC §3, reviews/poisoning): the same, ahead of grounding.
    poisoning: tuple[str, ...] = ()


@dataclass(frozen=True)
class ActiveFact:
    """An active fact in the same (subject, entity, field, scope/thread) slot."""

    id: int
    value_digest: str
    source: str


@dataclass(frozen=True)
class Decision:
    status: str
    reason: str
    merge_into: int | None = None  # fact id a duplicate merges into
    conflict_with: int | None = None  # active fact a conflicting value disagrees with
    replaces: int | None = None  # active fact an automatic correction replaces

    @property
    def publishes(self) -> bool:
        return self.status in (CandidateStatus.APPROVED, CandidateStatus.AUTO_APPROVED)


def evaluate(
    proposal: Proposal,
    **snapshot,
) -> Decision:
    """SPEC §3's steps; a candidate flagged by poisoning or grounding is never decided
    automatically, whatever its source and confidence: what would have been any outcome but
    a rejection or a review waits in ``pending_review``."""
    decision = _evaluate_steps(proposal, **snapshot)
    held = Reason.POISONING if proposal.poisoning else Reason.UNGROUNDED if proposal.grounding else None
    if held and decision.status not in (CandidateStatus.REJECTED, CandidateStatus.PENDING_REVIEW):
        return Decision(CandidateStatus.PENDING_REVIEW, held, conflict_with=decision.conflict_with or decision.replaces)
    return decision


def _evaluate_steps(
    proposal: Proposal,
    *,
    rule: FieldRule | None,
    entity_type_known: bool,
    thresholds: Thresholds,
    active_facts: list[ActiveFact],
    suppressed_digests: frozenset[str] | set[str],
) -> Decision:
    # 1. Shape: the schema must know the entity type and field; the value must be usable.
    if not entity_type_known or rule is None:
        return Decision(CandidateStatus.REJECTED, Reason.FIELD_NOT_ALLOWED)
    if not proposal.value.strip() or proposal.value_too_long or len(proposal.value) > MAX_VALUE_LENGTH:
        return Decision(CandidateStatus.REJECTED, Reason.INVALID)

    # 2. Credentials: the value was masked before it reached us; a hit rejects it.
    if proposal.secret_kinds:
        return Decision(CandidateStatus.REJECTED, Reason.SECRET_DETECTED)

    # 3. Confidence.
    if proposal.confidence < thresholds.reject_below:
        return Decision(CandidateStatus.REJECTED, Reason.BELOW_CONFIDENCE)
    if proposal.confidence < thresholds.confirm_below:
        return Decision(CandidateStatus.PENDING_USER, Reason.NEEDS_CONFIRMATION)

    # 4. Kind: inferences and plans are questions for the subject, never facts on their own.
    if proposal.kind in (Kind.INFERENCE, Kind.PLAN):
        return Decision(CandidateStatus.PENDING_USER, Reason.UNCONFIRMED_KIND)

    # 5. Sensitivity: sensitive fields need the subject's consent.
    if rule.sensitivity == Sensitivity.SENSITIVE:
        return Decision(CandidateStatus.PENDING_USER, Reason.SENSITIVE_CONSENT)

    # 6. Duplicate of an active fact merges; a value someone refused stays refused.
    same_value = {proposal.value_digest, *proposal.old_key_digests}
    for fact in active_facts:
        if fact.value_digest in same_value:
            return Decision(CandidateStatus.MERGED, Reason.DUPLICATE, merge_into=fact.id)
    if any(digest in suppressed_digests for digest in same_value):
        return Decision(CandidateStatus.REJECTED, Reason.SUPPRESSED)

    may_auto_approve = rule.auto_approve and thresholds.auto_approve_at is not None

    # 7. Conflict on a `one` field, settled automatically only by an explicit correction
    #    from a source at least as trusted as the one that set the current value.
    if rule.cardinality == Cardinality.ONE and active_facts:
        current = active_facts[0]
        if (
            proposal.supersedes
            and may_auto_approve
            and thresholds.priority(proposal.source) >= thresholds.priority(current.source)
        ):
            return Decision(CandidateStatus.AUTO_APPROVED, Reason.CORRECTION, replaces=current.id)
        return Decision(CandidateStatus.PENDING_REVIEW, Reason.CONFLICT, conflict_with=current.id)

    # 8. Auto-approve where the field and the tenant allow it.
    if may_auto_approve and proposal.confidence >= thresholds.auto_approve_at:
        return Decision(CandidateStatus.AUTO_APPROVED, Reason.AUTO_APPROVE)
    return Decision(CandidateStatus.PENDING_REVIEW, Reason.NEEDS_REVIEW)


def relation_rule(entity_type: str, field_name: str, allowed_relation_names: list | None) -> FieldRule | None:
    """`relation:<name>` fields are accepted on every entity type unless the tenant restricts them."""
    name = field_name[len(RELATION_PREFIX) :]
    if not name or (allowed_relation_names is not None and name not in allowed_relation_names):
        return None
    return FieldRule(
        entity_type=entity_type,
        field=field_name,
        cardinality=Cardinality.MANY,
        sensitivity=Sensitivity.NORMAL,
        category="relation",
        auto_approve=True,
    )
