"""Memory poisoning: what a reviewer cannot see, or what speaks to the agent (SPEC §3).

Three checks, each a module beside this one, run on every text that can become or
explain a fact (a candidate's value, evidence and entity name):

- ``characters``: invisible and deceptive characters (format characters, bidirectional
  controls, tag characters, variation-selector runs) are removed from what is stored and
  published, the original kept escaped (``Par⟨U+200B⟩is``) for the reviewer:
  ``hidden_characters``;
- ``confusables``: a word mixing scripts into a look-alike (TR39): ``confusable``;
- ``instructions``: a value addressed to the agent rather than describing the subject:
  ``instruction_like``.

:func:`inspect_text` runs the three and says what it found and why; the candidate
service stores the flags with the grounding flags and the explanation beside them, and
the policy keeps any flagged candidate for a person (reviews/policy.py).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..models.choices import CandidateFlag
from .characters import escape_hidden, find_hidden, remove_hidden, transform_around_hidden
from .confusables import confusable_words
from .instructions import score as instruction_score

__all__ = ["Inspection", "inspect_text", "escape_hidden", "remove_hidden", "transform_around_hidden",
           "confusable_words", "instruction_score"]


@dataclass(frozen=True)
class Inspection:
    """One text after the checks: ``clean`` is what may be stored and published."""

    clean: str
    escaped: str = ""  # the original with its hidden characters written out; "" when it had none
    confusable: tuple[str, ...] = ()
    instruction_reasons: tuple[str, ...] = ()
    flags: tuple[str, ...] = field(default=())


def inspect_text(text: str, *, instructions: bool = True) -> Inspection:
    """The checks on one text; ``instructions=False`` for a name, which gives no orders."""
    hidden = find_hidden(text or "")
    flags = []
    escaped = ""
    if hidden.found:
        flags.append(CandidateFlag.HIDDEN_CHARACTERS)
        escaped = escape_hidden(text)
    words = confusable_words(hidden.clean)
    if words:
        flags.append(CandidateFlag.CONFUSABLE)
    reasons: tuple[str, ...] = ()
    if instructions:
        scored = instruction_score(hidden.clean)
        if scored.instruction_like:
            flags.append(CandidateFlag.INSTRUCTION_LIKE)
            reasons = scored.reasons
    return Inspection(hidden.clean, escaped, words, reasons, tuple(flags))
