"""Invisible and deceptive characters (SPEC §3 "Poisoning").

What a reviewer cannot see must not reach the agent: a zero-width space splits a word
("Par\u200bis") so that it matches nothing a person would search for, bidirectional
controls make text render in another order than it is read, Unicode tag characters
(U+E0000–E007F) spell ASCII that models read and screens do not ("ASCII smuggling"), and
runs of variation selectors encode bytes the same way. All of them are removed from what
is stored and published; the reviewer sees the original in an escaped form, each hidden
character as ``⟨U+200B⟩``.

Kept, because text needs them and they hide nothing: a single variation selector after a
character (the emoji form of ❤️, an ideographic variant of a name), and the zero-width
joiner between two symbols (the family emoji 👨‍👩‍👧). A run of two or more variation
selectors is removed whole.
"""
from __future__ import annotations

import difflib
import re
import unicodedata
from dataclasses import dataclass

ESCAPE = "⟨U+{code:04X}⟩"
ZERO_WIDTH_JOINER = "\u200d"

# Characters that render as nothing (or reorder what is around them) but are not format
# characters by category: fillers and the combining grapheme joiner.
_INVISIBLE_LETTERS = frozenset("\u034f\u115f\u1160\u3164\uffa0")
_VARIATION_SELECTOR = r"[\ufe00-\ufe0f\U000e0100-\U000e01ef]"
_VARIATION_RUN = re.compile(f"{_VARIATION_SELECTOR}{{2,}}")
# A quick test before the character walk: every format character (Cf) of the BMP and the
# tag block, the fillers, and a variation-selector pair. Most text has none. Written with
# the characters themselves, so PostgreSQL's regular expressions read it too (the
# migration that cleans rows stored before these checks picks its suspects out with it).
SUSPECT = re.compile(
    "[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e\u2060-\u206f"
    "\u3164\ufeff\uffa0\ufff9-\ufffb\U000110bd\U000110cd\U0001bca0-\U0001bca3\U0001d173-\U0001d17a"
    f"\U000e0000-\U000e007f]|{_VARIATION_SELECTOR}{{2,}}"
)


def _is_hidden(character: str) -> bool:
    return unicodedata.category(character) == "Cf" or character in _INVISIBLE_LETTERS


def _joins_symbols(text: str, index: int) -> bool:
    """A zero-width joiner between two symbols (an emoji sequence), not inside a word."""
    before, after = text[index - 1: index], text[index + 1: index + 2]
    # A variation selector may sit between the symbol and the joiner (❤️‍🔥).
    if before and unicodedata.category(before) == "Mn" and index >= 2:
        before = text[index - 2]
    return bool(before and after) and unicodedata.category(before) == "So" and unicodedata.category(after) == "So"


@dataclass(frozen=True)
class Hidden:
    """Where hidden characters were: ``runs`` as (index in the clean text, the characters)."""

    clean: str
    runs: tuple[tuple[int, str], ...]

    @property
    def found(self) -> bool:
        return bool(self.runs)


def find_hidden(text: str) -> Hidden:
    """``text`` without its hidden characters, and what was taken out where."""
    if not text or not SUSPECT.search(text):
        return Hidden(text or "", ())
    variation_runs = {index for match in _VARIATION_RUN.finditer(text) for index in range(*match.span())}
    kept: list[str] = []
    runs: list[tuple[int, str]] = []
    for index, character in enumerate(text):
        hidden = index in variation_runs or (
            _is_hidden(character) and not (character == ZERO_WIDTH_JOINER and _joins_symbols(text, index))
        )
        if not hidden:
            kept.append(character)
            continue
        position = len(kept)
        if runs and runs[-1][0] == position:
            runs[-1] = (position, runs[-1][1] + character)
        else:
            runs.append((position, character))
    return Hidden("".join(kept), tuple(runs))


def remove_hidden(text: str) -> str:
    """``text`` as stored and published: every hidden character removed."""
    return find_hidden(text).clean


def escape_hidden(text: str) -> str:
    """``text`` with each hidden character written out (``Par⟨U+200B⟩is``), for the reviewer."""
    hidden = find_hidden(text)
    if not hidden.found:
        return hidden.clean
    return _with_runs(hidden.clean, hidden.runs, lambda run: "".join(ESCAPE.format(code=ord(c)) for c in run))


def _with_runs(clean: str, runs, render) -> str:
    parts, position = [], 0
    for index, run in runs:
        parts += [clean[position:index], render(run)]
        position = index
    return "".join(parts) + clean[position:]


def transform_around_hidden(text: str, transform) -> str:
    """``transform`` (credential masking) applied to ``text`` as if its hidden characters
    were not there, with them put back where they were.

    A credential split by a zero-width space ("sk-proj-4fQ9\u200bxT2m…") is whole once
    the space is removed; masking the text with the space still in it would miss it and
    removing the space later would publish it. A hidden run inside a span the transform
    replaced goes with the span.
    """
    hidden = find_hidden(text)
    if not hidden.found:
        return transform(text)
    changed = transform(hidden.clean)
    if changed == hidden.clean:
        return text
    return _with_runs(changed, _moved(hidden.clean, changed, hidden.runs), lambda run: run)


def _moved(before: str, after: str, runs) -> list[tuple[int, str]]:
    """The runs' positions in ``after``: kept where the text around them is unchanged,
    dropped inside a replaced span (a placeholder)."""
    # Only spans of ``before`` were replaced (a mask never moves the rest); difflib finds
    # the unchanged stretches. Only a text holding both a credential and hidden characters
    # gets here.
    blocks = difflib.SequenceMatcher(None, before, after, autojunk=False).get_matching_blocks()
    moved = []
    for index, run in runs:
        for start, target, size in blocks:
            # A run at the edge of an unchanged stretch belongs to it (index == start + size).
            if start <= index <= start + size and size:
                moved.append((target + index - start, run))
                break
    return moved
