"""Credential detection and masking (SPEC §3 step 2).

Everything that enters the system as free text (message content, candidate values and
evidence, reviewer edits, notes, recall queries) passes through :func:`mask_secrets`
*before* it is written, logged, put in an exception message or sent to a model; an
identifier that holds one is refused (:func:`contains_secret`). What comes out holds only
a placeholder naming the kind of secret, never any part of it; the words around it stay.

Three detectors, each a module beside this one, find where secrets are:

- ``patterns``: formats that are credentials by their shape (provider keys, JWTs, PEM
  blocks, ``Authorization`` headers, passwords in URLs), one table, one scan;
- ``assignments``: values that a credential name introduces (``DB_PASSWORD=…``,
  ``"apiKey": "…"``, "my password is …", "密码是…"), with the code and prose that only
  talk about credentials left alone;
- ``numbers``: card numbers (Luhn), Chinese resident ids and US SSNs (checksums);
- ``context``: what the others left, judged by its context: a label holding a credential
  word in any case, position or language and a value that is neither an ordinary word nor
  an everyday number, "Bearer …"/"Basic …" whatever the token, a passphrase after a
  password label (one explainable score, :func:`reviews.secrets.context.score_assignment`).

docs/operations.md's "What counts as a credential" lists what is caught and what is not, and
``tests/fixtures/secrets_corpus.jsonl`` holds the examples both ways.
"""
from __future__ import annotations

from dataclasses import dataclass

from .assignments import find_assignments, name_class
from .context import find_in_context
from .found import Found
from .numbers import find_numbers
from .patterns import find_formats

PLACEHOLDER = "[redacted {kind}]"


@dataclass(frozen=True)
class MaskResult:
    text: str
    kinds: tuple[str, ...]

    @property
    def found(self) -> bool:
        return bool(self.kinds)


# Short texts found clean lately, each with its result: the same text is not scanned twice.
# A recall's user id is checked by the API's field and again by the service boundary, and
# agents recall the same subjects, entities and questions over and over; the three scans
# cost a short text 4-7 µs. Only clean texts are kept, so nothing of a credential stays in
# memory; emptied when full (a recall's texts come back within the request).
CLEAN_TEXT_MAX_LENGTH = 200
CLEAN_TEXTS_KEPT = 4096
_clean_texts: dict[str, MaskResult] = {}


def mask_secrets(text: str) -> MaskResult:
    """Replace every credential in ``text`` by a placeholder; report the kinds found."""
    if not text:
        return MaskResult(text or "", ())
    known = _clean_texts.get(text)
    if known is not None:
        return known
    kinds: list[str] = []
    # Shapes first: a provider key after "password=" is named as what it is (api_key), and
    # the name-driven pass then sees a placeholder, not a value.
    masked = _replace(text, find_formats(text), kinds)
    # Context before names: a passphrase is masked whole before the name pass takes its first word.
    masked = _replace(masked, find_in_context(masked), kinds)
    masked = _replace(masked, find_assignments(masked), kinds)
    masked = _replace(masked, find_numbers(masked), kinds)
    result = MaskResult(masked, tuple(dict.fromkeys(kinds)))
    if not kinds and len(text) <= CLEAN_TEXT_MAX_LENGTH:
        if len(_clean_texts) >= CLEAN_TEXTS_KEPT:
            _clean_texts.clear()
        _clean_texts[text] = result
    return result


def contains_secret(text: str) -> bool:
    """Whether ``text`` holds a credential: for values that are refused, not masked (identifiers)."""
    return mask_secrets(text).found


def mask_field_value(field_name: str, value: str) -> MaskResult:
    """Mask a value by what it says and by what field it claims to fill.

    A bare "hunter2" proposed for a field named ``password`` is a credential even though
    the text alone does not say so.
    """
    if value and name_class(field_name or "") is not None:
        return MaskResult(PLACEHOLDER.format(kind="password"), ("password",))
    return mask_secrets(value)


def _replace(text: str, found: list[Found], kinds: list[str]) -> str:
    """Put placeholders where ``found`` says, skipping spans that overlap one already taken."""
    if not found:
        return text
    parts, position = [], 0
    for item in sorted(found, key=lambda f: (f.start, -f.end)):
        if item.start < position or text.startswith("[redacted", item.start):
            continue
        parts += [text[position: item.start], PLACEHOLDER.format(kind=item.kind)]
        position = item.end
        kinds.append(item.kind)
    return "".join(parts) + text[position:]
