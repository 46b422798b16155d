"""API keys (SPEC §7): ``GET /api/v1/keys`` lists them, ``POST /api/v1/keys`` creates one
(the key shown this once, with an optional expiry), ``POST /api/v1/keys/{prefix}/rotate``
replaces one (the old key ends after a grace period), ``DELETE /api/v1/keys/{prefix}``
revokes one. Every change audited, naming the key by its prefix."""
from datetime import timedelta

from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response

from ..models import ApiKey, Scope, Source
from ..services.api_keys import MAX_GRACE, api_key_rotate
from ..services.tenants import API_KEY_SOURCES, api_key_create, api_key_revoke
from .base import ApiErrorSerializer, ApiView, StrictSerializer
from .fields import IntegerField, TextField

# Also names the schema's enum (SPECTACULAR_SETTINGS["ENUM_NAME_OVERRIDES"]).
API_KEY_SOURCE_CHOICES = [(s.value, s.label) for s in API_KEY_SOURCES]


class ApiKeySerializer(serializers.Serializer):
    prefix = serializers.CharField(help_text="Names the key in the audit trail and in `DELETE /api/v1/keys/{prefix}`.")
    scopes = serializers.ListField(child=serializers.ChoiceField(choices=Scope.choices))
    source = serializers.ChoiceField(choices=API_KEY_SOURCE_CHOICES)
    name = serializers.CharField(allow_blank=True)
    expires_at = serializers.DateTimeField(allow_null=True, help_text="Refused from then on; null: until revoked.")


class ApiKeyStateSerializer(ApiKeySerializer):
    """A key as the list shows it: when it was made, last used, and how it ended."""

    created_at = serializers.DateTimeField()
    last_used_at = serializers.DateTimeField(allow_null=True, help_text="To the minute; null: never used.")
    revoked_at = serializers.DateTimeField(allow_null=True)
    replaced_by = serializers.CharField(allow_blank=True, help_text="The prefix of the key that rotation made to replace it.")


class ApiKeyCreateApi(ApiView):
    required_scope = Scope.ADMIN

    class InputSerializer(StrictSerializer):
        scopes = serializers.ListField(child=serializers.ChoiceField(choices=Scope.choices), min_length=1, max_length=10)
        source = serializers.ChoiceField(
            choices=API_KEY_SOURCE_CHOICES, required=False, default=Source.CHAT,
            help_text="The source of the candidates this key submits (SPEC §3 priorities).",
        )
        name = TextField(max_length=100, required=False, default="", allow_blank=True)
        expires_at = serializers.DateTimeField(
            required=False, default=None, allow_null=True, help_text="Refused from then on; in the future."
        )

    class OutputSerializer(ApiKeySerializer):
        key = serializers.CharField(help_text="The key itself: shown this once, never stored.")

    class ListSerializer(serializers.Serializer):
        results = ApiKeyStateSerializer(many=True)

    @extend_schema(responses={200: ListSerializer}, summary="List this tenant's API keys")
    def get(self, request):
        keys = ApiKey.objects.filter(tenant=self.tenant).order_by("-created_at", "-pk")
        return Response(self.ListSerializer({"results": keys}).data)

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


class ApiKeyRotateApi(ApiView):
    required_scope = Scope.ADMIN

    class InputSerializer(StrictSerializer):
        grace_seconds = IntegerField(
            required=False, default=None, allow_null=True, min_value=0, max_value=int(MAX_GRACE.total_seconds()),
            help_text="How long the old key keeps working (default MEMORY_API_KEY_ROTATION_GRACE_SECONDS).",
        )
        expires_at = serializers.DateTimeField(
            required=False, default=None, allow_null=True, help_text="The new key's own expiry, if any."
        )

    class OutputSerializer(ApiKeySerializer):
        key = serializers.CharField(help_text="The new key itself: shown this once, never stored.")
        replaces = serializers.CharField(help_text="The old key's prefix.")
        replaced_until = serializers.DateTimeField(help_text="When the old key stops working.")

    @extend_schema(
        request=InputSerializer,
        responses={201: OutputSerializer, 409: ApiErrorSerializer},  # revoked, expired or rotated already
        summary="Rotate an API key: a new key with the same scopes; the old one ends after a grace period",
    )
    def post(self, request, prefix: str):
        params = self.InputSerializer(data=request.data)
        params.is_valid(raise_exception=True)
        seconds = params.validated_data["grace_seconds"]
        new, raw_key, old = api_key_rotate(
            tenant=self.tenant,
            prefix=prefix,
            actor=self.actor,
            grace=timedelta(seconds=seconds) if seconds is not None else None,
            expires_at=params.validated_data["expires_at"],
        )
        body = self.OutputSerializer(
            {"key": raw_key, "replaces": old.prefix, "replaced_until": old.expires_at, **ApiKeySerializer(new).data}
        ).data
        return Response(body, status=status.HTTP_201_CREATED)
