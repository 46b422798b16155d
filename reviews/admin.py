"""Django admin: superusers see every tenant here, and only here (SPEC §4 roles).

Schema and policy are editable; memory rows are read-only (every change to memory goes
through a service, so it is audited); audit events can never be changed.
"""
from django.contrib import admin, messages

from .actors import Actor
from .exports import ExportFilters
from .models import (
    ApiKey,
    AuditEvent,
    Candidate,
    Entity,
    ExportFormat,
    Fact,
    FieldDefinition,
    Membership,
    Message,
    RecallRecord,
    Subject,
    Tenant,
)
from .services.audit_export import audit_export_stream


def export_audit_selection(model_admin, request, queryset, format):
    """Stream the selected events of one tenant (a chain is per tenant), audited like any export."""
    tenant_ids = list(queryset.order_by().values_list("tenant_id", flat=True).distinct()[:2])
    if len(tenant_ids) != 1:
        model_admin.message_user(request, "Select the events of one tenant (filter by tenant id).", messages.ERROR)
        return None
    exporter = audit_export_stream(
        tenant=Tenant.objects.get(pk=tenant_ids[0]),
        filters=ExportFilters(),
        format=format,
        actor=Actor.reviewer(request.user),
        events=queryset.order_by(),
    )
    return exporter.response()


class ReadOnlyAdmin(admin.ModelAdmin):
    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


class FieldDefinitionInline(admin.TabularInline):
    model = FieldDefinition
    extra = 0


@admin.register(Tenant)
class TenantAdmin(admin.ModelAdmin):
    list_display = ["slug", "name", "reject_below", "confirm_below", "auto_approve_at", "created_at"]
    search_fields = ["slug", "name"]
    inlines = [FieldDefinitionInline]


@admin.register(FieldDefinition)
class FieldDefinitionAdmin(admin.ModelAdmin):
    list_display = ["tenant", "entity_type", "field", "cardinality", "sensitivity", "category", "auto_approve", "retention_days"]
    list_filter = ["tenant", "entity_type", "sensitivity", "category"]


@admin.register(Membership)
class MembershipAdmin(admin.ModelAdmin):
    list_display = ["user", "tenant", "role"]
    list_filter = ["tenant", "role"]


@admin.register(ApiKey)
class ApiKeyAdmin(admin.ModelAdmin):
    list_display = ["prefix", "tenant", "name", "scopes", "source", "created_at", "revoked_at"]
    list_filter = ["tenant", "source"]
    # The digest is useless to a person and the key itself is never stored.
    exclude = ["key_hash"]
    readonly_fields = ["prefix", "tenant", "source", "created_at"]

    def has_add_permission(self, request):
        return False  # keys are created with `manage.py create_api_key`, which shows them once


@admin.register(Subject)
class SubjectAdmin(ReadOnlyAdmin):
    list_display = ["user_id", "tenant", "collection_paused", "created_at"]
    list_filter = ["tenant"]
    search_fields = ["user_id"]


@admin.register(Entity)
class EntityAdmin(ReadOnlyAdmin):
    list_display = ["entity_type", "entity_id", "display_name", "subject", "is_new"]
    list_filter = ["entity_type"]


@admin.register(Message)
class MessageAdmin(ReadOnlyAdmin):
    list_display = [
        "message_id", "subject", "thread_id", "role", "extraction_status", "extraction_attempts",
        "extraction_error", "received_at",
    ]
    list_filter = ["extraction_status", "role"]
    search_fields = ["message_id", "thread_id", "subject__user_id"]
    actions = ["rerun_extraction"]

    @admin.action(description="Re-run extraction of the selected messages")
    def rerun_extraction(self, request, queryset):
        from .actors import Actor
        from .services.ingest import extractions_rerun

        count = extractions_rerun(messages=queryset, actor=Actor.reviewer(request.user))
        self.message_user(request, f"{count} message(s) sent to extraction again (done and skipped ones are left alone).")


@admin.register(Candidate)
class CandidateAdmin(ReadOnlyAdmin):
    list_display = ["id", "subject", "entity_type", "field", "status", "reason", "confidence", "created_at"]
    list_filter = ["status", "reason", "entity_type", "source"]


@admin.register(Fact)
class FactAdmin(ReadOnlyAdmin):
    list_display = ["id", "subject", "entity", "field", "version", "status", "sensitivity", "updated_at"]
    list_filter = ["status", "sensitivity", "category"]


@admin.register(RecallRecord)
class RecallRecordAdmin(ReadOnlyAdmin):
    list_display = ["id", "tenant", "user_id", "caller", "created_at"]


@admin.register(AuditEvent)
class AuditEventAdmin(ReadOnlyAdmin):
    list_display = ["seq", "tenant_id", "created_at", "actor", "action", "object_type", "object_id", "subject_user_id"]
    list_filter = ["action", "tenant_id"]
    actions = ["export_jsonl", "export_csv"]

    @admin.action(description="Export selected audit events (JSON Lines, with manifest)")
    def export_jsonl(self, request, queryset):
        return export_audit_selection(self, request, queryset, ExportFormat.JSONL)

    @admin.action(description="Export selected audit events (CSV, with manifest)")
    def export_csv(self, request, queryset):
        return export_audit_selection(self, request, queryset, ExportFormat.CSV)
