"""Recall's ``q`` by meaning (SPEC §5): the subject's vectors, the query's, one ranking.

Called by the recall selector with the rows the policy already allows, so sensitive,
other-thread and unpublished facts are never candidates here. Each candidate arrives with
its stored embedding under the current embedder, read by the recall statement itself
(reviews/recall/query.py), so ``q`` costs no second round trip; a vector is used only if
it was made from the fact's current text, and any other fact ranks lexically. The query
is embedded once per process and question (the embedder's cache). A remote embedder that
does not answer degrades recall to lexical ranking, never to an error.
"""
from __future__ import annotations

import logging
from collections.abc import Sequence
from functools import lru_cache

import numpy as np

from ..embeddings.embedders import Embedder, EmbedderUnavailable, configured_embedder
from ..embeddings.ranking import Scored, rank
from ..embeddings.sync import text_digest
from ..embeddings.text import fact_text
from ..models.embeddings import vector_from_bytes

logger = logging.getLogger(__name__)


@lru_cache(maxsize=16384)
def current_digest(entity_type: str, field: str, value: str, entity_name: str) -> str:
    """The digest of the text a fact embeds now. Cached: building the text switches the
    active language for its label (about 70 µs a fact), and recall asks it of every
    candidate of every ``q``; the same fact's text is asked again and again."""
    return text_digest(fact_text(entity_type=entity_type, field=field, value=value, entity_name=entity_name))


def current_vectors(candidates: Sequence[dict]) -> list[np.ndarray | None]:
    """Each candidate's vector if it is current (its digest matches the fact's text now)."""
    vectors = []
    for c in candidates:
        stored = c.get("embedding")
        current = stored is not None and c["embedding_digest"] == current_digest(
            c["entity_type"], c["field"], c["value"], c["entity_name"])
        vectors.append(vector_from_bytes(stored, c["embedding_dimensions"]) if current else None)
    return vectors


def rank_by_relevance(
    *,
    q: str,
    candidates: Sequence[dict],
    relevant: bool,
    limit: int,
    embedder: Embedder | None = None,
) -> list[Scored]:
    """Order recall's allowed candidates for ``q``.

    Each candidate: ``id``, ``entity_type``, ``field``, ``value``, ``entity_name``,
    ``lexical`` (its lexical relevance), ``default`` (in the default set: the user's
    facts, preferences, a named entity) and ``embedding_digest``, ``embedding`` and
    ``embedding_dimensions`` (its stored vector's digest, bytes and length under the
    current embedder, or None). Returns the
    chosen ones, best first (``index`` into ``candidates``), at most ``limit``.
    """
    embedder = embedder or configured_embedder()
    question = None
    if embedder.enabled and q.strip():
        try:
            question = embedder.embed_question(q)
        except EmbedderUnavailable as error:
            logger.warning("embedder %s unavailable, recall ranks lexically: %s", embedder.key, error)
    vectors = current_vectors(candidates) if question is not None else [None] * len(candidates)
    return rank(
        query_vector=question.vector if question is not None else None,
        vectors=vectors,
        lexical=[c["lexical"] for c in candidates],
        in_default_set=[c["default"] for c in candidates],
        threshold=question.bar if question is not None else embedder.threshold,
        lexical_weight=embedder.lexical_weight if question is not None else 0.0,
        relevant=relevant,
        limit=limit,
    )
