"""Recall's ``q`` by meaning (SPEC §5): the subject's vectors, the query's, one ranking.

Called by the recall selector with the rows the policy already allows, so sensitive,
other-thread and unpublished facts are never candidates here. The vectors are read in
one statement by fact id (the subject's facts, tens to hundreds), and one is used only
if the current embedder made it from the fact's current text; any other fact ranks
lexically. The query is embedded once per process and question (the embedder's cache).
A remote embedder that does not answer degrades recall to lexical ranking, never to an
error.
"""
from __future__ import annotations

import logging
from collections.abc import Sequence

import numpy as np

from ..embeddings.embedders import Embedder, EmbedderUnavailable, configured_embedder
from ..embeddings.ranking import Scored, rank
from ..embeddings.sync import text_digest
from ..embeddings.text import fact_text
from ..models import FactEmbedding
from ..models.embeddings import vector_from_bytes

logger = logging.getLogger(__name__)


def current_vectors(
    *, embedder: Embedder, facts: Sequence[tuple[int, str]], using: str
) -> list[np.ndarray | None]:
    """Each fact's vector if it is current; ``facts`` are (id, text) pairs."""
    if not embedder.enabled or not facts:
        return [None] * len(facts)
    stored = {
        fact_id: (digest, vector)
        for fact_id, digest, vector in FactEmbedding.objects.using(using)
        .filter(fact_id__in=[fact_id for fact_id, _ in facts], embedder=embedder.key)
        .values_list("fact_id", "text_digest", "vector")
    }
    vectors = []
    for fact_id, text in facts:
        found = stored.get(fact_id)
        vectors.append(vector_from_bytes(found[1]) if found and found[0] == text_digest(text) else None)
    return vectors


def rank_by_relevance(
    *,
    q: str,
    candidates: Sequence[dict],
    relevant: bool,
    limit: int,
    using: str,
    embedder: Embedder | None = None,
) -> list[Scored]:
    """Order recall's allowed candidates for ``q``.

    Each candidate: ``id``, ``entity_type``, ``field``, ``value``, ``entity_name``,
    ``lexical`` (its lexical relevance) and ``default`` (in the default set: the user's
    facts, preferences, a named entity). Returns the chosen ones, best first (``index``
    into ``candidates``), at most ``limit``.
    """
    embedder = embedder or configured_embedder()
    query_vector = None
    if embedder.enabled and q.strip():
        try:
            query_vector = embedder.embed_query(q)
        except EmbedderUnavailable as error:
            logger.warning("embedder %s unavailable, recall ranks lexically: %s", embedder.key, error)
    vectors = [None] * len(candidates)
    if query_vector is not None:
        vectors = current_vectors(
            embedder=embedder,
            facts=[(c["id"], fact_text(entity_type=c["entity_type"], field=c["field"], value=c["value"],
                                       entity_name=c["entity_name"])) for c in candidates],
            using=using,
        )
    return rank(
        query_vector=query_vector,
        vectors=vectors,
        lexical=[c["lexical"] for c in candidates],
        in_default_set=[c["default"] for c in candidates],
        threshold=embedder.threshold,
        lexical_weight=embedder.lexical_weight if query_vector is not None else 0.0,
        relevant=relevant,
        limit=limit,
    )
