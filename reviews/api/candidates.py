"""POST /api/v1/candidates: facts a host application extracted itself (SPEC §7)."""
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response

from ..models import Kind, MemoryScope, Scope
from ..domain import CandidateInput
from ..services.candidates import candidates_submit
from .base import ApiView, StrictSerializer
from .fields import BooleanField, FloatField, IdentifierField, TextField

MAX_CANDIDATES_PER_REQUEST = 500


class CandidateInputSerializer(StrictSerializer):
    entity_type = TextField(max_length=64)
    entity_id = IdentifierField()
    entity_name = TextField(max_length=200, required=False, allow_blank=True, default="")
    field = TextField(max_length=80)
    # Length is the policy's business (an over-long value is `rejected`/`invalid`); this
    # cap only bounds what one request may carry.
    value = TextField(allow_blank=True, trim_whitespace=False, max_length=20000)
    confidence = FloatField(min_value=0.0, max_value=1.0)
    source_message_id = IdentifierField(required=False, allow_blank=True, default="")
    evidence = TextField(max_length=4000, required=False, allow_blank=True, default="")
    kind = serializers.ChoiceField(choices=Kind.choices, required=False, default=Kind.FACT)
    scope = serializers.ChoiceField(choices=MemoryScope.choices, required=False, default=MemoryScope.LONG_TERM)
    thread_id = IdentifierField(required=False, allow_blank=True, default="")
    supersedes = BooleanField(required=False, default=False)

    def validate(self, attrs):
        if attrs["scope"] == MemoryScope.THREAD and not attrs["thread_id"]:
            raise serializers.ValidationError({"thread_id": ["Required when scope is 'thread'."]})
        return attrs


class SubmitResultSerializer(serializers.Serializer):
    # null when nothing was stored: the subject paused memory collection.
    candidate_id = serializers.IntegerField(allow_null=True)
    status = serializers.CharField()
    reason = serializers.CharField(required=False)
    fact_id = serializers.IntegerField(required=False)
    flags = serializers.ListField(child=serializers.CharField(), required=False,
                                  help_text="e.g. `unsupported`, `not_from_user` (SPEC §3 grounding).")


class CandidateSubmitApi(ApiView):
    required_scope = Scope.INGEST

    class InputSerializer(StrictSerializer):
        user_id = IdentifierField()
        candidates = CandidateInputSerializer(many=True, min_length=1, max_length=MAX_CANDIDATES_PER_REQUEST)

    class OutputSerializer(serializers.Serializer):
        results = SubmitResultSerializer(many=True)

    @extend_schema(
        request=InputSerializer,
        responses={201: OutputSerializer},
        summary="Submit candidate facts through the policy pipeline",
    )
    def post(self, request):
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        results = candidates_submit(
            tenant=self.tenant,
            user_id=data["user_id"],
            candidates=[CandidateInput(**item) for item in data["candidates"]],
            source=request.auth.source,
            actor=self.actor,
            extractor="api",
        )
        body = {
            "results": [
                {
                    "candidate_id": result.candidate_id,
                    "status": result.status,
                    "reason": result.reason,
                    **({"fact_id": result.fact_id} if result.fact_id else {}),
                    **({"flags": result.flags} if result.flags else {}),
                }
                for result in results
            ]
        }
        return Response(body, status=status.HTTP_201_CREATED)
