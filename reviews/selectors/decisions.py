"""A reviewer's own decisions, newest first, and which of them can still be undone (the
"my decisions" page; issue 38.6). A read: the decisions are the undo rows every person's
decision writes (``DecisionUndo``, services.candidates._keep_for_undo), so undone ones
are listed too, saying so.
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from ..models import DecisionUndo, Tenant

# One screen of recent work; older decisions are in the audit log.
MY_DECISIONS_SHOWN = 100


@dataclass
class MyDecision:
    row: DecisionUndo
    undoable: bool  # worth offering: recent, not undone, the item unchanged since (the undo checks the rest)
    seconds_left: int


def my_decisions(
    *, tenant: Tenant, actor: str, now: datetime, undo_seconds: int, limit: int = MY_DECISIONS_SHOWN
) -> list[MyDecision]:
    """The actor's decisions in ``tenant``, in one query (the rows with their items);
    ``undo_seconds``: how long a decision can be undone (services.candidates.UNDO_SECONDS)."""
    rows = (
        DecisionUndo.objects.filter(tenant=tenant, actor=actor)
        .select_related("candidate", "candidate__subject")
        .order_by("-decided_at", "-pk")[:limit]
    )
    decisions = []
    for row in rows:
        left = undo_seconds - (now - row.decided_at).total_seconds()
        undoable = row.undone_at is None and left > 0 and row.candidate.version == row.candidate_version
        decisions.append(MyDecision(row=row, undoable=undoable, seconds_left=max(0, int(left))))
    return decisions
