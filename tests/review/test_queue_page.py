"""The queue page: what a reviewer sees, filters, paging, htmx partials, pinned query counts."""
import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from reviews.views.reviewer import QUEUE_PAGE_SIZE_HTML
from tests.conftest import candidate
from tests.review.conftest import TEMPLATE_VALUE, XSS_VALUE, propose, store_thread

QUEUE = "/review/"


def item_ids(response) -> list[int]:
    return [int(pk) for pk in re.findall(r'id="item-(\d+)"', response.content.decode())]


class TestQueuePage:
    def test_it_shows_pending_items_with_their_context(self, review_queue, reviewer_client):
        response = reviewer_client.get(QUEUE)
        assert response.status_code == 200
        html = response.content.decode()
        assert item_ids(response) == [review_queue.evidence.pk, review_queue.conflict.pk, review_queue.new_entity.pk]
        assert "By the way, <mark>I live in Berlin</mark> these days." in html
        assert "<code>rules</code>" in html and "<code>v2</code>" in html
        assert 'data-conflict' in html and "MySQL" in html  # side by side with the active value
        assert f'href="{reverse("reviews:entity", args=[review_queue.new_entity.entity_id])}"' in html

    def test_auditor_sees_the_queue_without_actions(self, review_queue, auditor_client):
        response = auditor_client.get(QUEUE)
        html = response.content.decode()
        assert response.status_code == 200 and item_ids(response)
        assert 'data-action="approve"' not in html and "bulk-form" not in html and "read only" in html

    def test_filters_from_the_query_string(self, review_queue, reviewer_client):
        assert item_ids(reviewer_client.get(QUEUE, {"conflict": "yes"})) == [review_queue.conflict.pk]
        assert item_ids(reviewer_client.get(QUEUE, {"sensitivity": "personal"})) == [review_queue.evidence.pk]
        assert item_ids(reviewer_client.get(QUEUE, {"status": "pending_user"})) == [review_queue.waiting_for_user.pk]
        assert item_ids(reviewer_client.get(QUEUE, {"user_id": "bob"})) == []

    def test_any_relation_is_offered_and_filters(self, tenant, review_queue, reviewer_client):
        [works_at] = propose(tenant, "alice", candidate(field="relation:works_at", value="Acme", kind="relation"))
        assert '<option value="relation:*">' in reviewer_client.get(QUEUE).content.decode()
        assert item_ids(reviewer_client.get(QUEUE, {"field": "relation:*"})) == [works_at.pk]

    def test_an_invalid_filter_is_shown_and_the_rest_apply(self, review_queue, reviewer_client):
        response = reviewer_client.get(QUEUE, {"min_confidence": "7", "conflict": "yes"})
        assert response.status_code == 200
        assert item_ids(response) == [review_queue.conflict.pk]
        assert "errorlist" in response.content.decode()

    def test_a_broken_cursor_falls_back_to_the_first_page(self, review_queue, reviewer_client):
        response = reviewer_client.get(QUEUE, {"cursor": "garbage!"})
        assert response.status_code == 200 and len(item_ids(response)) == 3

    def test_next_page_link_keeps_the_filters(self, tenant, reviewer_client):
        propose(tenant, "bob", *[candidate(field="preference", value=f"v{i}") for i in range(QUEUE_PAGE_SIZE_HTML + 5)])
        first = reviewer_client.get(QUEUE, {"field": "preference"})
        assert len(item_ids(first)) == QUEUE_PAGE_SIZE_HTML
        next_url = re.search(r'href="([^"]*cursor=[^"]+)"', first.content.decode()).group(1).replace("&amp;", "&")
        assert "field=preference" in next_url
        second = reviewer_client.get(next_url)
        assert len(item_ids(second)) == 5 and not set(item_ids(first)) & set(item_ids(second))

    def test_htmx_gets_only_the_page_partial(self, review_queue, reviewer_client):
        response = reviewer_client.get(QUEUE, {"conflict": "yes"}, HTTP_HX_REQUEST="true", HTTP_HX_TARGET="results")
        html = response.content.decode()
        assert "<html" not in html and item_ids(response) == [review_queue.conflict.pk]

    def test_user_values_are_escaped(self, tenant, reviewer_client):
        store_thread(tenant, "eve", "t-x", [("x-1", "user", f"my name is {XSS_VALUE} and {TEMPLATE_VALUE}")])
        propose(
            tenant,
            "eve",
            candidate(value=XSS_VALUE, source_message_id="x-1", evidence=XSS_VALUE),
            candidate(field="role", value=TEMPLATE_VALUE, confidence=0.9),
        )
        html = reviewer_client.get(QUEUE).content.decode()
        assert "<img src=x" not in html and "</script><script>alert(2)" not in html
        assert "&lt;img src=x onerror=alert(1)&gt;" in html
        assert "<mark>&lt;img src=x onerror=alert(1)&gt;</mark>" in html
        assert "{{ request }}" in html  # printed, not evaluated


class TestQueryCounts:
    """The page costs the same number of queries for 3 items as for a full page (no N+1)."""

    def seed(self, tenant, start, count):
        for index in range(start, start + count):
            user_id = f"user-{index % 7}"
            store_thread(tenant, user_id, f"t-{index}", [(f"s-{index}-a", "user", "hello"),
                                                         (f"s-{index}-b", "user", f"I like thing {index}")])
            propose(tenant, user_id, candidate(field="preference", value=f"thing {index}",
                                               source_message_id=f"s-{index}-b", evidence=f"thing {index}"))

    def count_queries(self, client, params, expected_items):
        with CaptureQueriesContext(connection) as queries:
            response = client.get(QUEUE, params)
        assert len(item_ids(response)) == expected_items
        return len(queries)

    @pytest.mark.parametrize(
        # Beside the items: the claim renewal (1), the headline counts (5, each capped) and
        # the tenant's field labels (1, read once for the page).
        "params,pinned", [({}, 17), ({"status": "open"}, 18), ({"sensitivity": "normal", "age": "lt1d"}, 19)]
    )
    def test_queue_page(self, tenant, reviewer_client, params, pinned):
        self.seed(tenant, 0, 3)
        few = self.count_queries(reviewer_client, params, 3)
        self.seed(tenant, 3, QUEUE_PAGE_SIZE_HTML - 3)
        many = self.count_queries(reviewer_client, params, QUEUE_PAGE_SIZE_HTML)
        assert few == many <= pinned

    def test_htmx_partial(self, tenant, reviewer_client, django_assert_max_num_queries):
        self.seed(tenant, 0, QUEUE_PAGE_SIZE_HTML)
        with django_assert_max_num_queries(17):  # the tenant's labels included
            response = reviewer_client.get(QUEUE, HTTP_HX_REQUEST="true", HTTP_HX_TARGET="results")
        assert len(item_ids(response)) == QUEUE_PAGE_SIZE_HTML
