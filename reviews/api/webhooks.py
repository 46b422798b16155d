"""Webhook endpoints (SPEC §7, §7b): list, register (the secret shown once), remove; audited."""
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response

from ..models import Scope, WebhookEventType
from ..webhooks.endpoints import webhook_create, webhook_delete
from ..webhooks.selectors import tenant_endpoints
from .base import ApiView, StrictSerializer
from .fields import TextField


class WebhookEndpointSerializer(serializers.Serializer):
    id = serializers.IntegerField(source="pk")
    url = serializers.CharField()
    events = serializers.ListField(child=serializers.ChoiceField(choices=WebhookEventType.choices))
    description = serializers.CharField()
    created_at = serializers.DateTimeField()
    disabled_at = serializers.DateTimeField(help_text="Set when the endpoint failed for a day; null while enabled.")


class WebhooksApi(ApiView):
    required_scope = Scope.ADMIN

    class InputSerializer(StrictSerializer):
        url = TextField(
            max_length=2000,
            help_text="https:// and a public address, unless MEMORY_WEBHOOK_ALLOW_PRIVATE=1.",
        )
        events = serializers.ListField(
            child=serializers.ChoiceField(choices=WebhookEventType.choices), min_length=1, max_length=10
        )
        description = TextField(max_length=200, required=False, default="", allow_blank=True)

    class ListOutputSerializer(serializers.Serializer):
        results = WebhookEndpointSerializer(many=True)

    class CreateOutputSerializer(WebhookEndpointSerializer):
        secret = serializers.CharField(help_text="Signs every event (Standard Webhooks): shown this once.")

    @extend_schema(responses={200: ListOutputSerializer}, summary="This tenant's webhook endpoints")
    def get(self, request):
        StrictSerializer(data=request.query_params).is_valid(raise_exception=True)
        return Response(self.ListOutputSerializer({"results": tenant_endpoints(tenant=self.tenant)}).data)

    @extend_schema(
        request=InputSerializer,
        responses={201: CreateOutputSerializer},
        summary="Register a webhook endpoint (the secret is shown this once)",
    )
    def post(self, request):
        params = self.InputSerializer(data=request.data)
        params.is_valid(raise_exception=True)
        endpoint, secret = webhook_create(tenant=self.tenant, actor=self.actor, **params.validated_data)
        body = {**WebhookEndpointSerializer(endpoint).data, "secret": secret}
        return Response(body, status=status.HTTP_201_CREATED)  # never cached: NoStoreMiddleware


class WebhookDeleteApi(ApiView):
    required_scope = Scope.ADMIN

    @extend_schema(request=None, responses={204: None}, summary="Remove a webhook endpoint")
    def delete(self, request, endpoint_id: int):
        webhook_delete(tenant=self.tenant, endpoint_id=endpoint_id, actor=self.actor)
        return Response(status=status.HTTP_204_NO_CONTENT)
