"""validate_identifier: SPEC §1's identifier rule, in one place."""
import pytest

from reviews.errors import InvalidInput
from reviews.policy.identifiers import MAX_IDENTIFIER_LENGTH, validate_identifier

ACCEPTED = ["user-42", "org/7", "a@b.com", "张三", "用户/二号", "with inner space", "x" * MAX_IDENTIFIER_LENGTH, "../etc", "?#%"]


@pytest.mark.parametrize("value", ACCEPTED)
def test_printable_identifiers_up_to_128_characters_are_accepted_unchanged(value):
    assert validate_identifier(value, name="user_id") == value


REFUSED = [
    ("", "empty"),
    ("   ", "empty"),
    ("x" * (MAX_IDENTIFIER_LENGTH + 1), "too_long"),
    ("a\x00b", "not_printable"),
    ("a\nb", "not_printable"),
    ("a\tb", "not_printable"),
    ("\u202eevil", "not_printable"),  # right-to-left override
    ("a\u200bb", "not_printable"),  # zero-width space
    ("\ud800", "not_printable"),  # lone surrogate
    ("M\ufffdller", "not_utf8"),  # what Django makes of Latin-1 bytes in a query string
    (None, "not_a_string"),
    (42, "not_a_string"),
    (["a"], "not_a_string"),
]


@pytest.mark.parametrize("value,problem", REFUSED, ids=[repr(v)[:20] for v, _ in REFUSED])
def test_malformed_identifiers_are_invalid_input_naming_the_field(value, problem):
    with pytest.raises(InvalidInput) as refused:
        validate_identifier(value, name="thread_id")

    assert refused.value.details == {"thread_id": problem}
    assert "thread_id" in refused.value.message
