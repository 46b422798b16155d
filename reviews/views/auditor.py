"""Auditor pages (SPEC §4 roles, §6): export the audit trail now or in the background,
follow a background export's progress, download its file, and verify the chain or an
exported file.

Views parse, call a service, render. Only auditors and tenant admins of the tenant get
here (another tenant's export is a 404; a reviewer is refused with 403). Export files are
served from MEDIA_ROOT by these views only, never as public media.
"""
from __future__ import annotations

from datetime import datetime
from functools import wraps

from django import forms
from django.contrib.auth import get_user_model
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.core.cache import cache
from django.http import FileResponse, Http404, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, pgettext_lazy
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from ..actors import Actor
from ..audit import verify_tenant
from ..selectors.audit import AuditCursor, audit_events_page, changed_values
from ..errors import InvalidInput, NotFound
from ..exports import ExportFilters
from ..labels import action_label
from ..models import ActorKind, AuditAction, AuditChainHead, AuditExport, ExportFormat, ExportStatus
from ..web.forms import IdentifierField
from ..permissions import can_audit, staff_tenant
from ..selectors.queue import actor_names
from ..services.audit_export import (
    audit_export_get,
    audit_export_start,
    audit_export_stream,
    audit_file_verify,
    export_path,
)

RECENT_EXPORTS = 20


def auditor_page(view):
    """Signed-in auditors and tenant admins; other staff are refused (403), strangers 404."""

    @login_required
    @wraps(view)
    def wrapper(request, *args, **kwargs):
        request.tenant = staff_tenant(request.user)
        if not can_audit(request.user):
            raise PermissionDenied(_("The audit trail is for auditors."))
        request.actor = Actor.reviewer(request.user)
        return view(request, *args, **kwargs)

    return wrapper


class ExportForm(forms.Form):
    format = forms.ChoiceField(
        choices=ExportFormat.choices, initial=ExportFormat.JSONL, required=False, label=gettext_lazy("Format")
    )
    since = forms.DateTimeField(required=False, label=gettext_lazy("From (inclusive)"))
    until = forms.DateTimeField(required=False, label=gettext_lazy("Until (exclusive)"))
    action = forms.CharField(
        max_length=64, required=False, label=gettext_lazy("Action"), help_text=gettext_lazy("e.g. fact.deleted or fact.*")
    )
    actor = forms.CharField(
        max_length=160, required=False, label=gettext_lazy("Actor"),
        help_text=gettext_lazy("a username, or e.g. reviewer:3 or api_key:*"),
    )
    user_id = IdentifierField(name=gettext_lazy("The user"), required=False, label=gettext_lazy("User (subject)"))
    object = forms.RegexField(
        regex=r"^[\w.-]{1,32}(:.{1,64})?$", max_length=97, required=False, label=gettext_lazy("Object"),
        help_text=gettext_lazy("type or type:id"),
    )

    def clean_actor(self):
        """A staff member's username stands for their actor string (reviewer:<id>), as the
        log names them: "steward" finds steward's events. Anything else is an actor pattern."""
        actor = self.cleaned_data["actor"].strip()
        if actor and ":" not in actor and "*" not in actor:
            staff_id = get_user_model().objects.filter(username=actor).values_list("pk", flat=True).first()
            if staff_id is not None:
                return str(Actor(ActorKind.REVIEWER, str(staff_id)))
        return actor

    def clean_format(self):
        return self.cleaned_data["format"] or ExportFormat.JSONL

    def clean(self):
        data = super().clean()
        if data.get("since") and data.get("until") and data["since"] >= data["until"]:
            self.add_error("until", _("Must be after the start."))
        return data

    def filters(self) -> ExportFilters:
        data = self.cleaned_data
        names = ("since", "until", "action", "actor", "user_id", "object")
        return ExportFilters(**{name: data[name] for name in names})


def _named_requesters(jobs: list[AuditExport]) -> list[AuditExport]:
    """Each job with ``requested_by_name``: who asked, as the audit log names actors."""
    names = actor_names({job.requested_by for job in jobs})
    for job in jobs:
        job.requested_by_name = names[job.requested_by]
    return jobs


def _home(request, form: ExportForm, status: int = 200):
    jobs = _named_requesters(list(AuditExport.objects.filter(tenant=request.tenant)[:RECENT_EXPORTS]))
    return render(request, "auditor/home.html", {"form": form, "jobs": jobs, "nav": "audit"}, status=status)


@require_GET
@auditor_page
def audit_home(request):
    return _home(request, ExportForm(initial={"format": ExportFormat.JSONL}))


@require_GET
@auditor_page
def export_download_now(request):
    """Stream the export straight to the browser (the same service as the API)."""
    form = ExportForm(request.GET)
    if not form.is_valid():
        return _home(request, form, status=400)
    exporter = audit_export_stream(
        tenant=request.tenant, filters=form.filters(), format=form.cleaned_data["format"], actor=request.actor
    )
    return exporter.response()


@require_POST
@auditor_page
def export_start(request):
    form = ExportForm(request.POST)
    if not form.is_valid():
        return _home(request, form, status=400)
    job = audit_export_start(
        tenant=request.tenant, filters=form.filters(), format=form.cleaned_data["format"], actor=request.actor
    )
    return redirect("reviews:audit-export", pk=job.pk)


@require_POST
@auditor_page
def export_again(request, pk: int):
    """A failed or purged export, run again with the same filters as a new job."""
    job = _job(request, pk)
    again = audit_export_start(
        tenant=request.tenant, filters=ExportFilters.from_dict(job.filters), format=job.format, actor=request.actor
    )
    return redirect("reviews:audit-export", pk=again.pk)


def _job(request, pk: int) -> AuditExport:
    try:
        return audit_export_get(tenant=request.tenant, export_id=pk)
    except NotFound:
        raise Http404 from None


@require_GET
@auditor_page
def export_detail(request, pk: int):
    """The job's page; with htmx, only its progress block (polled while it runs)."""
    job = _job(request, pk)
    if request.htmx:  # the progress block, polled while the job runs, names no one
        return render(request, "auditor/export.html#progress", {"job": job, "nav": "audit"})
    _named_requesters([job])
    return render(request, "auditor/export.html", {"job": job, "nav": "audit"})


@require_GET
@auditor_page
def export_file(request, pk: int):
    job = _job(request, pk)
    path = export_path(job) if job.status == ExportStatus.READY and job.file_name else None
    if path is None or not path.is_file():
        raise Http404
    name = f"audit-{request.tenant.slug}-{job.pk}.{job.format}"
    return FileResponse(path.open("rb"), as_attachment=True, filename=name, content_type=_content_type(job))


def _content_type(job: AuditExport) -> str:
    return "text/csv; charset=utf-8" if job.format == ExportFormat.CSV else "application/x-ndjson; charset=utf-8"


@require_GET
@auditor_page
def export_manifest(request, pk: int):
    job = _job(request, pk)
    if job.manifest is None:
        raise Http404
    response = JsonResponse(job.manifest, json_dumps_params={"indent": 2})
    response["Content-Disposition"] = f'attachment; filename="audit-{request.tenant.slug}-{job.pk}.manifest.json"'
    return response


@require_http_methods(["GET", "POST"])
@auditor_page
def verify(request):
    """Verify the tenant's stored chain, or an exported file someone hands back."""
    context = {"nav": "verify", "chain": None, "file_result": None, "file_name": ""}
    if request.method == "POST" and request.POST.get("check") == "chain":
        context["chain"] = verify_tenant(request.tenant.pk)
    elif request.method == "POST":
        upload = request.FILES.get("file")
        if upload is None:
            context["file_error"] = _("Choose an exported file to verify.")
        else:
            context["file_name"] = upload.name
            context["file_result"] = audit_file_verify(upload.file, tenant=request.tenant)
    template = "auditor/verify.html#result" if request.htmx else "auditor/verify.html"
    return render(request, template, context)


# --- The log browser ------------------------------------------------------------------------

CHAIN_STATUS_CACHE_SECONDS = 300
# Past this many events a page load does not verify the whole chain itself: the status
# shown is the last one computed, and "Verify now" runs a full check.
CHAIN_VERIFY_ON_PAGE_MAX_EVENTS = 100_000
# Where an event's object can be opened, by object type.
OBJECT_PAGES = {"candidate": "reviews:candidate", "fact": "reviews:fact-recalls", "entity": "reviews:entity"}


class LogForm(ExportForm):
    """The export's filters without its format: the same rows, read a page at a time. The
    action box suggests every action by its name (a datalist: the name shown, the code sent)."""

    format = None

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["action"].widget.attrs["list"] = "audit-actions"


def chain_status(tenant) -> dict:
    """The tenant's chain as last verified: cached per chain head, so a page load verifies
    again only after new events, and never a very long chain on its own."""
    head = AuditChainHead.objects.filter(tenant_id=tenant.pk).first()
    head_seq = head.seq if head else 0
    key = f"audit-chain-status:{tenant.pk}"
    status = cache.get(key)
    if status and status["head_seq"] == head_seq:
        return status
    if head_seq > CHAIN_VERIFY_ON_PAGE_MAX_EVENTS:
        return {**(status or {}), "stale": True, "head_seq": head_seq}
    result = verify_tenant(tenant.pk)
    status = {
        "head_seq": head_seq,
        "ok": result.ok,
        "events": result.events,
        "head_hash": result.head_hash,
        "broken_seq": result.broken.seq if result.broken else None,
        "checked_at": timezone.now(),
        "stale": False,
    }
    cache.set(key, status, CHAIN_STATUS_CACHE_SECONDS)
    return status


OBJECT_TYPE_LABELS = {
    "candidate": pgettext_lazy("audit object", "Item #%(id)s"),
    "fact": pgettext_lazy("audit object", "Fact #%(id)s"),
    "entity": pgettext_lazy("audit object", "Entity #%(id)s"),
    "api_key": pgettext_lazy("audit object", "API key %(id)s"),
    "subject": pgettext_lazy("audit object", "User %(id)s"),
    "candidate_selection": pgettext_lazy("audit object", "%(id)s items"),
}


def _object_label(row: dict) -> str:
    label = OBJECT_TYPE_LABELS.get(row["object_type"])
    return str(label) % {"id": row["object_id"]} if label else f"{row['object_type']} {row['object_id']}"


def _object_names(tenant, rows: list[dict]) -> dict[tuple[str, str], str]:
    """Objects a person knows by name: a staff member by username, the tenant by its name."""
    user_ids = {int(row["object_id"]) for row in rows if row["object_type"] == "user" and str(row["object_id"]).isdigit()}
    names = {("user", str(pk)): username for pk, username in get_user_model().objects.filter(pk__in=user_ids).values_list("pk", "username")}
    names[("tenant", str(tenant.pk))] = tenant.name or tenant.slug
    return names


def _object_url(row: dict) -> str:
    name = OBJECT_PAGES.get(row["object_type"])
    if name and str(row["object_id"]).isdigit():
        return reverse(name, args=[int(row["object_id"])])
    return ""


@require_GET
@auditor_page
def audit_log(request):
    """Browse the audit trail newest first: filter by actor, action, subject, object and
    time; each event with its before and after (or "erased"), linked to its object."""
    form = LogForm(request.GET or None)
    filters = form.filters() if form.is_bound and form.is_valid() else ExportFilters()
    cursor = None
    if request.GET.get("cursor"):
        try:
            cursor = AuditCursor.decode(request.GET["cursor"])
        except InvalidInput:
            cursor = None
    page = audit_events_page(tenant=request.tenant, filters=filters, cursor=cursor, limit=LOG_PAGE_SIZE)
    names = actor_names({row["actor"] for row in page.rows})
    objects = _object_names(request.tenant, page.rows)
    for row in page.rows:
        row["actor_name"] = names.get(row["actor"], row["actor"])
        row["object_url"] = _object_url(row)
        row["object_label"] = objects.get((row["object_type"], str(row["object_id"]))) or _object_label(row)
        row["changes"] = changed_values(row.get("before"), row.get("after"))
        row["at"] = datetime.fromisoformat(row["created_at"])  # the rows carry the export's ISO text
    next_url = ""
    if page.next_cursor is not None:
        query = request.GET.copy()
        query["cursor"] = page.next_cursor.encode()
        next_url = f"{reverse('reviews:audit-log')}?{query.urlencode()}"
    return render(
        request,
        "auditor/log.html",
        {
            "nav": "log",
            "form": form,
            "rows": page.rows,
            "next_url": next_url,
            "first_url": reverse("reviews:audit-log") + ("?" + _without_cursor(request) if _without_cursor(request) else ""),
            "paged": cursor is not None,
            "chain": chain_status(request.tenant),
            "action_names": [(code, action_label(code)) for code in AuditAction.values],
        },
        status=200 if not form.is_bound or form.is_valid() else 400,
    )


LOG_PAGE_SIZE = 50


def _without_cursor(request) -> str:
    query = request.GET.copy()
    query.pop("cursor", None)
    return query.urlencode()
