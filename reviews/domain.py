"""Types and constants that more than one layer shares: what the API, extractors and
adapters hand to the services, kept below both so that extraction never imports a service."""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Annotated

from .models import Kind, MemoryScope, ReviewAge
from .screening import FactText, Identifier, Screen, Text

# Words by which a speaker means themself: they resolve to the subject's own user entity.
SELF_ALIASES = ("我", "i", "me", "my", "myself", "本人", "自己")
# How long a person may take back their decision in the review queue (SPEC §4; the undo
# itself is reviews/services/candidates.py, the queue shows the window).
UNDO_SECONDS = 30
# An item that has waited this share of its tenant's review target is "near" it: there is
# still time to decide it before it is late.
NEAR_TARGET_SHARE = 0.75


def review_age(waited: timedelta, target_hours: int) -> ReviewAge:
    """Where an item that has waited ``waited`` stands against a target of ``target_hours``:
    over it once it has waited longer, near it from :data:`NEAR_TARGET_SHARE` of it on. The
    queue's badges, its headline and its "over target" filter all read this one rule."""
    target = review_target(target_hours)
    if waited > target:
        return ReviewAge.OVER
    if waited >= target * NEAR_TARGET_SHARE:
        return ReviewAge.NEAR
    return ReviewAge.WITHIN


def review_target(target_hours: int) -> timedelta:
    return timedelta(hours=target_hours)


# How much of the thread an extractor sees (the message's predecessors, oldest first).
HISTORY_MESSAGES = 6


@dataclass
class CandidateInput:
    """A proposed fact as the API, an extractor or an adapter hands it in."""

    entity_type: Text
    # Resolution falls back to the entity's name when no id is given.
    entity_id: Annotated[str, Screen.OPTIONAL_IDENTIFIER]
    field: Text
    value: FactText
    confidence: float
    entity_name: FactText = ""
    source_message_id: Identifier = ""
    evidence: FactText = ""
    kind: Text = Kind.FACT
    scope: Text = MemoryScope.LONG_TERM
    thread_id: Identifier = ""
    supersedes: bool = False


@dataclass(frozen=True)
class MessageInput:
    id: Identifier
    thread_id: Identifier
    user_id: Identifier
    role: Text
    content: Text
    created_at: datetime | None = None
