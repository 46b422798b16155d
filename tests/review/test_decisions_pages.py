"""Decisions from the dashboard: plain POST + redirect, and the htmx partial of the same view."""
import pytest
from django.contrib.messages import get_messages
from django.urls import reverse

from reviews.models import AuditEvent, Candidate, Fact
from tests.conftest import candidate
from tests.review.conftest import approve_as, propose


def url(name, item):
    return reverse(f"reviews:candidate-{name}", args=[item.pk])


def messages_of(response):
    return [str(message) for message in get_messages(response.wsgi_request)]


def refreshed(item) -> Candidate:
    return Candidate.objects.get(pk=item.pk)


class TestApprove:
    def test_approve_redirects_back_with_a_message(self, review_queue, reviewer_client, reviewer):
        item = review_queue.evidence
        response = reviewer_client.post(url("approve", item), {"version": 1, "next": "/review/?field=location"})
        assert response.status_code == 302 and response["Location"] == "/review/?field=location"
        assert refreshed(item).status == "approved"
        assert Fact.objects.get(pk=refreshed(item).fact_id).approved_by == f"reviewer:{reviewer.pk}"
        assert messages_of(response) == ["Approved: location = “Berlin” is published."]
        assert AuditEvent.objects.filter(action="candidate.approved", actor=f"reviewer:{reviewer.pk}").count() == 1

    def test_edit_then_approve(self, review_queue, reviewer_client):
        item = review_queue.evidence
        response = reviewer_client.post(url("approve", item), {"version": 1, "value": "Berlin, Germany"})
        assert refreshed(item).reason == "reviewer_edited"
        assert Fact.objects.get(pk=refreshed(item).fact_id).value == "Berlin, Germany"
        assert messages_of(response) == ["Edited and approved: location = “Berlin, Germany” is published."]

    def test_a_redirect_never_leaves_the_site(self, review_queue, reviewer_client):
        response = reviewer_client.post(url("approve", review_queue.evidence), {"version": 1, "next": "https://evil.example/"})
        assert response["Location"] == reverse("reviews:queue")

    @pytest.mark.parametrize("target", ["queue", "-1", "a\x00b", "/review/\r\nX-Injected: 1", "1e309"])
    def test_a_next_that_is_not_a_path_goes_back_to_the_queue(self, review_queue, reviewer_client, target):
        # redirect() takes any other word for the name of a view to look up: it used to fail with a 500.
        reviewer_client.raise_request_exception = False
        for action in ("approve", "reject", "undo"):
            response = reviewer_client.post(url(action, review_queue.evidence), {"version": 1, "next": target})
            assert response.status_code == 302, response.exc_info
            assert response["Location"] == reverse("reviews:queue")

    def test_an_edit_to_a_credential_is_refused(self, review_queue, reviewer_client):
        response = reviewer_client.post(url("approve", review_queue.evidence), {"version": 1, "value": "password: hunter2"})
        assert refreshed(review_queue.evidence).status == "pending_review"
        assert messages_of(response) == ["The value looks like a credential; credentials are never stored."]


class TestRejectAndDefer:
    def test_reject_needs_a_reason(self, review_queue, reviewer_client):
        response = reviewer_client.post(url("reject", review_queue.evidence), {"version": 1, "note": "  "})
        assert refreshed(review_queue.evidence).status == "pending_review"
        assert messages_of(response) == ["A reason is required to reject."]

    def test_reject_with_a_reason(self, review_queue, reviewer_client):
        reviewer_client.post(url("reject", review_queue.evidence), {"version": 1, "note": "she moved away"})
        item = refreshed(review_queue.evidence)
        assert (item.status, item.note) == ("rejected", "she moved away")

    def test_defer_hands_it_to_the_user(self, review_queue, reviewer_client):
        response = reviewer_client.post(url("defer", review_queue.evidence), {"version": 1})
        assert refreshed(review_queue.evidence).status == "pending_user"
        assert messages_of(response) == ["Sent to alice to confirm: location = “Berlin”. It waits for them now."]

    def test_a_malformed_form_changes_nothing(self, review_queue, reviewer_client):
        response = reviewer_client.post(url("approve", review_queue.evidence), {"version": "one"})
        assert response.status_code == 302 and refreshed(review_queue.evidence).status == "pending_review"


class TestSettleConflict:
    @pytest.mark.parametrize(
        "resolution,value,expected_status,expected_fact",
        [
            ("keep_old", "", "rejected", "MySQL"),
            ("take_new", "", "approved", "PostgreSQL"),
            ("edit", "PostgreSQL 16", "approved", "PostgreSQL 16"),
        ],
    )
    def test_each_resolution(self, review_queue, reviewer_client, resolution, value, expected_status, expected_fact):
        item = review_queue.conflict
        reviewer_client.post(url("settle", item), {"version": 1, "resolution": resolution, "value": value})
        assert refreshed(item).status == expected_status
        assert Fact.objects.get(pk=review_queue.database_fact.pk).value == expected_fact

    def test_keep_both_is_refused_on_a_one_field(self, review_queue, reviewer_client):
        response = reviewer_client.post(url("settle", review_queue.conflict), {"version": 1, "resolution": "keep_both"})
        assert refreshed(review_queue.conflict).status == "pending_review"
        assert messages_of(response) == ["Both values can be kept only on a field that holds many values."]

    def test_keep_both_on_a_many_field(self, tenant, reviewer_client):
        [item] = propose(tenant, "bob", candidate(entity_type="project", entity_id="p", field="tech_stack",
                                                  value="Flask", confidence=0.9))
        reviewer_client.post(url("settle", item), {"version": 1, "resolution": "keep_both"})
        assert refreshed(item).status == "approved"

    def test_the_page_offers_keep_both_only_on_many_fields(self, tenant, review_queue, reviewer_client):
        html = reviewer_client.get(reverse("reviews:candidate", args=[review_queue.conflict.pk])).content.decode()
        assert 'value="keep_old"' in html and 'value="take_new"' in html and 'value="edit"' in html
        assert 'value="keep_both"' not in html


class TestStale:
    def test_second_reviewer_is_told_who_decided_and_nothing_is_applied_twice(
        self, review_queue, reviewer, second_reviewer_client
    ):
        approve_as(reviewer, review_queue.evidence)
        response = second_reviewer_client.post(url("reject", review_queue.evidence), {"version": 1, "note": "wrong"})
        [message] = messages_of(response)
        assert message.startswith("rita decided this item first: approved (location = “Berlin”)")
        assert message.endswith("Your decision was not applied.")
        assert refreshed(review_queue.evidence).status == "approved"
        assert AuditEvent.objects.filter(action="candidate.rejected").count() == 0

    def test_htmx_renders_the_stale_notice_in_the_item(self, review_queue, reviewer, second_reviewer_client):
        approve_as(reviewer, review_queue.evidence)
        response = second_reviewer_client.post(
            url("approve", review_queue.evidence), {"version": 1}, HTTP_HX_REQUEST="true"
        )
        html = response.content.decode()
        assert response.status_code == 409 and "<html" not in html  # the page's script swaps it in
        assert 'data-notice="stale"' in html and "rita decided this item first" in html
        assert 'data-action="approve"' not in html  # the item is shown decided, no actions left


class TestHtmx:
    def test_a_decision_swaps_in_the_decided_item(self, review_queue, reviewer_client):
        response = reviewer_client.post(url("approve", review_queue.evidence), {"version": 1}, HTTP_HX_REQUEST="true")
        html = response.content.decode()
        assert html.lstrip().startswith('<article class="item decided"')
        assert 'data-outcome="success"' in html and "Decided by rita" in html
        # The toast, out of band, says what is published and offers the undo.
        assert 'id="toast"' in html and "is published" in html and "data-undo" in html

    def test_an_error_keeps_the_actions(self, review_queue, reviewer_client):
        response = reviewer_client.post(url("reject", review_queue.evidence), {"version": 1}, HTTP_HX_REQUEST="true")
        html = response.content.decode()
        assert response.status_code == 400
        assert 'data-notice="error"' in html and 'data-action="approve"' in html


class TestBulk:
    def test_bulk_approve_reports_stale_items(self, tenant, review_queue, reviewer, second_reviewer, reviewer_client):
        approve_as(second_reviewer, review_queue.new_entity)
        selection = [f"{item.pk}:1" for item in (review_queue.evidence, review_queue.conflict, review_queue.new_entity)]
        response = reviewer_client.post(reverse("reviews:bulk-decide"), {"selected": selection, "decision": "approve"})
        assert response.status_code == 302
        assert [refreshed(i).status for i in (review_queue.evidence, review_queue.conflict)] == ["approved"] * 2
        texts = messages_of(response)
        assert texts[0] == "Approved 2 items."
        assert texts[1] == f"Item #{review_queue.new_entity.pk} was already decided by rob (approved); it was left as it was."

    def test_bulk_reject_needs_a_reason(self, review_queue, reviewer_client):
        response = reviewer_client.post(
            reverse("reviews:bulk-decide"), {"selected": [f"{review_queue.evidence.pk}:1"], "decision": "reject"}
        )
        assert "A reason is required to reject." in response.content.decode()
        assert refreshed(review_queue.evidence).status == "pending_review"

    def test_a_malformed_selection_is_refused(self, review_queue, reviewer_client):
        response = reviewer_client.post(
            reverse("reviews:bulk-decide"), {"selected": ["1;drop", f"{review_queue.evidence.pk}:1"], "decision": "approve"}
        )
        assert "That input is not valid." in response.content.decode()
        assert refreshed(review_queue.evidence).status == "pending_review"
