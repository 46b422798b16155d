"""What every extractor receives and returns, and the errors it may raise.

An extractor turns one (masked) message, seen with its thread and the subject's known
entities, into :class:`~reviews.domain.CandidateInput` items. It never
touches the database: the ingestion service builds the context and submits the result
through the policy pipeline.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated, Protocol

from ..domain import CandidateInput
from ..screening import Screen


@dataclass(frozen=True)
class KnownEntity:
    """An entity the subject's memory already holds, with the names it answers to."""

    entity_type: str
    entity_id: str
    display_name: str = ""
    aliases: tuple[str, ...] = ()


@dataclass(frozen=True)
class PriorMessage:
    message_id: str
    role: str
    content: str


@dataclass(frozen=True)
class ExtractionContext:
    """One message to extract from, and what helps read it. ``content`` is already masked."""

    user_id: str
    thread_id: str
    message_id: str
    role: str
    content: str
    known_entities: tuple[KnownEntity, ...] = ()
    # Earlier messages of the same thread, oldest first: context for "it", "we", "项目".
    thread_history: tuple[PriorMessage, ...] = ()
    # "user.name (one)", … from the tenant's schema: what a model may propose.
    allowed_fields: tuple[str, ...] = ()

    def known_of_type(self, entity_type: str) -> list[KnownEntity]:
        return [entity for entity in self.known_entities if entity.entity_type == entity_type]


def field_line(entity_type: str, field_name: str, cardinality: str, sensitivity: str) -> str:
    """How a schema field is named to a model: ``user.name (one, normal)``."""
    return f"{entity_type}.{field_name} ({cardinality}, {sensitivity})"


@dataclass
class ExtractionResult:
    candidates: list[CandidateInput]
    # Items the extractor proposed but that failed a check (evidence not in the message…):
    # kept for the audit trail without their values.
    dropped: Annotated[list[dict], Screen.TEXT] = field(default_factory=list)


class Extractor(Protocol):
    name: str
    prompt_version: str

    def extract(self, context: ExtractionContext) -> ExtractionResult: ...


class ExtractionError(Exception):
    """An extraction that did not produce an answer. Messages never quote the content."""

    retryable = False


class ExtractorUnavailable(ExtractionError):
    """The model server failed or timed out: worth trying again later."""

    retryable = True


class MalformedAnswer(ExtractionError):
    """The model answered, but not in the requested shape: worth asking again."""

    retryable = True


class ExtractorRefused(ExtractionError):
    """The model server refused the request (bad key, bad request): retrying will not help."""

    retryable = False
