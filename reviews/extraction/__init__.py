"""Extractors: messages in, candidate facts out (SPEC §8).

``MEMORY_EXTRACTOR`` picks one: ``llm`` (``ChatOpenAI`` structured output, the default when
``OPENAI_API_KEY`` is set) or ``rules`` (offline English and Chinese rules, the key-less
default). Both take an :class:`ExtractionContext` and return an :class:`ExtractionResult`;
the ingestion service (``reviews/services/ingest.py``) does everything around them.
"""
from django.conf import settings

from .base import (
    ExtractionContext,
    ExtractionError,
    ExtractionResult,
    Extractor,
    ExtractorRefused,
    ExtractorUnavailable,
    KnownEntity,
    MalformedAnswer,
    PriorMessage,
)

__all__ = [
    "ExtractionContext",
    "ExtractionError",
    "ExtractionResult",
    "Extractor",
    "ExtractorRefused",
    "ExtractorUnavailable",
    "KnownEntity",
    "MalformedAnswer",
    "PriorMessage",
    "get_extractor",
    "get_extractor_named",
]


def get_extractor() -> Extractor:
    return get_extractor_named(settings.MEMORY_EXTRACTOR if settings.MEMORY_EXTRACTOR == "llm" else "rules")


def get_extractor_named(name: str | None, *, prompt_version: str | None = None) -> Extractor:
    """``llm`` or ``rules`` (None: ``MEMORY_EXTRACTOR``), at a prompt version of the LLM.

    Raises KeyError naming what is known when the name or the prompt version is not.
    """
    name = name or settings.MEMORY_EXTRACTOR
    if name == "llm":
        from .llm import LlmExtractor

        return LlmExtractor.from_settings(prompt_version=prompt_version)
    if name == "rules":
        from .rules import RULES_VERSION, RuleExtractor

        if prompt_version not in (None, RULES_VERSION):
            raise KeyError(f"The rule extractor has one version, {RULES_VERSION!r}.")
        return RuleExtractor()
    raise KeyError(f"Unknown extractor {name!r}; known: llm, rules.")
