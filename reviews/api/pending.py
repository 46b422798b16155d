"""A subject's answers given inside the host app (SPEC §7): ``GET /api/v1/users/{user_id}/pending``
and ``POST …/pending/{id}/confirm`` · ``/reject``, scope ``subject``.

The host app acts for its signed-in user: the same questions as their "my memories" page,
in the language the request asks for (``Accept-Language``), and the same services and
transitions as that page, with the subject as the actor and the key's prefix recorded in
the event. Only the subject's ``pending_user`` items: another subject's item is a 404, an
item waiting for a reviewer a 403, a stale version a 409.
"""
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.response import Response

from ..actors import Actor
from ..models import Candidate, Scope, Subject
from ..selectors.portal import subject_waiting
from ..services.candidates import candidate_approve, candidate_reject
from .base import ApiErrorSerializer, ApiView, StrictSerializer
from .fields import IntegerField, TextField


class PendingItemSerializer(serializers.Serializer):
    id = serializers.IntegerField(source="candidate.pk")
    version = serializers.IntegerField(source="candidate.version")
    entity_type = serializers.CharField(source="candidate.entity_type")
    entity_id = serializers.SerializerMethodField()
    field = serializers.CharField(source="candidate.field")
    label = serializers.CharField(source="field_label", help_text="The field as the subject reads it.")
    value = serializers.CharField(source="candidate.value")
    question = serializers.CharField(help_text="What to ask the subject, ready to show.")
    reason = serializers.CharField(source="candidate.reason")
    created_at = serializers.DateTimeField(source="candidate.created_at")

    def get_entity_id(self, item) -> str:
        candidate = item.candidate
        return candidate.entity.entity_id if candidate.entity else candidate.entity_ref_id


class PendingListApi(ApiView):
    required_scope = Scope.SUBJECT

    class OutputSerializer(serializers.Serializer):
        results = PendingItemSerializer(many=True)

    @extend_schema(
        operation_id="users_pending_list",
        responses={200: OutputSerializer},
        summary="The subject's items waiting for their answer, with a question ready to show",
    )
    def get(self, request, user_id: str):
        StrictSerializer(data=request.query_params).is_valid(raise_exception=True)
        subject = Subject.objects.filter(tenant=self.tenant, user_id=user_id).select_related("tenant").first()
        items = subject_waiting(subject).questions if subject is not None else []
        return Response(self.OutputSerializer({"results": items}).data)


class PendingAnswerApi(ApiView):
    required_scope = Scope.SUBJECT

    class InputSerializer(StrictSerializer):
        version = IntegerField(min_value=1)

    class OutputSerializer(serializers.Serializer):
        id = serializers.IntegerField(source="pk")
        version = serializers.IntegerField()
        status = serializers.CharField()
        fact_id = serializers.IntegerField(allow_null=True)

    def answer(self, *, user_id: str, candidate_id: int, actor: Actor, data: dict) -> Candidate:
        raise NotImplementedError

    def post(self, request, user_id: str, candidate_id: int):
        params = self.InputSerializer(data=request.data)
        params.is_valid(raise_exception=True)
        actor = Actor.subject_through_key(user_id, request.auth)
        candidate = self.answer(user_id=user_id, candidate_id=candidate_id, actor=actor, data=params.validated_data)
        return Response(self.OutputSerializer(candidate).data)


class PendingConfirmApi(PendingAnswerApi):
    class InputSerializer(PendingAnswerApi.InputSerializer):
        value = TextField(
            max_length=4000, required=False, trim_whitespace=False, help_text="The subject's correction, if any."
        )

    @extend_schema(
        operation_id="users_pending_confirm",
        request=InputSerializer,
        responses={200: PendingAnswerApi.OutputSerializer, 409: ApiErrorSerializer},
        summary="The subject confirms (or corrects) an item; 409 if stale, 403 if a reviewer's",
    )
    def post(self, request, user_id: str, candidate_id: int):
        return super().post(request, user_id, candidate_id)

    def answer(self, *, user_id, candidate_id, actor, data):
        return candidate_approve(
            tenant=self.tenant, candidate_id=candidate_id, version=data["version"], value=data.get("value"),
            user_id=user_id, actor=actor,
        )


class PendingRejectApi(PendingAnswerApi):
    @extend_schema(
        operation_id="users_pending_reject",
        request=PendingAnswerApi.InputSerializer,
        responses={200: PendingAnswerApi.OutputSerializer, 409: ApiErrorSerializer},
        summary="The subject rejects an item; 409 if stale, 403 if a reviewer's",
    )
    def post(self, request, user_id: str, candidate_id: int):
        return super().post(request, user_id, candidate_id)

    def answer(self, *, user_id, candidate_id, actor, data):
        return candidate_reject(
            tenant=self.tenant, candidate_id=candidate_id, version=data["version"], user_id=user_id, actor=actor
        )
