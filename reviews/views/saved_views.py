"""Saved views: a reviewer's named queue filters, listed with links that open the queue
with them; saved from the queue's address (the queue links here with its own query)."""
from django import forms
from django.contrib import messages
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_GET, require_POST

from ..actors import Actor
from ..errors import DomainError, NotFound
from ..models import SavedView
from ..services.saved_views import saved_view_delete, saved_view_query, saved_view_save
from .reviewer import QueueFilterForm, staff_view


class SavedViewForm(forms.Form):
    name = forms.CharField(max_length=80, label=gettext_lazy("Name"))
    query = forms.CharField(
        max_length=2000, required=False, label=gettext_lazy("Filter"),
        help_text=gettext_lazy("The queue's filters, as in its address after “?” (e.g. status=pending_user&field=location)."),
    )


def _page(request, form: SavedViewForm, status: int = 200):
    views = SavedView.objects.filter(tenant=request.tenant, owner=request.user)
    return render(request, "reviews/saved_views.html", {"views": views, "form": form}, status=status)


@require_GET
@staff_view
def saved_views_page(request):
    # Opened from the queue with its filters: the form is filled in with them.
    query = saved_view_query(request.GET.get("query", ""), allowed=QueueFilterForm.base_fields)
    return _page(request, SavedViewForm(initial={"query": query}))


@require_POST
@staff_view
def saved_view_save_view(request):
    form = SavedViewForm(request.POST)
    if not form.is_valid():
        return _page(request, form, status=400)
    try:
        view = saved_view_save(
            tenant=request.tenant,
            owner=request.user,
            name=form.cleaned_data["name"],
            queue_query=saved_view_query(form.cleaned_data["query"], allowed=QueueFilterForm.base_fields),
            actor=Actor.reviewer(request.user),
        )
    except DomainError as error:
        form.add_error(None, _(error.message))
        return _page(request, form, status=400)
    messages.success(request, _("Saved the view “%(name)s”.") % {"name": view.name})
    return redirect("reviews:saved-views")


@require_POST
@staff_view
def saved_view_delete_view(request, pk: int):
    try:
        saved_view_delete(tenant=request.tenant, owner=request.user, view_id=pk, actor=Actor.reviewer(request.user))
    except NotFound:
        return _page(request, SavedViewForm(), status=404)
    messages.success(request, _("Deleted the view."))
    return redirect("reviews:saved-views")
