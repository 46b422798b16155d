"""Routes of the subject's self-service pages, mounted at /me/ inside the reviews namespace.

Kept in their own list so the security tests can walk every one of them.
"""
from django.urls import path

from .views import portal

urlpatterns = [
    path("", portal.home, name="portal_home"),
    path("about/", portal.about, name="portal_about"),
    path("link/<str:token>/", portal.enter, name="portal_enter"),
    path("sign-out/", portal.sign_out, name="portal_sign_out"),
    path("facts/<int:fact_id>/", portal.fact_detail, name="portal_fact"),
    path("facts/<int:fact_id>/correct/", portal.fact_correct, name="portal_fact_correct"),
    path("facts/<int:fact_id>/add/", portal.fact_add, name="portal_fact_add"),
    path("facts/<int:fact_id>/delete/", portal.fact_remove, name="portal_fact_delete"),
    path("facts/<int:fact_id>/contest/", portal.fact_contest_view, name="portal_fact_contest"),
    path("deletions/", portal.deletions_status, name="portal_deletions"),
    path("deletions/<int:deletion_id>/undo/", portal.deletion_undo, name="portal_deletion_undo"),
    path("waiting/", portal.waiting, name="portal_waiting"),
    path("waiting/<int:candidate_id>/confirm/", portal.item_confirm, name="portal_item_confirm"),
    path("waiting/<int:candidate_id>/correct/", portal.item_correct, name="portal_item_correct"),
    path("waiting/<int:candidate_id>/reject/", portal.item_reject, name="portal_item_reject"),
    path("waiting/<int:candidate_id>/settle/", portal.conflict_settle, name="portal_conflict_settle"),
    path("controls/", portal.controls, name="portal_controls"),
    path("controls/pause/", portal.pause, name="portal_pause"),
    path("controls/export.json", portal.export, name="portal_export"),
    path("controls/delete/", portal.delete_scope, name="portal_delete"),
    path("controls/forget/", portal.forget, name="portal_forget"),
    path("controls/receipt/", portal.receipt, name="portal_receipt"),
]
