"""The extraction dry run for tenant admins (SPEC §4): run one, open the kept reports.

Parse, call the service, render. Switching the active extractor is the governance
service's (``tenant_extractor_set``); this page only shows what a switch would change.
"""
from __future__ import annotations

from functools import wraps

from django import forms
from django.core.exceptions import PermissionDenied
from django.http import Http404
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_GET, require_http_methods

from ..actors import Actor
from ..errors import InvalidInput
from ..extraction import get_extractor_named, prompt_versions
from ..models import DryRunGroup, ExtractionDryRun, ExtractorName
from ..permissions import can_administer
from ..selectors.queue import actor_names
from ..services.dry_run import DEFAULT_MESSAGES, MAX_DAYS, MAX_MESSAGES, extraction_dry_run
from .reviewer import staff_view

REPORTS_SHOWN = 20


class DryRunForm(forms.Form):
    extractor = forms.ChoiceField(label=gettext_lazy("Extractor"), choices=ExtractorName.choices)
    prompt_version = forms.ChoiceField(label=gettext_lazy("Prompt version"), required=False)
    days = forms.IntegerField(label=gettext_lazy("Messages of the last days"), min_value=1, max_value=MAX_DAYS,
                              initial=30)
    limit = forms.IntegerField(label=gettext_lazy("At most this many messages"), min_value=1,
                               max_value=MAX_MESSAGES, initial=DEFAULT_MESSAGES)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        versions = {version for name in ExtractorName.values for version in prompt_versions(name)}
        self.fields["prompt_version"].choices = [("", _("the extractor's current one"))] + [
            (version, version) for version in sorted(versions)
        ]


def admin_view(view):
    """Tenant admins only: other staff are refused (403), everyone else finds nothing."""

    @staff_view
    @wraps(view)
    def wrapper(request, *args, **kwargs):
        if not can_administer(request.user):
            raise PermissionDenied(_("Only a tenant admin may run or read extraction dry runs."))
        return view(request, *args, **kwargs)

    return wrapper


@require_http_methods(["GET", "POST"])
@admin_view
def dry_run_list(request):
    form = DryRunForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            extractor = get_extractor_named(data["extractor"], prompt_version=data["prompt_version"] or None)
            report = extraction_dry_run(tenant=request.tenant, extractor=extractor, actor=Actor.reviewer(request.user),
                                        days=data["days"], limit=data["limit"])
        except KeyError:
            form.add_error("prompt_version", _("That extractor has no such prompt version."))
        except InvalidInput as exc:
            form.add_error(None, str(exc))
        else:
            return redirect("reviews:dry-run", pk=report.pk)
    reports = ExtractionDryRun.objects.filter(tenant=request.tenant)[:REPORTS_SHOWN]
    return render(request, "reviews/dry_runs.html", {"form": form, "reports": reports, "groups": DryRunGroup},
                  status=400 if form.errors else 200)


@require_GET
@admin_view
def dry_run_detail(request, pk: int):
    report = ExtractionDryRun.objects.filter(tenant=request.tenant, pk=pk).first()
    if report is None:
        raise Http404
    requested_by_name = actor_names([report.requested_by])[report.requested_by]
    return render(request, "reviews/dry_run.html", {"report": report, "requested_by_name": requested_by_name})
