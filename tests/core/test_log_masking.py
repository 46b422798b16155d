"""No credential reaches a log, whichever part of a request carries it (SPEC §3 step 2).

Every route is asked with each credential form in each of its path parameters; the
console handler the settings configure (the one operators read) is pointed at a buffer,
and the buffer must hold none of the credentials. Refusals are one line each.
"""
from __future__ import annotations

import io
import logging
import re
from urllib.parse import quote

import pytest
from django.urls import URLPattern, URLResolver, get_resolver

from memory_portal.celery import app as celery_app
from reviews.logs import MaskCredentials, loggable_path, loggable_uri

# (what a log must never show, the text sent): forms the credential detector knows by
# context or by shape; each "secret" part is what must not appear.
CREDENTIALS = [
    ("hunter2x", "password is: hunter2x"),
    ("Tr0ub4dor-and-3", "my password is Tr0ub4dor-and-3"),
    ("sk-proj-A1b2C3d4E5f6G7h8I9j0K1l2M3n4", "sk-proj-A1b2C3d4E5f6G7h8I9j0K1l2M3n4"),
    ("AKIAIOSFODNN7EXAMPLE", "AKIAIOSFODNN7EXAMPLE"),
    ("s3cr3tP4ssw0rd99", "api_key=s3cr3tP4ssw0rd99"),
    ("hunter2zh", "密码是hunter2zh"),
    ("4111111111111111", "4111111111111111"),
    ("eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJlc2lnbmF0dXJl",
     "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJlc2lnbmF0dXJl"),
]

PARAMETER = re.compile(r"<(?:[^:>]+:)?([^>]+)>")


def route_templates() -> list[str]:
    """Every path the URLconf answers, its parameters as ``<name>`` (RoutePattern's text)."""
    routes: list[str] = []

    def walk(patterns, prefix: str) -> None:
        for pattern in patterns:
            text = str(pattern.pattern)
            if isinstance(pattern, URLResolver):
                walk(pattern.url_patterns, prefix + text)
            elif isinstance(pattern, URLPattern) and PARAMETER.search(text) and not text.startswith("^"):
                routes.append("/" + prefix + text)

    walk(get_resolver().url_patterns, "")
    return routes


@pytest.fixture
def console_log():
    """A buffer written by a handler like the settings' console handler: the same filters
    and formatter, on the same loggers. (Pointing the configured handler itself at a buffer
    would flush whatever stream a test runner left it, which may be closed by then.)"""
    [configured] = {id(h): h for name in ("", "django") for h in logging.getLogger(name).handlers
                    if any(isinstance(f, MaskCredentials) for f in h.filters)}.values()
    buffer = io.StringIO()
    handler = logging.StreamHandler(buffer)
    handler.setFormatter(configured.formatter)
    for log_filter in configured.filters:
        handler.addFilter(log_filter)
    loggers = [logging.getLogger(name) for name in ("", "django")]
    for logger in loggers:
        logger.addHandler(handler)
    yield buffer
    for logger in loggers:
        logger.removeHandler(handler)


def test_the_settings_mask_every_console_record():
    # The settings' own stream handlers (pytest adds capturing subclasses of its own beside them).
    handlers = [h for h in logging.getLogger().handlers + logging.getLogger("django").handlers
                if type(h) is logging.StreamHandler]
    assert handlers and all(any(isinstance(f, MaskCredentials) for f in h.filters) for h in handlers)


def test_every_route_has_parameters_to_try():
    routes = route_templates()
    # The routes the issue named, among many more: users' facts and links, keys, the schema.
    for expected in ("/api/v1/users/<user_id>/facts", "/api/v1/users/<user_id>/portal-link", "/api/v1/keys/<prefix>"):
        assert any(PARAMETER.sub(lambda m: f"<{m.group(1)}>", r) == expected for r in routes), expected
    assert len(routes) > 20


@pytest.mark.django_db
def test_no_credential_in_any_path_segment_reaches_the_log(client, console_log, reviewer):
    client.force_login(reviewer)  # signed in, so pages reach their views rather than the sign-in redirect
    requests = 0
    for route in route_templates():
        for _, form in CREDENTIALS:
            path = PARAMETER.sub(quote(form, safe=""), route)
            for method in (client.get, client.post, client.delete):
                response = method(path, HTTP_AUTHORIZATION="Bearer not-a-key")
                assert response.status_code < 500, (path, response.status_code)
                requests += 1
    written = console_log.getvalue()
    assert requests > 300 and "Not Found:" in written  # the log was written, and read here
    for secret, _ in CREDENTIALS:
        assert secret not in written and quote(secret, safe="") not in written, secret


def test_a_refusal_is_one_line_without_a_traceback(client, console_log, reviewer, db):
    client.force_login(reviewer)
    response = client.get("/audit/recalls/")  # auditors' page: PermissionDenied for a reviewer
    assert response.status_code == 403
    written = console_log.getvalue()
    start = written.index(" django.request ")  # what the refusal wrote, after the sign-in's lines
    lines = written[start:].strip().splitlines()
    assert len(lines) == 1 and "Forbidden" in lines[0] and "Traceback" not in written


def test_a_server_error_keeps_its_traceback_with_the_credential_masked(console_log):
    logger = logging.getLogger("celery.app.trace")
    try:
        raise ValueError("could not parse password is: hunter2x")
    except ValueError:
        logger.error("Task %s[%s] raised unexpected: %s", "reviews.tasks.extract_message", "id-1",
                     "ValueError('could not parse password is: hunter2x')", exc_info=True)
    written = console_log.getvalue()
    assert "Traceback" in written and "ValueError" in written and "raised unexpected" in written
    assert "hunter2x" not in written


def test_celery_logs_through_the_settings_handlers():
    # A hijacking worker would replace the masked handler with its own.
    assert celery_app.conf.worker_hijack_root_logger is False


@pytest.mark.parametrize("secret,form", CREDENTIALS)
def test_loggable_paths_mask_the_segment_and_keep_the_rest(secret, form):
    path = f"/api/v1/users/{quote(form, safe='')}/portal-link"
    masked = loggable_path(path)
    assert secret not in masked and quote(secret, safe="") not in masked
    assert masked.startswith("/api/v1/users/") and masked.endswith("/portal-link") and "redacted" in masked


def test_ordinary_paths_are_left_alone():
    for path in ("/api/v1/users/user-42/facts", "/api/v1/users/a%40b.com/facts/17", "/review/", "/tenant/schema/project/"):
        assert loggable_uri(path) == path
    assert loggable_uri("/api/v1/users/org%2F7/facts?q=x") == "/api/v1/users/org%2F7/facts?q=[dropped]"
