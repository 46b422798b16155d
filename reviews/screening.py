"""How the service boundary treats a value, declared where the value is declared.

A write service's parameter (or a field of a dataclass it takes) that may carry text
says what it is with a :data:`typing.Annotated` marker::

    def fact_edit(*, value: Correction, reason: Text = "", user_id: Identifier = "", ...)
    password: Annotated[str, Verbatim("Django keeps only its hash; masking would change it")]

:mod:`reviews.services.boundary` reads the markers with
``typing.get_type_hints(include_extras=True)``; a parameter's *name* plays no part, so a
renamed parameter keeps its treatment and a new one without a marker stops the project
at import. This module sits below services, selectors, extraction and the domain types
so that each can declare its own inputs without importing the boundary.
"""
from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Annotated


class Screen(enum.Enum):
    """What the boundary does to a value before a service's body sees it."""

    # Free text kept as written with every credential masked (values, notes, reasons,
    # recall queries; vocabulary members and schema names too: masking never changes a
    # valid member, and an invalid one is refused by the service anyway).
    TEXT = "text"
    # Text proposed to become or explain a fact (a candidate's value, evidence, entity
    # name): masked like TEXT, and also cleared of invisible and deceptive characters
    # (reviews.poisoning), which the candidate is flagged for.
    FACT_TEXT = "fact_text"
    # The host application's ids (SPEC §1): refused when malformed.
    IDENTIFIER = "identifier"
    # An id that may be left empty even where the field has no default (an entity
    # resolved from its name instead).
    OPTIONAL_IDENTIFIER = "optional_identifier"
    # What a person types to become published or configuration: refused when it holds a
    # credential (a correction that would publish "[redacted …]" helps nobody).
    CORRECTION = "correction"


@dataclass(frozen=True)
class Verbatim:
    """Passed as it is, for the reason given (a password Django hashes, a signed token)."""

    why: str

    def __post_init__(self):
        if not self.why.strip():
            raise ValueError("Verbatim needs a reason: why may this text pass unscreened?")


Text = Annotated[str, Screen.TEXT]
FactText = Annotated[str, Screen.FACT_TEXT]
Identifier = Annotated[str, Screen.IDENTIFIER]
Correction = Annotated[str, Screen.CORRECTION]
