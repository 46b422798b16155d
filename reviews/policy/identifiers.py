"""SPEC §1 identifiers (``user_id``, ``entity_id``, ``thread_id``, message ``id``): 1–128
printable characters, no credential inside. One rule, read by the API's fields, the pages'
forms and the services (through reviews/services/boundary.py).

Identifiers are stored verbatim, shown on pages, put in URL paths and hashed into the
audit chain (``user_id``), so they cannot be masked or blanked later: one that breaks the
rule is refused (400), never stored.
"""
import re

from django.utils import translation
from django.utils.translation import gettext_lazy

from ..errors import InvalidInput
from ..secrets import mask_secrets

MAX_IDENTIFIER_LENGTH = 128
REPLACEMENT_CHARACTER = "\ufffd"

# A run of digits is what numeric ids (snowflakes, order numbers) look like, and one in
# ten passes the Luhn check by chance: checksummed numbers are credentials in prose, not
# when they are the whole id.
_DIGITS = re.compile(r"\d+")
_CHECKSUM_KINDS = {"card_number", "national_id"}

# Lazy: the pages show them in the reader's language (page_refusal); the API, the MCP
# server and the services answer in English, as with every other message of theirs
# (refusal_message). ``{name}`` is what was refused, ``{max}`` the length allowed.
_PROBLEMS = {
    "not_a_string": gettext_lazy("{name} must be a string."),
    "empty": gettext_lazy("{name} must not be empty."),
    "too_long": gettext_lazy("{name} must be at most {max} characters."),
    "not_printable": gettext_lazy("{name} must contain printable characters only (no control characters)."),
    "not_utf8": gettext_lazy("{name} holds U+FFFD, the mark of bytes that were not UTF-8: send it encoded as UTF-8."),
    "secret_detected": gettext_lazy("{name} must not contain a credential; nothing was stored."),
}


def identifier_problem(value) -> str | None:
    """Why ``value`` is not a well-formed identifier (a key of the error details), or None.

    Printable (``str.isprintable``): no control characters (NUL, newlines, tabs), no
    invisible formatting characters (right-to-left overrides, zero-width spaces), no lone
    surrogates. The space is allowed inside, not as the whole identifier. No U+FFFD either:
    Django decodes a query string or a form's bytes that are not UTF-8 (``M%FCller``, Latin-1)
    into that replacement character, and the identifier would silently be another one.
    """
    if not isinstance(value, str):
        return "not_a_string"
    if not value.strip():
        return "empty"
    if len(value) > MAX_IDENTIFIER_LENGTH:
        return "too_long"
    if not value.isprintable():
        return "not_printable"
    if REPLACEMENT_CHARACTER in value:
        return "not_utf8"
    kinds = set(mask_secrets(value).kinds)
    if _DIGITS.fullmatch(value):
        kinds -= _CHECKSUM_KINDS
    if kinds:
        return "secret_detected"
    return None


def page_refusal(problem: str, name: str) -> str:
    """Why an identifier was refused, in the active language: what a page shows beside the
    field. ``name`` says what was refused, already in that language (a lazy string)."""
    return str(_PROBLEMS[problem]).format(name=name, max=MAX_IDENTIFIER_LENGTH)


def refusal_message(problem: str, name: str) -> str:
    """Why an identifier was refused, in English whatever the request's language: the API's,
    the MCP server's and the services' messages are English, and ``name`` is the field's
    name in the request (``user_id``), not a word to translate."""
    with translation.override(None):
        return page_refusal(problem, name)


def validate_identifier(value, *, name: str) -> str:
    """``value`` if it is a well-formed identifier; else ``InvalidInput`` naming ``name``."""
    problem = identifier_problem(value)
    if problem is not None:
        raise InvalidInput(refusal_message(problem, name), details={name: problem})
    return value
