"""API keys (SPEC §7): ``POST /api/v1/keys`` creates one (the key shown this once),
``DELETE /api/v1/keys/{prefix}`` revokes one. Both audited, naming the key by its prefix."""
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response

from ..models import Scope, Source
from ..services.tenants import API_KEY_SOURCES, api_key_create, api_key_revoke
from .base import ApiErrorSerializer, ApiView, StrictSerializer

# Also names the schema's enum (SPECTACULAR_SETTINGS["ENUM_NAME_OVERRIDES"]).
API_KEY_SOURCE_CHOICES = [(s.value, s.label) for s in API_KEY_SOURCES]


class ApiKeySerializer(serializers.Serializer):
    prefix = serializers.CharField(help_text="Names the key in the audit trail and in `DELETE /api/v1/keys/{prefix}`.")
    scopes = serializers.ListField(child=serializers.ChoiceField(choices=Scope.choices))
    source = serializers.ChoiceField(choices=API_KEY_SOURCE_CHOICES)
    name = serializers.CharField(allow_blank=True)


class ApiKeyCreateApi(ApiView):
    required_scope = Scope.ADMIN

    class InputSerializer(StrictSerializer):
        scopes = serializers.ListField(child=serializers.ChoiceField(choices=Scope.choices), min_length=1, max_length=10)
        source = serializers.ChoiceField(
            choices=API_KEY_SOURCE_CHOICES, required=False, default=Source.CHAT,
            help_text="The source of the candidates this key submits (SPEC §3 priorities).",
        )
        name = serializers.CharField(max_length=100, required=False, default="", allow_blank=True)

    class OutputSerializer(ApiKeySerializer):
        key = serializers.CharField(help_text="The key itself: shown this once, never stored.")

    @extend_schema(
        request=InputSerializer,
        responses={201: OutputSerializer},
        summary="Create an API key of this tenant (the key is shown this once)",
    )
    def post(self, request):
        params = self.InputSerializer(data=request.data)
        params.is_valid(raise_exception=True)
        key, raw_key = api_key_create(tenant=self.tenant, actor=self.actor, **params.validated_data)
        body = self.OutputSerializer({"key": raw_key, **ApiKeySerializer(key).data}).data
        return Response(body, status=status.HTTP_201_CREATED)  # never cached: NoStoreMiddleware


class ApiKeyRevokeApi(ApiView):
    required_scope = Scope.ADMIN

    class OutputSerializer(ApiKeySerializer):
        revoked_at = serializers.DateTimeField()

    @extend_schema(
        request=None,
        responses={200: OutputSerializer, 409: ApiErrorSerializer},  # already revoked
        summary="Revoke an API key of this tenant (effective within MEMORY_API_KEY_CACHE_SECONDS)",
    )
    def delete(self, request, prefix: str):
        key = api_key_revoke(tenant=self.tenant, prefix=prefix, actor=self.actor)
        return Response(self.OutputSerializer(key).data)
