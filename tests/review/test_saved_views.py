"""Saved views (issue 38.6): a reviewer's named queue filters, their own and audited."""
import pytest

from reviews.actors import Actor
from reviews.errors import InvalidInput, NotFound
from reviews.models import AuditEvent, AuditPayload, SavedView
from reviews.services.saved_views import saved_view_delete, saved_view_save
from tests.review.conftest import signed_in

PAGE = "/review/views/"


def test_a_view_is_saved_from_the_queue_address_and_opens_the_queue(tenant, reviewer, reviewer_client):
    form = reviewer_client.get(PAGE, {"query": "?status=pending_user&field=location&cursor=abc&bogus=1"})
    assert 'value="field=location&amp;status=pending_user"' in form.content.decode()  # paging and unknown keys left out
    response = reviewer_client.post(f"{PAGE}save", {"name": "Locations to ask", "query": "status=pending_user&field=location"})
    assert response.status_code == 302
    view = SavedView.objects.get(owner=reviewer)
    assert (view.name, view.query) == ("Locations to ask", "field=location&status=pending_user")
    html = reviewer_client.get(PAGE).content.decode()
    assert 'href="/review/?field=location&amp;status=pending_user"' in html
    event = AuditEvent.objects.get(action="saved_view.saved")
    assert event.actor == f"reviewer:{reviewer.pk}" and event.object_id == str(view.pk)
    assert AuditPayload.objects.get(event=event).after == {"name": "Locations to ask", "query": view.query}
    assert reviewer_client.get(f"/review/?{view.query}").status_code == 200


def test_saving_under_the_same_name_replaces_the_filter(tenant, reviewer):
    actor = Actor.reviewer(reviewer)
    first = saved_view_save(tenant=tenant, owner=reviewer, name="Mine", queue_query="field=location", actor=actor)
    again = saved_view_save(tenant=tenant, owner=reviewer, name="Mine", queue_query="field=name", actor=actor)
    assert again.pk == first.pk and SavedView.objects.get(pk=first.pk).query == "field=name"
    events = AuditEvent.objects.filter(action="saved_view.saved").order_by("seq")
    assert AuditPayload.objects.get(event=events.last()).before == {"name": "Mine", "query": "field=location"}


@pytest.mark.parametrize("name,query", [("", "field=x"), ("x" * 81, ""), ("ok", "a=\x00")])
def test_a_bad_view_is_refused(tenant, reviewer, name, query):
    with pytest.raises(InvalidInput):
        saved_view_save(tenant=tenant, owner=reviewer, name=name, queue_query=query, actor=Actor.reviewer(reviewer))
    assert not SavedView.objects.exists() and not AuditEvent.objects.filter(action="saved_view.saved").exists()


def test_a_bad_form_is_a_400(reviewer_client):
    assert reviewer_client.post(f"{PAGE}save", {"name": ""}).status_code == 400


def test_views_are_their_owners_alone(tenant, reviewer, second_reviewer, outsider, second_reviewer_client):
    view = saved_view_save(tenant=tenant, owner=reviewer, name="Rita's", queue_query="field=name", actor=Actor.reviewer(reviewer))
    assert "Rita&#x27;s" not in second_reviewer_client.get(PAGE).content.decode()
    assert second_reviewer_client.post(f"{PAGE}{view.pk}/delete").status_code == 404
    with pytest.raises(NotFound):
        saved_view_delete(tenant=tenant, owner=second_reviewer, view_id=view.pk, actor=Actor.reviewer(second_reviewer))
    outsider_client = signed_in(outsider)
    assert "Rita" not in outsider_client.get(PAGE).content.decode()
    assert outsider_client.post(f"{PAGE}{view.pk}/delete").status_code == 404
    assert SavedView.objects.filter(pk=view.pk).exists()
    assert not AuditEvent.objects.filter(action="saved_view.deleted").exists()


def test_the_owner_deletes_it_and_it_is_audited(tenant, reviewer, reviewer_client):
    view = saved_view_save(tenant=tenant, owner=reviewer, name="Old", queue_query="", actor=Actor.reviewer(reviewer))
    assert reviewer_client.post(f"{PAGE}{view.pk}/delete").status_code == 302
    assert not SavedView.objects.filter(pk=view.pk).exists()
    event = AuditEvent.objects.get(action="saved_view.deleted")
    assert AuditPayload.objects.get(event=event).before == {"name": "Old", "query": ""}


def test_it_needs_a_sign_in(client):
    assert client.get(PAGE).status_code == 302
