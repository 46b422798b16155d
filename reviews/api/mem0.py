"""A mem0-compatible REST surface under ``/compat/mem0/`` (SPEC §7a).

Applications written against the ``mem0ai`` package switch to governed memory by pointing
``MemoryClient(api_key=<key>, host="<site>/compat/mem0")`` here. Each view is a thin
adapter over the services the v1 API uses, with Memory Portal's semantics:

- ``add`` ingests messages (extraction runs in the background); nothing is published by
  adding, so the answer says the memories are pending;
- every read goes through the recall policy (a recall record per call: the caller is
  the key, the recorded query says ``"channel": "mem0"``): published facts only,
  sensitive ones only for a key with ``recall:sensitive`` that asks
  (``include_sensitive=True``, or a fact named by id), thread-scoped ones only for
  their ``run_id``;
- ``update`` proposes a correction through the policy, with the key's source;
- ``delete`` and ``delete_all`` are deletion and erasure with receipts (scope ``admin``).

A mem0 "memory" is one published fact: ``id`` is the fact id, ``memory`` a one-line
rendering, ``metadata`` the structured parts. The mem0 client reads an error's ``detail``;
errors carry it beside the usual ``error`` object.
"""
from __future__ import annotations

import uuid
from dataclasses import replace

from rest_framework import permissions, serializers, status
from rest_framework.response import Response

from ..errors import InvalidInput, NotFound
from ..policy.identifiers import validate_identifier
from ..models import Fact, FactVersion, Scope
from ..recall.query import RECALL_MAX_LIMIT, RecallQuery
from ..domain import CandidateInput
from ..services.candidates import candidates_submit
from ..services.erasure import fact_erase, facts_delete
from ..services.ingest import MAX_CONTENT_LENGTH, MESSAGE_ROLES, messages_ingest
from ..domain import MessageInput
from ..recall.service import recall_perform
from ..selectors.subjects import published_fact_locate, subjects_with_published_facts
from .auth import ApiKeyAuthentication
from .base import ApiView, OnceEachParameter
from .errors import api_exception_handler
from .fields import BooleanField, IdentifierField, IntegerField, TextField

CHANNEL = "mem0"
DEFAULT_THREAD = "mem0"  # the thread of messages added without a run_id
MAX_MESSAGES_PER_ADD = 1000
MAX_ENTITIES_LISTED = 1000


class TokenAuthentication(ApiKeyAuthentication):
    """mem0's client sends ``Authorization: Token <key>``; ``Bearer`` works as well."""

    keyword = "Token"

    def authenticate(self, request):
        header = request.META.get("HTTP_AUTHORIZATION", "")
        if header[:7].lower() == "bearer ":
            return ApiKeyAuthentication().authenticate(request)
        return super().authenticate(request)


def mem0_exception_handler(exc, context):
    response = api_exception_handler(exc, context)
    if response is not None and isinstance(response.data, dict) and "error" in response.data:
        response.data = {"detail": response.data["error"]["message"], **response.data}
    return response


class Mem0Api(ApiView):
    authentication_classes = [TokenAuthentication]
    schema = None  # mem0's own API reference documents these paths, not /api/schema/

    def get_exception_handler(self):
        return mem0_exception_handler

    def recall(self, query: RecallQuery):
        return recall_perform(
            tenant=self.tenant,
            query=replace(query, channel=CHANNEL),
            actor=self.actor,
            may_see_sensitive=self.request.auth.has_scope(Scope.RECALL_SENSITIVE),
        )

    def recall_subject(self, data: dict, **query):
        """Recall for the subject (and thread) a read names; returns the user id and result."""
        user_id, thread_id = identity(data)
        _, result = self.recall(
            RecallQuery(user_id=user_id, thread_id=thread_id, include_sensitive=data["include_sensitive"], **query)
        )
        return user_id, result

    def visible_fact(self, fact_id: int) -> tuple[Fact, dict]:
        """A published fact this key may read, recalled (and so recorded) by id; else 404."""
        fact = published_fact_locate(tenant=self.tenant, fact_id=fact_id)
        may_see_sensitive = self.request.auth.has_scope(Scope.RECALL_SENSITIVE)
        _, result = self.recall(
            RecallQuery(
                user_id=fact.subject.user_id,
                fact_ids=(fact.pk,),
                thread_id=fact.thread_id,
                include_sensitive=may_see_sensitive,
                limit=1,
            )
        )
        if not result.facts:  # sensitive without the scope, or past its retention
            raise NotFound("No such memory.")
        return fact, result.facts[0]


class AnyKey(permissions.BasePermission):
    """Any valid key of the tenant, whatever its scopes."""

    def has_permission(self, request, view):
        return request.auth is not None


def memory_text(fact: dict) -> str:
    """``name: Alice`` for the subject's own facts, ``project flask-migration database:
    PostgreSQL`` for another entity's."""
    if fact["entity_type"] == "user":
        return f"{fact['field']}: {fact['value']}"
    return f"{fact['entity_type']} {fact['entity_id']} {fact['field']}: {fact['value']}"


def memory_body(fact: dict, *, user_id: str, created_at, score: float | None = None) -> dict:
    body = {
        "id": str(fact["id"]),
        "memory": memory_text(fact),
        "user_id": user_id,
        "categories": [fact["category"]],
        "metadata": {
            key: fact[key]
            for key in (
                "entity_type",
                "entity_id",
                "field",
                "value",
                "confidence",
                "sensitivity",
                "scope",
                "source",
                "source_message_id",
                "version",
            )
        },
        "created_at": created_at.isoformat() if created_at else fact["updated_at"],
        "updated_at": fact["updated_at"],
    }
    if score is not None:
        body["score"] = score
    return body


def memory_bodies(facts: list[dict], *, user_id: str, scores: list[float] | None = None) -> list[dict]:
    created = dict(Fact.objects.filter(pk__in=[fact["id"] for fact in facts]).values_list("pk", "created_at"))
    return [
        memory_body(
            fact,
            user_id=user_id,
            created_at=created.get(fact["id"]),
            score=None if scores is None else round(scores[index], 6),
        )
        for index, fact in enumerate(facts)
    ]


IDENTITY_KEYS = ("user_id", "run_id")
NAMED_TWICE = {
    "user_id": "Two different users are named; name one.",
    "run_id": "Two different runs (threads) are named; name one.",
}


class IdentityFilters(serializers.Serializer):
    """mem0 names the subject in ``filters`` (``{"user_id": …}``, or ``{"AND": [{"user_id": …},
    {"run_id": …}]}``); ``run_id`` is the thread. Agents, apps and other keys are ignored.
    Two different users (or runs) in one filter are refused: ``AND`` of two users matches
    nobody, and reading either one would be a guess."""

    def to_internal_value(self, data):
        if not isinstance(data, dict):
            raise serializers.ValidationError("Expected an object.")
        conditions = data.get("AND") or []
        if not isinstance(conditions, list):
            # A number here was iterated and raised a TypeError (a 500).
            raise serializers.ValidationError({"AND": ["Expected a list of conditions."]})
        flat = {}
        for item in [data, *conditions]:
            if not isinstance(item, dict):
                continue
            for key in IDENTITY_KEYS:
                if key in item:
                    if key in flat and flat[key] != item[key]:
                        raise serializers.ValidationError({key: [NAMED_TWICE[key]]})
                    flat[key] = item[key]
        for key, value in flat.items():
            try:
                validate_identifier(value, name=key)
            except InvalidInput as refused:
                raise serializers.ValidationError({key: [refused.message]}) from None
        return flat


def identity(data: dict) -> tuple[str, str]:
    """The subject and thread of a request, named at the top level (``user_id``, ``run_id``)
    or in ``filters``, or in both alike; two different ones are refused."""
    filters = data.get("filters") or {}
    for key in IDENTITY_KEYS:
        if data.get(key) and filters.get(key) and data[key] != filters[key]:
            raise serializers.ValidationError({key: [NAMED_TWICE[key]]})
    user_id = data.get("user_id") or filters.get("user_id")
    if not user_id:
        raise serializers.ValidationError({"filters": ["Name the user: filters={'user_id': '…'}."]})
    return user_id, data.get("run_id") or filters.get("run_id") or ""


class ReadInput(serializers.Serializer):
    """What every read names: the subject (and thread), and whether sensitive facts are asked for."""

    filters = IdentityFilters(required=False)
    user_id = IdentifierField(required=False)
    run_id = IdentifierField(required=False)
    include_sensitive = BooleanField(required=False, default=False)


class PingApi(Mem0Api):
    """Checks the key; the mem0 client needs an organisation and a project id: the tenant's slug."""

    permission_classes = [AnyKey]

    def get(self, request):
        slug = self.tenant.slug
        return Response({"status": "ok", "org_id": slug, "project_id": slug, "user_email": None})


class MessageSerializer(serializers.Serializer):
    role = serializers.ChoiceField(choices=MESSAGE_ROLES)
    content = TextField(allow_blank=True, trim_whitespace=False, max_length=MAX_CONTENT_LENGTH)


class AddApi(Mem0Api):
    """``client.add(messages, user_id=…)``: the messages are ingested; candidates are
    extracted in the background and go through the policy and review. Nothing is
    published by adding."""

    required_scope = Scope.INGEST

    class InputSerializer(serializers.Serializer):
        messages = MessageSerializer(many=True, min_length=1, max_length=MAX_MESSAGES_PER_ADD)
        user_id = IdentifierField(required=False)
        run_id = IdentifierField(required=False)
        filters = IdentityFilters(required=False)

    def post(self, request):
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        user_id, thread_id = identity(data)
        batch = uuid.uuid4().hex
        result = messages_ingest(
            tenant=self.tenant,
            messages=[
                MessageInput(
                    id=f"mem0-{batch}-{index}",
                    thread_id=thread_id or DEFAULT_THREAD,
                    user_id=user_id,
                    role=message["role"],
                    content=message["content"],
                )
                for index, message in enumerate(data["messages"])
            ],
            actor=self.actor,
        )
        body = {
            "status": "PENDING",
            "message": (
                "Messages accepted. Memories extracted from them are published once the policy "
                "or a reviewer approves them; search and get_all return published memories only."
            ),
            "event_id": batch,
            "results": [],
            "accepted": result.accepted,
            "duplicates": result.duplicates,
            "paused": result.paused,
        }
        return Response(body, status=status.HTTP_202_ACCEPTED)


class ListApi(Mem0Api):
    """``client.get_all(filters={"user_id": …})``: every published memory of the subject
    this key may read, paged (``page``, ``page_size``)."""

    required_scope = Scope.RECALL

    InputSerializer = ReadInput

    class PageSerializer(OnceEachParameter, serializers.Serializer):
        page = IntegerField(min_value=1, required=False, default=1)
        page_size = IntegerField(min_value=1, max_value=RECALL_MAX_LIMIT, required=False, default=100)

    def post(self, request):
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        paging = self.PageSerializer(data=request.query_params)
        paging.is_valid(raise_exception=True)
        page, size = paging.validated_data["page"], paging.validated_data["page_size"]
        user_id, result = self.recall_subject(
            serializer.validated_data, every_entity=True, explain=True, limit=page * size
        )
        total = len(result.facts) + sum(1 for item in result.excluded if item["reason"] == "limit")
        facts = result.facts[(page - 1) * size :]
        base = request.build_absolute_uri(request.path)
        return Response(
            {
                "count": total,
                "next": f"{base}?page={page + 1}&page_size={size}" if page * size < total else None,
                "previous": f"{base}?page={page - 1}&page_size={size}" if page > 1 else None,
                "results": memory_bodies(facts, user_id=user_id),
            }
        )


class SearchApi(Mem0Api):
    """``client.search(query, filters={"user_id": …}, top_k=…)``: the recall policy with
    ``q``; each result carries its relevance as ``score``."""

    required_scope = Scope.RECALL

    class InputSerializer(ReadInput):
        query = TextField(max_length=500)
        top_k = IntegerField(min_value=1, max_value=RECALL_MAX_LIMIT, required=False, default=10)

    def post(self, request):
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        # Relevant-only (SPEC §5): a search returns what bears on the query, not the default set.
        user_id, result = self.recall_subject(data, q=data["query"], relevant=True, limit=data["top_k"])
        return Response({"results": memory_bodies(result.facts, user_id=user_id, scores=result.scores)})


class MemoryApi(Mem0Api):
    """One memory: ``get`` (scope recall), ``update`` (scope ingest: a correction through
    the policy) and ``delete`` (scope admin: the fact and every copy of its value, with a
    receipt)."""

    scopes = {"GET": Scope.RECALL, "PUT": Scope.INGEST, "DELETE": Scope.ADMIN}

    @property
    def required_scope(self):
        return self.scopes.get(self.request.method, Scope.ADMIN)

    class UpdateSerializer(serializers.Serializer):
        text = TextField(max_length=1000, required=False)
        metadata = serializers.DictField(required=False)

    def get(self, request, memory_id: int):
        fact, recalled = self.visible_fact(memory_id)
        return Response(memory_body(recalled, user_id=fact.subject.user_id, created_at=fact.created_at))

    def put(self, request, memory_id: int):
        serializer = self.UpdateSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        if "text" not in serializer.validated_data:
            raise serializers.ValidationError({"text": ["Only the text of a memory can be corrected."]})
        fact, _ = self.visible_fact(memory_id)
        [result] = candidates_submit(
            tenant=self.tenant,
            user_id=fact.subject.user_id,
            candidates=[
                CandidateInput(
                    entity_type=fact.entity.entity_type,
                    entity_id=fact.entity.entity_id,
                    field=fact.field,
                    value=serializer.validated_data["text"],
                    confidence=1.0,
                    scope=fact.scope,
                    thread_id=fact.thread_id,
                    supersedes=True,
                )
            ],
            source=request.auth.source,
            actor=self.actor,
            extractor="mem0",
        )
        body = {
            "id": str(fact.pk),
            "message": "Correction proposed; the policy decided: " + result.status,
            "candidate_id": result.candidate_id,
            "status": result.status,
            "reason": result.reason,
        }
        if result.fact_id:
            body["fact_id"] = result.fact_id
        return Response(body)

    def delete(self, request, memory_id: int):
        receipt = fact_erase(tenant=self.tenant, fact_id=memory_id, actor=self.actor)
        return Response({"message": "Memory deleted successfully!", "receipt": receipt.as_dict()})


class HistoryApi(Mem0Api):
    """``client.history(id)``: every version of a published memory, oldest first."""

    required_scope = Scope.RECALL

    def get(self, request, memory_id: int):
        fact, _ = self.visible_fact(memory_id)
        versions = list(FactVersion.objects.filter(fact=fact).order_by("version"))
        history, previous = [], None
        for version in versions:
            history.append(
                {
                    "id": f"{fact.pk}-{version.version}",
                    "memory_id": str(fact.pk),
                    "user_id": fact.subject.user_id,
                    "old_memory": previous,
                    "new_memory": version.value,
                    "event": "ADD" if previous is None else "UPDATE",
                    "metadata": {
                        "version": version.version,
                        "source": version.source,
                        "actor": version.actor,
                        "reason": version.reason,
                    },
                    "created_at": version.created_at.isoformat(),
                    "updated_at": version.created_at.isoformat(),
                }
            )
            previous = version.value
        return Response(history)


class DeleteAllApi(Mem0Api):
    """``client.delete_all(user_id=…)``: erase the subject (with ``run_id``: one thread),
    answered with the receipt. Without a user it is refused, never "delete everything"."""

    required_scope = Scope.ADMIN

    class InputSerializer(OnceEachParameter, serializers.Serializer):
        user_id = IdentifierField(required=False)
        run_id = IdentifierField(required=False)

    def delete(self, request):
        serializer = self.InputSerializer(data=request.query_params)
        serializer.is_valid(raise_exception=True)
        user_id, thread_id = identity(serializer.validated_data)
        receipt = facts_delete(tenant=self.tenant, user_id=user_id, thread_id=thread_id or None, actor=self.actor)
        return Response({"message": "Memories deleted successfully!", "receipt": receipt.as_dict()})


class EntitiesApi(Mem0Api):
    """``client.users()``: the subjects with published memories, most recent first."""

    required_scope = Scope.RECALL

    def get(self, request):
        rows = subjects_with_published_facts(tenant=self.tenant, limit=MAX_ENTITIES_LISTED)
        results = [
            {
                "id": row["user_id"],
                "name": row["user_id"],
                "type": "user",
                "total_memories": row["total"],
                "owner": self.tenant.slug,
                "organization": self.tenant.slug,
                "metadata": {},
                "created_at": row["created_at"].isoformat(),
                "updated_at": row["updated_at"].isoformat(),
            }
            for row in rows
        ]
        return Response({"count": len(results), "results": results})
