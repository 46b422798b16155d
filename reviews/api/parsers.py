"""A strict JSON parser: bounded size and depth, no NaN, no key given twice in an object, no
null characters, no lone surrogates (SPEC §7 input limits)."""
import json
import re

from django.conf import settings
from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser

from ..errors import InvalidInput
from .errors import PayloadTooLarge

MAX_JSON_DEPTH = 64
# NUL is refused by PostgreSQL in text; a lone surrogate cannot be encoded as UTF-8.
_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


def _refuse_constant(name):
    raise ValueError(f"{name} is not valid JSON")


class RepeatedKey(ValueError):
    """A key given twice in one JSON object."""


def refuse_repeated_keys(pairs: list[tuple[str, object]]) -> dict:
    """An object's members as a dict (``json.loads``'s ``object_pairs_hook``), unless a key
    repeats. Python's json keeps a repeated key's last value without a word, and other
    parsers keep the first: a gateway that checked ``{"user_id": "alice", "user_id": "bob"}``
    and this API would disagree on whose memory is written. RFC 8259 leaves it open;
    refusing leaves no room for doubt. The MCP server refuses it too (through strict_loads)."""
    members = {}
    for key, value in pairs:
        if key in members:
            # Quoted as JSON, ASCII only and cut short: the key is the sender's, of any
            # length and with any character, lone surrogates included.
            raise RepeatedKey(f"the key {json.dumps(key[:64])} appears more than once in one object")
        members[key] = value
    return members


def strict_loads(raw: bytes):
    """``raw`` decoded and parsed as the API reads a body: UTF-8, a leading byte order mark
    read past (RFC 8259 allows it), no NaN or Infinity, no key given twice (RepeatedKey).
    Raises ValueError (UnicodeDecodeError, JSONDecodeError, RepeatedKey) or RecursionError."""
    return json.loads(raw.decode("utf-8-sig"), parse_constant=_refuse_constant, object_pairs_hook=refuse_repeated_keys)


def _check_structure(data) -> None:
    """Depth and characters of a parsed document, walked with a stack (no recursion: the
    document decides how deep it goes, not the interpreter's limit)."""
    stack = [(data, "$", 1)]
    while stack:
        value, path, depth = stack.pop()
        if isinstance(value, str):
            _check_characters(value, path)
        elif isinstance(value, (dict, list)):
            if depth > MAX_JSON_DEPTH:
                raise _too_deep()
            pairs = value.items() if isinstance(value, dict) else enumerate(value)
            for key, item in pairs:
                if isinstance(key, str):
                    _check_characters(key, path)
                    stack.append((item, f"{path}.{key}", depth + 1))
                else:
                    stack.append((item, f"{path}[{key}]", depth + 1))


def _check_characters(text: str, path: str) -> None:
    if _UNSTORABLE.search(text):
        raise ParseError(f"Null characters and lone surrogates are not allowed (at {path}).")


def _too_deep() -> InvalidInput:
    return InvalidInput(
        f"The JSON document is nested deeper than {MAX_JSON_DEPTH} levels.", details={"body": "too_deep"}
    )


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
            data = strict_loads(raw)
        except RecursionError:
            # The C decoder recurses per level: far past MAX_JSON_DEPTH it stops here.
            raise _too_deep() from None
        except (ValueError, UnicodeDecodeError) as exc:
            raise ParseError(f"Malformed JSON: {exc}") from None
        _check_structure(data)
        return data
