"""The dashboard after the published value of an item's field changed (SPEC §4): the page,
the keyboard (it posts the item's approve or take-new form with htmx) and bulk."""
import pytest
from django.urls import reverse

from reviews.actors import Actor
from reviews.models import AuditEvent, Candidate, Fact
from reviews.services.facts import fact_edit
from tests.conftest import candidate
from tests.review.conftest import approve_as, propose
from tests.review.test_decisions_pages import messages_of, url

HTMX = {"HTTP_HX_REQUEST": "true"}


@pytest.fixture
def two_names(tenant):
    return propose(tenant, "dana", candidate(value="Dana"), candidate(value="Daniela"))


def nothing_applied(item):
    assert Fact.objects.get(subject__user_id="dana", status="active").value == "Dana"
    assert not AuditEvent.objects.filter(object_id=str(item.pk), action__in=["candidate.approved", "candidate.rejected"]).exists()


def test_the_page_says_the_value_changed_and_applies_nothing(reviewer, reviewer_client, two_names):
    first, second = two_names
    approve_as(reviewer, first)
    response = reviewer_client.post(url("approve", second), {"version": 1})
    [message] = messages_of(response)
    assert message == "The published value of name changed to “Dana”; this item was judged again. Your decision was not applied."
    nothing_applied(second)
    assert AuditEvent.objects.filter(action="candidate.rejudged", object_id=str(second.pk)).count() == 1


def test_the_keyboards_approve_gets_a_409_and_the_item_as_it_is_now(reviewer, reviewer_client, two_names):
    first, second = two_names
    approve_as(reviewer, first)
    response = reviewer_client.post(url("approve", second), {"version": 1}, **HTMX)
    html = response.content.decode()
    assert response.status_code == 409
    assert 'data-notice="stale"' in html and "changed to “Dana”" in html
    assert 'value="take_new"' in html  # shown now as the conflict it is
    nothing_applied(second)


def test_the_keyboards_take_new_on_a_conflict_is_refused_after_an_edit(tenant, reviewer_client):
    [published] = propose(tenant, "dana", candidate(value="Dana", confidence=0.97))
    [waiting] = propose(tenant, "dana", candidate(value="Daniela"))
    fact = Fact.objects.get(pk=published.fact_id)
    # The subject corrects the published value on their page meanwhile.
    fact_edit(tenant=tenant, fact_id=fact.pk, value="Dana Smith", actor=Actor.subject("dana"), user_id="dana")
    assert Candidate.objects.get(pk=waiting.pk).version == 2
    response = reviewer_client.post(url("settle", waiting), {"version": 1, "resolution": "take_new"}, **HTMX)
    assert response.status_code == 409 and "changed to “Dana Smith”" in response.content.decode()
    assert Fact.objects.get(pk=fact.pk).value == "Dana Smith"


def test_bulk_names_the_item_judged_again(reviewer_client, two_names):
    first, second = two_names
    response = reviewer_client.post(
        reverse("reviews:bulk-decide"), {"selected": [f"{first.pk}:1", f"{second.pk}:1"], "decision": "approve"}
    )
    texts = messages_of(response)
    assert texts[0] == "Approved 1 item."
    assert texts[1] == f"Item #{second.pk} was judged again: the published value is now “Dana”; it was left as it was."
    nothing_applied(second)


def test_another_tenants_reviewer_cannot_decide_it(outsider_web_client, two_names):
    _, second = two_names
    response = outsider_web_client.post(url("approve", second), {"version": 1})
    assert response.status_code == 404
    assert Candidate.objects.get(pk=second.pk).status == "pending_review"
