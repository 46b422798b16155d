"""Every status change of a Fact or a Candidate, in one place (SPEC §1, §3, §4).

Each transition is declared once below: the states it starts from, the state it ends in,
and the audit action it records. The functions that apply them check the starting state
(:class:`~reviews.errors.InvalidTransition` otherwise, 409 at the API), write the status
in plain sight (an attribute and a ``save`` or one ``UPDATE``) and return the audit events
for the caller to append in its transaction. No other module assigns ``status``; rows are
*created* in their initial state by the services that create them (a published fact is
``active``; a candidate starts where the policy put it, recorded by :func:`candidate_submitted`).

A state-machine library (django-fsm-2, python-statemachine) was weighed and not used:
both change one instance at a time and hide the write behind a decorator or a callback,
whereas several of these transitions are one ``UPDATE`` over many rows (retention,
supersession) and every one must hand its audit event to the caller's chain append.

Callers hold the subject's row lock (``models.locks.lock_subject``) and the rows' locks.
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Iterable

from django.db.models import F

from .. import metrics
from ..actors import POLICY, Actor
from ..audit import EventDraft
from ..errors import Forbidden, InvalidTransition
from ..models import (
    OPEN_CANDIDATE_STATUSES,
    AuditAction,
    Candidate,
    CandidateStatus,
    Fact,
    FactStatus,
    Subject,
)


@dataclass(frozen=True)
class Transition:
    name: str
    sources: tuple[str, ...]
    target: str
    action: AuditAction

    def check(self, status: str, *, what: str) -> None:
        if status not in self.sources:
            raise InvalidTransition(
                f"A {status} {what} cannot be {self.name}.",
                details={"status": status, "allowed_from": list(self.sources)},
            )


# --- Facts (SPEC §1: active, contested, deleted, expired) ----------------------------------

FACT_CONTEST = Transition("contested", (FactStatus.ACTIVE,), FactStatus.CONTESTED, AuditAction.FACT_CONTESTED)
FACT_REINSTATE = Transition("reinstated", (FactStatus.CONTESTED,), FactStatus.ACTIVE, AuditAction.FACT_REINSTATED)
FACT_DELETE = Transition(
    "deleted", (FactStatus.ACTIVE, FactStatus.CONTESTED), FactStatus.DELETED, AuditAction.FACT_DELETED
)
FACT_EXPIRE = Transition("expired", (FactStatus.ACTIVE,), FactStatus.EXPIRED, AuditAction.FACT_EXPIRED)
# An entity merge keeps a clashing fact as history of the target, out of publication.
FACT_RETIRE = Transition(
    "retired", (FactStatus.ACTIVE, FactStatus.CONTESTED), FactStatus.DELETED, AuditAction.FACT_RETIRED
)
# Not published, but holding a value someone may still decide about.
LIVE_FACT_STATUSES = (FactStatus.ACTIVE, FactStatus.CONTESTED)

# --- Candidates (SPEC §3 statuses) ------------------------------------------------------------

CANDIDATE_APPROVE = Transition(
    "approved", OPEN_CANDIDATE_STATUSES, CandidateStatus.APPROVED, AuditAction.CANDIDATE_APPROVED
)
CANDIDATE_REJECT = Transition(
    "rejected", OPEN_CANDIDATE_STATUSES, CandidateStatus.REJECTED, AuditAction.CANDIDATE_REJECTED
)
CANDIDATE_DEFER = Transition(
    "deferred", (CandidateStatus.PENDING_REVIEW,), CandidateStatus.PENDING_USER, AuditAction.CANDIDATE_DEFERRED
)
CANDIDATE_SUPERSEDE = Transition(
    "superseded", OPEN_CANDIDATE_STATUSES, CandidateStatus.SUPERSEDED, AuditAction.CANDIDATE_SUPERSEDED
)
CANDIDATE_WITHDRAW = Transition(
    "withdrawn", OPEN_CANDIDATE_STATUSES, CandidateStatus.WITHDRAWN, AuditAction.CANDIDATE_WITHDRAWN
)

# --- Undo (SPEC §4): the compensating transitions of a decision taken back --------------------
#
# A person's approve, reject or defer goes back to the open state it found the item in; the
# candidates an approval superseded reopen; the fact it touched goes back to the state it
# found (unpublished if the approval created it, contested again if it upheld or closed a
# contest). One action names them all: ``candidate.decision_undone``, ``fact.decision_undone``.

CANDIDATE_UNDO_TO_REVIEW = Transition(
    "undone",
    (CandidateStatus.APPROVED, CandidateStatus.REJECTED, CandidateStatus.PENDING_USER),
    CandidateStatus.PENDING_REVIEW,
    AuditAction.CANDIDATE_DECISION_UNDONE,
)
CANDIDATE_UNDO_TO_USER = Transition(
    "undone",
    (CandidateStatus.APPROVED, CandidateStatus.REJECTED),
    CandidateStatus.PENDING_USER,
    AuditAction.CANDIDATE_DECISION_UNDONE,
)
CANDIDATE_REOPEN_TO_REVIEW = Transition(
    "reopened", (CandidateStatus.SUPERSEDED,), CandidateStatus.PENDING_REVIEW, AuditAction.CANDIDATE_DECISION_UNDONE
)
CANDIDATE_REOPEN_TO_USER = Transition(
    "reopened", (CandidateStatus.SUPERSEDED,), CandidateStatus.PENDING_USER, AuditAction.CANDIDATE_DECISION_UNDONE
)
# The open state a decision found, by the transition that goes back to it.
CANDIDATE_UNDO = {t.target: t for t in (CANDIDATE_UNDO_TO_REVIEW, CANDIDATE_UNDO_TO_USER)}
CANDIDATE_REOPEN = {t.target: t for t in (CANDIDATE_REOPEN_TO_REVIEW, CANDIDATE_REOPEN_TO_USER)}
# A fact an undone approval created leaves publication (the row stays, as every fact row does).
FACT_UNPUBLISH = Transition(
    "unpublished", (FactStatus.ACTIVE,), FactStatus.DELETED, AuditAction.FACT_DECISION_UNDONE
)
# A contest the undone decision settled is open again: upheld (active) or closed (deleted).
FACT_RECONTEST = Transition(
    "contested again", (FactStatus.ACTIVE, FactStatus.DELETED), FactStatus.CONTESTED, AuditAction.FACT_DECISION_UNDONE
)


def fact_payload(fact: Fact) -> dict:
    """The audited view of a fact's value."""
    return {
        "entity": f"{fact.entity.entity_type}:{fact.entity.entity_id}",
        "field": fact.field,
        "value": fact.value,
        "version": fact.version,
        "source": fact.source,
    }


def fact_trace(fact: Fact) -> dict:
    """The audited view of a fact that leaves publication for good: no value, since the
    event outlives a deletion and its payload must hold nothing erased."""
    return {
        "entity": f"{fact.entity.entity_type}:{fact.entity.entity_id}",
        "field": fact.field,
        "version": fact.version,
        "scope": fact.scope,
        "thread_id": fact.thread_id,
        "expires_at": fact.expires_at.isoformat() if fact.expires_at else None,
    }


def fact_event(fact: Fact, action: AuditAction, *, subject: Subject, actor: Actor, **recorded) -> EventDraft:
    """The event of a change to one of ``subject``'s facts (``recorded``: before, after, reason…)."""
    return EventDraft.about("fact", fact.pk, action, subject=subject, actor=actor, **recorded)


def candidate_event(
    candidate_id: int, action: AuditAction, *, subject: Subject, actor: Actor, **recorded
) -> EventDraft:
    """The event of a change to one of ``subject``'s candidates, by id: the bulk transitions
    hold ids, not rows."""
    return EventDraft.about("candidate", candidate_id, action, subject=subject, actor=actor, **recorded)


def fact_retired_event(
    *, fact: Fact, subject: Subject, actor: Actor, action: AuditAction, reason: str = "", reason_code: str = ""
) -> EventDraft:
    """An event about a fact leaving publication, naming it by :func:`fact_trace` (no value)."""
    return fact_event(
        fact, action, subject=subject, actor=actor, before=fact_trace(fact), reason=reason, reason_code=reason_code
    )


def fact_contest(
    fact: Fact, *, subject: Subject, actor: Actor, candidate_id: int, note: str, now: datetime
) -> EventDraft:
    """active → contested: the subject sends a reviewer's fact back to review; the value stays."""
    FACT_CONTEST.check(fact.status, what="fact")
    before = fact_payload(fact)
    fact.status = FACT_CONTEST.target
    fact.updated_at = now
    fact.save(update_fields=["status", "updated_at"])
    return fact_event(
        fact,
        FACT_CONTEST.action,
        subject=subject,
        actor=actor,
        before=before,
        after={"status": fact.status, "candidate_id": candidate_id},
        reason=note,
    )


def fact_reinstate(fact: Fact) -> AuditAction:
    """contested → active, in memory: the caller saves the fact with its next version
    (:func:`reviews.services.facts.fact_publish`) and records the returned action."""
    FACT_REINSTATE.check(fact.status, what="fact")
    fact.status = FACT_REINSTATE.target
    return FACT_REINSTATE.action


def facts_end(
    facts: list[Fact],
    transition: Transition,
    *,
    subject: Subject,
    actor: Actor,
    at: datetime,
    reason: str = "",
    reason_code=lambda fact: "",
) -> list[EventDraft]:
    """Take live facts out of publication for good (deleted, expired, retired), in one UPDATE.

    Every fact must be in one of the transition's source states. Their values are the
    caller's to purge or keep (erasure purges them; a merge keeps them as history).
    """
    for fact in facts:
        transition.check(fact.status, what="fact")
    if not facts:
        return []
    Fact.objects.filter(pk__in=[fact.pk for fact in facts], status__in=transition.sources).update(
        status=transition.target, updated_at=at
    )
    events = [
        fact_retired_event(
            fact=fact, subject=subject, actor=actor, action=transition.action, reason=reason, reason_code=reason_code(fact)
        )
        for fact in facts
    ]
    for fact in facts:
        fact.status = transition.target
        fact.updated_at = at
    return events


# --- Candidates --------------------------------------------------------------------------------


def candidate_submitted(candidate: Candidate, *, subject: Subject, actor: Actor, payload: dict) -> list[EventDraft]:
    """A new candidate and the state the policy gave it on arrival (SPEC §3): two events."""
    return [
        candidate_event(candidate.pk, AuditAction.CANDIDATE_SUBMITTED, subject=subject, actor=actor, after=payload),
        candidate_event(
            candidate.pk,
            AuditAction.policy_outcome(candidate.status),
            subject=subject,
            actor=POLICY,
            after={"status": candidate.status, "reason": candidate.reason},
            reason_code=candidate.reason,
        ),
    ]


def subject_may_decide(candidate: Candidate) -> bool:
    """The subject decides only what is theirs (SPEC §4): items waiting for them. Never an
    item waiting for a reviewer, a conflict with one of their own facts included: they may
    contest the published fact instead (``services.portal.fact_contest``)."""
    return candidate.status == CandidateStatus.PENDING_USER


def candidate_decide(
    candidate: Candidate,
    transition: Transition,
    *,
    subject: Subject,
    actor: Actor,
    reason: str,
    note: str = "",
    action: AuditAction | None = None,
    after: dict | None = None,
    now: datetime,
    **changes,
) -> EventDraft:
    """A person's decision about one open candidate (approve, reject, defer).

    ``changes`` are the other fields the decision sets (an edited value, its source);
    ``action`` overrides the transition's (an edit-then-approve) and ``after`` adds to the
    recorded state.
    """
    if actor.is_subject and candidate.is_open and not subject_may_decide(candidate):
        raise Forbidden("This item is waiting for a reviewer, not for you.", details={"status": candidate.status})
    transition.check(candidate.status, what="candidate")
    before = {"status": candidate.status, "version": candidate.version, "value": candidate.value}
    metrics.decision_timed(candidate.created_at, now)
    candidate.status = transition.target
    candidate.reason = reason
    candidate.note = note
    candidate.version += 1
    candidate.decided_by = str(actor)
    candidate.decided_at = now
    for name, value in changes.items():
        setattr(candidate, name, value)
    candidate.save()
    return candidate_event(
        candidate.pk,
        action or transition.action,
        subject=subject,
        actor=actor,
        before=before,
        after={"status": candidate.status, "version": candidate.version, **(after or {})},
        reason=note,
        reason_code=reason,
    )


def candidates_close(
    rows: Iterable[tuple[int, str, int]],
    transition: Transition,
    *,
    subject: Subject,
    actor: Actor,
    reason: str,
    now: datetime,
    after: dict | None = None,
    blank_values: bool = False,
) -> list[EventDraft]:
    """Close open candidates the system decided about (superseded, withdrawn), in one UPDATE.

    ``rows`` are (id, status, version) of locked rows; the version bump makes anyone
    holding one of them stale (409). ``blank_values`` also drops their values (retention).
    """
    rows = list(rows)
    for _pk, status, _version in rows:
        transition.check(status, what="candidate")
    if not rows:
        return []
    cleared = {"value": "", "evidence": ""} if blank_values else {}
    Candidate.objects.filter(pk__in=[pk for pk, _, _ in rows], status__in=transition.sources).update(
        status=transition.target,
        reason=reason,
        version=F("version") + 1,
        decided_by=str(actor),
        decided_at=now,
        **cleared,
    )
    return [
        candidate_event(
            pk,
            transition.action,
            subject=subject,
            actor=actor,
            before={"status": status, "version": version},
            after={"status": transition.target, **(after or {})},
            reason_code=reason,
        )
        for pk, status, version in rows
    ]


# --- Undo ---------------------------------------------------------------------------------------


def _undo_transition(table: dict, status: str, *, what: str) -> Transition:
    """The compensating transition back to ``status``; only an open state is gone back to."""
    if status not in table:
        raise InvalidTransition(
            f"A {what} cannot go back to {status}.", details={"status": status, "allowed_to": list(table)}
        )
    return table[status]


def candidate_decision_undone(
    candidate: Candidate,
    *,
    back_to: str,
    subject: Subject,
    actor: Actor,
    undone: str,
    restore: dict,
    after: dict | None = None,
) -> EventDraft:
    """approved / rejected / pending_user → the open state the undone decision found.

    ``restore`` holds the candidate's other fields as the decision found them (reason,
    note, value, source, who decided…); the version grows, so a screen still holding the
    decided state is stale. ``undone`` names the decision (approve, reject, defer).
    """
    transition = _undo_transition(CANDIDATE_UNDO, back_to, what="candidate")
    transition.check(candidate.status, what="candidate")
    before = {"status": candidate.status, "version": candidate.version, "value": candidate.value}
    candidate.status = transition.target
    for name, value in restore.items():
        setattr(candidate, name, value)
    candidate.version += 1
    candidate.save()
    return candidate_event(
        candidate.pk,
        transition.action,
        subject=subject,
        actor=actor,
        before=before,
        after={"status": candidate.status, "version": candidate.version, "value": candidate.value, **(after or {})},
        reason_code=undone,
    )


def candidates_reopen(
    rows: Iterable[tuple[int, str, int, str, str]], *, subject: Subject, actor: Actor, by_candidate: int
) -> list[EventDraft]:
    """superseded → the open state they were in, for the candidates an undone approval
    superseded. ``rows`` are (id, status, version, former status, former reason) of locked
    rows; one UPDATE per former state, each version bumped."""
    rows = list(rows)
    for _pk, status, _version, back_to, _reason in rows:
        _undo_transition(CANDIDATE_REOPEN, back_to, what="candidate").check(status, what="candidate")
    events = []
    for pk, status, version, back_to, reason in rows:
        transition = CANDIDATE_REOPEN[back_to]
        Candidate.objects.filter(pk=pk, status__in=transition.sources).update(
            status=transition.target, reason=reason, version=F("version") + 1
        )
        events.append(
            candidate_event(
                pk,
                transition.action,
                subject=subject,
                actor=actor,
                before={"status": status, "version": version},
                after={"status": transition.target, "version": version + 1, "by_undo_of": by_candidate},
                reason_code=reason,
            )
        )
    return events


def fact_decision_undone(fact: Fact, *, back_to: str | None) -> AuditAction:
    """A fact an undone decision touched goes back to the state it found, in memory (the
    caller restores its value and saves it with its next version, like :func:`fact_reinstate`).

    ``back_to`` None: the decision created it (active → deleted). Active before and after:
    only its value changes back. Contested before: the contest is open again (active or
    deleted → contested).
    """
    if back_to is None:
        transition = FACT_UNPUBLISH
    elif back_to == FactStatus.ACTIVE and fact.status == FactStatus.ACTIVE:
        return AuditAction.FACT_DECISION_UNDONE
    elif back_to == FactStatus.CONTESTED:
        transition = FACT_RECONTEST
    else:
        raise InvalidTransition(
            f"A {fact.status} fact cannot go back to {back_to}.", details={"status": fact.status, "back_to": back_to}
        )
    transition.check(fact.status, what="fact")
    fact.status = transition.target
    return transition.action
