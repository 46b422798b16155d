"""Shared by the compatibility surfaces' tests: keys of any scopes, a subject's memory, and
a way to run the async clients."""
import asyncio

import pytest

from reviews.services.tenants import api_key_create
from tests.threads import call_in_thread

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
    """Run an async client's scenario to its end in a thread of its own (see tests.threads)."""
    return call_in_thread(lambda: asyncio.run(coroutine))
