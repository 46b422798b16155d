"""An agent searches the LangGraph Store by meaning (SPEC §5 "The Store searches too").

The projection is written into a SqliteStore indexed with the configured embedder
(sqlite-vec); the agent's process opens the same file with the same index and its tool
calls ``store.search(("tenants", tenant, "users", user_id), query=...)`` with the user's
own words, in English, for facts stated in Chinese. The official ``create_agent``, a fake
chat model that calls the tool, committed data as in production.
"""
from dataclasses import dataclass

import pytest
from langchain.agents import create_agent
from langchain.tools import ToolRuntime, tool
from langgraph.store.sqlite import SqliteStore

from reviews import publication
from reviews.embeddings.store import projected_text, sqlite_connect, store_index
from reviews.services.tenants import tenant_create
from tests.agents import OneToolCallModel
from tests.conftest import candidate

pytestmark = pytest.mark.django_db(transaction=True)


@dataclass
class Context:
    tenant_id: str
    user_id: str


@tool
def search_memories(query: str, runtime: ToolRuntime[Context]) -> str:
    """Search what is known about the user's projects and organisations."""
    found = runtime.store.search(("tenants", runtime.context.tenant_id, "users", runtime.context.user_id),
                                 query=query, limit=1)
    return f"{found[0].namespace[-1]}:{found[0].key}" if found else "nothing"


@pytest.fixture
def sqlite_store_path(tmp_path, settings):
    path = tmp_path / "store.sqlite3"
    publication.close_store()
    settings.MEMORY_STORE_URL = f"sqlite:///{path}"
    yield path
    publication.close_store()


def test_an_agent_finds_a_chinese_fact_with_an_english_question(sqlite_store_path, submit):
    tenant = tenant_create(slug="agents")
    submit(tenant, "user-42",
           candidate(entity_type="project", entity_id="billing", entity_name="计费系统", field="database",
                     value="阿里云上的 PostgreSQL", confidence=0.97),
           candidate(entity_type="project", entity_id="mobile-app", entity_name="手机应用", field="status",
                     value="三月已上线", confidence=0.97),
           candidate(entity_type="organization", entity_id="healthfirst", entity_name="康健保险", field="industry",
                     value="医疗保险", confidence=0.97))
    projection = publication.get_store()
    assert projection.index_config is not None  # the projection's store is indexed

    agent_store = SqliteStore(sqlite_connect(str(sqlite_store_path)), index=store_index())
    agent_store.setup()  # loads sqlite-vec into this connection
    agent = create_agent(model=OneToolCallModel(tool_name="search_memories", question_as="query"), tools=[search_memories], store=agent_store, context_schema=Context)
    context = Context(tenant_id="agents", user_id="user-42")

    def ask(question):
        result = agent.invoke({"messages": [{"role": "user", "content": question}]}, context=context)
        return result["messages"][-1].content

    try:
        assert ask("which database stores the billing data?") == "project:billing"
        assert ask("what sector is their employer in?") == "organization:healthfirst"
        assert ask("has the app been launched yet?") == "project:mobile-app"
    finally:
        agent_store.conn.close()


def test_the_store_embeds_a_projected_value_as_sentences():
    value = '{"facts": {"database": {"value": "MySQL 8", "confidence": 0.9}, "tech_stack": [{"value": "Django"}]}}'
    assert projected_text(value) == "database: MySQL 8; tech stack: Django"
    assert projected_text("which database") == "which database"
