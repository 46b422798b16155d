"""Every recipe of docs/integrations.md, extracted from the page and run as written
against a live server (the MCP one against the real mcp_server command)."""
import json
import os
import re
from pathlib import Path

import pytest
from django.db import connection
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, ToolMessage

from reviews.actors import SYSTEM
from reviews.models import Candidate, CandidateStatus, Fact, FactStatus, Message, Scope
from reviews.services.tenants import api_key_create, tenant_create
from reviews.background import publisher
from reviews.webhooks.delivery import deliver_due
from reviews.webhooks.endpoints import webhook_create
from tests.conftest import candidate
from tests.threads import call_in_thread
from tests.webhooks.conftest import private_allowed, receiver  # noqa: F401 - fixtures

os.environ["MEM0_TELEMETRY"] = "False"
pytestmark = pytest.mark.django_db(transaction=True)

PAGE = Path(__file__).resolve().parents[2] / "docs" / "integrations.md"
RECIPES = dict(re.findall(r"<!-- recipe: (\w+) -->\n```\w+\n(.*?)```", PAGE.read_text(), re.S))


class ToolCallingFake(GenericFakeChatModel):
    """A chat model that answers from a script, tool calls included (no LLM in tests)."""

    def bind_tools(self, tools, **kwargs):
        return self


@pytest.fixture
def demo(publish, live_server, monkeypatch):
    tenant = tenant_create(slug="demo", name="Demo")
    publish(tenant, "alice", field="name", value="Alice")
    publish(tenant, "alice", entity_type="project", entity_id="flask-migration", field="database", value="PostgreSQL")
    _, raw = api_key_create(tenant=tenant, scopes=list(Scope.values))
    monkeypatch.setenv("MEMORY_PORTAL_URL", live_server.url)
    monkeypatch.setenv("MEMORY_PORTAL_KEY", raw)
    return tenant


def run(name: str, **namespace) -> dict:
    namespace.setdefault("__name__", f"recipe_{name}")
    exec(compile(RECIPES[name], f"docs/integrations.md:{name}", "exec"), namespace)
    return namespace


def test_the_page_marks_every_recipe():
    assert set(RECIPES) == {"plain_http", "mem0", "mcp_host_config", "mcp_client", "langgraph", "legacy", "chat_confirm"}


def test_plain_http(demo, capsys):
    run("plain_http")
    out = capsys.readouterr().out
    assert out.splitlines()[0] == "auto_approved"
    assert "project flask-migration database = PostgreSQL" in out
    assert Fact.objects.filter(field="language", value="German", status=FactStatus.ACTIVE).exists()


def test_mem0_client(demo, capsys):
    run("mem0")
    assert "project flask-migration database: PostgreSQL" in capsys.readouterr().out
    assert Message.objects.filter(subject__user_id="alice", content__startswith="I prefer answers").exists()


def test_mcp_host_config_and_client(demo, mcp_url, monkeypatch, capsys):
    config = json.loads(RECIPES["mcp_host_config"])["mcpServers"]["memory-portal"]
    assert config["type"] == "http" and config["url"].endswith(":8765/mcp")
    assert config["headers"]["Authorization"].startswith("Bearer ")
    monkeypatch.setenv("MEMORY_PORTAL_MCP_URL", mcp_url)
    call_in_thread(lambda: run("mcp_client"))  # the recipe calls asyncio.run
    assert "database = PostgreSQL" in capsys.readouterr().out


def test_langgraph_create_agent_reads_the_store(demo, monkeypatch, capsys):
    settings = connection.settings_dict
    monkeypatch.setenv(
        "MEMORY_STORE_DSN", f"postgresql://{settings['USER']}@{settings['HOST']}:{settings['PORT']}/{settings['NAME']}"
    )
    model = ToolCallingFake(
        messages=iter(
            [
                AIMessage(content="", tool_calls=[{"name": "what_i_know_about_the_user", "args": {}, "id": "call-1"}]),
                AIMessage(content="Your project uses PostgreSQL."),
            ]
        )
    )
    namespace = run("langgraph", model=model)
    [tool_answer] = [m for m in namespace["answer"]["messages"] if isinstance(m, ToolMessage)]
    assert "name: Alice" in tool_answer.content
    assert "project flask-migration database: PostgreSQL" in tool_answer.content
    assert capsys.readouterr().out.strip() == "Your project uses PostgreSQL."


def test_legacy_entity_memory(demo, capsys):
    run("legacy", model=ToolCallingFake(messages=iter([])))
    assert "database: PostgreSQL" in capsys.readouterr().out
    # The summary is a candidate through the policy, never a fact.
    summary = Candidate.objects.get(field="summary")
    assert summary.fact_id is None
    assert not Fact.objects.filter(field="summary").exists()


def test_chat_confirm_asks_in_the_chat_and_answers_as_the_user(
    demo, submit, receiver, private_allowed, monkeypatch  # noqa: F811
):
    _, secret = webhook_create(tenant=demo, url=receiver.url, events=["candidate.pending_user"], actor=SYSTEM)
    _, subject_key = api_key_create(tenant=demo, scopes=[Scope.SUBJECT])
    monkeypatch.setenv("MEMORY_PORTAL_SUBJECT_KEY", subject_key)
    monkeypatch.setenv("MEMORY_PORTAL_WEBHOOK_SECRET", secret)
    namespace = run("chat_confirm")
    (asked,) = submit(demo, "alice", candidate(field="location", value="Berlin", confidence=0.6))
    publisher.drain()  # the commit's own send, in the background lane
    deliver_due()
    (request,) = receiver.requests
    question = namespace["on_webhook"](request.body, request.headers)
    assert question == "We are not sure we understood you. Is this right? Location: Berlin"
    assert namespace["on_user_reply"]("alice", asked.candidate_id, "yes") == "Memory updated."
    item = Candidate.objects.get(pk=asked.candidate_id)
    assert item.status == CandidateStatus.APPROVED and item.decided_by == "subject:alice"
    assert Fact.objects.get(pk=item.fact_id).value == "Berlin"
