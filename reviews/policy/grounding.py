"""Grounding (SPEC §3): is a candidate supported by the message it names, and is that
message the subject's own?

:func:`grounding_flags` is pure. The candidate service calls it beside the credentials
step with the stored (masked) source message, and the policy keeps a flagged candidate
from any automatic outcome: at best it waits in ``pending_review`` with its flags shown.

- ``unsupported``: the evidence is not a span of the message (width, case and spacing
  aside), or the value shares no normalised token with the evidence. Chinese text has no
  spaces, so its tokens are character pairs; an entity reference (``project:billing``)
  is compared by its name, and the evidence is also read through the project-name
  glossary, so "计费项目" supports ``project:billing``.
- ``not_from_user``: the message was written by the assistant, a tool or the system, or
  by another subject.

A candidate that names no source message has nothing to check; neither has one whose
message is not stored (retention removed it, or it was never sent): the reviewer's card
says the source is missing.
"""
from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from ..extraction.resolve import evidence_occurs, project_entity_id
from ..models import CandidateFlag

_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_CJK_RUN = re.compile(r"[\u3400-\u9fff]+")
_REFERENCE = re.compile(r"^(?:project|organization|user|person|preference):", re.I)
USER_ROLE = "user"


@dataclass(frozen=True)
class SourceMessage:
    """The stored message a candidate names, as grounding needs it."""

    role: str
    content: str
    is_subjects: bool = True


def _tokens(text: str) -> set[str]:
    text = unicodedata.normalize("NFKC", text or "").casefold()
    tokens = set()
    for word in _WORD.findall(text):
        latin = _CJK_RUN.sub(" ", word).split()
        tokens.update(part for part in latin if len(part) > 1 or part.isdigit())
        for run in _CJK_RUN.findall(word):
            tokens.update(run[i : i + 2] for i in range(max(len(run) - 1, 1)))
    return tokens


def value_supported(value: str, evidence: str) -> bool:
    """The value shares a normalised token with the evidence (or its glossary reading)."""
    bare = _REFERENCE.sub("", value or "")
    wanted = _tokens(bare.replace("-", " "))
    if not wanted:
        # A name too short to make a token ("F#", "C", "R"): it must stand in the evidence
        # as a word of its own.
        folded = unicodedata.normalize("NFKC", bare).casefold().strip()
        text = unicodedata.normalize("NFKC", evidence or "").casefold()
        return bool(folded) and re.search(r"(?<!\w)" + re.escape(folded) + r"(?!\w)", text) is not None
    found = _tokens(evidence) | _tokens(project_entity_id(evidence).replace("-", " "))
    return bool(wanted & found)


def grounding_flags(*, value: str, evidence: str, source: SourceMessage | None) -> list[str]:
    """The grounding flags of one candidate against its stored source message."""
    if source is None:
        return []
    flags = []
    if not evidence_occurs(evidence, source.content) or not value_supported(value, evidence):
        flags.append(CandidateFlag.UNSUPPORTED)
    if source.role != USER_ROLE or not source.is_subjects:
        flags.append(CandidateFlag.NOT_FROM_USER)
    return flags
