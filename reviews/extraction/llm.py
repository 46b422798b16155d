"""The LLM extractor: ``ChatOpenAI(...).with_structured_output(...)`` (SPEC §8).

Any OpenAI-compatible server works through ``OPENAI_BASE_URL`` (a local vLLM or Ollama,
say). The model sees the masked message, a few earlier messages of the thread, the
subject's known entities with their aliases (so it reuses ids) and the tenant's fields;
it answers ``{"facts": [EntityFact, …]}``. The answer is validated against that schema;
every item's evidence must really occur in the message and its entity, field and value be
filled, or the item is dropped (counted on the message's row, listed in its audit event).

Failures are named so the task layer can decide: :class:`ExtractorUnavailable` (HTTP 5xx,
429, timeout, connection) and :class:`MalformedAnswer` are retried with backoff up to a
ceiling; :class:`ExtractorRefused` (bad key, bad request) fails at once. The HTTP client
itself also retries a transient failure a couple of times with its own short backoff.
"""
from __future__ import annotations

import functools
import logging
from typing import Literal

from django.conf import settings
from pydantic import BaseModel, Field, ValidationError

from ..policy.identifiers import identifier_problem
from ..models import Kind, MemoryScope
from ..domain import CandidateInput
from .base import (
    ExtractionContext,
    ExtractionResult,
    ExtractorRefused,
    ExtractorUnavailable,
    MalformedAnswer,
)
from .prompt import PromptVersion, prompt_version_get
from .resolve import evidence_occurs

logger = logging.getLogger(__name__)

EVIDENCE_NOT_IN_MESSAGE = "evidence_not_in_message"
MALFORMED_ITEM = "malformed_item"  # an entity, field or value left empty
# An entity id the service boundary would refuse (SPEC §1): dropped, not a failed message.
INVALID_ENTITY_ID = "invalid_entity_id"


class EntityFact(BaseModel):
    """One proposed fact: the shape of a ``POST /api/v1/candidates`` candidate."""

    entity_type: str = Field(description="One of the allowed entity types, e.g. user, project, organization.")
    entity_id: str = Field(description="Stable lowercase slug; 'me' for the user; reuse a known entity's id.")
    entity_name: str = Field(default="", description="The entity's name as written in the message.")
    field: str = Field(description="An allowed field of that entity type, or relation:<name>.")
    value: str = Field(description="The value, short and self-contained.")
    confidence: float = Field(ge=0.0, le=1.0, description="0..1: how explicitly the message states it.")
    source_message_id: str = Field(description="The id of the message the fact comes from.")
    kind: Literal["fact", "relation", "inference", "plan"] = Field(default="fact")
    scope: Literal["long_term", "thread"] = Field(default="long_term")
    supersedes: bool = Field(default=False, description="True when it corrects or replaces an earlier value.")
    evidence: str = Field(description="The exact words of the message that state it, copied verbatim.")


class ExtractedFacts(BaseModel):
    """Facts about the user and their entities stated in the message (possibly none)."""

    facts: list[EntityFact] = Field(default_factory=list)


@functools.lru_cache(maxsize=8)
def _structured_model(model: str, api_key: str, base_url: str | None, timeout: float, max_retries: int, method: str):
    # Imported here: the rule extractor (the key-less default) never pays for it.
    from langchain_openai import ChatOpenAI

    chat = ChatOpenAI(
        model=model,
        api_key=api_key,
        base_url=base_url,
        timeout=timeout,
        max_retries=max_retries,
        temperature=0,
        # OpenAI-compatible servers (vLLM, Ollama) speak chat completions, not the Responses API.
        use_responses_api=False,
    )
    return chat.with_structured_output(ExtractedFacts, method=method, include_raw=True)


class LlmExtractor:
    def __init__(self, *, model: str, api_key: str | None, base_url: str | None, timeout: float,
                 max_retries: int, method: str, prompt: PromptVersion | None = None):
        self.prompt = prompt or prompt_version_get(None)
        self.prompt_version = self.prompt.version
        self.model = model
        self.api_key = api_key
        self.base_url = base_url
        self.timeout = timeout
        self.max_retries = max_retries
        self.method = method
        self.name = f"llm:{model}"[:64]

    @classmethod
    def from_settings(cls, *, prompt_version: str | None = None) -> "LlmExtractor":
        return cls(
            prompt=prompt_version_get(prompt_version),
            model=settings.MEMORY_EXTRACTOR_MODEL,
            # A local server (OPENAI_BASE_URL) usually needs no key, but the client wants one.
            api_key=settings.OPENAI_API_KEY or ("unused" if settings.OPENAI_BASE_URL else None),
            base_url=settings.OPENAI_BASE_URL,
            timeout=settings.MEMORY_EXTRACTOR_TIMEOUT,
            max_retries=settings.MEMORY_EXTRACTOR_HTTP_RETRIES,
            method=settings.MEMORY_EXTRACTOR_METHOD,
        )

    def extract(self, context: ExtractionContext) -> ExtractionResult:
        if context.role != "user" or not context.content.strip():
            return ExtractionResult([])
        answer = self._ask(context)
        return self._to_candidates(answer, context)

    def _ask(self, context: ExtractionContext) -> ExtractedFacts:
        import openai  # heavy to import; only a call to the model needs it, the rule extractor never

        if not self.api_key:
            raise ExtractorRefused("OPENAI_API_KEY is not set (and no OPENAI_BASE_URL).")
        model = _structured_model(
            self.model, self.api_key, self.base_url, self.timeout, self.max_retries, self.method
        )
        messages = self.prompt.messages(context)
        try:
            output = model.invoke(messages)
        except (openai.APITimeoutError, openai.APIConnectionError) as exc:
            raise ExtractorUnavailable(f"model server unreachable: {type(exc).__name__}") from None
        except (openai.RateLimitError, openai.InternalServerError) as exc:
            raise ExtractorUnavailable(f"model server error: HTTP {exc.status_code}") from None
        except openai.APIStatusError as exc:
            if exc.status_code >= 500:
                raise ExtractorUnavailable(f"model server error: HTTP {exc.status_code}") from None
            raise ExtractorRefused(f"model server refused the request: HTTP {exc.status_code}") from None
        except (ValidationError, ValueError) as exc:
            # The client parses some shapes itself (json_schema) and raises instead of reporting.
            raise MalformedAnswer(f"answer does not match the schema: {type(exc).__name__}") from None
        parsed, error = output.get("parsed"), output.get("parsing_error")
        if error is not None or not isinstance(parsed, ExtractedFacts):
            kind = type(error).__name__ if error is not None else "no structured answer"
            raise MalformedAnswer(f"answer does not match the schema: {kind}")
        return parsed

    def _to_candidates(self, answer: ExtractedFacts, context: ExtractionContext) -> ExtractionResult:
        candidates, dropped = [], []
        for fact in answer.facts:
            if not all(part.strip() for part in (fact.entity_type, fact.entity_id, fact.field, fact.value)):
                why = MALFORMED_ITEM
            elif identifier_problem(fact.entity_id.strip()):
                why = INVALID_ENTITY_ID
            elif not evidence_occurs(fact.evidence, context.content):
                why = EVIDENCE_NOT_IN_MESSAGE
            else:
                why = ""
            if why:
                # A refused id is not repeated: it may hold what the boundary refuses to store.
                entity = fact.entity_type if why == INVALID_ENTITY_ID else f"{fact.entity_type}:{fact.entity_id}"
                dropped.append({"entity": entity, "field": fact.field, "why": why})
                continue
            thread = fact.scope == MemoryScope.THREAD
            candidates.append(
                CandidateInput(
                    entity_type=fact.entity_type.strip().lower(),
                    entity_id=fact.entity_id.strip(),
                    entity_name=fact.entity_name.strip(),
                    field=fact.field.strip(),
                    value=fact.value.strip(),
                    confidence=fact.confidence,
                    # The message read is the source, whatever id the model echoed.
                    source_message_id=context.message_id,
                    evidence=fact.evidence.strip(),
                    kind=fact.kind if fact.kind in Kind.values else Kind.FACT,
                    scope=MemoryScope.THREAD if thread else MemoryScope.LONG_TERM,
                    thread_id=context.thread_id if thread else "",
                    supersedes=fact.supersedes,
                )
            )
        if dropped:
            logger.info("extraction of %s dropped %d item(s): evidence not in the message or malformed",
                        context.message_id, len(dropped))
        return ExtractionResult(candidates, dropped)
