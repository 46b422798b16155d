"""Statement patterns as data, one module per language (``en.py``, ``zh.py``).

A :class:`Statement` is one way of saying one thing: a pattern whose group ``v`` is the
value, the field it fills and on which entity (``user``, or ``project``: the project the
conversation is about). Adding a statement type is one entry here plus a labelled item in
``reviews/fixtures/eval/extraction.jsonl``. ``SKIP`` patterns mark sentences that state
nothing about the user (someone else's facts, hypotheticals): the rule extractor reads
nothing from them.

Every pattern is compiled once; ``guard`` is a cheap substring test run first, so a
message pays only for the patterns whose words it contains.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from ...models import Kind


@dataclass(frozen=True)
class Statement:
    field: str
    pattern: re.Pattern
    guard: tuple[str, ...]
    entity: str = "user"  # or "project": the project the conversation is about
    kind: str = Kind.FACT
    supersedes: bool = False
    # The value as stored: the matched group ``v`` unless fixed here ("已上线" for "上线了").
    value: str = ""
    not_values: frozenset[str] = field(default_factory=frozenset)

    def find(self, text: str, lower: str) -> str | None:
        if not any(word in lower for word in self.guard):
            return None
        match = self.pattern.search(text)
        if match is None:
            return None
        found = self.value or match.group("v")
        return None if found.strip().lower() in self.not_values else found


def statement(field_name: str, pattern: str, guard, **extra) -> Statement:
    guard = (guard,) if isinstance(guard, str) else tuple(guard)
    return Statement(field_name, re.compile(pattern), tuple(word.lower() for word in guard), **extra)


def skip(pattern: str) -> re.Pattern:
    return re.compile(pattern)
