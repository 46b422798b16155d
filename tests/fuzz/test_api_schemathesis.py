"""schemathesis over every operation of the served OpenAPI schema (SPEC §7), in process
through the WSGI app, with a key holding every scope over a tenant with some memory:
no answer is a 5xx, and each answer is one the schema documents, in its documented
shape and media type.

Bounded so the file stays fast: a fixed number of generated examples per operation (on
top of schemathesis' examples and coverage phases, which are finite), a few short
stateful scenarios, no shrinking of a failure beyond what Hypothesis does in a few
seconds. Deterministic: a fixed seed and no example database, so CI sees the same
requests on every run and a failure reproduces.
"""
from __future__ import annotations

import json
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
import schemathesis
from django.core import signals
from django.db import close_old_connections, transaction
from django.urls import URLPattern, URLResolver
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import Bundle, initialize
from schemathesis.checks import not_a_server_error
from schemathesis.generation.stateful.state_machine import StepInput
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from memory_portal.wsgi import application
from reviews.api import urls as api_urls
from reviews.models import Scope
from reviews.services.tenants import api_key_create
from tests.conftest import candidate

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parents[2]

FUZZ_SEED = 20261201
EXAMPLES_PER_OPERATION = 20
SUBJECT = "u1"  # the subject with memory; generated user ids point at it now and then
CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance]
FUZZ_SETTINGS = settings(
    max_examples=EXAMPLES_PER_OPERATION,
    deadline=None,  # one request can take a while on a loaded machine; that is not a bug
    database=None,  # no replay of earlier runs' failures: the same requests on every run
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.filter_too_much,
        HealthCheck.data_too_large,
        # The key and the tenant's memory are made once per operation, on purpose: the
        # examples of an operation run against the state its earlier examples left.
        HealthCheck.function_scoped_fixture,
    ],
)


def served_schema():
    """The schema /api/schema/ serves, loaded the way the fuzzer loads it, with its seed.
    Loaded at collection: serving it needs no database (schemathesis' lazy ``from_fixture``
    loader does not run on this pytest)."""
    return schemathesis.openapi.from_wsgi(
        "/api/schema/?format=json", application, config=schemathesis.Config(seed=FUZZ_SEED)
    )


schema = served_schema()


def _toward_the_subject(values):
    """Now and then the subject who has memory instead of a generated user id, so the
    fuzzer also reaches a real subject's facts (Hypothesis picks, so it stays seeded)."""
    if isinstance(values, dict) and "user_id" in values:
        return st.sampled_from([values, {**values, "user_id": SUBJECT}])
    return st.just(values)


@schema.hook
def flatmap_query(context, query):
    return _toward_the_subject(query)


@schema.hook
def flatmap_path_parameters(context, path_parameters):
    return _toward_the_subject(path_parameters)


@pytest.fixture
def raw_key(tenant, publish, submit):
    """A key with every scope, over a subject with published memory and candidates waiting
    in the review queue (a conflict among them)."""
    publish(tenant, SUBJECT, field="name", value="Alice")
    publish(tenant, SUBJECT, entity_type="project", entity_id="flask-migration", field="database", value="PostgreSQL")
    publish(tenant, SUBJECT, field="health", value="asthma")
    submit(tenant, SUBJECT, candidate(field="location", value="Berlin"), candidate(field="name", value="Alicia"))
    return api_key_create(tenant=tenant, scopes=list(Scope.values))[1]


@pytest.fixture
def wsgi_requests_keep_the_test_connection(db):
    """Requests go straight to the WSGI app, so Django would close the test's connection
    at the end of each one; its own test client avoids that the same way."""
    signals.request_started.disconnect(close_old_connections)
    signals.request_finished.disconnect(close_old_connections)
    yield
    signals.request_started.connect(close_old_connections)
    signals.request_finished.connect(close_old_connections)


STATUSES: dict[str, Counter] = {}  # operation → status codes seen, for the summary


@pytest.fixture(scope="module", autouse=True)
def summary():
    started = time.monotonic()
    yield
    if STATUSES:
        total = sum(sum(codes.values()) for codes in STATUSES.values())
        print(f"\nschemathesis: {len(STATUSES)} operations, {total} requests, {time.monotonic() - started:.0f} s")
        for label, codes in sorted(STATUSES.items()):
            print(f"  {label}: {dict(sorted(codes.items()))}")


def record(case, response):
    STATUSES.setdefault(case.operation.label, Counter())[response.status_code] += 1


@schema.parametrize()
@FUZZ_SETTINGS
def test_no_operation_answers_a_server_error_or_off_its_schema(case, raw_key, wsgi_requests_keep_the_test_connection):
    response = case.call(headers={"Authorization": f"Bearer {raw_key}"})
    record(case, response)
    case.validate_response(response, checks=CHECKS)


# --- Every operation is fuzzed --------------------------------------------------------------


def operations_of(loaded) -> set[str]:
    return {result.ok().label for result in loaded.get_all_operations()}


def test_every_operation_of_the_schema_is_fuzzed(client):
    """The parametrized test runs over ``schema`` as it is (nothing included or excluded),
    which is every operation /api/schema/ serves right now."""
    paths = client.get("/api/schema/?format=json").json()["paths"]
    served = {
        f"{method.upper()} {path}"
        for path, item in paths.items()
        for method in item
        if method in ("get", "put", "post", "patch", "delete")
    }
    assert operations_of(schema) == served
    assert len(served) >= 15


def _api_routes(patterns, prefix="/api/v1/"):
    for pattern in patterns:
        if isinstance(pattern, URLResolver):
            yield from _api_routes(pattern.url_patterns, prefix + str(pattern.pattern))
        elif isinstance(pattern, URLPattern) and hasattr(pattern.callback, "view_class"):
            yield pattern, prefix + str(pattern.pattern)


def test_every_api_route_is_in_the_schema():
    """A new endpoint cannot leave the schema (and so the fuzzer) by accident: every
    method every /api/v1/ view implements is an operation of the schema."""
    documented = operations_of(schema)
    missing = []
    for pattern, route in _api_routes(api_urls.urlpatterns):
        view = pattern.callback.view_class
        path = route
        for converter in ("int", "identifier", "key_prefix", "str"):
            path = path.replace(f"<{converter}:", "{")
        path = path.replace(">", "}")
        for method in view.http_method_names:
            if method in ("options", "head") or not hasattr(view, method):
                continue
            if f"{method.upper()} {path}" not in documented:
                missing.append(f"{method.upper()} {path}")
    assert not missing, f"API routes missing from the schema: {missing}"


# --- Stateful: the queue's items decided, recalled facts deleted --------------------------------

STATEFUL_SETTINGS = settings(
    FUZZ_SETTINGS,
    max_examples=25,
    stateful_step_count=6,
    # The state machine takes no seed from schemathesis' config: derandomized, it draws
    # the same scenarios on every run.
    derandomize=True,
)


def test_stateful_scenarios_answer_no_server_error_or_off_the_schema(raw_key, wsgi_requests_keep_the_test_connection):
    """schemathesis infers the links from the schema: an id in the queue's answer to
    approve, reject or defer it, a recalled fact's id to delete it. A scenario follows
    them, so decisions reach real candidates (not only 404s) and deletions real facts."""

    class Workflow(schema.as_state_machine()):
        # schemathesis starts scenarios only at operations it expects to succeed on random
        # input, and picks the decisions (a POST) over the queue; each scenario starts with
        # the reads whose answers the links feed on. Their answers go to the links'
        # bundles as any step's do (by operation and status).
        def setup(self):
            # Every scenario starts from the fixture's state (Hypothesis replays a scenario
            # and expects the same answers): its writes are rolled back at its end.
            self.savepoint = transaction.savepoint()

        def teardown(self):
            transaction.savepoint_rollback(self.savepoint)

        @initialize(target=Bundle("catch_all"))
        def read_the_queue(self):
            return self.first_step(schema["/api/v1/review/candidates"]["GET"].Case(query={"limit": 5}))

        @initialize(target=Bundle("catch_all"))
        def recall_the_subject(self):
            return self.first_step(schema["/api/v1/recall"]["GET"].Case(query={"user_id": SUBJECT}))

        def first_step(self, case):
            """A step as schemathesis' own first steps run (its rules do this bookkeeping
            before calling ``step``): recorded, so the links from its answer resolve."""
            step = StepInput.initial(case)
            self.recorder.record_case(case=case)
            self.control.record_step(step, self.recorder)
            return self.step(step)

        def get_call_kwargs(self, case):
            return {"headers": {"Authorization": f"Bearer {raw_key}"}}

        def validate_response(self, response, case, additional_checks=None, **kwargs):
            STATUSES.setdefault(f"stateful {case.operation.label}", Counter())[response.status_code] += 1
            case.validate_response(response, checks=CHECKS, recorder=self.recorder)

    Workflow.run(settings=STATEFUL_SETTINGS)
    decided = sum(
        codes[200] for label, codes in STATUSES.items() if label.startswith("stateful POST /api/v1/review/candidates/")
    )
    assert decided, "no scenario decided a candidate of the queue"


# --- Deterministic ------------------------------------------------------------------------------


def generated_requests(label: str) -> list[list[str]]:
    """The requests the fuzz test sends to one operation, built the way schemathesis'
    pytest plugin builds each parametrized test (its builder is private: if an upgrade
    moves it, this says so at once), with the fuzz test's settings; nothing is sent."""
    from schemathesis.core import NOT_SET
    from schemathesis.generation.feedback import FeedbackSources
    from schemathesis.pytest._test_builder import build_operation_test
    from schemathesis.python._constants.orchestrator import make_constants_value_source

    requests = []

    def record_the_case(case):
        body = "" if case.body is NOT_SET else repr(case.body)
        requests.append([case.method, case.formatted_path, repr(case.query), body, repr(case.headers)])

    run = build_operation_test(
        config=schema.config,
        operation=schema.find_operation_by_label(label),
        test_func=FUZZ_SETTINGS(record_the_case),
        given_kwargs={},
        feedback=FeedbackSources(constants_value_source=make_constants_value_source(schema)),
    )
    run()
    return requests


GENERATE = """
import json, os, sys
import django
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memory_portal.settings")
django.setup()
from tests.fuzz.test_api_schemathesis import generated_requests
print(json.dumps(generated_requests(sys.argv[1])))
"""


def generated_in_a_fresh_process(label: str) -> list[list[str]]:
    done = subprocess.run(
        [sys.executable, "-c", GENERATE, label], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_the_fuzzer_sends_the_same_requests_on_every_run():
    """A fixed seed and no example database: two runs draw the same requests in the same
    order, so CI is not flaky and a failure seen once is seen again. Each run in a fresh
    process, as CI's is: schemathesis keeps state within a process (a second run in the
    same one draws other coverage cases), which no CI run sees."""
    label = "POST /api/v1/candidates"
    first = generated_in_a_fresh_process(label)
    assert len(first) > EXAMPLES_PER_OPERATION  # generated examples, on top of examples and coverage
    assert generated_in_a_fresh_process(label) == first
