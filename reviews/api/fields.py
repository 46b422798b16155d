"""Input fields stricter than DRF's where SPEC §7 asks: a boolean is not a number, an
identifier is SPEC §1's."""
from django.http import QueryDict
from rest_framework import serializers

from ..errors import InvalidInput
from ..policy.identifiers import MAX_IDENTIFIER_LENGTH, validate_identifier


class _NotABoolean:
    """DRF's FloatField takes ``true`` as 1.0 (``float(True)``): a confidence of ``true``
    would be auto-approved. JSON's booleans are refused wherever a number is expected."""

    def to_internal_value(self, data):
        if isinstance(data, bool):
            self.fail("invalid")
        return super().to_internal_value(data)


class _NotAStringInJson:
    """DRF turns ``"1"`` into 1, ``"0.9"`` into 0.9 and ``"yes"`` into True: a client that
    sends the wrong type finds out only when the value misbehaves (issue 39). In a JSON
    body a string where a number or boolean is expected is refused, naming the field; in a
    query string or a form, where every value is text, it is read as DRF reads it (a
    serializer of query parameters says so with ``reads_query_text``)."""

    def to_internal_value(self, data):
        root = self.root
        text_values = getattr(root, "reads_query_text", False) or isinstance(getattr(root, "initial_data", None), QueryDict)
        if isinstance(data, str) and not text_values:
            raise serializers.ValidationError(self.type_message, code="invalid")
        return super().to_internal_value(data)


class FloatField(_NotAStringInJson, _NotABoolean, serializers.FloatField):
    type_message = "A number is required, not a string."


class IntegerField(_NotAStringInJson, _NotABoolean, serializers.IntegerField):
    type_message = "A whole number is required, not a string."


class BooleanField(_NotAStringInJson, serializers.BooleanField):
    type_message = "true or false is required, not a string."


class TextField(serializers.CharField):
    """DRF's CharField stores a JSON number as its digits (``{"body": 7}`` becomes ``"7"``):
    a client sending the wrong type finds out only when the text reads oddly (issue 38).
    Text is a JSON string; a number is refused naming the field, as the number fields
    refuse a string. (DRF already refuses booleans, lists and objects here.)"""

    default_error_messages = {"not_text": "Text is required, not a number."}

    def to_internal_value(self, data):
        if isinstance(data, (int, float)) and not isinstance(data, bool):
            self.fail("not_text")
        return super().to_internal_value(data)


class IdentifierField(TextField):
    """A SPEC §1 identifier (``user_id``, ``entity_id``, ``thread_id``, a message ``id``),
    kept exactly as sent: not trimmed, since the same id must reach it later in a URL."""

    def __init__(self, **kwargs):
        kwargs.setdefault("max_length", MAX_IDENTIFIER_LENGTH)
        kwargs.setdefault("trim_whitespace", False)
        super().__init__(**kwargs)

    def to_internal_value(self, data):
        value = super().to_internal_value(data)
        try:
            return validate_identifier(value, name=self.field_name or "identifier")
        except InvalidInput as refused:
            raise serializers.ValidationError(refused.message, code="invalid") from None
