"""GET /api/v1/audit/export: the tenant's audit trail, streamed (SPEC §6, §7)."""
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.negotiation import DefaultContentNegotiation

from ..exports import ExportFilters
from ..models import ExportFormat, Scope
from ..services.audit_export import audit_export_stream
from .base import ApiView, StrictSerializer
from .recall import ApiErrorSerializer


class ExportFormatNegotiation(DefaultContentNegotiation):
    """``format`` names the export's file format here, not one of DRF's renderers; errors
    are still JSON."""

    def select_renderer(self, request, renderers, format_suffix=None):
        return renderers[0], renderers[0].media_type


class ExportFiltersSerializer(StrictSerializer):
    """The export's filters, shared by the API and the auditor page."""

    format = serializers.ChoiceField(choices=ExportFormat.choices, required=False, default=ExportFormat.JSONL)
    since = serializers.DateTimeField(required=False, allow_null=True, default=None, help_text="Inclusive.")
    until = serializers.DateTimeField(required=False, allow_null=True, default=None, help_text="Exclusive.")
    action = serializers.CharField(
        max_length=64, required=False, default="", help_text="Exact, or a prefix ending in `*` (`fact.*`)."
    )
    actor = serializers.CharField(
        max_length=160, required=False, default="", help_text="Exact (`reviewer:3`), or a prefix ending in `*`."
    )
    user_id = serializers.CharField(max_length=128, required=False, default="", help_text="The subject.")
    object = serializers.RegexField(
        r"^[\w.-]{1,32}(:.{1,64})?$", max_length=97, required=False, default="", help_text="`type` or `type:id`."
    )

    def validate(self, attrs):
        if attrs["since"] and attrs["until"] and attrs["since"] >= attrs["until"]:
            raise serializers.ValidationError({"until": ["Must be after `since`."]})
        return attrs

    def filters(self) -> ExportFilters:
        data = dict(self.validated_data)
        data.pop("format")
        return ExportFilters(**data)


class AuditExportApi(ApiView):
    """Every audit event of the tenant matching the filters, oldest first, as JSON Lines or
    CSV, streamed. The last record is the manifest: row count, sequence and time range,
    filters, the chain head when the export started and the SHA-256 of what precedes it;
    `manage.py verify_audit --file` checks a saved export against it."""

    required_scope = Scope.ADMIN
    content_negotiation_class = ExportFormatNegotiation

    @extend_schema(
        parameters=[ExportFiltersSerializer],
        responses={
            (200, "application/x-ndjson"): OpenApiResponse(OpenApiTypes.STR, description="JSON Lines"),
            (200, "text/csv"): OpenApiResponse(OpenApiTypes.STR, description="CSV"),
            **{code: ApiErrorSerializer for code in (400, 401, 403, 429)},
        },
        summary="Export the audit trail (streamed)",
    )
    def get(self, request):
        serializer = ExportFiltersSerializer(data=request.query_params)
        serializer.is_valid(raise_exception=True)
        exporter = audit_export_stream(
            tenant=self.tenant,
            filters=serializer.filters(),
            format=serializer.validated_data["format"],
            actor=self.actor,
        )
        return exporter.response()
