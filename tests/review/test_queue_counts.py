"""The queue's headline, asked for by the page once it is shown (GET /review/counts).

The page itself does not count: a sparse filter's capped count reads thousands of rows, so
the items come first and a placeholder asks for the counts of the same filters. The answer
counts as the page filters (a filter that does not validate is left out and named, 400),
carries "Release mine" out of band when the viewer holds claims, and without JavaScript is a
page of its own."""
import re

from django.urls import reverse

from reviews.actors import Actor
from reviews.models import Candidate
from reviews.services.claims import candidates_claim
from reviews.selectors.queue import QueueFilters
from tests.review.conftest import page_with_counts

COUNTS = reverse("reviews:queue-counts")
HTMX = {"HX-Request": "true"}


def count(html: str, name: str) -> str:
    [value] = re.findall(rf'data-count="{name}">([^<]+)<', html)
    return value


def test_the_page_asks_for_the_counts_of_its_own_filters(review_queue, reviewer_client):
    html = reviewer_client.get("/review/", {"field": "location", "q": "Ber"}).content.decode()
    assert 'data-count="waiting"' not in html  # not counted with the page
    [asked] = re.findall(r'data-counts-pending hx-get="([^"]+)" hx-trigger="load"', html)
    assert asked.startswith(COUNTS + "?") and "field=location" in asked and "q=Ber" in asked
    assert "Counting…" in html and f'<noscript><a href="{asked}">' in html


def test_the_answer_counts_what_the_filters_show(review_queue, reviewer_client):
    everything = reviewer_client.get(COUNTS, headers=HTMX).content.decode()
    assert count(everything, "waiting") == count(everything, "in_filter") == "3"
    narrowed = reviewer_client.get(COUNTS, {"entity_type": "organization"}, headers=HTMX).content.decode()
    assert count(narrowed, "waiting") == "3" and count(narrowed, "in_filter") == "1"
    assert "Select the 1 in this filter" in narrowed
    assert narrowed.lstrip().startswith('<p class="counts" id="counts" data-counts>')  # replaces the placeholder


def test_the_page_and_its_counts_agree(review_queue, reviewer_client):
    html = page_with_counts(reviewer_client, "/review/", {"status": "open"})
    shown = len(re.findall(r'<article class="item', html))
    assert count(html, "in_filter") == str(shown) == str(Candidate.objects.filter(status__in=["pending_review", "pending_user"]).count())


def test_a_filter_that_does_not_validate_is_named_and_the_rest_still_count(review_queue, reviewer_client):
    response = reviewer_client.get(COUNTS, {"entity_type": "organization", "min_confidence": "lots"}, headers=HTMX)
    assert response.status_code == 400
    assert count(response.content.decode(), "in_filter") == "1"
    page = reviewer_client.get(COUNTS, {"entity_type": "organization", "min_confidence": "lots"})
    assert page.status_code == 400 and "data-filter-errors" in page.content.decode()


def test_release_mine_comes_with_the_counts_when_the_viewer_holds_claims(review_queue, reviewer, reviewer_client):
    empty_handed = reviewer_client.get(COUNTS, headers=HTMX).content.decode()
    assert 'id="claim-release" data-claim-release hx-swap-oob="true"></span>' in empty_handed
    candidates_claim(tenant=review_queue.evidence.tenant, actor=Actor.reviewer(reviewer), filters=QueueFilters(), count=2)
    holding = reviewer_client.get(COUNTS, headers=HTMX).content.decode()
    assert count(holding, "mine") == "2" and 'name="release" value="1"' in holding


def test_an_auditor_gets_the_counts_without_claims_or_selection(review_queue, auditor_client):
    html = auditor_client.get(COUNTS, headers=HTMX).content.decode()
    assert count(html, "waiting") == "3"
    assert 'data-count="mine"' not in html and "data-select-all" not in html and "claim-release" not in html


def test_without_javascript_it_is_a_page_that_leads_back(review_queue, reviewer_client):
    response = reviewer_client.get(COUNTS, {"field": "location"})
    html = response.content.decode()
    assert response.status_code == 200 and "<html" in html
    assert count(html, "in_filter") == "1" and 'href="/review/?field=location"' in html


def test_a_refused_filter_value_is_shown_escaped(review_queue, reviewer_client):
    # The refusal names the value it refused (Django's choice error): printed, never run.
    response = reviewer_client.get(COUNTS, {"sort": '"><script>alert(1)</script>'})
    html = response.content.decode()
    assert response.status_code == 400 and "data-filter-errors" in html
    assert "<script>alert(1)</script>" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
