"""An agent built the way LangGraph's long-term-memory docs show reads governed memory.

The tool is the docs' pattern unchanged (``runtime.store.get(namespace, user_id)``) on the
official store class; only the namespace is ours. It runs on committed data, as in
production: approval, edit and deletion commit, the projection task runs on commit, and
the agent sees each change within seconds.
"""
import time
from dataclasses import dataclass

import pytest
from django.db import connection
from langchain.agents import create_agent
from langchain.tools import ToolRuntime, tool

from reviews import publication
from reviews.actors import Actor
from reviews.models import Candidate
from reviews.services.candidates import candidate_approve
from reviews.services.erasure import fact_delete
from reviews.services.facts import fact_edit
from reviews.services.tenants import tenant_create
from tests.agents import OneToolCallModel
from tests.conftest import candidate

from .conftest import wipe

pytestmark = pytest.mark.django_db(transaction=True)
REVIEWER = Actor("reviewer", "r1")


@dataclass
class Context:
    tenant_id: str
    user_id: str


@tool
def get_user_info(runtime: ToolRuntime[Context]) -> str:
    """Look up user info."""
    store = runtime.store
    user_info = store.get(("tenants", runtime.context.tenant_id, "users"), runtime.context.user_id)
    return str(user_info.value) if user_info else "Unknown user"


@pytest.fixture
def official_store():
    """The store an agent process would open: PostgresStore from a connection string (its
    own connection, so it sees only committed rows), SqliteStore on SQLite."""
    projection_store = publication.get_store()
    wipe(projection_store)
    if connection.vendor == "postgresql":
        from langgraph.store.postgres import PostgresStore

        with PostgresStore.from_conn_string(publication.store_location()[1]) as store:
            yield store
    else:
        yield projection_store  # an in-memory test database: only this process can see it
    wipe(projection_store)


def ask(agent, context) -> str:
    result = agent.invoke({"messages": [{"role": "user", "content": "What do you know about me?"}]}, context=context)
    return result["messages"][-1].content


def eventually(agent, context, predicate, seconds=5.0) -> str:
    deadline = time.monotonic() + seconds
    while True:
        answer = ask(agent, context)
        if predicate(answer) or time.monotonic() > deadline:
            return answer
        time.sleep(0.1)


def test_the_agent_sees_approved_edited_and_deleted_facts(official_store, submit):
    tenant = tenant_create(slug="agents")
    agent = create_agent(
        model=OneToolCallModel(tool_name="get_user_info"), tools=[get_user_info], store=official_store, context_schema=Context
    )
    context = Context(tenant_id="agents", user_id="user-42")
    pending = submit(tenant, "user-42", candidate(field="name", value="Alice", confidence=0.85))[0]
    assert pending.status == "pending_review"
    assert ask(agent, context) == "Unknown user"  # nothing reaches the agent before approval

    version = Candidate.objects.get(pk=pending.candidate_id).version
    approved = candidate_approve(tenant=tenant, candidate_id=pending.candidate_id, version=version, actor=REVIEWER)
    answer = eventually(agent, context, lambda text: "Alice" in text)
    assert "'name': {'value': 'Alice'" in answer

    fact_edit(tenant=tenant, fact_id=approved.fact_id, value="Alicia", actor=REVIEWER)
    assert "'value': 'Alicia'" in eventually(agent, context, lambda text: "Alicia" in text)

    fact_delete(tenant=tenant, fact_id=approved.fact_id, actor=REVIEWER)
    assert eventually(agent, context, lambda text: text == "Unknown user") == "Unknown user"
