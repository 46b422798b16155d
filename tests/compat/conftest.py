"""Shared by the compatibility surfaces' tests: keys of any scopes, a subject's memory, and
a way to run the async clients."""
import asyncio
import threading

import pytest

from reviews.services.tenants import api_key_create

USER = "alice"


@pytest.fixture
def key(tenant):
    """key(*scopes, of=tenant) -> (ApiKey, raw key)."""

    def make(*scopes, of=None):
        return api_key_create(tenant=of or tenant, scopes=list(scopes))

    return make


@pytest.fixture
def memory(tenant, publish):
    """alice's name, her project's database and a sensitive fact, all published."""
    return {
        "name": publish(tenant, USER, field="name", value="Alice"),
        "database": publish(
            tenant, USER, entity_type="project", entity_id="flask-migration", field="database", value="PostgreSQL"
        ),
        "health": publish(tenant, USER, field="health", value="asthma"),
    }


def run_async(coroutine):
    """Run an async client's scenario to its end and return its result.

    Not plain ``asyncio.run``: in the whole suite the browser tests' Playwright (sync API)
    keeps an event loop running in the main thread, and ``asyncio.run`` refuses to start a
    second one there. A thread of its own has no loop, whichever tests ran before.
    """
    outcome = {}

    def target():
        try:
            outcome["value"] = asyncio.run(coroutine)
        except BaseException as error:  # handed back to the test's thread below
            outcome["error"] = error

    thread = threading.Thread(target=target, name="async-client")
    thread.start()
    thread.join()
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]
