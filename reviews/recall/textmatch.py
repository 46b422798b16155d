"""Text relevance for recall's ``q``, pure: the fallback beside PostgreSQL full text.

PostgreSQL's ``simple`` text-search parser splits on spaces and punctuation, so a
Chinese sentence is one long token and "数据库" never matches "我们的数据库是PostgreSQL".
Here a query becomes Latin-script words (matched as substrings of the normalised text)
and, for runs of CJK characters, overlapping character pairs (bigrams), the usual way to
search CJK text without a dictionary. On SQLite this is the whole ranking; on PostgreSQL
it is added to ``ts_rank``.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from ..policy.normalize import normalize_text

MAX_TERMS = 32
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
_CJK_RUN = re.compile(f"[{_CJK}]+")
_WORD = re.compile(rf"[^\W{_CJK}]+")


@dataclass(frozen=True)
class QueryTerms:
    words: tuple[str, ...]
    bigrams: tuple[str, ...]

    def __bool__(self) -> bool:
        return bool(self.words or self.bigrams)


def query_terms(q: str) -> QueryTerms:
    text = normalize_text(q)
    words = tuple(dict.fromkeys(w for w in _WORD.findall(text) if len(w) >= 2 or w.isdigit()))[:MAX_TERMS]
    bigrams: list[str] = []
    for run in _CJK_RUN.findall(text):
        pairs = [run] if len(run) == 1 else [run[i : i + 2] for i in range(len(run) - 1)]
        bigrams.extend(pairs)
    return QueryTerms(words, tuple(dict.fromkeys(bigrams))[:MAX_TERMS])


def fallback_score(haystack: str, terms: QueryTerms) -> float:
    """Share of the query's terms found in ``haystack`` (0 when it does not match).

    A CJK query needs two of its character pairs (or its only one) to match, so a
    common pair such as "什么" alone does not pull in unrelated facts.
    """
    if not terms:
        return 0.0
    text = normalize_text(haystack)
    word_hits = sum(1 for word in terms.words if word in text)
    pair_hits = sum(1 for pair in terms.bigrams if pair in text)
    if pair_hits < min(2, len(terms.bigrams)):
        pair_hits = 0
    if not (word_hits or pair_hits):
        return 0.0
    return (word_hits + pair_hits) / (len(terms.words) + len(terms.bigrams))
