"""Waiting items judged again when the published value of their field changes (SPEC §4).

A waiting item (``pending_review`` / ``pending_user``) was judged against the value that
was published when it arrived. When the active fact of its slot (subject, entity, field,
thread) changes — an approval, the subject's confirmation or correction, the business
system, an edit, a deletion, an undo — the item is judged again in the same transaction,
so that no decision replaces a value nobody compared it with:

- its value now equals a published one: closed as ``superseded`` (``same_as_published``);
- a `one` field, older than the candidate that was published: closed as ``superseded``
  (``newer_candidate``: a newer value arrived first, SPEC §3);
- a contest of a `one` field that another value has since replaced: closed the same way
  (the caller closes the contest itself, :func:`reviews.services.facts.contests_closed`);
- otherwise, on a `one` field: a conflict with the value published now, or, with nothing
  published any more, no conflict at all.

Every item judged again gets a new version, so a decision sent with the old one is a 409
(:func:`stale_details` names the value it now faces), and an audit event by the policy.
The caller holds the subject's row lock (``models.locks.lock_subject``).
"""
from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from datetime import datetime

from django.db.models import F

from ..policy import transitions
from ..actors import POLICY, Actor
from ..audit import EventDraft
from ..models import (
    OPEN_CANDIDATE_STATUSES,
    AuditAction,
    Candidate,
    CandidateFlag,
    CandidateStatus,
    Cardinality,
    Fact,
    FactStatus,
    Reason,
    Subject,
)
from ..policy.normalize import value_digests


@dataclass(frozen=True)
class Slot:
    """Where one published value lives: a subject's (entity, field, thread)."""

    entity_id: int
    field: str
    thread_id: str
    cardinality: str

    @classmethod
    def of_fact(cls, fact: Fact) -> Slot:
        return cls(fact.entity_id, fact.field, fact.thread_id, fact.cardinality)


@dataclass
class Rejudged:
    """What judging a slot's waiting items again did: the events to append, and the items it
    closed (contests among them are the caller's to close, with their facts)."""

    events: list[EventDraft]
    closed: list[Candidate]


def waiting_rejudge(
    *,
    subject: Subject,
    slot: Slot,
    actor: Actor,
    now: datetime,
    published_by: Candidate | None = None,
    judged_already: Collection[int] = (),
) -> Rejudged:
    """Judge every waiting item of ``slot`` again against what is published there now.

    1. Read the slot's active facts and lock its waiting items (oldest first), leaving out
       ``published_by`` and ``judged_already`` (a batch whose items were judged against
       the value as it changed, ``services.candidates.candidates_submit``).
    2. Sort each into closed as moot (same value, or older than ``published_by`` on a
       `one` field, or a contest another value replaced), a conflict with the current
       value, or no longer a conflict; a `many` field's other values stand untouched.
    3. One UPDATE per outcome, each bumping the version, and one event per item: who
       caused the change (``actor``) is recorded, the policy is the one that judged.
    """
    active = list(
        Fact.objects.filter(
            subject=subject,
            entity_id=slot.entity_id,
            field=slot.field,
            thread_id=slot.thread_id,
            status=FactStatus.ACTIVE,
        ).only("pk", "value_digest", "version")
    )
    skip = set(judged_already) | ({published_by.pk} if published_by is not None else set())
    waiting = list(
        Candidate.objects.select_for_update()
        .filter(
            subject=subject,
            entity_id=slot.entity_id,
            field=slot.field,
            thread_id=slot.thread_id,
            status__in=OPEN_CANDIDATE_STATUSES,
        )
        .exclude(pk__in=skip)
        .order_by("pk")
        .only("pk", "status", "version", "value", "flags", "has_conflict", "conflict_fact_id", "reason")
    )
    published = {fact.value_digest for fact in active}
    one = slot.cardinality == Cardinality.ONE
    current = active[0] if one and active else None
    same, older, in_conflict, cleared = [], [], [], []
    for item in waiting:
        contest = CandidateFlag.CONTESTED in (item.flags or [])
        if published & value_digests(item.value):
            same.append(item)
        elif not one:
            continue
        elif published_by is not None and item.pk < published_by.pk:
            older.append(item)
        elif contest:
            if current is not None and item.conflict_fact_id != current.pk:
                older.append(item)
        elif current is not None:
            in_conflict.append(item)
        elif item.has_conflict:
            cleared.append(item)
    cause = {"by": str(actor)}
    if published_by is not None:
        cause["by_candidate"] = published_by.pk
    events = []
    for items, reason in ((same, Reason.SAME_AS_PUBLISHED), (older, Reason.NEWER_CANDIDATE)):
        events += transitions.candidates_close(
            [(c.pk, c.status, c.version) for c in items],
            transitions.CANDIDATE_SUPERSEDE,
            subject=subject,
            actor=POLICY,
            reason=reason,
            now=now,
            after=cause,
        )
    events += _conflicts_set(in_conflict, current, subject=subject, cause=cause)
    events += _conflicts_set(cleared, None, subject=subject, cause=cause)
    return Rejudged(events=events, closed=same + older)


def _conflicts_set(items: list[Candidate], fact: Fact | None, *, subject: Subject, cause: dict) -> list[EventDraft]:
    """Point still-waiting items at the fact they now disagree with (None: no conflict any
    more), in one UPDATE, with a new version each. A status does not change here: an item
    waiting for the subject keeps waiting for them, now showing what it disagrees with."""
    if not items:
        return []
    Candidate.objects.filter(pk__in=[c.pk for c in items]).update(
        has_conflict=fact is not None, conflict_fact_id=fact.pk if fact else None, version=F("version") + 1
    )
    if fact is not None:
        # A conflict waits for a reviewer for that reason (SPEC §3 step 7).
        Candidate.objects.filter(pk__in=[c.pk for c in items], status=CandidateStatus.PENDING_REVIEW).update(
            reason=Reason.CONFLICT
        )
    return [
        transitions.candidate_event(
            item.pk,
            AuditAction.CANDIDATE_REJUDGED,
            subject=subject,
            actor=POLICY,
            before={"status": item.status, "version": item.version, "conflict_fact": item.conflict_fact_id},
            after={
                "status": item.status,
                "version": item.version + 1,
                "conflict_fact": fact.pk if fact else None,
                "conflict_fact_version": fact.version if fact else None,
                **cause,
            },
            reason_code=Reason.CONFLICT if fact is not None else "",
        )
        for item in items
    ]


def stale_details(candidate: Candidate) -> dict:
    """What a decision sent with an old version faces now: the candidate's state and the
    value published in its slot (None: nothing is), for the 409's details."""
    details = {
        "current_version": candidate.version,
        "status": candidate.status,
        "decided_by": candidate.decided_by,
        "decided_at": candidate.decided_at.isoformat() if candidate.decided_at else None,
        "conflict": candidate.has_conflict,
        "field": candidate.field,
    }
    if candidate.entity_id is None:
        return details
    facts = Fact.objects.filter(
        subject_id=candidate.subject_id,
        entity_id=candidate.entity_id,
        field=candidate.field,
        thread_id=candidate.thread_id,
        status=FactStatus.ACTIVE,
    )
    if candidate.conflict_fact_id is not None:
        facts = facts.filter(pk=candidate.conflict_fact_id)
    current = facts.order_by("-updated_at", "-pk").only("pk", "value", "version").first()
    details.update(
        current_value=current.value if current else None,
        current_fact_id=current.pk if current else None,
        current_fact_version=current.version if current else None,
    )
    return details


def stale_message(candidate: Candidate) -> str:
    """The 409's message: a colleague decided, or the item was judged again."""
    if candidate.is_open:
        # Judged again, most often; or a decision on it was taken back (undo).
        return "This item changed since you loaded it: look at it again before deciding."
    if candidate.reason == Reason.SAME_AS_PUBLISHED:
        return "This item was closed: the value it proposes is published now."
    if candidate.reason == Reason.NEWER_CANDIDATE:
        return "This item was closed: a newer value for its field was published."
    return "Someone else decided this item first."
