"""Hybrid relevance for recall's ``q`` (SPEC §5 "Relevance by meaning"), pure.

Given the facts the recall policy already allows (sensitive, other-thread and unpublished
facts never reach this module), their vectors where they have one, and each one's lexical
score (reviews/recall/textmatch.py, plus ts_rank on PostgreSQL):

    score = cosine(query, fact) + lexical_weight × min(lexical, 1)

A fact with no current embedding (not yet embedded, or the embedder is ``none``) scores
``lexical_weight × lexical`` and passes when any term matches, as recall did before: it is
never dropped for want of a vector. The comparison is exact, a matrix product over the
subject's few hundred vectors at most; no approximate index is needed per subject.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

# Relevant mode folds a fact whose cosine with one already chosen is at least this: the
# same memory said twice ("likes spicy food", "喜欢吃辣") fills one line, not two.
NEAR_DUPLICATE = 0.85
# Maximal marginal relevance's balance between relevance and novelty.
MMR_LAMBDA = 0.7
# Relevant mode returns at most this many facts however many pass: a small context.
RELEVANT_MAX = 8


@dataclass(frozen=True)
class Scored:
    index: int  # the candidate's position in the caller's list
    score: float
    passes: bool  # relevance passes the threshold


def score_candidates(
    *,
    query_vector: np.ndarray | None,
    vectors: list[np.ndarray | None],
    lexical: list[float],
    threshold: float,
    lexical_weight: float,
) -> list[Scored]:
    """Each candidate's hybrid score and whether it bears on the question."""
    scored = []
    has_vector = [i for i, v in enumerate(vectors) if v is not None and query_vector is not None]
    cosines = {}
    if has_vector:
        matrix = np.stack([vectors[i] for i in has_vector])
        for i, cosine in zip(has_vector, (matrix @ query_vector).tolist()):
            cosines[i] = cosine
    for i, lex in enumerate(lexical):
        lexical_part = lexical_weight * min(lex, 1.0)
        if i in cosines:
            score = cosines[i] + lexical_part
            passes = score >= threshold
        else:
            # Without a query vector the lexical score is the whole score, unclipped, so
            # the `none` embedder orders exactly as lexical recall always did.
            score = lexical_part if query_vector is not None else lex
            passes = lex > 0
        scored.append(Scored(i, score, passes))
    return scored


def fold_near_duplicates(
    ranked: list[Scored], vectors: list[np.ndarray | None], *, limit: int
) -> list[Scored]:
    """Maximal marginal relevance over ``ranked`` (best first), near-duplicates folded.

    Each step takes the candidate with the best ``λ·score − (1−λ)·max cosine to those
    already taken``; one whose cosine with a taken fact reaches NEAR_DUPLICATE is dropped.
    Facts without a vector are never folded (nothing says they repeat another).
    """
    chosen: list[Scored] = []
    pool = list(ranked)
    while pool and len(chosen) < limit:
        best, best_value, dropped = None, None, []
        for item in pool:
            vector = vectors[item.index]
            overlap = 0.0
            if vector is not None:
                overlap = max(
                    (float(vector @ vectors[c.index]) for c in chosen if vectors[c.index] is not None),
                    default=0.0,
                )
            if overlap >= NEAR_DUPLICATE:
                dropped.append(item)
                continue
            value = MMR_LAMBDA * item.score - (1 - MMR_LAMBDA) * overlap
            if best_value is None or value > best_value:
                best, best_value = item, value
        gone = {id(item) for item in dropped} | {id(best)}
        pool = [item for item in pool if id(item) not in gone]
        if best is None:
            break
        chosen.append(best)
    return chosen


def rank(
    *,
    query_vector: np.ndarray | None,
    vectors: list[np.ndarray | None],
    lexical: list[float],
    in_default_set: list[bool],
    threshold: float,
    lexical_weight: float,
    relevant: bool,
    limit: int,
) -> list[Scored]:
    """The candidates recall returns, best first (the caller cuts nothing more).

    Normal mode: the default set (the user's and preference facts, named entities) stays
    whatever its score, other facts join when they pass; all in score order, then
    ``limit``. Relevant mode: only facts that pass, near-duplicates folded by maximal
    marginal relevance, at most ``min(limit, RELEVANT_MAX)``. Ties keep the caller's order
    (its order without ``q``).
    """
    scored = score_candidates(
        query_vector=query_vector, vectors=vectors, lexical=lexical,
        threshold=threshold, lexical_weight=lexical_weight,
    )
    if relevant:
        kept = [s for s in scored if s.passes]
    else:
        kept = [s for s in scored if s.passes or in_default_set[s.index]]
    kept.sort(key=lambda s: -s.score)  # stable: ties keep the caller's order
    if relevant:
        return fold_near_duplicates(kept, vectors, limit=min(limit, RELEVANT_MAX))
    return kept[:limit]
