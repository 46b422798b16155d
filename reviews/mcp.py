"""The MCP server (SPEC §7a): governed memory as three tools for any MCP host.

Built on the official ``mcp`` SDK (``MCPServer``), served over streamable HTTP at ``/mcp``
by ``manage.py mcp_server``. Callers authenticate with ``Authorization: Bearer <key>``,
the API's keys: the SDK's bearer middleware answers 401 for a missing or unknown key,
and each tool checks the scope the matching API endpoint needs. The tools are adapters:
their input is validated by the API's serializers and they call the API's services, so
recall leaves a recall record (the key as caller, channel ``mcp``), a proposal goes
through the policy and a deletion returns its receipt, every write audited.
"""
from __future__ import annotations

from http import HTTPStatus
from typing import Any

from pydantic import StrictFloat, StrictInt

from asgiref.sync import sync_to_async
from django.conf import settings
from django.db import close_old_connections
from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import INVALID_REQUEST, PARSE_ERROR, ErrorData, JSONRPCError
from starlette.responses import Response

from .actors import Actor
from .api.auth import key_in_authorization
from .api.candidates import CandidateInputSerializer
from .api.parsers import RepeatedKey, strict_loads
from .api.recall import RecallApi
from .errors import DomainError
from .policy.identifiers import validate_identifier
from .web.middleware import drain_bound
from .models import ApiKey, Scope
from .recall.query import RecallQuery
from .domain import CandidateInput
from .services.candidates import candidates_submit
from .services.erasure import fact_erase
from .recall.service import recall_perform
from .services.api_keys import api_key_mark_used
from .services.tenants import api_key_authenticate

CHANNEL = "mcp"

INSTRUCTIONS = (
    "Memory Portal keeps governed long-term memory about the people you talk to. "
    "Call recall_memories at the start of a conversation (and when the user mentions a "
    "project or asks what you know) to get the approved facts about them. When the user "
    "states a lasting fact about themselves or their work, call propose_memory: it is "
    "checked by a policy and may wait for review, so do not tell the user it is saved "
    "unless the returned status is 'auto_approved'. Call forget_memory only when the user "
    "asks you to forget a specific fact."
)


class ApiKeyVerifier:
    """The SDK's TokenVerifier over the API's keys: a bearer token is a key of one tenant."""

    async def verify_token(self, token: str) -> AccessToken | None:
        key = await sync_to_async(_authenticate)(token)
        if key is None:
            return None
        return AccessToken(token=token, client_id=str(Actor.api_key(key)), scopes=list(key.scopes))


class CheckedBodies:
    """ASGI middleware around the SDK's app: what the API's parser refuses in a body, the
    MCP server refuses too, before the SDK reads it (it would take both).

    - A body over ``MEMORY_MAX_BODY_BYTES``: a JSON-RPC error with HTTP 413, after the
      rest of the body was read and thrown away (up to the API's bound), so the client
      can read it. The SDK reads any body whole into memory.
    - A key given twice in one object (reviews/api/parsers.py, ``strict_loads``):
      a JSON-RPC parse error with HTTP 400, as the SDK answers malformed JSON. The SDK
      keeps a repeated key's last value: ``{"user_id": "alice", "user_id": "bob"}`` in a
      tool's arguments would recall bob. Only for a caller with a valid key; anyone else
      gets the SDK's 401 and learns nothing about the body.

    Anything else, malformed JSON included, is the SDK's to answer, from the same bytes.
    """

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http" or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        received, size = [], 0
        while True:
            message = await receive()
            received.append(message)
            if message["type"] != "http.request":
                break  # the client went away: the SDK sees that too
            size += len(message.get("body", b""))
            if size > limit:
                await _drain(receive, message, size, drain_bound(limit))
                await _json_rpc_error(scope, send, HTTPStatus.REQUEST_ENTITY_TOO_LARGE, INVALID_REQUEST,
                                      f"The request body is larger than {limit} bytes.")
                return
            if not message.get("more_body"):
                break
        body = b"".join(message.get("body", b"") for message in received if message["type"] == "http.request")
        problem = _repeated_key(body)
        if problem and await _caller_is_known(scope):
            await _json_rpc_error(scope, send, HTTPStatus.BAD_REQUEST, PARSE_ERROR, f"Parse error: {problem}")
            return

        async def replay():
            return received.pop(0) if received else await receive()

        await self.app(scope, replay, send)


async def _drain(receive, message, size: int, bound: int) -> None:
    while message.get("more_body") and size <= bound:
        message = await receive()
        if message["type"] != "http.request":
            return
        size += len(message.get("body", b""))


def _repeated_key(body: bytes) -> str | None:
    """What the API's parser says of a key given twice in ``body``; None if none is, or if
    the body is not JSON at all (the SDK says so in its own words)."""
    try:
        strict_loads(body)
    except RepeatedKey as repeated:
        return str(repeated)
    except (ValueError, RecursionError):
        pass
    return None


async def _caller_is_known(scope) -> bool:
    token = key_in_authorization(dict(scope["headers"]).get(b"authorization", b"").decode("latin-1"))
    return token is not None and await ApiKeyVerifier().verify_token(token) is not None


async def _json_rpc_error(scope, send, status: HTTPStatus, code: int, message: str) -> None:
    """The error as the SDK shapes its own (a JSON-RPC error without an id)."""
    error = JSONRPCError(jsonrpc="2.0", id=None, error=ErrorData(code=code, message=message))
    response = Response(error.model_dump_json(by_alias=True, exclude_unset=True), status_code=status,
                        media_type="application/json")
    await response(scope, _nothing_more, send)


async def _nothing_more():
    return {"type": "http.disconnect"}


def _authenticate(raw_key: str) -> ApiKey | None:
    close_old_connections()
    key = api_key_authenticate(raw_key)
    if key is not None:
        api_key_mark_used(key)
    return key


def _key_with_scope(scope: str) -> ApiKey:
    """The calling key, re-checked (a revocation counts), holding ``scope``; else a tool error."""
    access = get_access_token()
    key = _authenticate(access.token) if access else None
    if key is None:
        raise ToolError("Unknown or revoked API key.")
    if not key.has_scope(scope):
        raise ToolError(f"This API key lacks the '{scope}' scope.")
    return key


def _validated(serializer_class, data: dict) -> dict:
    serializer = serializer_class(data=data)
    if not serializer.is_valid():
        raise ToolError(f"Invalid arguments: {dict(serializer.errors)}")
    return serializer.validated_data


def _call(function, *args):
    """Run a synchronous, database-touching tool body; domain errors become tool errors."""

    def run():
        close_old_connections()
        try:
            return function(*args)
        except DomainError as error:
            raise ToolError(error.message) from error

    return sync_to_async(run)()


def recall(arguments: dict) -> dict:
    key = _key_with_scope(Scope.RECALL)
    data = _validated(RecallApi.InputSerializer, arguments)
    query = RecallQuery(
        user_id=data["user_id"],
        entities=tuple(tuple(ref.split(":", 1)) for ref in dict.fromkeys(data["entity"])),
        q=data["q"],
        # With a query, only what bears on it (SPEC §5): the agent's context stays small.
        relevant=bool(data["q"].strip()),
        thread_id=data["thread_id"],
        limit=data["limit"],
        channel=CHANNEL,
    )
    record, result = recall_perform(
        tenant=key.tenant, query=query, actor=Actor.api_key(key), may_see_sensitive=key.has_scope(Scope.RECALL_SENSITIVE)
    )
    return {"recall_id": record.pk, "user_id": query.user_id, "facts": result.facts}


def propose(user_id: str, candidate: dict) -> dict:
    key = _key_with_scope(Scope.INGEST)
    validate_identifier(user_id, name="user_id")
    data = _validated(CandidateInputSerializer, candidate)
    [result] = candidates_submit(
        tenant=key.tenant,
        user_id=user_id,
        candidates=[CandidateInput(**data)],
        source=key.source,
        actor=Actor.api_key(key),
        extractor=CHANNEL,
    )
    answer = {"candidate_id": result.candidate_id, "status": result.status, "reason": result.reason}
    if result.fact_id:
        answer["fact_id"] = result.fact_id
    return answer


def forget(user_id: str, fact_id: int) -> dict:
    key = _key_with_scope(Scope.ADMIN)
    validate_identifier(user_id, name="user_id")
    receipt = fact_erase(tenant=key.tenant, fact_id=fact_id, user_id=user_id, actor=Actor.api_key(key))
    return receipt.as_dict()


def build_server(*, public_url: str) -> MCPServer:
    """The server with its three tools; ``public_url`` is where hosts reach it (no ``/mcp``)."""
    server = MCPServer(
        "memory-portal",
        title="Memory Portal",
        instructions=INSTRUCTIONS,
        token_verifier=ApiKeyVerifier(),
        auth=AuthSettings(
            issuer_url=public_url,
            resource_server_url=f"{public_url}/mcp",
            # The key itself names its tenant; there is no audience to check.
            validate_token_resource=False,
        ),
    )

    @server.tool(
        name="recall_memories",
        description=(
            "Get the approved facts Memory Portal holds about a user. Returns the user's own "
            "facts and preferences by default; other entities (projects, organisations) only "
            "when named in `entity` (e.g. ['project:flask-migration']). With `query`, only the facts "
            "that bear on it, ranked by meaning in any language (none when nothing does). "
            "Thread-scoped facts come only with their `thread_id`. Each fact has entity_type, "
            "entity_id, field, value, confidence and version. Nothing unapproved is ever returned."
        ),
    )
    async def recall_memories(
        user_id: str, query: str = "", entity: list[str] | None = None, thread_id: str = "", limit: StrictInt = 50
    ) -> dict[str, Any]:
        arguments = {"user_id": user_id, "q": query, "entity": entity or [], "thread_id": thread_id, "limit": limit}
        return await _call(recall, arguments)

    @server.tool(
        name="propose_memory",
        description=(
            "Propose a fact about a user for long-term memory, e.g. entity_type='user', "
            "entity_id='me', field='location', value='Berlin'; or entity_type='project', "
            "entity_id='flask-migration', field='database', value='PostgreSQL'. Use only what "
            "the user stated explicitly; quote their words in `evidence`. Never propose "
            "credentials. The policy decides: 'auto_approved' means published now; "
            "'pending_review' or 'pending_user' means a reviewer or the user will decide; "
            "'rejected' comes with a reason (e.g. field_not_allowed, secret_detected). "
            "Set scope='thread' with thread_id for something that only holds in this conversation."
        ),
    )
    async def propose_memory(
        user_id: str,
        entity_type: str,
        entity_id: str,
        field: str,
        value: str,
        # Strict: pydantic would take `true` as 1.0 (SPEC §7: a boolean is not a number).
        confidence: StrictFloat = 0.9,
        evidence: str = "",
        scope: str = "long_term",
        thread_id: str = "",
    ) -> dict[str, Any]:
        candidate = {
            "entity_type": entity_type,
            "entity_id": entity_id,
            "field": field,
            "value": value,
            "confidence": confidence,
            "evidence": evidence,
            "scope": scope,
            "thread_id": thread_id,
        }
        return await _call(propose, user_id, candidate)

    @server.tool(
        name="forget_memory",
        description=(
            "Delete one published fact of a user (its id comes from recall_memories) and every "
            "copy of its value; the value will not be proposed again. Only when the user asks "
            "to forget that fact. Needs an API key with the 'admin' scope. Returns a receipt of "
            "what was deleted where."
        ),
    )
    async def forget_memory(user_id: str, fact_id: StrictInt) -> dict[str, Any]:
        return await _call(forget, user_id, fact_id)

    return server
