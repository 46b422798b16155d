"""What a log line may say: never recall's question, never a credential, no traceback for a refusal.

Three places write what a client sent into a log: Django's request logger ("Not Found:
/api/v1/users/<id>/facts"), gunicorn's access log (the request line and the Referer) and
Celery's task logs (an exception's message). Credentials can arrive in any part of an
address, a path segment included (a user id that is a password, refused with a 400 but
still logged), so:

- :func:`loggable_uri` masks every path segment and every query value and name, and drops
  recall's question ``q`` (what an agent asked about a person) altogether;
- :class:`MaskCredentials`, a filter on every handler the settings configure (Django's,
  Celery's through them) and on gunicorn's error log, rewrites a record's message with
  the request's address made loggable and every credential masked, the traceback text
  included; and a refusal (a 4xx) is one line, without the traceback Django attaches to a
  ``PermissionDenied``: a client that is refused a thousand times must not write a
  thousand tracebacks.
"""
from __future__ import annotations

import logging
from urllib.parse import parse_qsl, quote, unquote

from .secrets import mask_secrets

DROPPED_PARAMETERS = frozenset({"q"})
DROPPED = "[dropped]"


def loggable_query(query: str) -> str:
    pairs = parse_qsl(query or "", keep_blank_values=True)
    return "&".join(
        f"{quote(mask_secrets(name).text, safe='[]')}="
        f"{DROPPED if name in DROPPED_PARAMETERS else quote(mask_secrets(value).text, safe='[]')}"
        for name, value in pairs
    )


def loggable_path(path: str) -> str:
    """``path`` with each segment that holds a credential masked, the others as they came.

    Segments are read decoded (``password%20is%3A%20hunter2x`` is "password is: hunter2x")
    and written back encoded only where something was masked; the whole path is then read
    once more for a credential that spans segments.
    """
    segments = []
    for segment in (path or "").split("/"):
        masked = mask_secrets(unquote(segment))
        segments.append(quote(masked.text, safe="[] ") if masked.found else segment)
    joined = "/".join(segments)
    whole = mask_secrets(unquote(joined))
    return quote(whole.text, safe="/[] ") if whole.found else joined


def loggable_uri(uri: str) -> str:
    """A request URI or Referer with its path and query string made loggable."""
    path, separator, query = (uri or "").partition("?")
    return f"{loggable_path(path)}?{loggable_query(query)}" if separator else loggable_path(path)


class MaskCredentials(logging.Filter):
    """Rewrites each record it sees so that no credential and no question is in it.

    A filter on a handler sees every record the handler writes, whichever logger it came
    from; the record is changed in place, so the message is formatted here once, masked,
    and its arguments dropped.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        path = getattr(getattr(record, "request", None), "path", None)
        if path and isinstance(record.args, tuple):
            record.args = tuple(_loggable_argument(argument, path) for argument in record.args)
        record.msg = mask_secrets(record.getMessage()).text
        record.args = ()
        status = getattr(record, "status_code", None)
        if isinstance(status, int) and status < 500:
            # A refusal answered as designed: its traceback says nothing an operator needs.
            record.exc_info = record.exc_text = None
        elif record.exc_info:
            record.exc_text = mask_secrets(logging.Formatter().formatException(record.exc_info)).text
        if record.stack_info:
            record.stack_info = mask_secrets(record.stack_info).text
        return True


def _escaped(text: str) -> str:
    # As Django's request logger writes its arguments (django.utils.log.log_response):
    # control characters and non-ASCII escaped, so a path cannot forge a log line.
    return text.encode("unicode_escape").decode("ascii")


def _loggable_argument(argument, path: str):
    """The request's path, as the request logger passed it, made loggable; other arguments as they are.

    The path is read from the request rather than from the argument: the logger has
    escaped the argument (密码 is ``\\u5bc6\\u7801`` there), which the detector cannot read.
    """
    if argument == path:
        return loggable_uri(path)
    if argument == _escaped(path):
        return _escaped(loggable_uri(path))
    return argument
