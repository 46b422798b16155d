from dataclasses import dataclass


@dataclass(frozen=True)
class Found:
    """Where a secret is in a text (``text[start:end]``) and which placeholder replaces it."""

    start: int
    end: int
    kind: str
