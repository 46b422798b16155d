"""``manage.py eval_recall``'s measurement, without the database (SPEC §8).

Each item's facts are held in memory; the recall policy's filters are applied as recall
applies them (sensitive facts are not asked for, a thread-scoped fact only in its thread,
only published facts), then the same ranking as recall (reviews/embeddings/ranking.py, through reviews/recall/relevance.py)
orders what is left. Lexical relevance here is the portable part (reviews/recall/textmatch.py);
PostgreSQL's ts_rank is added in production on top.

The set is split by a fixed seed into a tuning part and a held-aside part
(:func:`held_aside`): thresholds and weights are set on the first only.
"""
from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from ..embeddings.embedders import Embedder
from ..embeddings.ranking import rank
from ..embeddings.text import Lang, fact_text, text_language
from .textmatch import fallback_score, query_terms

SPLIT_SEED = "recall-eval-2026"
HELD_ASIDE_SHARE = 3  # one item in three


class Part:
    ALL = "all"
    TUNING = "tuning"
    HELD_ASIDE = "held_aside"


class Kind:
    """What a question tests; derived from the question and its expected fact."""

    LEXICAL = "lexical"  # shares words with the fact
    PARAPHRASE = "paraphrase"  # same language, no shared word
    CROSS = "cross"  # English question, Chinese fact, or the other way round
    GUARD = "guard"  # only a fact recall must withhold answers it
    UNRELATED = "unrelated"  # the memory has no bearing on it


def held_aside(item_id: str) -> bool:
    digest = hashlib.sha256(f"{SPLIT_SEED}:{item_id}".encode()).digest()
    return digest[0] % HELD_ASIDE_SHARE == 0


def load_items(lines: Iterable[str], part: str = Part.ALL) -> list[dict]:
    items = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except json.JSONDecodeError as error:
            raise ValueError(f"line {number}: not JSON ({error.msg})") from error
        if not isinstance(item, dict) or not isinstance(item.get("facts"), list) or not isinstance(item.get("queries"), list):
            raise ValueError(f"line {number}: an item needs 'facts' and 'queries' lists")
        item.setdefault("id", str(number))  # the split is by id: an item without one goes by its line
        if part == Part.ALL or (part == Part.HELD_ASIDE) == held_aside(str(item["id"])):
            items.append(item)
    return items


def _published(fact: dict) -> bool:
    return fact.get("status", "active") in ("active", "approved", "auto_approved")


def _allowed(fact: dict, query: dict) -> bool:
    """SPEC §5's filters, as recall applies them to a caller that did not ask for sensitive facts."""
    if not _published(fact) or fact.get("sensitivity") == "sensitive":
        return False
    return fact.get("scope") != "thread" or fact.get("thread_id") == query.get("thread_id", "")


def _in_default_set(fact: dict) -> bool:
    return fact["entity_type"] in ("user", "preference") or fact["field"] == "preference"


@dataclass
class Tally:
    queries: int = 0
    at_1: float = 0.0
    at_3: float = 0.0
    at_5: float = 0.0
    reciprocal: float = 0.0

    def add(self, ranked_values: list[str], expect: list[str]) -> None:
        self.queries += 1
        wanted = set(expect)
        for k in (1, 3, 5):
            found = len(wanted & set(ranked_values[:k])) / len(wanted)
            setattr(self, f"at_{k}", getattr(self, f"at_{k}") + found)
        rank_of_first = next((i for i, v in enumerate(ranked_values, 1) if v in wanted), None)
        self.reciprocal += 1 / rank_of_first if rank_of_first else 0.0

    def as_dict(self) -> dict:
        n = self.queries or 1
        return {
            "queries": self.queries,
            "recall_at_1": round(self.at_1 / n, 3),
            "recall_at_3": round(self.at_3 / n, 3),
            "recall_at_5": round(self.at_5 / n, 3),
            "mrr": round(self.reciprocal / n, 3),
        }


@dataclass
class Report:
    overall: Tally = field(default_factory=Tally)
    by_lang: dict[str, Tally] = field(default_factory=lambda: defaultdict(Tally))
    by_kind: dict[str, Tally] = field(default_factory=lambda: defaultdict(Tally))
    relevant: Tally = field(default_factory=Tally)  # answerable questions, relevant mode
    unrelated: int = 0
    unrelated_empty: int = 0  # unrelated questions that got nothing in relevant mode
    guards: int = 0
    forbidden_leaks: int = 0
    # Relevant mode on each part of the split, so one run shows the held-aside figure
    # beside the tuning one it was calibrated on.
    relevant_by_part: dict[str, Tally] = field(default_factory=lambda: defaultdict(Tally))
    unrelated_by_part: dict[str, list[int]] = field(default_factory=lambda: defaultdict(lambda: [0, 0]))

    def as_dict(self) -> dict:
        return {
            **self.overall.as_dict(),
            "by_lang": {pair: tally.as_dict() for pair, tally in sorted(self.by_lang.items())},
            "by_kind": {kind: tally.as_dict() for kind, tally in sorted(self.by_kind.items())},
            "cross_language": self.by_kind.get(Kind.CROSS, Tally()).as_dict(),
            "relevant_mode": self.relevant.as_dict(),
            "unrelated": self.unrelated,
            "unrelated_empty_when_relevant": self.unrelated_empty,
            "guards": self.guards,
            "forbidden_leaks": self.forbidden_leaks,
            "relevant_mode_by_part": {
                part: {**tally.as_dict(), "unrelated": self.unrelated_by_part[part][0],
                       "unrelated_empty_when_relevant": self.unrelated_by_part[part][1]}
                for part, tally in sorted(self.relevant_by_part.items())
            },
        }


def query_kind(query: dict, expected_fact_text: str, fact_language: str) -> str:
    if query.get("kind") in (Kind.GUARD, Kind.UNRELATED):
        return query["kind"]
    query_language = text_language(query["q"])
    if Lang.MIXED not in (query_language, fact_language) and query_language != fact_language:
        return Kind.CROSS
    return Kind.LEXICAL if fallback_score(expected_fact_text, query_terms(query["q"])) > 0 else Kind.PARAPHRASE


def lexical_haystack(fact: dict) -> str:
    # What recall's fallback scores against (reviews/recall/query.py): value, field, entity id and name.
    return " ".join((fact["value"], fact["field"], fact["entity_id"], fact.get("entity_name", "")))


def load_off_topic(lines: Iterable[str]) -> list[dict]:
    """An off-topic list (reviews/fixtures/eval/off_topic_eval.jsonl): ``kind`` and ``q`` a line."""
    questions = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        question = json.loads(line)
        if not isinstance(question, dict) or not {"kind", "q"} <= set(question):
            raise ValueError(f"line {number}: an off-topic question needs 'kind' and 'q'")
        questions.append(question)
    return questions


def off_topic_refused(items: list[dict], embedder: Embedder, questions: Iterable[str]) -> tuple[int, int]:
    """Each question asked of every subject of ``items``: (answers with nothing in
    relevant mode, questions asked). None of them bears on any subject's memory."""
    questions = list(questions)
    asked = [{**item, "queries": [{"q": q, "expect": [], "kind": Kind.UNRELATED} for q in questions]}
             for item in items]
    report = evaluate(asked, embedder)
    return report.unrelated_empty, report.unrelated


def evaluate(
    items: list[dict], embedder: Embedder, *, progress: Callable[[int], None] | None = None
) -> Report:
    report = Report()
    for item in items:
        part = Part.HELD_ASIDE if held_aside(str(item["id"])) else Part.TUNING
        facts = item["facts"]
        texts = [fact_text(entity_type=f["entity_type"], field=f["field"], value=f["value"],
                           entity_name=f.get("entity_name", "")) for f in facts]
        vectors = list(embedder.embed_documents(texts)) if embedder.enabled else [None] * len(facts)
        for query in item["queries"]:
            allowed = [i for i, f in enumerate(facts) if _allowed(f, query)]
            terms = query_terms(query["q"])
            question = embedder.embed_question(query["q"]) if embedder.enabled else None
            common = dict(
                query_vector=question.vector if question else None,
                vectors=[vectors[i] for i in allowed],
                lexical=[fallback_score(lexical_haystack(facts[i]), terms) for i in allowed],
                in_default_set=[_in_default_set(facts[i]) for i in allowed],
                threshold=question.bar if question else embedder.threshold,
                lexical_weight=embedder.lexical_weight,
                limit=5,
            )
            ranked = [facts[allowed[s.index]]["value"] for s in rank(**common, relevant=False)]
            relevant = [facts[allowed[s.index]]["value"] for s in rank(**common, relevant=True)]
            forbid = set(query.get("forbid", ()))
            if query.get("kind") == Kind.GUARD:
                report.guards += 1
            report.forbidden_leaks += len(forbid & (set(ranked) | set(relevant)))
            expect = query.get("expect") or []
            if not expect:
                if query.get("kind") == Kind.UNRELATED:
                    report.unrelated += 1
                    report.unrelated_empty += not relevant
                    report.unrelated_by_part[part][0] += 1
                    report.unrelated_by_part[part][1] += not relevant
                continue
            expected = next(i for i, f in enumerate(facts) if f["value"] == expect[0])
            fact_language = text_language(facts[expected]["value"])
            pair = f"{text_language(query['q'])}->{fact_language}"
            kind = query_kind(query, lexical_haystack(facts[expected]), fact_language)
            for tally in (report.overall, report.by_lang[pair], report.by_kind[kind]):
                tally.add(ranked, expect)
            report.relevant.add(relevant, expect)
            report.relevant_by_part[part].add(relevant, expect)
        if progress:
            progress(1)
    return report
