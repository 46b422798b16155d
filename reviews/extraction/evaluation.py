"""Offline evaluation of an extractor on a labelled data set (SPEC §4, §8 ``eval_extraction``).

A data set is JSON Lines, one item a line::

    {"id": "en-name-1", "messages": [{"role": "user", "content": "..."}, ...] | "text": "...",
     "expect": [{"field": "name" | "fields": ["role", "preference"], "value": "Bob" | ["Bob", "Bobby"],
                 "kind": "fact"?, "scope": "long_term"?, "entity_type": "user"?}],
     "secret": "hunter2"?, "lang": "en"?}

Facts are expected from the last user message; earlier messages are its context, handed
to the extractor exactly as the pipeline hands a thread's history (masked, at most
``HISTORY_MESSAGES``, oldest first). The message itself is masked as at ingest, so a
credential the masking misses and the extractor copies out counts as a leak.

A proposed candidate matches an expectation when its field is one of the accepted fields,
its value compares equal (normalised: width, case, spacing and punctuation aside; an
entity reference ``project:Flask 迁移`` compares by canonical id; for a free-text field —
preferences, scenario records — the expected value is a key phrase the proposed value must
contain, since "keep answers short" and "answers short" say the same) and its kind and scope
are the expected ones (by default ``fact``, or ``relation`` for a ``relation:`` field, and
``long_term``). Nothing here touches the database.
"""
from __future__ import annotations

import json
import re
import unicodedata
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from ..models import Category, Kind, MemoryScope
from ..policy.grounding import SourceMessage, grounding_flags
from ..policy.pipeline import RELATION_PREFIX
from ..policy.schema import DEFAULT_FIELDS
from ..secrets import mask_secrets
from ..domain import CandidateInput
from ..domain import SELF_ALIASES
from ..domain import HISTORY_MESSAGES
from .base import ExtractionContext, ExtractionError, Extractor, KnownEntity, PriorMessage, field_line
from .resolve import canonical_entity_id

EVAL_USER_ID = "eval-user"
EVAL_THREAD_ID = "eval-thread"
# Preferences and scenario records (health, legal matters, finance, status) are free text.
FREE_TEXT_FIELDS = frozenset(
    field_name for _, field_name, _, _, category in DEFAULT_FIELDS if category in (Category.PREFERENCE, Category.SCENARIO)
)
_CJK = re.compile(r"[\u3400-\u9fff]")
_NOT_COMPARED = re.compile(r"[\s\W_]+", re.UNICODE)


class DatasetError(ValueError):
    """A line of the data set is not an item: says which line and why."""


@dataclass(frozen=True)
class Expected:
    fields: tuple[str, ...]
    values: tuple[str, ...]
    kind: str
    scope: str
    entity_type: str = ""

    @property
    def field(self) -> str:
        return self.fields[0]


@dataclass(frozen=True)
class EvalItem:
    id: str
    messages: tuple[tuple[str, str], ...]  # (role, content), the last user message is read
    expect: tuple[Expected, ...]
    secret: str = ""
    lang: str = ""

    @property
    def language(self) -> str:
        if self.lang:
            return self.lang
        return "zh" if _CJK.search(self.target[1]) else "en"

    @property
    def target_index(self) -> int:
        for index in range(len(self.messages) - 1, -1, -1):
            if self.messages[index][0] == "user":
                return index
        return len(self.messages) - 1

    @property
    def target(self) -> tuple[str, str]:
        return self.messages[self.target_index]


def load_dataset(lines: Iterable[str]) -> list[EvalItem]:
    items, seen = [], set()
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            item = _parse_item(json.loads(line))
        except (json.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
            raise DatasetError(f"line {number}: {exc}") from None
        if item.id in seen:
            raise DatasetError(f"line {number}: duplicate id {item.id!r}")
        seen.add(item.id)
        items.append(item)
    return items


def _parse_item(raw: dict) -> EvalItem:
    if not isinstance(raw, dict) or not raw.get("id"):
        raise ValueError("an item is an object with an id")
    if "messages" in raw:
        messages = tuple((str(m["role"]), str(m["content"])) for m in raw["messages"])
    else:
        messages = (("user", str(raw["text"])),)
    if not messages:
        raise ValueError("no message")
    expect = []
    for entry in raw.get("expect") or []:
        fields = tuple(entry["fields"]) if "fields" in entry else (entry["field"],)
        values = tuple(entry["value"]) if isinstance(entry["value"], list) else (entry["value"],)
        if not fields or not values:
            raise ValueError("an expectation needs a field and a value")
        default_kind = Kind.RELATION if fields[0].startswith(RELATION_PREFIX) else Kind.FACT
        kind = entry.get("kind", default_kind)
        scope = entry.get("scope", MemoryScope.LONG_TERM)
        if kind not in Kind.values or scope not in MemoryScope.values:
            raise ValueError(f"unknown kind {kind!r} or scope {scope!r}")
        expect.append(Expected(fields, tuple(map(str, values)), kind, scope, entry.get("entity_type", "")))
    return EvalItem(str(raw["id"]), messages, tuple(expect), str(raw.get("secret") or ""), str(raw.get("lang") or ""))


def default_allowed_fields() -> tuple[str, ...]:
    return tuple(
        field_line(entity_type, field_name, cardinality, sensitivity)
        for entity_type, field_name, cardinality, sensitivity, _ in sorted(DEFAULT_FIELDS)
    )


def item_context(item: EvalItem, *, allowed_fields: tuple[str, ...] = ()) -> ExtractionContext:
    """What the pipeline would hand the extractor for the item's last user message."""
    index = item.target_index
    history = [
        PriorMessage(f"m-{position + 1}", role, mask_secrets(content).text)
        for position, (role, content) in enumerate(item.messages[:index])
    ][-HISTORY_MESSAGES:]
    role, content = item.messages[index]
    return ExtractionContext(
        user_id=EVAL_USER_ID,
        thread_id=EVAL_THREAD_ID,
        message_id=f"m-{index + 1}",
        role=role,
        content=mask_secrets(content).text,
        known_entities=(KnownEntity("user", EVAL_USER_ID, "", (EVAL_USER_ID, *SELF_ALIASES)),),
        thread_history=tuple(history),
        allowed_fields=allowed_fields,
    )


# --- Scoring -------------------------------------------------------------------------------


def comparable_value(value: str) -> str:
    text = unicodedata.normalize("NFKC", value or "").casefold().strip()
    entity_type, colon, name = text.partition(":")
    if colon and entity_type in ("project", "organization", "user", "person") and name:
        return f"{entity_type}:{canonical_entity_id(entity_type, name)}"
    return _NOT_COMPARED.sub("", text)


def _matches(expected: Expected, candidate: CandidateInput) -> bool:
    if candidate.field not in expected.fields:
        return False
    if expected.entity_type and candidate.entity_type != expected.entity_type:
        return False
    if candidate.kind != expected.kind or candidate.scope != expected.scope:
        return False
    value = comparable_value(candidate.value)
    if candidate.field in FREE_TEXT_FIELDS:
        return any(comparable_value(option) in value for option in expected.values)
    return any(comparable_value(option) == value for option in expected.values)


@dataclass
class Tally:
    tp: int = 0
    fp: int = 0
    fn: int = 0

    @property
    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else 1.0

    @property
    def recall(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else 1.0

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0

    def as_dict(self) -> dict:
        return {"tp": self.tp, "fp": self.fp, "fn": self.fn, "precision": round(self.precision, 4),
                "recall": round(self.recall, 4), "f1": round(self.f1, 4)}


@dataclass
class ItemOutcome:
    item: EvalItem
    candidates: list[CandidateInput]
    matched: list[tuple[Expected, CandidateInput]] = field(default_factory=list)
    missed: list[Expected] = field(default_factory=list)
    extra: list[CandidateInput] = field(default_factory=list)
    leaked: bool = False
    error: str = ""
    # Candidates whose evidence is not a span of the (masked) message or does not support
    # the value: the grounding check (reviews/grounding.py) would flag them for review.
    ungrounded: int = 0


def score_item(item: EvalItem, candidates: list[CandidateInput], *, error: str = "") -> ItemOutcome:
    outcome = ItemOutcome(item, candidates, error=error)
    source = SourceMessage(role=item.target[0], content=mask_secrets(item.target[1]).text)
    outcome.ungrounded = sum(
        bool(grounding_flags(value=candidate.value, evidence=candidate.evidence, source=source))
        for candidate in candidates
    )
    unused = list(candidates)
    for expected in item.expect:
        hit = next((candidate for candidate in unused if _matches(expected, candidate)), None)
        if hit is None:
            outcome.missed.append(expected)
        else:
            unused.remove(hit)
            outcome.matched.append((expected, hit))
    outcome.extra = unused
    if item.secret:
        secret = item.secret.casefold()
        outcome.leaked = any(
            secret in text.casefold()
            for candidate in candidates
            for text in (candidate.value, candidate.evidence, candidate.entity_id, candidate.entity_name)
        )
    return outcome


@dataclass
class Report:
    extractor: str
    prompt_version: str
    outcomes: list[ItemOutcome]

    def as_dict(self) -> dict:
        total = Tally()
        breakdowns = {name: defaultdict(Tally) for name in ("by_field", "by_kind", "by_scope", "by_language")}
        quiet_items = noisy_items = noise_candidates = leaks = errors = ungrounded = 0
        for outcome in self.outcomes:
            language = outcome.item.language
            errors += bool(outcome.error)
            leaks += outcome.leaked
            ungrounded += outcome.ungrounded
            for expected, _ in outcome.matched:
                self._count(breakdowns, expected.field, expected.kind, expected.scope, language, "tp")
            for expected in outcome.missed:
                self._count(breakdowns, expected.field, expected.kind, expected.scope, language, "fn")
            for candidate in outcome.extra:
                self._count(breakdowns, candidate.field, candidate.kind, candidate.scope, language, "fp")
            total.tp += len(outcome.matched)
            total.fn += len(outcome.missed)
            total.fp += len(outcome.extra)
            if not outcome.item.expect:
                quiet_items += 1
                noisy_items += bool(outcome.candidates)
                noise_candidates += len(outcome.candidates)
        return {
            "extractor": self.extractor,
            "prompt_version": self.prompt_version,
            "items": len(self.outcomes),
            "expected": total.tp + total.fn,
            "proposed": total.tp + total.fp,
            **{key: value for key, value in total.as_dict().items()},
            # Share of the items that expect nothing on which something was proposed anyway.
            "noise_rate": round(noisy_items / quiet_items, 4) if quiet_items else 0.0,
            "noise_items": noisy_items,
            "noise_candidates": noise_candidates,
            "quiet_items": quiet_items,
            "secret_leaks": leaks,
            "ungrounded": ungrounded,
            "errors": errors,
            **{name: {key: tally.as_dict() for key, tally in sorted(table.items())} for name, table in breakdowns.items()},
        }

    @staticmethod
    def _count(breakdowns, field_name, kind, scope, language, attribute):
        for name, key in (("by_field", field_name), ("by_kind", kind), ("by_scope", scope), ("by_language", language)):
            tally = breakdowns[name][key]
            setattr(tally, attribute, getattr(tally, attribute) + 1)


def evaluate_extractor(
    extractor: Extractor,
    items: list[EvalItem],
    *,
    on_item: Callable[[int], None] | None = None,
) -> Report:
    """Run the extractor over every item; an item the extractor fails on counts its expectations missed."""
    allowed = default_allowed_fields() if getattr(extractor, "reads_fields", True) else ()
    outcomes = []
    for position, item in enumerate(items, start=1):
        try:
            result = extractor.extract(item_context(item, allowed_fields=allowed))
            outcomes.append(score_item(item, result.candidates))
        except ExtractionError as exc:
            outcomes.append(score_item(item, [], error=str(exc)))
        if on_item is not None:
            on_item(position)
    return Report(extractor.name, extractor.prompt_version, outcomes)
