"""``manage.py mcp_server`` driven by the official MCP SDK's own client over real HTTP
(SPEC §7a): the three tools, bearer keys, scopes, tenant isolation, records and audit."""

import httpx
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp.shared._httpx_utils import create_mcp_http_client

from reviews.audit import verify_tenant
from reviews.models import AuditAction, AuditEvent, Candidate, Fact, FactStatus, RecallRecord, Scope
from tests.compat.conftest import USER, run_async

pytestmark = pytest.mark.django_db(transaction=True)


def run(url, raw_key, *calls):
    """Connect with the SDK's client and make ``calls`` ((tool, arguments) or "list")."""

    async def session():
        http = create_mcp_http_client(headers={"Authorization": f"Bearer {raw_key}"})
        async with http, Client(streamable_http_client(url, http_client=http)) as client:
            results = []
            for call in calls:
                if call == "list":
                    results.append(await client.list_tools())
                else:
                    results.append(await client.call_tool(*call))
            return results

    return run_async(session())


def text_of(result) -> str:
    return " ".join(getattr(block, "text", "") for block in result.content)




def test_the_tools_describe_themselves(mcp_url, key):
    _, raw = key(Scope.RECALL)
    [tools] = run(mcp_url, raw, "list")
    by_name = {tool.name: tool for tool in tools.tools}
    assert set(by_name) == {"recall_memories", "propose_memory", "forget_memory"}
    assert set(by_name["propose_memory"].input_schema["required"]) == {
        "user_id", "entity_type", "entity_id", "field", "value"
    }
    assert "auto_approved" in by_name["propose_memory"].description
    assert by_name["forget_memory"].input_schema["required"] == ["user_id", "fact_id"]


def test_recall_propose_and_forget(mcp_url, key, memory, tenant):
    api_key, raw = key(Scope.INGEST, Scope.RECALL, Scope.ADMIN)
    recalled, named, proposed, sensitive, forgotten, after = run(
        mcp_url,
        raw,
        ("recall_memories", {"user_id": USER}),
        ("recall_memories", {"user_id": USER, "entity": ["project:flask-migration"]}),
        ("propose_memory", {"user_id": USER, "entity_type": "user", "entity_id": "me", "field": "language",
                            "value": "German", "confidence": 0.99, "evidence": "I speak German"}),
        ("propose_memory", {"user_id": USER, "entity_type": "user", "entity_id": "me", "field": "health",
                            "value": "asthma", "confidence": 0.99}),
        ("forget_memory", {"user_id": USER, "fact_id": memory["name"].pk}),
        ("recall_memories", {"user_id": USER, "entity": ["project:flask-migration"]}),
    )
    assert not recalled.is_error
    # The recall policy: by default the user's own facts, other entities when named.
    assert [fact["value"] for fact in recalled.structured_content["facts"]] == ["Alice"]
    assert {fact["value"] for fact in named.structured_content["facts"]} == {"Alice", "PostgreSQL"}

    assert proposed.structured_content["status"] == "auto_approved"
    language = Fact.objects.get(pk=proposed.structured_content["fact_id"])
    assert (language.value, language.source, language.status) == ("German", "chat", FactStatus.ACTIVE)
    # A sensitive field waits for the user's consent: the policy decides, not the tool.
    assert sensitive.structured_content["status"] == "pending_user"
    assert Candidate.objects.get(pk=sensitive.structured_content["candidate_id"]).fact_id is None

    assert forgotten.structured_content["scope"] == {"user_id": USER, "fact_id": memory["name"].pk}
    assert Fact.objects.get(pk=memory["name"].pk).status == FactStatus.DELETED
    assert {fact["value"] for fact in after.structured_content["facts"]} == {"German", "PostgreSQL"}

    records = RecallRecord.objects.filter(tenant=tenant).order_by("pk")
    assert [(record.caller, record.query["channel"]) for record in records] == [
        (f"api_key:{api_key.prefix}", "mcp")
    ] * 3
    actions = set(
        AuditEvent.objects.filter(tenant_id=tenant.pk, actor=f"api_key:{api_key.prefix}").values_list("action", flat=True)
    )
    assert {AuditAction.FACT_DELETED, AuditAction.MEMORY_DELETED} <= actions
    assert verify_tenant(tenant.pk).ok


def test_a_bad_key_gets_401(mcp_url):
    response = httpx.post(
        mcp_url,
        headers={"Authorization": "Bearer mp_not-a-key", "Accept": "application/json, text/event-stream"},
        json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
    )
    assert response.status_code == 401
    assert response.headers["www-authenticate"].startswith("Bearer")
    with pytest.raises(ExceptionGroup) as refused:  # the SDK's client fails the connection
        run(mcp_url, "mp_not-a-key", "list")
    assert refused.value.subgroup(lambda error: isinstance(error, MCPError)) is not None


def test_each_tool_needs_its_scope(mcp_url, key, memory):
    _, recall_only = key(Scope.RECALL)
    proposed, forgotten = run(
        mcp_url,
        recall_only,
        ("propose_memory", {"user_id": USER, "entity_type": "user", "entity_id": "me", "field": "language",
                            "value": "German"}),
        ("forget_memory", {"user_id": USER, "fact_id": memory["name"].pk}),
    )
    assert proposed.is_error and "'ingest' scope" in text_of(proposed)
    assert forgotten.is_error and "'admin' scope" in text_of(forgotten)
    assert Fact.objects.get(pk=memory["name"].pk).status == FactStatus.ACTIVE
    assert not Candidate.objects.filter(field="language").exists()

    _, ingest_only = key(Scope.INGEST)
    [recalled] = run(mcp_url, ingest_only, ("recall_memories", {"user_id": USER}))
    assert recalled.is_error and "'recall' scope" in text_of(recalled)
    assert not RecallRecord.objects.exists()


def test_another_tenant_sees_and_forgets_nothing(mcp_url, key, memory, other_tenant):
    _, outsider = key(*Scope.values, of=other_tenant)
    recalled, forgotten = run(
        mcp_url,
        outsider,
        ("recall_memories", {"user_id": USER, "query": "Alice"}),
        ("forget_memory", {"user_id": USER, "fact_id": memory["name"].pk}),
    )
    assert recalled.structured_content["facts"] == []
    assert forgotten.is_error
    assert Fact.objects.get(pk=memory["name"].pk).status == FactStatus.ACTIVE


def test_bad_arguments_are_tool_errors_and_store_nothing(mcp_url, key, tenant):
    _, raw = key(Scope.INGEST, Scope.RECALL)
    too_long, secret, bad_scope, boolean, control = run(
        mcp_url,
        raw,
        ("recall_memories", {"user_id": "x" * 200}),
        ("propose_memory", {"user_id": USER, "entity_type": "user", "entity_id": "me", "field": "name",
                            "value": "my password is hunter2-Secret!", "confidence": 0.99}),
        ("propose_memory", {"user_id": USER, "entity_type": "user", "entity_id": "me", "field": "name",
                            "value": "Alice", "scope": "forever"}),
        ("propose_memory", {"user_id": USER, "entity_type": "user", "entity_id": "me", "field": "name",
                            "value": "Alice", "confidence": True}),
        ("propose_memory", {"user_id": "a\nb", "entity_type": "user", "entity_id": "me", "field": "name",
                            "value": "Alice", "confidence": 0.97}),
    )
    assert too_long.is_error and "user_id" in text_of(too_long)
    assert secret.structured_content["status"] == "rejected"
    assert "hunter2" not in str(list(Candidate.objects.values_list("value", flat=True)))
    assert bad_scope.is_error and "scope" in text_of(bad_scope)
    assert boolean.is_error and "confidence" in text_of(boolean)  # not taken as 1.0 and auto-approved
    assert control.is_error and "user_id" in text_of(control)
    assert not Candidate.objects.filter(value="Alice").exists()


# Bodies the API's parser refuses, refused by the MCP server before the SDK reads them
# (reviews/mcp.py, CheckedBodies).

MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
TWO_USERS_CALL = (
    '{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "recall_memories",'
    ' "arguments": {"user_id": "alice", "user_id": "bob"}}}'
)


def test_a_key_given_twice_is_a_parse_error_with_nothing_recalled(mcp_url, key, memory):
    _, raw = key(Scope.RECALL)

    response = httpx.post(mcp_url, headers={**MCP_HEADERS, "Authorization": f"Bearer {raw}"}, content=TWO_USERS_CALL)

    assert response.status_code == 400, response.text
    assert response.json() == {
        "jsonrpc": "2.0",
        "id": None,
        "error": {"code": -32700, "message": 'Parse error: the key "user_id" appears more than once in one object'},
    }
    assert not RecallRecord.objects.exists()


def test_a_stranger_learns_nothing_of_the_body(mcp_url):
    response = httpx.post(mcp_url, headers={**MCP_HEADERS, "Authorization": "Bearer mp_not-a-key"}, content=TWO_USERS_CALL)

    assert response.status_code == 401, response.text
    assert "appears more than once" not in response.text


def test_malformed_json_is_still_the_sdks_to_answer(mcp_url, key):
    _, raw = key(Scope.RECALL)

    response = httpx.post(mcp_url, headers={**MCP_HEADERS, "Authorization": f"Bearer {raw}"}, content=b'{"jsonrpc": ')

    assert response.status_code == 400, response.text
    error = response.json()["error"]
    assert error["code"] == -32700 and error["message"].startswith("Parse error: ")
    assert "appears more than once" not in error["message"]


def test_a_body_over_the_limit_is_a_413_the_client_reads(mcp_url, key, settings):
    _, raw = key(Scope.RECALL)
    limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE  # the server's too: both read MEMORY_MAX_BODY_BYTES
    call = {"jsonrpc": "2.0", "id": 8, "method": "tools/call",
            "params": {"name": "recall_memories", "arguments": {"user_id": "alice", "query": "x" * (limit + 1)}}}

    response = httpx.post(mcp_url, headers={**MCP_HEADERS, "Authorization": f"Bearer {raw}"}, json=call, timeout=30)

    assert response.status_code == 413, response.text
    assert response.json()["error"] == {"code": -32600, "message": f"The request body is larger than {limit} bytes."}
    assert not RecallRecord.objects.exists()
