"""GET /api/v1/recall: the facts an agent may receive, under SPEC §5's policy."""
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.response import Response

from ..models import Category, MemoryScope, Scope, Sensitivity, Source
from ..selectors import (
    RECALL_DEFAULT_LIMIT,
    RECALL_MAX_ENTITIES,
    RECALL_MAX_FIELDS,
    RECALL_MAX_LIMIT,
    Exclusion,
    RecallQuery,
)
from ..services.recall import recall_perform
from .base import ApiView, FlatQuerySerializer
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
    (`entity`) or matched by `q`; thread-scoped facts only for their `thread_id`; sensitive
    facts only with the `recall:sensitive` scope and `include_sensitive=true`. Every call
    is recorded; `recall_id` names the record. `explain=true` adds what was left out and
    why, without values.
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
        data = serializer.validated_data
        query = RecallQuery(
            user_id=data["user_id"],
            entities=tuple(tuple(ref.split(":", 1)) for ref in dict.fromkeys(data["entity"])),
            fields=tuple(dict.fromkeys(data["field"])),
            q=data["q"],
            thread_id=data["thread_id"],
            include_sensitive=data["include_sensitive"],
            explain=data["explain"],
            limit=data["limit"],
        )
        record, result = recall_perform(
            tenant=self.tenant,
            query=query,
            actor=self.actor,
            may_see_sensitive=request.auth.has_scope(Scope.RECALL_SENSITIVE),
        )
        # Built directly rather than through OutputSerializer: this is the hot path, and
        # the selector already returns the documented shape.
        body = {"recall_id": record.pk, "user_id": query.user_id, "facts": result.facts}
        if query.explain:
            body["excluded"] = result.excluded
        return Response(body)
