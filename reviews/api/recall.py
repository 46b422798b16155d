"""GET /api/v1/recall: the facts an agent may receive, under SPEC §5's policy."""
from types import SimpleNamespace

from django.http import HttpResponse
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.exceptions import APIException, AuthenticationFailed, Throttled
from rest_framework.response import Response

from ..actors import Actor
from ..errors import DomainError
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
from ..recall.records import recall_records_settled_on_exit
from .auth import ApiKeyAuthentication, HasScope
from .base import ApiKeyRateThrottle, ApiView, FlatQuerySerializer, asks_for_plain
from .fields import IdentifierField, IntegerField


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

    class InputSerializer(FlatQuerySerializer):
        user_id = IdentifierField()
        entity = serializers.ListField(
            child=serializers.RegexField(r"^[^:\s]{1,64}:\S.{0,199}$", max_length=265),
            required=False,
            default=list,
            max_length=RECALL_MAX_ENTITIES,
            help_text="Repeatable `type:id`, e.g. `project:flask-migration`.",
        )
        field = serializers.ListField(
            child=serializers.CharField(max_length=80),
            required=False,
            default=list,
            max_length=RECALL_MAX_FIELDS,
            help_text="Repeatable; only these fields are returned.",
        )
        q = serializers.CharField(max_length=500, required=False, allow_blank=True, default="")
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
        serializer = self.InputSerializer(data=request.query_params)
        serializer.is_valid(raise_exception=True)
        return Response(self._recall(serializer.validated_data, request.auth))

    def dispatch(self, request, *args, **kwargs):
        """Recall is the API's hot path. The request nearly every agent sends (a GET that
        asks for plain JSON, a live key with the scope, valid parameters, under its rate)
        skips DRF's request wrapper, negotiation and response rendering, and passes the
        same checks on the plain request: the key (ApiKeyAuthentication),
        the scope (HasScope), the parameters (InputSerializer), the rate
        (ApiKeyRateThrottle). Any other request is handed to DRF before anything was
        counted or read, and a refusal after that (the rate, the sensitive scope) goes
        through DRF's exception handler: every 4xx, in SPEC §7's shape, comes from one
        place. DRF checks the rate before the parameters; the lean path checks the
        parameters first only to know whether it can serve the call, and counts it once
        either way.
        """
        if kwargs or request.method != "GET" or not asks_for_plain(request, self.renderer_classes[0].media_type):
            return super().dispatch(request, *args, **kwargs)
        try:
            authenticated = ApiKeyAuthentication().authenticate(request)
        except AuthenticationFailed:
            authenticated = None
        if authenticated is None:
            return super().dispatch(request, *args, **kwargs)
        principal, key = authenticated
        checked = SimpleNamespace(auth=key)  # what HasScope and the throttle read
        if not HasScope().has_permission(checked, self):
            return super().dispatch(request, *args, **kwargs)
        data = self.InputSerializer.valid_data(request.GET)
        if data is None:  # DRF's path says what is wrong with it
            return super().dispatch(request, *args, **kwargs)
        throttle = ApiKeyRateThrottle()
        if not throttle.allow_request(checked, self):
            return self._refusal(request, Throttled(throttle.wait()))
        request.user = principal  # as DRF leaves it for what runs after the view
        renderer = self.renderer_classes[0]()
        try:
            # The record's hand-off is settled after the rendering, not before it
            # (reviews/recall/records.py), and before anything is answered.
            with recall_records_settled_on_exit():
                content = renderer.render(self._recall(data, key))
        except (APIException, DomainError) as error:
            return self._refusal(request, error)
        response = HttpResponse(content, content_type=renderer.media_type)
        for header, value in self.default_response_headers.items():
            response[header] = value
        return response

    def _refusal(self, request, error):
        """A refusal on the lean path (the rate, the sensitive scope), through DRF's handler."""
        self.request = self.initialize_request(request)
        self.headers = self.default_response_headers
        self.format_kwarg = None
        negotiated = self.perform_content_negotiation(self.request, force=True)
        self.request.accepted_renderer, self.request.accepted_media_type = negotiated
        return self.finalize_response(self.request, self.handle_exception(error))

    def _recall(self, data: dict, key) -> dict:
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
        # Built directly rather than through OutputSerializer: this is the hot path, and
        # the selector already returns the documented shape.
        body = {"recall_id": record.pk, "user_id": query.user_id, "facts": result.facts}
        if query.explain:
            body["excluded"] = result.excluded
            if query.q:
                body["facts"] = [{**fact, "score": score} for fact, score in zip(result.facts, result.scores)]
        return body
