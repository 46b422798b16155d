"""The tenant admin console (SPEC §4 tenant admin): the field schema, thresholds and source
priorities, the active extractor and prompt version, API keys, staff and roles.

Every change takes two steps. The first POST checks it with the service's own check and
shows what will change (before → after); the second (``step=save``) calls the service and
shows the audit event it wrote. Views parse, call a service, render; with htmx the
section is swapped in place, without it the whole page comes back (no JavaScript needed).
Only tenant admins get here: other staff are refused (403), strangers find nothing (404).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta
from functools import wraps
from typing import Callable

from django import forms
from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import formats, timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_GET, require_http_methods

from ..actors import Actor
from ..errors import DomainError
from ..policy.identifiers import identifier_problem
from ..labels import MAX_LABEL_LENGTH, TenantLabels, known_relation_names
from ..extraction import active_extractor_name, prompt_versions
from ..models.tenancy import MAX_REVIEW_TARGET_HOURS
from ..models import (
    ApiKey,
    AuditAction,
    AuditEvent,
    Cardinality,
    Category,
    EntityType,
    ExtractorName,
    FieldDefinition,
    Membership,
    Role,
    Scope,
    Sensitivity,
    Source,
    Tenant,
    WebhookEventType,
)
from ..permissions import can_administer, staff_tenant
from ..selectors.queue import actor_names
from ..services import api_keys, governance, tenants
from ..webhooks import endpoints as webhooks
from ..webhooks.selectors import delivery_log, tenant_endpoints

GOVERNANCE_ACTIONS = (
    AuditAction.TENANT_SCHEMA_CHANGED,
    AuditAction.TENANT_POLICY_CHANGED,
    AuditAction.TENANT_EXTRACTOR_CHANGED,
    AuditAction.API_KEY_CREATED,
    AuditAction.API_KEY_REVOKED,
    AuditAction.API_KEY_ROTATED,
    AuditAction.STAFF_ADDED,
    AuditAction.STAFF_ROLE_CHANGED,
    AuditAction.STAFF_REMOVED,
    AuditAction.WEBHOOK_CREATED,
    AuditAction.WEBHOOK_DELETED,
    AuditAction.WEBHOOK_RESENT,
    AuditAction.WEBHOOK_DISABLED,
)
RECENT_CHANGES = 10
SAVE = "save"


def tenant_admin_page(view):
    @login_required
    @wraps(view)
    def wrapper(request, *args, **kwargs):
        request.tenant = staff_tenant(request.user)
        if not can_administer(request.user):
            raise PermissionDenied(_("The tenant admin console is for tenant admins."))
        request.actor = Actor.reviewer(request.user)
        return view(request, *args, **kwargs)

    return wrapper


# --- Forms ------------------------------------------------------------------------------------

BLANK_MEANS_KEEP = gettext_lazy("Empty: keep until deleted.")
EMPTY_LABEL_MEANS_DEFAULT = gettext_lazy("Empty: the default label.")


class FieldAttributesForm(forms.Form):
    cardinality = forms.ChoiceField(choices=Cardinality.choices, label=gettext_lazy("Cardinality"))
    sensitivity = forms.ChoiceField(choices=Sensitivity.choices, label=gettext_lazy("Sensitivity"))
    category = forms.ChoiceField(choices=Category.choices, label=gettext_lazy("Category"))
    auto_approve = forms.BooleanField(required=False, label=gettext_lazy("Auto-approve allowed"))
    retention_days = forms.IntegerField(
        required=False, min_value=1, max_value=governance.MAX_RETENTION_DAYS, label=gettext_lazy("Retention (days)"),
        help_text=BLANK_MEANS_KEEP,
    )

    label_en = forms.CharField(required=False, max_length=MAX_LABEL_LENGTH, label=gettext_lazy("Label (English)"),
                               help_text=EMPTY_LABEL_MEANS_DEFAULT)
    label_zh = forms.CharField(required=False, max_length=MAX_LABEL_LENGTH, label=gettext_lazy("Label (Chinese)"),
                               help_text=EMPTY_LABEL_MEANS_DEFAULT)

    def attributes(self) -> dict:
        data = self.cleaned_data
        return {
            **{name: data[name] for name in governance.FIELD_ATTRIBUTES if name != "labels"},
            "labels": _labels_from(data),
        }


def _labels_from(data: dict) -> dict:
    return {"en": data["label_en"], "zh-hans": data["label_zh"]}


class RelationLabelsForm(forms.Form):
    name = forms.CharField(max_length=63, label=gettext_lazy("Relation name"),
                           help_text=gettext_lazy("As in relation:<name>, e.g. works_on."))
    label_en = FieldAttributesForm.base_fields["label_en"]
    label_zh = FieldAttributesForm.base_fields["label_zh"]


class EntityTypeField(forms.ChoiceField):
    """A select of the closed vocabulary (EntityType). A value sent around it ("usr") is
    refused naming the types there are, as governance.field_add_check refuses it for the
    other callers (the Django admin, commands)."""

    default_error_messages = {
        "invalid_choice": gettext_lazy("“%(value)s” is not an entity type. Choose one of: %(allowed)s."),
    }

    def __init__(self, **kwargs):
        super().__init__(choices=EntityType.choices, **kwargs)

    def validate(self, value):
        if value and value not in EntityType.values:
            raise forms.ValidationError(
                self.error_messages["invalid_choice"], code="invalid_choice",
                params={"value": value, "allowed": ", ".join(EntityType.values)},
            )
        super().validate(value)


class FieldAddForm(FieldAttributesForm):
    entity_type = EntityTypeField(label=gettext_lazy("Entity type"))
    field = forms.CharField(max_length=80, label=gettext_lazy("Field"))
    field_order = ["entity_type", "field", *governance.FIELD_ATTRIBUTES, "label_en", "label_zh"]


class PolicyForm(forms.Form):
    reject_below = forms.FloatField(min_value=0, max_value=1, label=gettext_lazy("Reject below"))
    confirm_below = forms.FloatField(min_value=0, max_value=1, label=gettext_lazy("Ask the user below"))
    auto_approve_at = forms.FloatField(
        required=False, min_value=0, max_value=1, label=gettext_lazy("Auto-approve at"),
        help_text=gettext_lazy("Empty: never auto-approve."),
    )
    allowed_relation_names = forms.CharField(
        required=False, label=gettext_lazy("Allowed relation names"),
        help_text=gettext_lazy("Comma-separated; empty: any relation."),
    )
    sensitive_retention_days = forms.IntegerField(min_value=1, label=gettext_lazy("Sensitive facts kept (days)"))
    message_retention_days = forms.IntegerField(min_value=1, label=gettext_lazy("Messages kept (days)"))
    thread_idle_days = forms.IntegerField(min_value=1, label=gettext_lazy("A thread ends after idle (days)"))
    reject_reasons = forms.CharField(
        required=False, widget=forms.Textarea(attrs={"rows": 4}), label=gettext_lazy("Reject reasons"),
        help_text=gettext_lazy("One a line: what reviewers pick from to reject (they may add free text)."),
    )
    review_target_hours = forms.IntegerField(
        min_value=1, max_value=MAX_REVIEW_TARGET_HOURS, label=gettext_lazy("Review target (hours)"),
        help_text=gettext_lazy("How long an item should wait for a reviewer at most; the queue marks items near or over it."),
    )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        for source in Source:
            self.fields[f"priority_{source.value}"] = forms.IntegerField(
                min_value=0, max_value=governance.SOURCE_PRIORITY_MAX,
                label=_("Priority of %(source)s") % {"source": source.label},
            )

    @classmethod
    def initial_for(cls, tenant: Tenant) -> dict:
        policy = governance.policy_snapshot(tenant)
        initial = {name: policy[name] for name in governance.POLICY_SETTINGS if name != "source_priority"}
        initial["allowed_relation_names"] = ", ".join(policy["allowed_relation_names"] or [])
        initial["reject_reasons"] = "\n".join(policy["reject_reasons"])
        initial.update({f"priority_{source}": rank for source, rank in policy["source_priority"].items()})
        return initial

    def changes(self) -> dict:
        data = self.cleaned_data
        policy = {name: data[name] for name in governance.POLICY_SETTINGS if name in data}
        names = [name.strip() for name in data["allowed_relation_names"].split(",") if name.strip()]
        policy["allowed_relation_names"] = names or None
        policy["reject_reasons"] = [line.strip() for line in data["reject_reasons"].splitlines() if line.strip()]
        policy["source_priority"] = {source: data[f"priority_{source}"] for source in Source.values}
        return policy


class ExtractorForm(forms.Form):
    extractor = forms.ChoiceField(required=False, label=gettext_lazy("Extractor"))
    prompt_version = forms.ChoiceField(required=False, label=gettext_lazy("Prompt version"))

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        site = active_extractor_name()
        self.fields["extractor"].choices = [
            ("", _("The site's default (%(name)s)") % {"name": ExtractorName(site).label}), *ExtractorName.choices
        ]
        self.fields["prompt_version"].choices = [("", _("The extractor's current version"))] + [
            (str(label), [(version, version) for version in prompt_versions(name)])
            for name, label in ExtractorName.choices
        ]


class KeyCreateForm(forms.Form):
    name = forms.CharField(max_length=100, required=False, label=gettext_lazy("Name"))
    scopes = forms.MultipleChoiceField(
        choices=Scope.choices, widget=forms.CheckboxSelectMultiple, label=gettext_lazy("Scopes")
    )
    source = forms.ChoiceField(
        choices=[(s.value, s.label) for s in tenants.API_KEY_SOURCES], label=gettext_lazy("Source of its candidates")
    )
    expires_at = forms.DateTimeField(
        required=False,
        widget=forms.DateTimeInput(attrs={"type": "datetime-local"}, format="%Y-%m-%dT%H:%M"),
        label=gettext_lazy("Expires (optional)"),
        help_text=gettext_lazy("Refused from then on. Empty: until revoked."),
    )


class KeyRotateForm(forms.Form):
    grace_hours = forms.IntegerField(
        required=False,
        min_value=0,
        max_value=int(api_keys.MAX_GRACE.total_seconds() // 3600),
        label=gettext_lazy("Grace period (hours)"),
        help_text=gettext_lazy("How long the old key keeps working beside the new one. Empty: the site's default."),
    )


class StaffAddForm(forms.Form):
    username = forms.CharField(max_length=150, label=gettext_lazy("Username"))
    role = forms.ChoiceField(choices=Role.choices, label=gettext_lazy("Role"))
    password = forms.CharField(
        widget=forms.PasswordInput(render_value=True), min_length=12, label=gettext_lazy("Initial password"),
        help_text=gettext_lazy("At least 12 characters; hand it over in person."),
    )


class RoleForm(forms.Form):
    role = forms.ChoiceField(choices=Role.choices, label=gettext_lazy("Role"))


class WebhookCreateForm(forms.Form):
    url = forms.CharField(max_length=2000, label=gettext_lazy("URL"),
                          help_text=gettext_lazy("https:// and a public address."))
    events = forms.MultipleChoiceField(
        choices=[(t.value, t.value) for t in WebhookEventType], widget=forms.CheckboxSelectMultiple,
        label=gettext_lazy("Events"),
    )
    description = forms.CharField(max_length=200, required=False, label=gettext_lazy("Description"))


class ConfirmForm(forms.Form):
    """Revocations and removals carry nothing but the confirmation itself."""


# --- Steps --------------------------------------------------------------------------------------


@dataclass
class Row:
    """One line of "what will change"."""

    label: str
    before: object
    after: object


@dataclass
class Operation:
    """One change the console can make: its form, its check (rows of before → after) and
    its save (the service call; returns the audit event's object id and, for a new key,
    the key to show once). ``context``: what else its section shows with it."""

    name: str
    title: str
    form: forms.Form
    check: Callable[[], list[Row]]
    save: Callable[[], tuple[str, str]]
    action_url: str = ""
    warning: str = ""
    rows: list[Row] = field(default_factory=list)
    context: dict = field(default_factory=dict)


def _rows(before: dict, after: dict, names) -> list[Row]:
    return [Row(name, before.get(name), after.get(name)) for name in names if before.get(name) != after.get(name)]


def _run(request, section: str, operation: Operation, context: dict):
    """Check, or (``step=save``) save, one operation; render the section either way."""
    status = 200
    if operation.form.is_valid():
        try:
            if request.POST.get("step") == SAVE:
                object_id, secret = operation.save()
                # Saved: the section's forms start afresh from what is now in force.
                done = {key: value for key, value in context.items() if not isinstance(value, forms.Form)}
                done.update(recorded=_recorded_event(request.tenant, object_id), secret=secret)
                return _render(request, section, done)
            operation.rows = operation.check()
            context["proposal"] = operation
            if not operation.rows:
                context["unchanged"] = True
                context.pop("proposal")
        except DomainError as exc:
            operation.form.add_error(None, exc.message)
    if operation.form.errors:
        status = 400
        context["failed"] = operation
    return _render(request, section, context, status=status)


def _recorded_event(tenant: Tenant, object_id: str) -> AuditEvent | None:
    """The event the save just wrote (the newest governance event about its object)."""
    return (
        AuditEvent.objects.filter(tenant_id=tenant.pk, action__in=GOVERNANCE_ACTIONS, object_id=object_id)
        .select_related("payload").order_by("-seq").first()
    )


def _render(request, section: str, context: dict, status: int = 200):
    tenant = Tenant.objects.get(pk=request.tenant.pk)  # fresh: a save may have changed it
    context = {**_section_context(section, tenant), **context, "section": section, "nav": "tenant-admin"}
    context["recent"] = list(
        AuditEvent.objects.filter(tenant_id=tenant.pk, action__in=GOVERNANCE_ACTIONS)
        .select_related("payload").order_by("-seq")[:RECENT_CHANGES]
    )
    names = actor_names({event.actor for event in context["recent"]})
    for event in context["recent"]:
        event.actor_name = names[event.actor]
    context["section_url"] = reverse(f"reviews:tenant-{section}")
    context["section_template"] = f"tenant_admin/_{section}.html"
    template = "tenant_admin/console.html#section" if request.htmx else "tenant_admin/console.html"
    return render(request, template, context, status=status)


def _section_context(section: str, tenant: Tenant) -> dict:
    if section == "schema":
        return {
            "fields": FieldDefinition.objects.filter(tenant=tenant),
            "add_form": FieldAddForm(initial={
                "cardinality": Cardinality.ONE, "sensitivity": Sensitivity.NORMAL, "category": Category.IDENTITY}),
            "attribute_choices": [
                ("cardinality", _("Cardinality"), Cardinality.choices),
                ("sensitivity", _("Sensitivity"), Sensitivity.choices),
                ("category", _("Category"), Category.choices),
            ],
            "relations": [
                (name, (tenant.relation_labels or {}).get(name) or {}, labels.relation(name))
                for labels in [TenantLabels.load(tenant)] for name in known_relation_names(tenant)
            ],
            "relation_form": RelationLabelsForm(),
        }
    if section == "policy":
        return {"policy_form": PolicyForm(initial=PolicyForm.initial_for(tenant))}
    if section == "extractor":
        return {
            "extractor_form": ExtractorForm(initial=governance.extractor_snapshot(tenant)),
            "site_extractor": ExtractorName(active_extractor_name()).label,
            "tenant": tenant,
        }
    if section == "webhooks":
        return {"endpoints": tenant_endpoints(tenant=tenant), "deliveries": delivery_log(tenant=tenant),
                "webhook_form": WebhookCreateForm()}
    if section == "keys":
        return {"keys": ApiKey.objects.filter(tenant=tenant).order_by("revoked_at", "-created_at"),
                "key_form": KeyCreateForm(initial={"source": Source.CHAT})}
    return {
        "members": Membership.objects.filter(tenant=tenant).select_related("user").order_by("user__username"),
        "staff_form": StaffAddForm(initial={"role": Role.REVIEWER}),
        "roles": Role.choices,
    }


# --- Sections ----------------------------------------------------------------------------------


@require_GET
@tenant_admin_page
def console_home(request):
    return redirect("reviews:tenant-schema")


def _section_page(section: str):
    @require_GET
    @tenant_admin_page
    def page(request):
        return _render(request, section, {})

    page.__name__ = f"{section}_page"
    return page


schema_page = _section_page("schema")
policy_page = _section_page("policy")
extractor_page = _section_page("extractor")
keys_page = _section_page("keys")
staff_page = _section_page("staff")
webhooks_page = _section_page("webhooks")


def _console_step(section: str, form_class: type[forms.Form], *, form_key: str = ""):
    """A change made in the console: POST only, tenant admins only. The decorated function
    describes the change for the bound form (an :class:`Operation`: title, check, save);
    checking or saving it and rendering ``section`` happen here and in :func:`_run`, once
    for every change. ``form_key`` names the section's own form, so an error shows it
    filled in as sent."""

    def decorate(describe: Callable[..., Operation]):
        @require_http_methods(["POST"])
        @tenant_admin_page
        @wraps(describe)
        def view(request, **kwargs):
            form = form_class(request.POST)
            operation = describe(request, form, **kwargs)
            operation.action_url = request.path
            context = {form_key: form} if form_key else {}
            return _run(request, section, operation, {**context, **operation.context})

        return view

    return decorate


@_console_step("schema", FieldAddForm, form_key="add_form")
def field_add(request, form):
    tenant = request.tenant

    def check():
        values = governance.field_add_check(
            tenant=tenant, entity_type=form.cleaned_data["entity_type"], field=form.cleaned_data["field"],
            attributes=form.attributes(),
        )
        return [Row(name, None, value) for name, value in values.items()]

    def save():
        definition = governance.field_add(
            tenant=tenant, entity_type=form.cleaned_data["entity_type"], field=form.cleaned_data["field"],
            attributes=form.attributes(), actor=request.actor,
        )
        return f"{definition.entity_type}.{definition.field}", ""

    return Operation("field-add", _("Add a field"), form, check, save)


@_console_step("schema", FieldAttributesForm)
def field_edit(request, form, entity_type: str, field_name: str):
    tenant = request.tenant
    if identifier_problem(entity_type) or identifier_problem(field_name):
        raise Http404  # no schema field is named so (a NUL, a control character): none to look up
    edited = f"{entity_type}.{field_name}"

    def check():
        change = governance.field_update_check(
            tenant=tenant, entity_type=entity_type, field=field_name, changes=form.attributes()
        )
        if change.facts_affected:
            operation.warning = _(
                "%(count)s published fact(s) of this field take the new cardinality, sensitivity or category at once."
            ) % {"count": change.facts_affected}
        return _rows(change.before, change.after, governance.FIELD_ATTRIBUTES)

    def save():
        governance.field_update(
            tenant=tenant, entity_type=entity_type, field=field_name, changes=form.attributes(), actor=request.actor
        )
        return edited, ""

    title = _("Change %(field)s") % {"field": edited}
    operation = Operation("field-edit", title, form, check, save, context={"edited": edited})
    return operation


@_console_step("schema", RelationLabelsForm, form_key="relation_form")
def relation_labels_change(request, form):
    tenant = request.tenant

    def check():
        before, after = governance.relation_labels_check(
            tenant=tenant, name=form.cleaned_data["name"], labels=_labels_from(form.cleaned_data)
        )
        return [Row("labels", before, after)] if before != after else []

    def save():
        governance.relation_labels_set(
            tenant=tenant, name=form.cleaned_data["name"], labels=_labels_from(form.cleaned_data), actor=request.actor
        )
        return f"relation:{form.cleaned_data['name']}", ""

    return Operation("relation-labels", _("Label a relation name"), form, check, save)


@_console_step("policy", PolicyForm, form_key="policy_form")
def policy_change(request, form):
    tenant = request.tenant

    def check():
        change = governance.tenant_policy_check(tenant=tenant, changes=form.changes())
        return _rows(change.before, change.after, governance.POLICY_SETTINGS)

    def save():
        governance.tenant_policy_update(tenant=tenant, changes=form.changes(), actor=request.actor)
        return str(tenant.pk), ""

    return Operation("policy", _("Change the policy"), form, check, save)


@_console_step("extractor", ExtractorForm, form_key="extractor_form")
def extractor_change(request, form):
    tenant = request.tenant

    def check():
        after = governance.tenant_extractor_check(tenant=tenant, **form.cleaned_data)
        return _rows(governance.extractor_snapshot(tenant), after, ["extractor", "prompt_version"])

    def save():
        governance.tenant_extractor_set(tenant=tenant, actor=request.actor, **form.cleaned_data)
        return str(tenant.pk), ""

    return Operation("extractor", _("Change the active extractor"), form, check, save)


@_console_step("keys", KeyCreateForm, form_key="key_form")
def key_create(request, form):
    tenant = request.tenant

    def check():
        data = form.cleaned_data
        return [Row("name", None, data["name"] or "—"), Row("scopes", None, ", ".join(sorted(data["scopes"]))),
                Row("source", None, data["source"]), Row("expires_at", None, data["expires_at"] or "—")]

    def save():
        key, raw_key = tenants.api_key_create(tenant=tenant, actor=request.actor, **form.cleaned_data)
        return key.prefix, raw_key

    # The page may hold the key, shown this once: like every answer, never cached (NoStoreMiddleware).
    return Operation("key-create", _("Create an API key"), form, check, save)


@_console_step("keys", ConfirmForm)
def key_revoke(request, form, prefix: str):
    tenant = request.tenant

    def check():
        key = ApiKey.objects.filter(tenant=tenant, prefix=prefix, revoked_at__isnull=True).first()
        if key is None:
            raise DomainError(_("No such live API key."))
        operation.warning = _(
            "Agents using it are refused at once by this server and within %(seconds)s seconds by every other."
        ) % {"seconds": int(settings.MEMORY_API_KEY_CACHE_SECONDS)}
        return [Row(_("key %(prefix)s (%(name)s)") % {"prefix": prefix, "name": key.name or "—"},
                    _("live"), _("revoked"))]

    def save():
        tenants.api_key_revoke(tenant=tenant, prefix=prefix, actor=request.actor)
        return prefix, ""

    operation = Operation("key-revoke", _("Revoke API key %(prefix)s") % {"prefix": prefix}, form, check, save)
    return operation


@_console_step("keys", KeyRotateForm)
def key_rotate(request, form, prefix: str):
    """A new key with the same scopes, shown once; the old one ends after the grace period."""
    tenant = request.tenant

    def grace() -> timedelta:
        hours = form.cleaned_data["grace_hours"]
        return timedelta(hours=hours) if hours is not None else timedelta(
            seconds=settings.MEMORY_API_KEY_ROTATION_GRACE_SECONDS
        )

    def check():
        key = ApiKey.objects.filter(tenant=tenant, prefix=prefix).first()
        if key is None or not key.is_live(timezone.now()) or key.replaced_by:
            raise DomainError(_("Only a live key that was not rotated yet can be rotated."))
        ends = timezone.now() + grace()
        if key.expires_at is not None and key.expires_at < ends:
            ends = key.expires_at
        operation.warning = _(
            "The old key keeps working until %(ends)s; move its agents to the new key before then."
        ) % {"ends": formats.localize(timezone.localtime(ends))}
        return [
            Row(_("key %(prefix)s (%(name)s)") % {"prefix": prefix, "name": key.name or "—"}, _("live"),
                _("ends %(when)s") % {"when": formats.localize(timezone.localtime(ends))}),
            Row(_("new key"), None, ", ".join(key.scopes)),
        ]

    def save():
        _new, raw_key, old = api_keys.api_key_rotate(tenant=tenant, prefix=prefix, actor=request.actor, grace=grace())
        return old.prefix, raw_key

    operation = Operation("key-rotate", _("Rotate API key %(prefix)s") % {"prefix": prefix}, form, check, save)
    return operation


@_console_step("staff", StaffAddForm, form_key="staff_form")
def staff_add(request, form):
    tenant = request.tenant

    def check():
        data = form.cleaned_data
        tenants.staff_create_check(username=data["username"], role=data["role"])
        return [Row("username", None, data["username"]), Row("role", None, Role(data["role"]).label)]

    def save():
        user = tenants.staff_create(tenant=tenant, actor=request.actor, **form.cleaned_data)
        return str(user.pk), ""

    return Operation("staff-add", _("Add a staff member"), form, check, save)


def _member(tenant: Tenant, user_id: int) -> Membership:
    membership = Membership.objects.filter(tenant=tenant, user_id=user_id).select_related("user").first()
    if membership is None:
        raise Http404
    return membership


@_console_step("staff", RoleForm)
def staff_role(request, form, user_id: int):
    tenant = request.tenant
    membership = _member(tenant, user_id)

    def check():
        tenants.staff_role_change_check(membership=membership, role=form.cleaned_data["role"])
        return _rows({"role": membership.role}, {"role": form.cleaned_data["role"]}, ["role"])

    def save():
        tenants.staff_role_change(tenant=tenant, user_id=user_id, role=form.cleaned_data["role"], actor=request.actor)
        return str(user_id), ""

    title = _("Change the role of %(username)s") % {"username": membership.user.get_username()}
    return Operation("staff-role", title, form, check, save)


@_console_step("staff", ConfirmForm)
def staff_remove(request, form, user_id: int):
    tenant = request.tenant
    membership = _member(tenant, user_id)

    def check():
        tenants.staff_remove_check(membership=membership)
        operation.warning = _("Their account is deactivated; past events keep naming them.")
        return [Row(membership.user.get_username(), Role(membership.role).label, _("removed"))]

    def save():
        tenants.staff_remove(tenant=tenant, user_id=user_id, actor=request.actor)
        return str(user_id), ""

    title = _("Remove %(username)s") % {"username": membership.user.get_username()}
    operation = Operation("staff-remove", title, form, check, save)
    return operation


@_console_step("webhooks", WebhookCreateForm, form_key="webhook_form")
def webhook_create(request, form):
    tenant = request.tenant

    def check():
        data = form.cleaned_data
        return [Row("url", None, data["url"]), Row("events", None, ", ".join(data["events"])),
                Row("description", None, data["description"] or "—")]

    def save():
        endpoint, secret = webhooks.webhook_create(tenant=tenant, actor=request.actor, **form.cleaned_data)
        return str(endpoint.pk), secret

    # The page may hold the signing secret, shown this once: never cached (NoStoreMiddleware).
    return Operation("webhook-create", _("Register a webhook endpoint"), form, check, save)


@_console_step("webhooks", ConfirmForm)
def webhook_delete(request, form, endpoint_id: int):
    tenant = request.tenant

    def check():
        endpoint = tenant_endpoints(tenant=tenant).filter(pk=endpoint_id).first()
        if endpoint is None:
            raise DomainError(_("No such webhook endpoint."))
        operation.warning = _("Events not yet delivered to it are dropped with it.")
        return [Row(endpoint.url, _("registered"), _("removed"))]

    def save():
        webhooks.webhook_delete(tenant=tenant, endpoint_id=endpoint_id, actor=request.actor)
        return str(endpoint_id), ""

    operation = Operation("webhook-delete", _("Remove webhook endpoint %(id)s") % {"id": endpoint_id}, form, check, save)
    return operation


@_console_step("webhooks", ConfirmForm)
def webhook_resend(request, form, delivery_id: int):
    tenant = request.tenant

    def check():
        delivery = next((d for d in delivery_log(tenant=tenant) if d.pk == delivery_id), None)
        if delivery is None:
            raise DomainError(_("No such webhook delivery."))
        if delivery.endpoint.disabled_at:
            operation.warning = _("Its endpoint is disabled: sending again enables it.")
        return [Row(f"{delivery.event.event_type} {delivery.event.webhook_id}", delivery.get_status_display(),
                    _("sent again"))]

    def save():
        delivery = webhooks.webhook_delivery_resend(tenant=tenant, delivery_id=delivery_id, actor=request.actor)
        return str(delivery.endpoint_id), ""

    operation = Operation("webhook-resend", _("Send delivery %(id)s again") % {"id": delivery_id}, form, check, save)
    return operation
