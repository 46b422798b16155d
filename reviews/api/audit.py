"""The tenant's audit trail (SPEC §6, §7): ``GET /api/v1/audit/export`` streams it,
``GET /api/v1/audit/events`` pages through it, newest first."""
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.response import Response

from ..selectors.audit import AUDIT_MAX_PAGE_SIZE, AUDIT_PAGE_SIZE, AuditCursor, audit_events_page
from ..exports import ExportFilters
from ..models import ExportFormat, Scope
from ..services.audit_export import audit_export_stream
from .base import ApiView, StrictSerializer, next_page_url, single_valued
from .fields import IdentifierField, IntegerField, TextField


class ExportFormatNegotiation(DefaultContentNegotiation):
    """``format`` names the export's file format here, not one of DRF's renderers; errors
    are still JSON."""

    def select_renderer(self, request, renderers, format_suffix=None):
        return renderers[0], renderers[0].media_type


class ExportFiltersSerializer(StrictSerializer):
    """The export's filters, shared by the API and the auditor page."""

    reads_query_text = True  # query parameters: every value is text (api/fields.py)

    format = serializers.ChoiceField(choices=ExportFormat.choices, required=False, default=ExportFormat.JSONL)
    since = serializers.DateTimeField(required=False, allow_null=True, default=None, help_text="Inclusive.")
    until = serializers.DateTimeField(required=False, allow_null=True, default=None, help_text="Exclusive.")
    action = TextField(
        max_length=64, required=False, default="", help_text="Exact, or a prefix ending in `*` (`fact.*`)."
    )
    actor = TextField(
        max_length=160, required=False, default="", help_text="Exact (`reviewer:3`), or a prefix ending in `*`."
    )
    user_id = IdentifierField(required=False, default="", help_text="The subject.")
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


class AuditEventSerializer(serializers.Serializer):
    """An event as the export writes it: what its hash covers, its values, its links."""

    seq = serializers.IntegerField()
    created_at = serializers.DateTimeField()
    actor = serializers.CharField(help_text="`reviewer:<id>`, `subject:<user_id>`, `policy`, `system`, `api_key:<prefix>`.")
    action = serializers.CharField()
    object_type = serializers.CharField()
    object_id = serializers.CharField()
    subject_user_id = serializers.CharField(allow_blank=True)
    before = serializers.JSONField(allow_null=True)
    after = serializers.JSONField(allow_null=True)
    reason = serializers.CharField(allow_blank=True)
    reason_code = serializers.CharField(allow_blank=True)
    request_id = serializers.CharField(allow_blank=True)
    erased = serializers.BooleanField(help_text="The subject was erased: only the digests remain.")
    before_digest = serializers.CharField(allow_blank=True)
    after_digest = serializers.CharField(allow_blank=True)
    reason_digest = serializers.CharField(allow_blank=True)
    prev_hash = serializers.CharField()
    hash = serializers.CharField()


class AuditEventsApi(ApiView):
    """The tenant's audit events matching the filters, newest first, keyset-paginated."""

    required_scope = Scope.ADMIN

    class InputSerializer(ExportFiltersSerializer):
        format = None
        limit = IntegerField(min_value=1, max_value=AUDIT_MAX_PAGE_SIZE, required=False, default=AUDIT_PAGE_SIZE)
        cursor = TextField(max_length=200, required=False, default="")

    class OutputSerializer(serializers.Serializer):
        results = AuditEventSerializer(many=True)
        next = serializers.URLField(allow_null=True)

    @extend_schema(
        parameters=[InputSerializer],
        responses={200: OutputSerializer},
        summary="Audit events, newest first, paged",
    )
    def get(self, request):
        params = self.InputSerializer(data=single_valued(request.query_params))
        params.is_valid(raise_exception=True)
        data = dict(params.validated_data)
        limit, token = data.pop("limit"), data.pop("cursor")
        page = audit_events_page(
            tenant=self.tenant,
            filters=ExportFilters(**data),
            cursor=AuditCursor.decode(token) if token else None,
            limit=limit,
        )
        next_url = next_page_url(request, page.next_cursor.encode()) if page.next_cursor else None
        return Response({"results": AuditEventSerializer(page.rows, many=True).data, "next": next_url})
