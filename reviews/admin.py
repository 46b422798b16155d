"""Django admin: superusers see every tenant here, and only here (SPEC §4 roles).

Schema, policy, keys and staff are edited through the same services as the tenant admin
console, so every change here is audited like one made there (each form checks the change
with the service's own rules first, so a refused change is a form error). Memory rows are
read-only (every change to memory goes through a service); audit events can never be
changed.
"""
from django import forms
from django.contrib import admin, messages
from django.contrib.auth import get_user_model
from django.contrib.auth.admin import UserAdmin
from django.core.exceptions import ValidationError

from .actors import Actor
from .errors import DomainError
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
from .permissions import membership_of
from .services import governance, tenants
from .services.audit_export import audit_export_stream
from .services.ingest import extractions_rerun


def admin_actor(request) -> Actor:
    return Actor.reviewer(request.user)


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
        actor=admin_actor(request),
        events=queryset.order_by(),
    )
    return exporter.response()


class ServiceCheckedForm(forms.ModelForm):
    """Runs the service's own check of the change in ``clean``: a refused change is shown
    on the form instead of failing when the admin saves."""

    def service_check(self, data: dict) -> None:
        raise NotImplementedError

    def clean(self):
        data = super().clean()
        if not self.errors:
            try:
                self.service_check(data)
            except DomainError as exc:
                raise ValidationError(exc.message) from None
        return data

    def changes(self, names) -> dict:
        return {name: self.cleaned_data[name] for name in names if name in self.changed_data}


class ReadOnlyAdmin(admin.ModelAdmin):
    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


class FieldDefinitionForm(ServiceCheckedForm):
    class Meta:
        model = FieldDefinition
        fields = ["tenant", "entity_type", "field", *governance.FIELD_ATTRIBUTES]

    def service_check(self, data):
        definition = self.instance
        if definition.pk is None:
            attributes = {name: data.get(name) for name in governance.FIELD_ATTRIBUTES}
            governance.field_add_check(
                tenant=data.get("tenant") or definition.tenant,
                entity_type=data.get("entity_type"), field=data.get("field"), attributes=attributes,
            )
        else:
            governance.field_update_check(
                tenant=definition.tenant, entity_type=definition.entity_type, field=definition.field,
                changes=self.changes(governance.FIELD_ATTRIBUTES),
            )


def save_field_definition(request, form: FieldDefinitionForm, tenant: Tenant) -> FieldDefinition:
    definition = form.instance
    if definition.pk is None:
        attributes = {name: form.cleaned_data[name] for name in governance.FIELD_ATTRIBUTES}
        created = governance.field_add(
            tenant=tenant, entity_type=definition.entity_type, field=definition.field,
            attributes=attributes, actor=admin_actor(request),
        )
        definition.pk = created.pk
        return created
    return governance.field_update(
        tenant=tenant, entity_type=definition.entity_type, field=definition.field,
        changes=form.changes(governance.FIELD_ATTRIBUTES), actor=admin_actor(request),
    )


class FieldDefinitionInline(admin.TabularInline):
    model = FieldDefinition
    form = FieldDefinitionForm
    extra = 0
    can_delete = False  # a field with facts cannot go away; turn auto-approval off instead

    def get_readonly_fields(self, request, obj=None):
        return ["entity_type", "field"] if obj is not None else []


class TenantForm(ServiceCheckedForm):
    class Meta:
        model = Tenant
        fields = ["slug", "name", *governance.POLICY_SETTINGS, "extractor", "prompt_version"]

    def service_check(self, data):
        if self.instance.pk is None:
            return  # a new tenant starts from the defaults (tenant_create)
        tenant = Tenant.objects.get(pk=self.instance.pk)
        governance.tenant_policy_check(tenant=tenant, changes=self.changes(governance.POLICY_SETTINGS))
        governance.tenant_extractor_check(
            tenant=tenant, extractor=data.get("extractor", ""), prompt_version=data.get("prompt_version", "")
        )


@admin.register(Tenant)
class TenantAdmin(admin.ModelAdmin):
    form = TenantForm
    list_display = ["slug", "name", "reject_below", "confirm_below", "auto_approve_at", "extractor", "created_at"]
    search_fields = ["slug", "name"]
    inlines = [FieldDefinitionInline]

    def get_fields(self, request, obj=None):
        return ["slug", "name"] if obj is None else super().get_fields(request, obj)

    def get_readonly_fields(self, request, obj=None):
        return ["slug", "name"] if obj is not None else []

    def get_inlines(self, request, obj):
        return self.inlines if obj is not None else []  # a new tenant gets the default schema

    def has_delete_permission(self, request, obj=None):
        return False  # a tenant's memory leaves through erasure, with receipts

    def save_model(self, request, obj, form, change):
        actor = admin_actor(request)
        if not change:
            obj.pk = tenants.tenant_create(slug=obj.slug, name=obj.name, actor=actor).pk
            return
        tenant = governance.tenant_policy_update(
            tenant=obj, changes=form.changes(governance.POLICY_SETTINGS), actor=actor
        )
        governance.tenant_extractor_set(
            tenant=tenant, extractor=obj.extractor, prompt_version=obj.prompt_version, actor=actor
        )

    def save_formset(self, request, form, formset, change):
        # What formset.save() would have done, through the services; the admin's history
        # message reads these lists.
        formset.new_objects, formset.changed_objects, formset.deleted_objects = [], [], []
        for inline_form in formset.forms:
            if not inline_form.has_changed():
                continue
            is_new = inline_form.instance.pk is None
            definition = save_field_definition(request, inline_form, form.instance)
            if is_new:
                formset.new_objects.append(definition)
            else:
                formset.changed_objects.append((definition, inline_form.changed_data))


@admin.register(FieldDefinition)
class FieldDefinitionAdmin(admin.ModelAdmin):
    form = FieldDefinitionForm
    list_display = ["tenant", "entity_type", "field", "cardinality", "sensitivity", "category", "auto_approve", "retention_days"]
    list_filter = ["tenant", "entity_type", "sensitivity", "category"]

    def get_readonly_fields(self, request, obj=None):
        return ["tenant", "entity_type", "field"] if obj is not None else []

    def has_delete_permission(self, request, obj=None):
        return False  # a field with facts cannot go away; turn auto-approval off instead

    def save_model(self, request, obj, form, change):
        save_field_definition(request, form, obj.tenant)


class MembershipForm(ServiceCheckedForm):
    class Meta:
        model = Membership
        fields = ["user", "tenant", "role"]

    def service_check(self, data):
        membership = self.instance
        if membership.pk is None:
            tenants.staff_add_check(user=data.get("user"), role=data.get("role"))
        elif "role" in self.changed_data:
            tenants.staff_role_change_check(membership=Membership.objects.get(pk=membership.pk), role=data["role"])


@admin.register(Membership)
class MembershipAdmin(admin.ModelAdmin):
    form = MembershipForm
    list_display = ["user", "tenant", "role"]
    list_filter = ["tenant", "role"]

    def get_readonly_fields(self, request, obj=None):
        return ["user", "tenant"] if obj is not None else []

    def has_delete_permission(self, request, obj=None):
        return not (obj is not None and tenants.staff_is_last_admin(obj))

    def save_model(self, request, obj, form, change):
        actor = admin_actor(request)
        if not change:
            obj.pk = tenants.staff_add(tenant=obj.tenant, user=obj.user, role=obj.role, actor=actor).pk
        else:
            tenants.staff_role_change(tenant=obj.tenant, user_id=obj.user_id, role=obj.role, actor=actor)

    def delete_model(self, request, obj):
        tenants.staff_remove(tenant=obj.tenant, user_id=obj.user_id, actor=admin_actor(request))

    def delete_queryset(self, request, queryset):
        for membership in queryset.select_related("tenant"):
            try:
                self.delete_model(request, membership)
            except DomainError as exc:
                self.message_user(request, f"{membership}: {exc.message}", messages.ERROR)


User = get_user_model()
admin.site.unregister(User)


@admin.register(User)
class StaffAwareUserAdmin(UserAdmin):
    """Deleting an account that works in a tenant first takes it out of the tenant,
    audited (``staff.removed``), instead of letting the cascade drop its membership."""

    def has_delete_permission(self, request, obj=None):
        membership = membership_of(obj)
        return super().has_delete_permission(request, obj) and not (
            membership is not None and tenants.staff_is_last_admin(membership)
        )

    def delete_model(self, request, obj):
        membership = membership_of(obj)
        if membership is not None:
            tenants.staff_remove(tenant=membership.tenant, user_id=obj.pk, actor=admin_actor(request))
        super().delete_model(request, obj)

    def delete_queryset(self, request, queryset):
        for user in queryset:
            try:
                self.delete_model(request, user)
            except DomainError as exc:
                self.message_user(request, f"{user}: {exc.message}", messages.ERROR)


@admin.register(ApiKey)
class ApiKeyAdmin(admin.ModelAdmin):
    list_display = ["prefix", "tenant", "name", "scopes", "source", "created_at", "revoked_at"]
    list_filter = ["tenant", "source"]
    # The digest is useless to a person and the key itself is never stored.
    exclude = ["key_hash"]
    readonly_fields = ["prefix", "tenant", "name", "scopes", "source", "created_at", "revoked_at"]
    actions = ["revoke"]

    def has_add_permission(self, request):
        return False  # created in the tenant admin console, the API or `manage.py create_api_key`: shown once

    def has_delete_permission(self, request, obj=None):
        return False  # revoked, never deleted: the audit trail names it

    @admin.action(description="Revoke the selected API keys")
    def revoke(self, request, queryset):
        revoked = 0
        for key in queryset.select_related("tenant"):
            try:
                tenants.api_key_revoke(tenant=key.tenant, prefix=key.prefix, actor=admin_actor(request))
                revoked += 1
            except DomainError as exc:
                self.message_user(request, f"{key.prefix}: {exc.message}", messages.WARNING)
        self.message_user(request, f"{revoked} key(s) revoked.")


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
        "extractor", "prompt_version", "extraction_dropped", "extraction_error", "received_at",
    ]
    list_filter = ["extraction_status", "role", "extractor", "prompt_version"]
    search_fields = ["message_id", "thread_id", "subject__user_id"]
    actions = ["rerun_extraction"]

    @admin.action(description="Re-run extraction of the selected messages")
    def rerun_extraction(self, request, queryset):
        count = extractions_rerun(messages=queryset, actor=admin_actor(request))
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
