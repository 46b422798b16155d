"""A strict JSON parser: bounded size, no NaN, no null characters."""
import json

from django.conf import settings
from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser

from .errors import PayloadTooLarge


def _refuse_constant(name):
    raise ValueError(f"{name} is not valid JSON")


def _find_null_character(value, path="$"):
    if isinstance(value, str):
        return path if "\x00" in value else None
    if isinstance(value, dict):
        for key, item in value.items():
            found = _find_null_character(key, path) or _find_null_character(item, f"{path}.{key}")
            if found:
                return found
    if isinstance(value, list):
        for index, item in enumerate(value):
            found = _find_null_character(item, f"{path}[{index}]")
            if found:
                return found
    return None


class StrictJSONParser(JSONParser):
    def parse(self, stream, media_type=None, parser_context=None):
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        request = (parser_context or {}).get("request")
        declared = int(request.META.get("CONTENT_LENGTH") or 0) if request is not None else 0
        if declared > limit:
            raise PayloadTooLarge(f"The request body is larger than {limit} bytes.")
        raw = stream.read(limit + 1) if stream is not None else b""
        if len(raw) > limit:
            raise PayloadTooLarge(f"The request body is larger than {limit} bytes.")
        try:
            data = json.loads(raw.decode("utf-8"), parse_constant=_refuse_constant)
        except (ValueError, UnicodeDecodeError) as exc:
            raise ParseError(f"Malformed JSON: {exc}") from None
        where = _find_null_character(data)
        if where:
            raise ParseError(f"Null characters are not allowed (at {where}).")
        return data
