"""Auditor pages (SPEC §4 roles, §6): export the audit trail now or in the background,
follow a background export's progress, download its file, and verify the chain or an
exported file.

Views parse, call a service, render. Only auditors and tenant admins of the tenant get
here (another tenant's export is a 404; a reviewer is refused with 403). Export files are
served from MEDIA_ROOT by these views only, never as public media.
"""
from __future__ import annotations

from functools import wraps

from django import forms
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import FileResponse, Http404, JsonResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from ..actors import Actor
from ..audit import verify_tenant
from ..errors import NotFound
from ..exports import ExportFilters
from ..models import AuditExport, ExportFormat, ExportStatus
from ..permissions import can_audit, staff_tenant
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
    format = forms.ChoiceField(choices=ExportFormat.choices, initial=ExportFormat.JSONL, required=False)
    since = forms.DateTimeField(required=False, label=gettext_lazy("From (inclusive)"))
    until = forms.DateTimeField(required=False, label=gettext_lazy("Until (exclusive)"))
    action = forms.CharField(max_length=64, required=False, help_text=gettext_lazy("e.g. fact.deleted or fact.*"))
    actor = forms.CharField(max_length=160, required=False, help_text=gettext_lazy("e.g. reviewer:3 or api_key:*"))
    user_id = forms.CharField(max_length=128, required=False, label=gettext_lazy("User (subject)"))
    object = forms.RegexField(
        regex=r"^[\w.-]{1,32}(:.{1,64})?$", max_length=97, required=False, help_text=gettext_lazy("type or type:id")
    )

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


def _home(request, form: ExportForm, status: int = 200):
    jobs = AuditExport.objects.filter(tenant=request.tenant)[:RECENT_EXPORTS]
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
    template = "auditor/export.html#progress" if request.htmx else "auditor/export.html"
    return render(request, template, {"job": job, "nav": "audit"})


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
