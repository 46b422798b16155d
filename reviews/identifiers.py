"""SPEC §1 identifiers (``user_id``, ``entity_id``, ``thread_id``, message ``id``): 1–128
printable characters. One rule, read by the API's fields, the pages' forms and the services."""
from .errors import InvalidInput

MAX_IDENTIFIER_LENGTH = 128


def validate_identifier(value, *, name: str) -> str:
    """``value`` if it is a well-formed identifier; else ``InvalidInput`` naming ``name``.

    Printable (``str.isprintable``): no control characters (NUL, newlines, tabs), no
    invisible formatting characters (right-to-left overrides, zero-width spaces), no lone
    surrogates. The space is allowed inside, not as the whole identifier.
    """
    if not isinstance(value, str):
        raise InvalidInput(f"{name} must be a string.", details={name: "not_a_string"})
    if not value.strip():
        raise InvalidInput(f"{name} must not be empty.", details={name: "empty"})
    if len(value) > MAX_IDENTIFIER_LENGTH:
        raise InvalidInput(
            f"{name} must be at most {MAX_IDENTIFIER_LENGTH} characters.", details={name: "too_long"}
        )
    if not value.isprintable():
        raise InvalidInput(
            f"{name} must contain printable characters only (no control characters).",
            details={name: "not_printable"},
        )
    return value
