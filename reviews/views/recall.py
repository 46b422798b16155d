"""Recall records for auditors (SPEC §1, §5): which facts, at which versions, went to which
caller, when, for which query; and, for each fact, the recalls that returned it."""
from __future__ import annotations

from functools import wraps

from django import forms
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404
from django.shortcuts import get_object_or_404, render
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_GET

from ..actors import Actor
from ..models import ActorKind, ApiKey, Fact
from ..web.forms import IdentifierField
from ..permissions import can_audit, staff_tenant
from ..recall.replicas import replica_view
from ..selectors.queue import actor_names
from ..selectors.recall_history import (
    RecallRecordsPage,
    recall_record_facts,
    recall_records_page,
    recalls_of_fact,
)
from ..recall.records import recall_record_find


def auditor_view(view):
    """Signed-in auditors and tenant admins of a tenant; other staff are refused (403)."""

    @require_GET
    @login_required
    @wraps(view)
    def wrapper(request, *args, **kwargs):
        request.tenant = staff_tenant(request.user)
        if not can_audit(request.user):
            raise PermissionDenied("Recall records are for auditors.")
        return view(request, *args, **kwargs)

    return wrapper


def _caller_names(tenant, records) -> dict[str, str]:
    """``api_key:<prefix>`` → the key's name, for the callers on this page."""
    callers = [Actor.parse(record.caller) for record in records]
    prefixes = {caller.id for caller in callers if caller and caller.kind == ActorKind.API_KEY}
    keys = ApiKey.objects.filter(tenant=tenant, prefix__in=prefixes).values_list("prefix", "name")
    return {str(Actor(ActorKind.API_KEY, prefix)): name for prefix, name in keys if name}


# Ids are PostgreSQL bigints: a "before" past them names no record.
MAX_RECORD_ID = 2**63 - 1


class RecallFilterForm(forms.Form):
    user_id = IdentifierField(name=gettext_lazy("The user"), required=False)
    caller = forms.CharField(max_length=160, required=False)
    before = forms.IntegerField(min_value=1, max_value=MAX_RECORD_ID, required=False)


@auditor_view
@replica_view
def recall_list(request):
    """The recall records newest first, filtered by user and caller. A filter that is not
    valid (a NUL, a malformed id) is shown beside its field, matching nothing (400)."""
    form = RecallFilterForm(request.GET)
    valid = form.is_valid()
    filters = form.cleaned_data if valid else {}
    page = (
        recall_records_page(tenant=request.tenant, user_id=filters["user_id"], caller=filters["caller"],
                            before=filters["before"])
        if valid else RecallRecordsPage([], None)
    )
    context = {
        "page": page,
        "form": form,
        "filters": {name: filters.get(name) or form.data.get(name, "") for name in ("user_id", "caller")},
        # An empty list says why: nothing recalled yet, or nothing that the filters match.
        "filtered": any(form.data.get(name) for name in form.fields),
        "caller_names": _caller_names(request.tenant, page.records),
    }
    template = "recall/list.html#results" if request.htmx else "recall/list.html"
    return render(request, template, context, status=200 if valid else 400)


@auditor_view
def recall_detail(request, pk: int):
    # On the primary: a recall's own record is looked up by the id the recall just returned
    # (not yet written, if it is still in the stream: recall_record_find writes it out).
    record = recall_record_find(tenant=request.tenant, pk=pk)
    if record is None:
        raise Http404
    return render(
        request,
        "recall/detail.html",
        {"record": record, "facts": recall_record_facts(record), "caller_names": _caller_names(request.tenant, [record])},
    )


@auditor_view
@replica_view
def fact_recalls(request, pk: int):
    fact = get_object_or_404(Fact.objects.select_related("entity", "subject"), tenant=request.tenant, pk=pk)
    recalls = recalls_of_fact(fact)
    versions = list(fact.versions.order_by("-version"))
    names = actor_names({version.actor for version in versions})
    for version in versions:
        version.actor_name = names[version.actor]
    return render(
        request,
        "recall/fact.html",
        {
            "fact": fact,
            "versions": versions,
            "recalls": recalls,
            "caller_names": _caller_names(request.tenant, recalls),
        },
    )
