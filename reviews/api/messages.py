"""POST /api/v1/messages: conversation messages in; extraction runs in the background (SPEC §7)."""
from drf_spectacular.utils import OpenApiExample, extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response

from ..models import Scope
from ..services.ingest import MAX_CONTENT_LENGTH, MESSAGE_ROLES, messages_ingest
from ..domain import MessageInput
from .base import ApiView, StrictSerializer
from .fields import IdentifierField, TextField

MAX_MESSAGES_PER_REQUEST = 1000


class MessageInputSerializer(StrictSerializer):
    id = IdentifierField()
    thread_id = IdentifierField()
    user_id = IdentifierField()
    role = serializers.ChoiceField(choices=MESSAGE_ROLES)
    content = TextField(allow_blank=True, trim_whitespace=False, max_length=MAX_CONTENT_LENGTH)
    created_at = serializers.DateTimeField(required=False)


class MessagesIngestApi(ApiView):
    required_scope = Scope.INGEST

    class InputSerializer(StrictSerializer):
        messages = MessageInputSerializer(many=True, min_length=1, max_length=MAX_MESSAGES_PER_REQUEST)

    class OutputSerializer(serializers.Serializer):
        accepted = serializers.IntegerField(help_text="Messages stored now.")
        duplicates = serializers.IntegerField(help_text="Message ids already stored (or repeated in the batch).")
        paused = serializers.IntegerField(help_text="Messages of subjects who paused collection: not kept.")

    @extend_schema(
        request=InputSerializer,
        responses={202: OutputSerializer},
        summary="Send conversation messages; candidate facts are extracted in the background",
        examples=[
            OpenApiExample(
                "Two messages",
                request_only=True,
                value={
                    "messages": [
                        {"id": "m-1", "thread_id": "t-1", "user_id": "user-42", "role": "user",
                         "content": "我负责 Flask 迁移项目，项目使用 MySQL。", "created_at": "2026-11-01T09:00:00Z"},
                        {"id": "m-2", "thread_id": "t-1", "user_id": "user-42", "role": "assistant",
                         "content": "好的，记下了。"},
                    ]
                },
            )
        ],
    )
    def post(self, request):
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        result = messages_ingest(
            tenant=self.tenant,
            messages=[MessageInput(**item) for item in serializer.validated_data["messages"]],
            actor=self.actor,
        )
        body = {"accepted": result.accepted, "duplicates": result.duplicates, "paused": result.paused}
        return Response(body, status=status.HTTP_202_ACCEPTED)
