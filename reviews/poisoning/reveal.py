"""What a reviewer is shown of a text: segments a template renders (templates/reviews/
_revealed_text.html), hidden characters written out and marked, look-alike words marked.

Python builds the data, the template builds the HTML (STYLE.md "Markup lives in templates").
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from .characters import escape_hidden
from .confusables import confusable_words

_ESCAPED = re.compile(r"((?:⟨U\+[0-9A-F]{4,6}⟩)+)")


@dataclass(frozen=True)
class Segment:
    text: str
    hidden: bool = False  # a hidden character, written out (⟨U+200B⟩): removed from what is published
    confusable: bool = False  # a word mixing scripts into a look-alike


def revealed_segments(text: str, *, escaped: str = "", confusable: tuple[str, ...] | list[str] | None = None):
    """``text`` as segments; ``escaped`` is its original with hidden characters written out
    (a candidate's ``flag_details``); without it the text itself is escaped (a fact or an
    audit value stored before hidden characters were removed), and without ``confusable``
    its look-alike words are found here."""
    source = escaped or escape_hidden(text or "")
    words = tuple(confusable) if confusable is not None else confusable_words(text or "")
    segments: list[Segment] = []
    for index, part in enumerate(_ESCAPED.split(source)):
        if not part:
            continue
        if index % 2:
            segments.append(Segment(part, hidden=True))
        else:
            segments.extend(_marked(part, words))
    return segments


def _marked(text: str, words) -> list[Segment]:
    if not words:
        return [Segment(text)]
    pattern = re.compile("(" + "|".join(re.escape(word) for word in sorted(words, key=len, reverse=True)) + ")")
    return [Segment(part, confusable=bool(index % 2)) for index, part in enumerate(pattern.split(text)) if part]
