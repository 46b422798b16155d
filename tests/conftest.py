"""Personas and factories shared by every test (Healthchecks-style).

Personas: ``tenant`` (tenant-1) with a ``reviewer``, an ``auditor`` and a ``tenant_admin``;
``other_tenant`` (tenant-2) with its own ``outsider`` reviewer; API clients per scope.
Everything is created through the services, so the fixtures exercise the real code.
"""
from __future__ import annotations

import json
import sys

import pytest
from django.test import RequestFactory
from django.utils import translation
from rest_framework.test import APIClient

from reviews.actors import Actor
from reviews.api.base import ApiKeyRateThrottle
from reviews.models import Role, Scope, Source
from reviews.domain import CandidateInput
from reviews.services.candidates import candidates_submit
from reviews.services.tenants import api_key_create, staff_create, tenant_create
from tests.gunicorn import free_port, server_process

PASSWORD = "correct-horse-battery-staple"


def pytest_collection_modifyitems(config, items):
    """The order pytest-xdist hands tests out in (it gives them out in order, to whichever
    worker is free):

    1. Non-transactional tests marked slow first (the page fuzzer alone takes one to two
       minutes): one that started last would keep the run going on one worker while the
       other had nothing left to do. (Transactional slow ones first as well measured no
       better: 8 min 12 s against 7 min 59 s, one run each.)
    2. Transactional tests (live server, browser, worker processes) spread evenly among the
       others, instead of all at the end where pytest-django puts them: they spend much of
       their time waiting (a page to load, a worker to answer), and with both workers on
       them at once the cores stood a fifth to a half idle. Mixed in, one worker's wait is
       the other's CPU. Django runs them last because their flush empties what migrations
       stored; this project's migrations store no rows (they change schema and mend
       existing rows), so nothing after a flush misses anything.
    """
    def handed_out_first(item) -> bool:
        return item.get_closest_marker("slow") is not None and database_use(item) != "transactional"

    first = [item for item in items if handed_out_first(item)]
    rest = [item for item in items if not handed_out_first(item)]
    transactional = [item for item in rest if database_use(item) == "transactional"]
    others = [item for item in rest if database_use(item) != "transactional"]
    items[:] = first + spread_evenly(transactional, among=others)


def spread_evenly(few: list, *, among: list) -> list:
    """``among`` in its order with ``few`` in theirs, placed at even intervals through it."""
    position = {id(item): (index + 1) / (len(among) + 1) for index, item in enumerate(among)}
    position.update({id(item): (index + 0.5) / len(few) for index, item in enumerate(few)})
    return sorted(among + few, key=lambda item: position[id(item)])


def database_use(item) -> str:
    """How a test uses the database, read as pytest-django reads it: "transactional",
    "plain" or "" (not at all)."""
    marker = item.get_closest_marker("django_db")
    fixtures = set(getattr(item, "fixturenames", ()))
    if (marker and (marker.kwargs.get("transaction") or marker.kwargs.get("reset_sequences"))) or (
        {"transactional_db", "live_server"} & fixtures
    ):
        return "transactional"
    return "plain" if marker or "db" in fixtures else ""


@pytest.fixture(scope="session")
def mcp_url(django_db_setup):
    """``manage.py mcp_server``, the real command in its own process, on this worker's test
    database and a free port: one server for the whole session (the MCP tests of
    tests/compat, tests/docs and tests/poisoning), since starting one costs a Django start
    (about 2.5 s of CPU) and the tests that use it are spread through the run. Each test's
    rows are committed, then flushed, under it; it keeps no state of its own between
    requests."""
    port = free_port()
    command = [sys.executable, "manage.py", "mcp_server", "--host", "127.0.0.1", "--port", str(port)]
    with server_process(command, port=port):
        yield f"http://127.0.0.1:{port}/mcp"


def sign_in(client, username: str, password: str = PASSWORD) -> bool:
    """Sign a staff member in through ``authenticate()``, as the sign-in form does.

    The sign-in throttle (django-axes) counts failures per address, so its backend needs
    the request; the test client's ``login()`` has none unless given one, and axes's
    documented way for tests is to supply it. The request is what the sign-in form's post
    from the test client would be, so the throttle runs for real here too."""
    return client.login(request=RequestFactory().post("/login/"), username=username, password=password)


@pytest.fixture
def api_rate(monkeypatch):
    """``api_rate("2/min")`` sets MEMORY_API_RATE's rate for the test, on a clock that
    stands still 50 s into a minute until the test moves it (the dict it returns, "now").
    The windows are fixed minutes: a real clock crossing into the next one between a test's
    calls starts a new count, and the call that should be refused is served."""
    clock = {"now": 1_800_000_000.0 + 50}  # a whole number of minutes, plus 50 s
    monkeypatch.setattr(ApiKeyRateThrottle, "timer", lambda self: clock["now"])

    def set_rate(rate: str) -> dict:
        monkeypatch.setattr(ApiKeyRateThrottle, "THROTTLE_RATES", {"api_key": rate})
        return clock

    return set_rate


@pytest.fixture
def tenant(db):
    return tenant_create(slug="tenant-1", name="Tenant One")


@pytest.fixture
def other_tenant(db):
    return tenant_create(slug="tenant-2", name="Tenant Two")


def _staff(tenant, username, role):
    return staff_create(tenant=tenant, username=username, role=role, password=PASSWORD)


@pytest.fixture
def reviewer(tenant):
    return _staff(tenant, "rita", Role.REVIEWER)


@pytest.fixture
def second_reviewer(tenant):
    return _staff(tenant, "rob", Role.REVIEWER)


@pytest.fixture
def auditor(tenant):
    return _staff(tenant, "audrey", Role.AUDITOR)


@pytest.fixture
def tenant_admin(tenant):
    return _staff(tenant, "adam", Role.TENANT_ADMIN)


@pytest.fixture
def outsider(other_tenant):
    """A reviewer of another tenant: must never see tenant-1's data."""
    return _staff(other_tenant, "olga", Role.REVIEWER)


class KeyClient(APIClient):
    """An API client holding one tenant's key; ``json_post`` sends raw JSON bodies."""

    def __init__(self, raw_key: str, key, **kwargs):
        super().__init__(**kwargs)
        self.key, self.raw_key = key, raw_key
        self.credentials(HTTP_AUTHORIZATION=f"Bearer {raw_key}")

    def post_json(self, path, body, **extra):
        data = body if isinstance(body, (str, bytes)) else json.dumps(body)
        return self.post(path, data=data, content_type="application/json", **extra)


@pytest.fixture
def make_client(db):
    def make(tenant, scopes, source=Source.CHAT):
        key, raw = api_key_create(tenant=tenant, scopes=list(scopes), source=source)
        return KeyClient(raw, key)

    return make


@pytest.fixture
def ingest_client(tenant, make_client):
    return make_client(tenant, [Scope.INGEST])


@pytest.fixture
def admin_client_key(tenant, make_client):
    return make_client(tenant, [Scope.ADMIN])


@pytest.fixture
def outsider_client(other_tenant, make_client):
    """Another tenant's key with every scope: still sees nothing of tenant-1."""
    return make_client(other_tenant, list(Scope.values))


API_ACTOR = Actor("api_key", "test")


@pytest.fixture
def submit(db):
    """Submit candidates through the real pipeline: submit(tenant, user_id, *dicts, source=...)."""

    def run(tenant, user_id, *items, source=Source.CHAT, actor=API_ACTOR, extractor="test"):
        inputs = [CandidateInput(**item) for item in items]
        return candidates_submit(
            tenant=tenant, user_id=user_id, candidates=inputs, source=source, actor=actor, extractor=extractor
        )

    return run


def candidate(field="name", value="Alice", confidence=0.9, entity_type="user", entity_id="me", **extra):
    """A candidate dict with sensible defaults (a user's name at review confidence)."""
    return {
        "entity_type": entity_type,
        "entity_id": entity_id,
        "field": field,
        "value": value,
        "confidence": confidence,
        **extra,
    }


# --- Publication and recall -------------------------------------------------------------------


@pytest.fixture(scope="session", autouse=True)
def _test_database_left_free(request, django_db_setup, django_db_blocker):
    """Nothing may hold a connection to the test database when it is dropped, or it is
    left behind ("being accessed by other users"):

    - the LangGraph store keeps connections of its own (any test whose commit reaches
      the projection opens it): closed;
    - the live server answers each client connection in a thread that keeps its
      database connection until the client hangs up, and a browser or an HTTP client
      of the last tests may not have yet: those sessions are ended.
    """
    yield
    from django.db import connection

    from reviews.publication import close_store

    close_store()
    # Only when a test used the database: otherwise pytest-django set none up, and the
    # connection names the application's database, which need not exist.
    if connection.vendor == "postgresql" and any(database_use(item) for item in request.session.items):
        with django_db_blocker.unblock(), connection.cursor() as cursor:
            cursor.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                "WHERE datname = current_database() AND pid <> pg_backend_pid()"
            )


REVIEWER_ACTOR = Actor("reviewer", "test")


@pytest.fixture
def publish(submit):
    """publish(tenant, user_id, **candidate_fields) -> the published Fact.

    Goes through the real pipeline; what the policy leaves pending is approved the way
    people do it (a reviewer, or the subject for what waits on them).
    """
    from reviews.models import Candidate, CandidateStatus, Fact
    from reviews.services.candidates import candidate_approve

    def run(tenant, user_id, **fields):
        fields.setdefault("confidence", 0.97)
        result = submit(tenant, user_id, candidate(**fields))[0]
        if result.fact_id is None:
            pending = Candidate.objects.get(pk=result.candidate_id)
            assert pending.status in (CandidateStatus.PENDING_REVIEW, CandidateStatus.PENDING_USER), pending
            actor = Actor.subject(user_id) if pending.status == CandidateStatus.PENDING_USER else REVIEWER_ACTOR
            pending = candidate_approve(
                tenant=tenant, candidate_id=pending.pk, version=pending.version, actor=actor
            )
            return Fact.objects.get(pk=pending.fact_id)
        return Fact.objects.get(pk=result.fact_id)

    return run


@pytest.fixture(autouse=True)
def _default_language_after_each_test():
    """Django's LocaleMiddleware activates a request's language for the thread and leaves
    it active after the response (a server's next request activates its own): a test
    whose client asked for Chinese left every later test in the thread speaking it."""
    yield
    translation.deactivate()


@pytest.fixture(autouse=True)
def _forget_authenticated_api_keys():
    """Each test starts with a cold API-key cache, as a fresh process would."""
    from reviews.services.tenants import api_key_cache_clear

    api_key_cache_clear()
    yield
    api_key_cache_clear()


def store_message(tenant, user_id, message_id, content, *, thread_id="t-1", role="user", created_at=None, **extra):
    """A chat message stored as context for a test (what ingestion would have kept)."""
    from django.utils import timezone

    from reviews.models import Message
    from reviews.services.entities import subject_get_or_create

    return Message.objects.create(
        tenant=tenant,
        subject=subject_get_or_create(tenant=tenant, user_id=user_id),
        message_id=message_id,
        thread_id=thread_id,
        role=role,
        content=content,
        created_at=created_at or timezone.now(),
        **extra,
    )
