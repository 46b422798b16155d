"""Types and constants that more than one layer shares: what the API, extractors and
adapters hand to the services, kept below both so that extraction never imports a service."""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from .models import Kind, MemoryScope

# Words by which a speaker means themself: they resolve to the subject's own user entity.
SELF_ALIASES = ("我", "i", "me", "my", "myself", "本人", "自己")
# How long a person may take back their decision in the review queue (SPEC §4; the undo
# itself is reviews/services/candidates.py, the queue shows the window).
UNDO_SECONDS = 30
# How much of the thread an extractor sees (the message's predecessors, oldest first).
HISTORY_MESSAGES = 6


@dataclass
class CandidateInput:
    """A proposed fact as the API, an extractor or an adapter hands it in."""

    entity_type: str
    entity_id: str
    field: str
    value: str
    confidence: float
    entity_name: str = ""
    source_message_id: str = ""
    evidence: str = ""
    kind: str = Kind.FACT
    scope: str = MemoryScope.LONG_TERM
    thread_id: str = ""
    supersedes: bool = False


@dataclass(frozen=True)
class MessageInput:
    id: str
    thread_id: str
    user_id: str
    role: str
    content: str
    created_at: datetime | None = None
