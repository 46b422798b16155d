"""Bulk decisions from the queue: "select all in this filter", the confirmation above the
threshold, refusals that keep the selection, and the htmx answer (toast, counts, items)."""
import re

from django.contrib.messages import get_messages
from django.urls import reverse

from reviews.actors import Actor
from reviews.models import AuditEvent, Candidate, CandidateStatus
from reviews.selectors.queue import QueueCounts, QueueFilters
from reviews.services.claims import candidates_claim
from reviews.views.reviewer import BULK_CONFIRM_ABOVE, select_all_label
from tests.conftest import candidate
from tests.review.conftest import approve_as, page_with_counts, propose

HTMX = {"HTTP_HX_REQUEST": "true", "HTTP_HX_CURRENT_URL": "http://testserver/review/?field=preference"}
SELECT_ALL = reverse("reviews:bulk-select")
BULK = reverse("reviews:bulk-decide")


def preferences(tenant, count, user_id="bulk"):
    return propose(tenant, user_id, *[candidate(field="preference", value=f"likes {n}") for n in range(count)])


def selected_all(html: str) -> list[str]:
    return re.findall(r'name="selected_all" value="(\d+:\d+)"', html)


def statuses(items) -> set[str]:
    return set(Candidate.objects.filter(pk__in=[item.pk for item in items]).values_list("status", flat=True))


class TestSelectAll:
    def test_it_selects_every_open_item_of_the_filter_with_its_version(self, tenant, review_queue, reviewer,
                                                                        reviewer_client):
        items = preferences(tenant, 3)
        approve_as(reviewer, items[0])  # decided: not selectable any more
        html = reviewer_client.get(SELECT_ALL, {"field": "preference"}, **HTMX).content.decode()
        assert sorted(selected_all(html)) == sorted(f"{item.pk}:{item.version}" for item in items[1:])
        assert "All 2 items of this filter are selected." in html and "data-bulk-clear" in html
        assert "<html" not in html  # the partial, for the bulk bar

    def test_colleagues_claims_and_other_tenants_are_left_out(self, tenant, other_tenant, second_reviewer,
                                                              reviewer_client):
        mine, claimed = preferences(tenant, 1), preferences(tenant, 1, user_id="claimed")
        candidates_claim(tenant=tenant, actor=Actor.reviewer(second_reviewer), count=1,
                         filters=QueueFilters(user_id="claimed"))
        foreign = preferences(other_tenant, 1)
        html = reviewer_client.get(SELECT_ALL, {"field": "preference"}, **HTMX).content.decode()
        assert selected_all(html) == [f"{mine[0].pk}:1"]
        assert str(claimed[0].pk) not in selected_all(html) and str(foreign[0].pk) not in html

    def test_without_javascript_it_is_a_page_with_the_bar(self, tenant, reviewer_client):
        items = preferences(tenant, 2)
        html = reviewer_client.get(SELECT_ALL, {"field": "preference"}).content.decode()
        assert "<html" in html and 'id="bulk-form"' in html and "hx-post" not in html.split('id="bulk-form"')[1][:200]
        assert len(selected_all(html)) == len(items)
        assert 'name="next" value="/review/?field=preference"' in html

    def test_an_auditor_may_not_select(self, review_queue, auditor_client):
        assert auditor_client.get(SELECT_ALL).status_code == 403

    def test_the_queue_offers_it_with_the_count(self, tenant, reviewer_client):
        preferences(tenant, 3)
        html = page_with_counts(reviewer_client, "/review/", {"field": "preference"})
        link = re.search(r'<a href="/review/bulk/select\?field=preference"[^>]*data-select-all>([^<]+)</a>', html)
        assert link and link.group(1) == "Select all 3 in this filter"

    def test_the_label_says_what_it_selects(self):
        counts = QueueCounts(waiting=900, in_filter=312, contested=0, claimed_by_viewer=0, oldest=None)
        assert select_all_label(counts, QueueFilters()) == "Select all 312 in this filter"
        assert select_all_label(counts, QueueFilters(status="all")) == "Select every open item in this filter"
        counts.in_filter = 5000
        assert select_all_label(counts, QueueFilters()) == "Select the first 500 in this filter"


class TestConfirmation:
    def test_above_the_threshold_nothing_is_decided_before_the_count_is_confirmed(self, tenant, reviewer,
                                                                                  reviewer_client):
        items = preferences(tenant, BULK_CONFIRM_ABOVE + 2)  # one fewer is still above it
        selection = [f"{item.pk}:1" for item in items]
        count = len(items)
        html = reviewer_client.post(BULK, {"selected_all": selection, "decision": "approve"}, **HTMX).content.decode()
        assert f"Approve {count} items?" in html and f'name="confirmed" value="approve:{count}"' in html
        assert statuses(items) == {CandidateStatus.PENDING_REVIEW}
        assert not AuditEvent.objects.filter(action="candidates.bulk_approve").exists()

        # A confirmation of another decision (or another count) is no confirmation.
        reviewer_client.post(BULK, {"selected_all": selection, "decision": "reject", "note": "spam",
                                    "confirmed": f"approve:{count}"}, **HTMX)
        reviewer_client.post(BULK, {"selected_all": selection[1:], "decision": "approve",
                                    "confirmed": f"approve:{count}"}, **HTMX)
        assert statuses(items) == {CandidateStatus.PENDING_REVIEW}

        html = reviewer_client.post(BULK, {"selected_all": selection, "decision": "approve",
                                           "confirmed": f"approve:{count}"}, **HTMX).content.decode()
        assert f"Approved {count} items." in html
        assert statuses(items) == {CandidateStatus.APPROVED}
        summary = AuditEvent.objects.get(action="candidates.bulk_approve")
        assert summary.actor == f"reviewer:{reviewer.pk}" and summary.object_id == str(count)

    def test_at_the_threshold_it_decides_at_once(self, tenant, reviewer_client):
        items = preferences(tenant, BULK_CONFIRM_ABOVE)
        reviewer_client.post(BULK, {"selected_all": [f"{item.pk}:1" for item in items], "decision": "approve"}, **HTMX)
        assert statuses(items) == {CandidateStatus.APPROVED}

    def test_without_javascript_the_question_is_a_page_holding_the_selection(self, tenant, reviewer_client):
        items = preferences(tenant, BULK_CONFIRM_ABOVE + 1)
        response = reviewer_client.post(BULK, {"selected_all": [f"{item.pk}:1" for item in items], "decision": "reject",
                                               "note": "not a preference"})
        html = response.content.decode()
        assert response.status_code == 200 and f"Reject {len(items)} items?" in html
        assert len(selected_all(html)) == len(items) and 'value="not a preference"' in html
        assert statuses(items) == {CandidateStatus.PENDING_REVIEW}


class TestRefusalsKeepTheSelection:
    def test_a_reject_without_reason_answers_under_the_bar_only(self, tenant, review_queue, reviewer_client):
        html = reviewer_client.post(
            BULK, {"selected": [f"{review_queue.evidence.pk}:1"], "decision": "reject"}, **HTMX
        ).content.decode()
        assert 'data-bulk-error>A reason is required to reject.<' in html
        # Nothing else is swapped: the ticked boxes and the select-all selection stay as they were.
        assert "hx-swap-oob" not in html and "data-item" not in html
        assert Candidate.objects.get(pk=review_queue.evidence.pk).status == CandidateStatus.PENDING_REVIEW

    def test_too_many_items_are_refused_whole(self, tenant, reviewer_client):
        html = reviewer_client.post(
            BULK, {"selected_all": [f"{n}:1" for n in range(1, 502)], "decision": "approve", "confirmed": "approve:501"},
            **HTMX,
        ).content.decode()
        assert "Too many items selected at once." in html

    def test_without_javascript_an_error_is_the_bulk_page(self, review_queue, reviewer_client):
        response = reviewer_client.post(BULK, {"selected_all": [f"{review_queue.evidence.pk}:1"], "decision": "reject"})
        html = response.content.decode()
        assert "A reason is required to reject." in html and selected_all(html) == [f"{review_queue.evidence.pk}:1"]


class TestOutcome:
    def test_the_answer_swaps_the_decided_items_the_counts_and_the_toast(self, tenant, review_queue, reviewer,
                                                                         second_reviewer, reviewer_client):
        shown, stale, unseen = preferences(tenant, 3)
        approve_as(second_reviewer, stale)
        html = reviewer_client.post(
            BULK,
            {"selected": [f"{shown.pk}:1", f"{stale.pk}:1"], "selected_all": [f"{unseen.pk}:1"], "decision": "approve"},
            **HTMX,
        ).content.decode()
        assert statuses([shown, unseen]) == {CandidateStatus.APPROVED}
        # The toast: what was decided, with Undo for exactly those items.
        toast = html[html.index('id="toast"'):]
        assert "Approved 2 items." in toast and sorted(re.findall(r'name="ids" value="(\d+)"', toast)) == sorted(
            [str(shown.pk), str(unseen.pk)]
        )
        assert f"Item #{stale.pk} was already decided by rob (approved)" in html
        # Out of band: the selection is emptied, the counts follow the page's filters, and
        # the items on screen (decided or stale) show their new state; the unseen one is not drawn.
        assert '<div id="bulk-all" class="bulk-all" data-bulk-all hx-swap-oob="true"></div>' in html
        assert re.search(r'id="counts" data-counts hx-swap-oob="true">.*data-count="in_filter">0<', html, re.S)
        assert f'id="item-{shown.pk}"' in html and f'id="item-{stale.pk}"' in html
        assert f'id="item-{unseen.pk}"' not in html

    def test_another_tenants_items_are_never_decided(self, tenant, other_tenant, reviewer_client):
        [foreign] = preferences(other_tenant, 1)
        html = reviewer_client.post(BULK, {"selected_all": [f"{foreign.pk}:1"], "decision": "approve"},
                                    **HTMX).content.decode()
        assert Candidate.objects.get(pk=foreign.pk).status == CandidateStatus.PENDING_REVIEW
        assert "Nothing was decided." in html and "could not be decided" in html

    def test_every_checkbox_names_its_item(self, tenant, review_queue, reviewer_client):
        html = reviewer_client.get("/review/").content.decode()
        assert html.count('data-select>') == 3
        # entity, field (by its label) and value
        assert re.search(r'<span class="visually-hidden">Select user:alice [^<]+ “Berlin”</span>', html)


def test_without_javascript_a_bulk_decision_redirects_with_its_messages(tenant, reviewer_client):
    items = preferences(tenant, 2)
    response = reviewer_client.post(BULK, {"selected_all": [f"{i.pk}:1" for i in items], "decision": "approve",
                                           "next": "/review/?field=preference"})
    assert response.status_code == 302 and response["Location"] == "/review/?field=preference"
    assert [str(m) for m in get_messages(response.wsgi_request)] == ["Approved 2 items."]


def test_a_nul_in_the_note_is_refused_and_decides_nothing(tenant, review_queue, reviewer_client):
    items = preferences(tenant, 2)
    reviewer_client.raise_request_exception = False
    for decision in ("approve", "reject"):
        for headers in ({}, HTMX):
            response = reviewer_client.post(BULK, {"selected": [f"{i.pk}:{i.version}" for i in items],
                                                   "decision": decision, "note": "a\x00b"}, **headers)
            assert response.status_code == 200, response.exc_info
            assert "data-bulk-error" in response.content.decode()
    assert statuses(items) == {CandidateStatus.PENDING_REVIEW}
    assert not AuditEvent.objects.filter(tenant_id=tenant.pk, action__startswith="candidate.", actor__startswith="reviewer:").exists()
