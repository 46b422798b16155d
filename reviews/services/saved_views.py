"""Saved views: a reviewer names a queue filter to come back to (issue 38.6).

A view belongs to one person in one tenant: nobody else lists, changes or deletes it.
Saving under a name that person already uses replaces that view's filter.
"""
from __future__ import annotations

from urllib.parse import urlencode

from django.contrib.auth.base_user import AbstractBaseUser
from django.http import QueryDict

from .. import audit
from ..actors import Actor
from ..audit import EventDraft
from ..errors import InvalidInput, NotFound
from ..models import AuditAction, SavedView, Tenant
from ..screening import Text
from .boundary import service

MAX_SAVED_VIEWS = 50
# Paging state, not a filter: a saved view always opens at the first page.
NOT_SAVED = ("cursor", "page")


def saved_view_query(query: str, *, allowed) -> str:
    """The filters of a queue query string worth saving: only the ``allowed`` keys, not
    empty, in a stable order."""
    data = QueryDict(query.lstrip("?"))
    kept = [(key, value) for key in sorted(allowed) if key not in NOT_SAVED for value in data.getlist(key) if value]
    return urlencode(kept)


def _snapshot(view: SavedView) -> dict:
    return {"name": view.name, "query": view.query}


@service
def saved_view_save(
    *, tenant: Tenant, owner: AbstractBaseUser, name: Text, queue_query: Text, actor: Actor
) -> SavedView:
    """Save (or, under a name already used, replace) one of ``owner``'s views; ``queue_query``
    is the queue's query string (:func:`saved_view_query` keeps its filters)."""
    query = queue_query
    name = name.strip()
    if not name or len(name) > 80:
        raise InvalidInput("A view's name is 1 to 80 characters.", details={"name": "invalid"})
    if len(query) > 2000 or not query.isprintable():
        raise InvalidInput("That filter cannot be saved.", details={"query": "invalid"})
    view = SavedView.objects.select_for_update().filter(tenant=tenant, owner=owner, name=name).first()
    before = _snapshot(view) if view else None
    if view is None:
        if SavedView.objects.filter(tenant=tenant, owner=owner).count() >= MAX_SAVED_VIEWS:
            raise InvalidInput(f"At most {MAX_SAVED_VIEWS} saved views each.", details={"views": "too_many"})
        view = SavedView.objects.create(tenant=tenant, owner=owner, name=name, query=query)
    elif view.query != query:
        view.query = query
        view.save(update_fields=["query", "updated_at"])
    else:
        return view
    audit.record(
        tenant.pk,
        EventDraft(actor=str(actor), action=AuditAction.SAVED_VIEW_SAVED, object_type="saved_view",
                   object_id=view.pk, before=before, after=_snapshot(view)),
    )
    return view


@service
def saved_view_delete(*, tenant: Tenant, owner: AbstractBaseUser, view_id: int, actor: Actor) -> None:
    """Delete one of ``owner``'s views; anyone else's is not found."""
    view = SavedView.objects.select_for_update().filter(tenant=tenant, owner=owner, pk=view_id).first()
    if view is None:
        raise NotFound("No such saved view.")
    audit.record(
        tenant.pk,
        EventDraft(actor=str(actor), action=AuditAction.SAVED_VIEW_DELETED, object_type="saved_view",
                   object_id=view.pk, before=_snapshot(view)),
    )
    view.delete()
