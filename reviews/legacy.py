"""Governance for chains still on LangChain's ``ConversationEntityMemory``.

Swap the chain's ``entity_store`` for :class:`GovernedEntityStore` and nothing else
changes in the chain, but:

- ``get(name)`` returns the entity's *approved* facts as one line of text
  ("database: PostgreSQL; tech_stack: Flask"), the ones an agent may see without the
  sensitive scope or a thread (the same set the LangGraph Store projection publishes);
- ``set(name, summary)`` submits the model's summary as a *candidate* through the policy
  pipeline, never as a fact: it waits in the review queue like any other proposal, and
  comes back through ``get`` once a reviewer approved it;
- ``delete`` and ``clear`` erase nothing: what reviewers approved is deleted by the subject
  or an admin (SPEC §4), not by a chain resetting its memory.

The summary lands in ``summary_field`` of the entity the name resolves to (or of a new
entity of ``entity_type``). The tenant's schema must allow that field, e.g. ``project.summary``
(cardinality ``one``, no auto-approval); without it the policy rejects the candidate as
``field_not_allowed`` and a warning is logged.
"""
from __future__ import annotations

import logging
from typing import Any

from langchain_classic.memory.entity import BaseEntityStore
from pydantic import ConfigDict

from .actors import Actor
from .models import (
    OPEN_CANDIDATE_STATUSES,
    ActorKind,
    Candidate,
    Entity,
    EntityAlias,
    Kind,
    MemoryScope,
    Reason,
    Source,
    Subject,
)
from .policy.normalize import normalize_text, slugify_entity_id
from .publication import projected_facts
from .domain import CandidateInput
from .services.candidates import candidates_submit

logger = logging.getLogger(__name__)

LEGACY_EXTRACTOR = "legacy-entity-store"
LEGACY_ACTOR = Actor(ActorKind.SYSTEM, LEGACY_EXTRACTOR)


class GovernedEntityStore(BaseEntityStore):
    model_config = ConfigDict(arbitrary_types_allowed=True)

    tenant: Any
    user_id: str
    entity_type: str = "project"
    summary_field: str = "summary"
    # Between "ask the subject" (0.8) and "auto-approve" (0.95) by default: a summary is
    # exactly what SPEC's introduction says must not reach agents unreviewed.
    confidence: float = 0.85
    source: str = Source.CHAT
    actor: Any = LEGACY_ACTOR

    # --- reading --------------------------------------------------------------------------

    def _subject(self) -> Subject | None:
        return Subject.objects.filter(tenant=self.tenant, user_id=self.user_id).first()

    def _entity(self, subject: Subject, name: str) -> Entity | None:
        alias = (
            EntityAlias.objects.filter(subject=subject, normalized=normalize_text(name))
            .select_related("entity")
            .order_by("entity_id")
            .first()
        )
        if alias is not None:
            return alias.entity
        return Entity.objects.filter(subject=subject, entity_id=slugify_entity_id(name)).order_by("pk").first()

    def get(self, key: str, default: str | None = None) -> str | None:
        subject = self._subject()
        entity = self._entity(subject, key) if subject else None
        if entity is None:
            return default
        facts = projected_facts([subject.pk]).filter(entity=entity)
        line = "; ".join(f"{fact.field}: {fact.value}" for fact in facts)
        return line or default

    def exists(self, key: str) -> bool:
        return self.get(key) is not None

    # --- writing --------------------------------------------------------------------------

    def set(self, key: str, value: str | None) -> None:
        summary = (value or "").strip()
        if not summary or not key.strip():
            return
        subject = self._subject()
        entity = self._entity(subject, key) if subject else None
        entity_type = entity.entity_type if entity else self.entity_type
        entity_id = entity.entity_id if entity else slugify_entity_id(key)
        if subject is not None and self._already_waiting(subject, entity_type, entity_id, summary):
            return
        result = candidates_submit(
            tenant=self.tenant,
            user_id=self.user_id,
            candidates=[
                CandidateInput(
                    entity_type=entity_type,
                    entity_id=entity_id,
                    entity_name=key.strip(),
                    field=self.summary_field,
                    value=summary,
                    confidence=self.confidence,
                    kind=Kind.FACT,
                    scope=MemoryScope.LONG_TERM,
                )
            ],
            source=self.source,
            actor=self.actor,
            extractor=LEGACY_EXTRACTOR,
        )[0]
        if result.reason == Reason.FIELD_NOT_ALLOWED:
            logger.warning(
                "Legacy entity summary refused: the schema of tenant %s has no field %s.%s",
                self.tenant.slug,
                entity_type,
                self.summary_field,
            )

    def _already_waiting(self, subject: Subject, entity_type: str, entity_id: str, summary: str) -> bool:
        """The chain re-sets every entity on every turn: one open candidate per summary."""
        return Candidate.objects.filter(
            subject=subject,
            entity_type=entity_type,
            entity_ref_id=entity_id,
            field=self.summary_field,
            value=summary,
            status__in=OPEN_CANDIDATE_STATUSES,
        ).exists()

    def delete(self, key: str) -> None:
        logger.info("Legacy entity store: delete(%r) ignored; facts are deleted by the subject or an admin.", key)

    def clear(self) -> None:
        logger.info("Legacy entity store: clear() ignored; facts are deleted by the subject or an admin.")
