"""An item's own page (issue 38.6): every audit event that touched one candidate, oldest
first, with people named and each change as before → after; and its reviewers' comments."""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.db.models import Q

from ..exports import event_rows
from ..models import AuditAction, AuditEvent, Candidate, CandidateComment
from .audit import changed_values
from .queue import actor_names

# Events about a whole selection of items that name this one among their ids: who claimed
# it and gave it back. (A bulk decision also records one event per item, found directly.)
SELECTION_ACTIONS = (AuditAction.CANDIDATES_CLAIMED, AuditAction.CANDIDATES_RELEASED)
# An item's page shows this many events at most, the newest ones (a long-contested item
# gathers many); the audit log has them all.
MAX_HISTORY_EVENTS = 200


@dataclass(frozen=True)
class HistoryEntry:
    seq: int
    at: datetime
    action: str
    actor: str
    actor_name: str
    # (name, before, after) of each recorded value that differs; None where a side has none.
    changes: list[tuple[str, object, object]]
    # A side that is not a record (rare) is shown whole.
    before: object
    after: object
    reason: str
    reason_code: str
    erased: bool  # the subject was erased: the values are gone, the event stays


@dataclass(frozen=True)
class ShownComment:
    id: int
    author: str  # a staff member by username, an API key as the audit log names it
    actor: str
    at: datetime
    body: str


def candidate_history(*, candidate: Candidate) -> list[HistoryEntry]:
    """Every event of the candidate's tenant about this candidate, oldest first: its own
    (read along the subject's index: the candidate's events all name its subject) and the
    claims and releases that listed it."""
    # The tenant in each arm of the OR, so that each can be read along its own index
    # (tenant, subject, seq) and (tenant, created_at) and the two combined.
    tenant_id = candidate.tenant_id
    own = Q(
        tenant_id=tenant_id, subject_user_id=candidate.subject.user_id, object_type="candidate",
        object_id=str(candidate.pk),
    )
    listed = Q(
        tenant_id=tenant_id, created_at__gte=candidate.created_at, action__in=SELECTION_ACTIONS,
        object_type="candidate_selection",
    ) & (Q(payload__after__ids__contains=[candidate.pk]) | Q(payload__before__ids__contains=[candidate.pk]))
    events = AuditEvent.objects.filter(own | listed).order_by("-seq")[:MAX_HISTORY_EVENTS]
    rows = event_rows(events)[::-1]
    names = actor_names({row["actor"] for row in rows})
    return [_entry(row, names) for row in rows]


def _entry(row: dict, names: dict[str, str]) -> HistoryEntry:
    before, after = row["before"], row["after"]
    if row["object_type"] == "candidate_selection":  # the other items of the selection are not this one's story
        before, after = _without_ids(before), _without_ids(after)
    records = isinstance(before, (dict, type(None))) and isinstance(after, (dict, type(None)))
    return HistoryEntry(
        seq=row["seq"],
        at=datetime.fromisoformat(row["created_at"]),
        action=row["action"],
        actor=row["actor"],
        actor_name=names.get(row["actor"], row["actor"]),
        changes=changed_values(before or {}, after or {}) if records else [],
        before=None if records else before,
        after=None if records else after,
        reason=row["reason"],
        reason_code=row["reason_code"],
        erased=row["erased"],
    )


def _without_ids(values):
    return {key: value for key, value in values.items() if key != "ids"} if isinstance(values, dict) else values


def candidate_comments(*, candidate: Candidate) -> list[ShownComment]:
    """The candidate's comments, oldest first, each with its author's name (one query for
    the comments, one for the names of those written by anyone but a staff member)."""
    comments = list(
        CandidateComment.objects.filter(candidate=candidate, tenant_id=candidate.tenant_id).select_related("author")
    )
    names = actor_names({comment.actor for comment in comments if comment.author is None})
    return [
        ShownComment(
            id=comment.pk,
            author=comment.author.get_username() if comment.author else names.get(comment.actor, ""),
            actor=comment.actor,
            at=comment.created_at,
            body=comment.body,
        )
        for comment in comments
    ]
