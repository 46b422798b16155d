"""The queue page: what a reviewer sees, filters, paging, htmx partials, pinned query counts."""
import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from reviews.views.reviewer import QUEUE_PAGE_SIZE_HTML
from tests.conftest import candidate
from tests.review.conftest import TEMPLATE_VALUE, XSS_VALUE, approve_as, item_body, propose, signed_in, store_thread, with_bodies

QUEUE = "/review/"


def item_ids(response) -> list[int]:
    return [int(pk) for pk in re.findall(r'id="item-(\d+)"', response.content.decode())]


class TestQueuePage:
    def test_it_shows_pending_items_with_their_context(self, review_queue, reviewer_client):
        response = reviewer_client.get(QUEUE)
        assert response.status_code == 200
        html = response.content.decode()
        assert item_ids(response) == [review_queue.evidence.pk, review_queue.conflict.pk, review_queue.new_entity.pk]
        assert "By the way, <mark>I live in Berlin</mark> these days." in html  # the thread, once per group
        # Each item's body comes when it is opened (below); the page has the lines only.
        assert "<code>rules</code>" not in html and "data-conflict" not in html
        html = with_bodies(reviewer_client, html)
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
        assert response.status_code == 400  # README: a bad filter is a 400 with the reason
        assert item_ids(response) == [review_queue.conflict.pk]
        assert "errorlist" in response.content.decode()

    @pytest.mark.parametrize(
        "bad",
        [{"user_id": "bob\x00"}, {"user_id": "x" * 200}, {"sort": "random"}, {"flag": "nope"}, {"age": "forever"},
         {"conflict": "maybe"}, {"new_entity": "perhaps"}, {"claims": "theirs"}],
    )
    def test_every_filter_names_its_own_error(self, review_queue, reviewer_client, bad):
        [(name, _value)] = bad.items()
        response = reviewer_client.get(QUEUE, bad)
        html = response.content.decode()
        assert response.status_code == 400
        assert len(item_ids(response)) == 3  # left out: the queue as without it
        field_row = re.search(rf'<div class="row[^"]*">(?:(?!<div class="row).)*name="{name}"(?:(?!<div class="row).)*', html, re.S)
        assert field_row and "errorlist" in field_row.group(0), f"no error beside {name}"
        assert "data-filter-errors" in html

    def test_the_filter_form_swap_names_what_it_left_out(self, review_queue, reviewer_client):
        response = reviewer_client.get(QUEUE, {"user_id": "bob\x00", "conflict": "yes"}, HTTP_HX_REQUEST="true")
        html = response.content.decode()
        assert response.status_code == 400
        assert "data-filter-errors" in html and "<html" not in html
        assert item_ids(response) == [review_queue.conflict.pk]

    def test_what_was_left_out_is_said_in_the_readers_language(self, review_queue, reviewer_client):
        html = reviewer_client.get(QUEUE, {"sort": "random"}, HTTP_ACCEPT_LANGUAGE="zh-hans").content.decode()
        assert "以下筛选条件无效，未被应用" in html

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
        bodies = with_bodies(reviewer_client, "".join(re.findall(r'hx-get="[^"]+/body\?version=\d+"', html)))
        assert "<img src=x" not in bodies and "&lt;img src=x onerror=alert(1)&gt;" in bodies
        assert "{{ request }}" in bodies


class TestItemBody:
    """An item's body (context, history, the edit, reject and settle forms) comes when the
    reviewer opens the item: GET /review/candidates/<id>/body with htmx."""

    def body_url(self, item):
        return reverse("reviews:candidate-body", args=[item.pk])

    def test_the_line_asks_for_the_body_on_opening_and_links_the_items_page(self, review_queue, reviewer_client):
        html = reviewer_client.get(QUEUE).content.decode()
        item = review_queue.evidence
        assert f'hx-get="{self.body_url(item)}?version=1" hx-trigger="fetch-body"' in html
        # Without JavaScript the body is a link to the item's own page, which has it all.
        assert re.search(rf'data-body-pending><a href="{reverse("reviews:candidate", args=[item.pk])}">', html)
        # "a" needs no body: approve on a plain item, take the proposed value on a conflict.
        assert html.count('data-action="approve"') == 2 and html.count('data-action="take-new"') == 1
        assert f'action="{reverse("reviews:candidate-settle", args=[review_queue.conflict.pk])}"' in html

    def test_the_body_has_the_forms_and_they_come_back_to_the_page_it_is_shown_on(self, review_queue, reviewer_client):
        shown_on = "/review/?field=location&sort=newest"
        body = item_body(reviewer_client, review_queue.evidence.pk, shown_on=shown_on)
        assert "<html" not in body and "<article" not in body
        assert 'data-action="edit"' in body and 'data-action="reject"' in body and 'name="csrfmiddlewaretoken"' in body
        assert body.count('name="next" value="/review/?field=location&amp;sort=newest"') == 2
        conflict = item_body(reviewer_client, review_queue.conflict.pk)
        assert 'data-action="settle"' in conflict and 'data-action="merge"' in conflict and "MySQL" in conflict

    def test_a_body_shown_on_another_site_comes_back_to_the_queue(self, review_queue, reviewer_client):
        response = reviewer_client.get(self.body_url(review_queue.evidence), HTTP_HX_REQUEST="true",
                                       HTTP_HX_CURRENT_URL="https://evil.example/review/?x=1")
        assert 'name="next" value="/review/"' in response.content.decode()

    def test_a_posted_body_form_decides_as_the_line_does(self, review_queue, reviewer_client):
        body = item_body(reviewer_client, review_queue.evidence.pk)
        action = re.search(r'<form class="inline-form" method="post" action="([^"]+/reject)"', body).group(1)
        response = reviewer_client.post(action, {"version": 1, "note": "not true", "next": "/review/"})
        assert response.status_code == 302
        from reviews.models import Candidate
        assert Candidate.objects.get(pk=review_queue.evidence.pk).status == "rejected"

    def test_a_line_out_of_date_when_opened_comes_back_whole_saying_who_decided(self, review_queue, reviewer,
                                                                                 second_reviewer_client):
        item = review_queue.evidence
        shown = second_reviewer_client.get(QUEUE).content.decode()  # rob sees the item open...
        assert f"{self.body_url(item)}?version=1" in shown
        approve_as(reviewer, item)  # ...rita approves it, then rob opens it
        response = second_reviewer_client.get(f"{self.body_url(item)}?version=1", HTTP_HX_REQUEST="true")
        html = response.content.decode()
        assert response["HX-Retarget"] == f"#item-{item.pk}" and response["HX-Reswap"] == "outerHTML"
        assert html.lstrip().startswith(f'<article class="item decided" id="item-{item.pk}"')
        assert 'data-notice="stale"' in html and "rita decided this item first: approved" in html
        assert "It is shown as it is now." in html and "Decided by rita" in html
        assert 'data-action="approve"' not in html and 'data-action="reject"' not in html
        # The version it shows now: no swap, the body only.
        current = second_reviewer_client.get(f"{self.body_url(item)}?version=2", HTTP_HX_REQUEST="true")
        assert "HX-Retarget" not in current and "<article" not in current.content.decode()

    def test_the_auditor_gets_the_body_without_forms(self, review_queue, auditor_client):
        body = item_body(auditor_client, review_queue.conflict.pk)
        assert "MySQL" in body and "<form" not in body

    def test_another_tenants_item_is_404(self, review_queue, outsider_web_client):
        response = outsider_web_client.get(self.body_url(review_queue.evidence), HTTP_HX_REQUEST="true")
        assert response.status_code == 404 and "Berlin" not in response.content.decode()

    def test_who_may_not_see_the_queue_gets_no_body(self, review_queue, client):
        from django.contrib.auth import get_user_model

        from tests.conftest import PASSWORD

        anonymous = client.get(self.body_url(review_queue.evidence), HTTP_HX_REQUEST="true")
        assert anonymous.status_code == 302 and anonymous["Location"].startswith(reverse("reviews:login"))
        stray = get_user_model().objects.create_user(username="stray", password=PASSWORD)  # staff of no tenant
        response = signed_in(stray).get(self.body_url(review_queue.evidence), HTTP_HX_REQUEST="true")
        assert response.status_code == 404 and "Berlin" not in response.content.decode()

    def test_without_htmx_it_is_the_items_page(self, review_queue, reviewer_client):
        response = reviewer_client.get(self.body_url(review_queue.evidence))
        assert response.status_code == 302
        assert response["Location"] == reverse("reviews:candidate", args=[review_queue.evidence.pk])

    def test_a_body_costs_a_fixed_number_of_queries(self, review_queue, reviewer_client, django_assert_max_num_queries):
        with django_assert_max_num_queries(12):
            item_body(reviewer_client, review_queue.conflict.pk)


class TestQueryCounts:
    """The page costs the same number of queries for 3 items as for a full page (no N+1), and
    exactly the number pinned: a query added (or saved) shows here."""

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
        # Beside the items: the session, the user, their membership with its tenant (one
        # query), the claim renewal, the tenant's schema (read once for the filters' choices
        # and the items) and its field labels (read once for the page). The headline counts
        # are not read here: the page asks for them once shown (tests/review/test_queue_counts.py).
        "params,pinned", [({}, 8), ({"status": "open"}, 9), ({"sensitivity": "normal", "age": "lt1d"}, 9)]
    )
    def test_queue_page(self, tenant, reviewer_client, params, pinned):
        self.seed(tenant, 0, 3)
        few = self.count_queries(reviewer_client, params, 3)
        self.seed(tenant, 3, QUEUE_PAGE_SIZE_HTML - 3)
        many = self.count_queries(reviewer_client, params, QUEUE_PAGE_SIZE_HTML)
        assert few == many == pinned, (few, many)

    def test_htmx_partial(self, tenant, reviewer_client, django_assert_max_num_queries):
        self.seed(tenant, 0, QUEUE_PAGE_SIZE_HTML)
        with django_assert_max_num_queries(12):  # the tenant's labels included
            response = reviewer_client.get(QUEUE, HTTP_HX_REQUEST="true", HTTP_HX_TARGET="results")
        assert len(item_ids(response)) == QUEUE_PAGE_SIZE_HTML
