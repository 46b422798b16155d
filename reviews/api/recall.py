"""GET /api/v1/recall: the facts an agent may receive, under SPEC §5's policy.

Recall is the API's busiest call, so its usual request (GET or HEAD from a client that
asks for JSON or names no type) is answered by a plain Django view, ``recall``: the key,
scope and rate checked by ``api_key_gate`` (the same classes as DRF's views), the
parameters by ``RECALL_PARAMETERS`` (the serializer's own fields, bound once), failures in
SPEC §7's shape by ``error_answer``, the body rendered by DRF's JSONRenderer. DRF's dispatch
(its Request, negotiation and Response) is what it leaves out: 1.5x the instructions of
the rest of the request. Everything else (another method, an Accept list to negotiate)
goes to ``RecallApi``, which also declares the operation for the OpenAPI schema
(reviews/api/schema.py, ``document_plain_views``).
"""
from django.http import HttpResponse
from django.views.decorators.csrf import csrf_exempt
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.renderers import JSONRenderer
from rest_framework.response import Response

from ..actors import Actor
from ..models import Category, MemoryScope, Scope, Sensitivity, Source
from ..recall.query import (
    RECALL_DEFAULT_LIMIT,
    RECALL_MAX_ENTITIES,
    RECALL_MAX_FIELDS,
    RECALL_MAX_LIMIT,
    Exclusion,
    RecallQuery,
)
from ..recall.service import recall_perform
from .base import ApiView, StrictSerializer, api_key_gate, asks_for_plain
from .errors import error_answer
from .fields import IdentifierField, IntegerField, TextField
from .query_params import QueryParameters


class RecalledFactSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    entity_type = serializers.CharField()
    entity_id = serializers.CharField()
    field = serializers.CharField()
    value = serializers.CharField()
    confidence = serializers.FloatField()
    category = serializers.ChoiceField(choices=Category.choices)
    sensitivity = serializers.ChoiceField(choices=Sensitivity.choices)
    scope = serializers.ChoiceField(choices=MemoryScope.choices)
    source = serializers.ChoiceField(choices=Source.choices)
    source_message_id = serializers.CharField(allow_blank=True)
    version = serializers.IntegerField()
    updated_at = serializers.DateTimeField()
    score = serializers.FloatField(
        required=False, help_text="Only with `explain=true` and `q`: the fact's relevance to `q`."
    )


class ExcludedFactSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    reason = serializers.ChoiceField(
        choices=[
            Exclusion.SENSITIVE,
            Exclusion.OTHER_THREAD,
            Exclusion.NOT_REQUESTED,
            Exclusion.EXPIRED,
            Exclusion.LIMIT,
        ]
    )


class RecallApi(ApiView):
    """The subject's published facts an agent may receive (SPEC §5), best first.

    Default: the subject's `user` entity and `preference` facts; other entities when named
    (`entity`) or when their relevance to `q` passes the threshold (`q` ranks by meaning,
    across Chinese and English, and by words; `relevant=true` keeps only what bears on it); thread-scoped facts only for their `thread_id`; sensitive
    facts only with the `recall:sensitive` scope and `include_sensitive=true`. Every call
    is recorded; `recall_id` names the record. `explain=true` adds what was left out and
    why, without values, and each fact's `score` when `q` is given.
    """

    required_scope = Scope.RECALL

    class InputSerializer(StrictSerializer):
        reads_query_text = True  # query parameters: every value is text (api/fields.py)

        user_id = IdentifierField()
        entity = serializers.ListField(
            child=serializers.RegexField(r"^[^:\s]{1,64}:\S.{0,199}$", max_length=265),
            required=False,
            default=list,
            max_length=RECALL_MAX_ENTITIES,
            help_text="Repeatable `type:id`, e.g. `project:flask-migration`.",
        )
        field = serializers.ListField(
            child=TextField(max_length=80),
            required=False,
            default=list,
            max_length=RECALL_MAX_FIELDS,
            help_text="Repeatable; only these fields are returned.",
        )
        q = TextField(max_length=500, required=False, allow_blank=True, default="")
        relevant = serializers.BooleanField(
            required=False, default=False,
            help_text="With `q`: only the facts that bear on it, near-duplicates folded; none when nothing does.",
        )
        thread_id = IdentifierField(required=False, allow_blank=True, default="")
        include_sensitive = serializers.BooleanField(required=False, default=False)
        explain = serializers.BooleanField(required=False, default=False)
        limit = IntegerField(
            min_value=1, max_value=RECALL_MAX_LIMIT, required=False, default=RECALL_DEFAULT_LIMIT
        )

    class OutputSerializer(serializers.Serializer):
        recall_id = serializers.IntegerField()
        user_id = serializers.CharField()
        facts = RecalledFactSerializer(many=True)
        excluded = ExcludedFactSerializer(many=True, required=False, help_text="Only with `explain=true`.")

    @extend_schema(
        parameters=[InputSerializer],
        responses={200: OutputSerializer},
        summary="Recall a subject's published facts",
    )
    def get(self, request):
        return Response(recall_answer(RECALL_PARAMETERS.validate(request.query_params), request.auth))


RECALL_PARAMETERS = QueryParameters(RecallApi.InputSerializer)


def recall_answer(data: dict, key) -> dict:
    """Recall for ``key`` with validated parameters: the documented body (RecallOutput)."""
    query = RecallQuery(
        user_id=data["user_id"],
        entities=tuple(tuple(ref.split(":", 1)) for ref in dict.fromkeys(data["entity"])),
        fields=tuple(dict.fromkeys(data["field"])),
        q=data["q"],
        relevant=data["relevant"],
        thread_id=data["thread_id"],
        include_sensitive=data["include_sensitive"],
        explain=data["explain"],
        limit=data["limit"],
    )
    record, result = recall_perform(
        tenant=key.tenant,
        query=query,
        actor=Actor.api_key(key),
        may_see_sensitive=key.has_scope(Scope.RECALL_SENSITIVE),
    )
    # Built directly rather than through OutputSerializer: the selector already returns
    # the documented shape, and recall is the API's busiest read.
    body = {"recall_id": record.pk, "user_id": query.user_id, "facts": result.facts}
    if query.explain:
        body["excluded"] = result.excluded
        if query.q:
            body["facts"] = [{**fact, "score": score} for fact, score in zip(result.facts, result.scores)]
    return body


JSON = JSONRenderer.media_type
PLAIN_METHODS = ("GET", "HEAD")  # HEAD runs GET, as Django's and DRF's views do
# RecallApi's ``Allow`` header, which DRF sends on every answer (the tests compare them).
ALLOWED = "GET, HEAD, OPTIONS"
negotiated_recall = RecallApi.as_view()


@csrf_exempt  # as every DRF view: an API key, not a cookie, authenticates the call
def recall(request):
    """GET /api/v1/recall, answered as RecallApi answers it (tests/api/test_recall_api.py
    compares the two), without DRF's dispatch."""
    if request.method not in PLAIN_METHODS or not asks_for_plain(request, JSON):
        return negotiated_recall(request)
    try:
        key = api_key_gate(request, RecallApi.required_scope)
        status, body, headers = 200, recall_answer(RECALL_PARAMETERS.validate(request.GET), key), {}
    except Exception as failure:
        answer = error_answer(failure)
        if answer is None:
            raise  # a bug: Django logs it and answers 500 (in SPEC §7's shape under /api/)
        status, body, headers = answer
    response = HttpResponse(JSONRenderer().render(body), content_type=JSON, status=status, headers=headers)
    response["Allow"] = ALLOWED
    return response
