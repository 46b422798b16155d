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
from .llm import LlmExtractor
from .prompt import PROMPT_VERSION, PROMPTS
from .rules import RULES_VERSION, RuleExtractor

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
    "prompt_versions",
]


def active_extractor_name(tenant=None) -> str:
    """The extractor a tenant's messages go through: its own choice (the tenant admin's),
    else the site's ``MEMORY_EXTRACTOR``."""
    name = (tenant.extractor if tenant is not None else "") or settings.MEMORY_EXTRACTOR
    return name if name == "llm" else "rules"


def prompt_versions(extractor_name: str) -> tuple[str, ...]:
    """The prompt versions an extractor can run, its current one first."""
    if extractor_name == "llm":
        return (PROMPT_VERSION, *(version for version in PROMPTS if version != PROMPT_VERSION))
    return (RULES_VERSION,)


def get_extractor(tenant=None) -> Extractor:
    """The extractor for a tenant's messages, at the tenant's prompt version (empty: the
    extractor's current one); without a tenant, the site's."""
    name = active_extractor_name(tenant)
    # The rule extractor has one version, its current one: a version chosen before an
    # upgrade of the rules names what ran then, not something that can still run.
    prompt_version = (tenant.prompt_version or None) if tenant is not None and name == "llm" else None
    return get_extractor_named(name, prompt_version=prompt_version)


def get_extractor_named(name: str | None, *, prompt_version: str | None = None) -> Extractor:
    """``llm`` or ``rules`` (None: ``MEMORY_EXTRACTOR``), at a prompt version of the LLM.

    Raises KeyError naming what is known when the name or the prompt version is not.
    """
    name = name or settings.MEMORY_EXTRACTOR
    if name == "llm":
        return LlmExtractor.from_settings(prompt_version=prompt_version)
    if name == "rules":
        if prompt_version not in (None, RULES_VERSION):
            raise KeyError(f"The rule extractor has one version, {RULES_VERSION!r}.")
        return RuleExtractor()
    raise KeyError(f"Unknown extractor {name!r}; known: llm, rules.")
