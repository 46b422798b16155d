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
]


def get_extractor() -> Extractor:
    if settings.MEMORY_EXTRACTOR == "llm":
        from .llm import LlmExtractor

        return LlmExtractor.from_settings()
    from .rules import RuleExtractor

    return RuleExtractor()
