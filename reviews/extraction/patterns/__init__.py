"""Statement patterns as data, one module per language (``en.py``, ``zh.py``).

A :class:`Statement` is one way of saying one thing: a pattern whose group ``v`` is the
value (or, for a scenario record such as a health matter, the clause or sentence that says
it), the field it fills and on which entity (``user``; ``organization``: with field
``name`` the organisation the user works at, else the one just named; ``project``: the
project the conversation is about). Adding a statement type is one entry here plus a
labelled item in ``reviews/fixtures/eval/extraction.jsonl``. ``SKIP`` patterns mark
sentences that state nothing about the user (someone else's facts, hypotheticals): the
rule extractor reads nothing from them. ``MARKERS`` are the words the reader's few
procedures look for (plans, corrections, what a project uses, what makes a request a
preference and a one-off one thread-scoped); ``PROJECT`` says how a project is named.

Every pattern is compiled once; ``guard`` is a cheap substring test run first, so a
message pays only for the patterns whose words it contains, and a language's statements
are tried only on sentences written in its script.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from ...models import Kind

# How fixed the phrasing is: the policy auto-approves only the former (SPEC §3 step 8).
EXPLICIT = 0.95
STATED = 0.9

# What a statement takes as its value.
VALUE = "value"  # the pattern's group ``v`` (or the entry's fixed ``value``)
SENTENCE = "sentence"  # the whole sentence, without a leading "I"/"我": a scenario record
CLAUSE = "clause"  # each clause the pattern matches in, likewise

# Letters of the Latin script with their accents (Zoë, Łukasz, Ayşe), not only ASCII: a name
# is found by where it stands, never by looking English.
LATIN_LETTER = r"[A-Za-zÀ-ÖØ-öø-ɏ]"
LATIN_UPPER = r"[A-ZÀ-ÖØ-ÞĀ-ɏ]"
NAME_LATIN = LATIN_UPPER + r"(?:" + LATIN_LETTER + r"|['’-]){1,30}"


@dataclass(frozen=True)
class Statement:
    field: str
    pattern: re.Pattern
    guard: tuple[str, ...]  # any of these (lower case) in the sentence, or the pattern is not tried
    entity: str = "user"  # or "organization", "project" (see the module's docstring)
    kind: str = Kind.FACT
    supersedes: bool = False
    # The value as stored: the matched group ``v`` unless fixed here ("已上线" for "上线了").
    value: str = ""
    not_values: frozenset[str] = field(default_factory=frozenset)
    confidence: float = STATED
    takes: str = VALUE
    # Statements naming the same ``first_of`` are alternatives: the first that matches a sentence wins.
    first_of: str = ""
    # A pattern the sentence must also contain (a first-person word), when ``pattern`` does not.
    requires: re.Pattern | None = None

    def find(self, text: str) -> str | None:
        match = self.pattern.search(text)
        if match is None:
            return None
        found = self.value or (match.group("v") if self.takes == VALUE else match.group(0))
        return None if found.strip().lower() in self.not_values else found


def statement(field_name: str, pattern: str, guard=(), **extra) -> Statement:
    guard = (guard,) if isinstance(guard, str) else tuple(guard)
    requires = extra.pop("requires", None)
    if isinstance(requires, str):
        requires = re.compile(requires)
    return Statement(field_name, re.compile(pattern), tuple(word.lower() for word in guard), requires=requires, **extra)


def skip(pattern: str) -> re.Pattern:
    return re.compile(pattern)


@dataclass(frozen=True)
class ProjectNaming:
    """How a language names a project: ``pattern`` has a group ``name`` and a group ``kind``
    ("支付项目", "the billing service"); the words of ``strip`` are trimmed off the front of
    the name, a name starting with one of ``not_names`` names none, and a bare kind word
    ("项目使用 MySQL") means the project just named when ``bare_means_current``."""

    pattern: re.Pattern
    guard: tuple[str, ...]
    joiner: str = ""
    strip: tuple[str, ...] = ()
    not_names: frozenset[str] = field(default_factory=frozenset)
    bare_means_current: bool = False

    def mentioned(self, text: str, lower: str) -> bool:
        return any(word in lower for word in self.guard) and self.pattern.search(text) is not None
