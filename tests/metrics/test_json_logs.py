"""DJANGO_LOG_FORMAT=json: one JSON object a line, masked like the plain format, with the request id."""
import json
import logging
import sys

from reviews.jsonlog import JsonFormatter
from reviews.logs import MaskCredentials
from reviews.context import current_request_id

SECRET = "sk-proj-" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6"


def formatted(record: logging.LogRecord) -> dict:
    assert MaskCredentials().filter(record)
    line = JsonFormatter().format(record)
    assert "\n" not in line
    return json.loads(line)


def test_a_line_is_one_masked_object_with_the_request_id():
    token = current_request_id.set("req-42")
    try:
        record = logging.LogRecord("reviews.x", logging.WARNING, __file__, 1, "key %s used", (SECRET,), None)
        entry = formatted(record)
    finally:
        current_request_id.reset(token)
    assert entry["level"] == "WARNING" and entry["logger"] == "reviews.x" and entry["request_id"] == "req-42"
    assert SECRET not in json.dumps(entry) and entry["message"].startswith("key [redacted")


def test_an_exception_is_one_field_and_masked():
    try:
        raise ValueError(f"bad {SECRET}")
    except ValueError:
        record = logging.LogRecord("reviews.x", logging.ERROR, __file__, 1, "failed", (), sys.exc_info())
    entry = formatted(record)
    assert "ValueError" in entry["exception"] and SECRET not in entry["exception"]
    assert "request_id" not in entry
