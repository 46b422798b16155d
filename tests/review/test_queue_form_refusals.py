"""The bulk, undo-bulk and claim forms refuse bad input with its reason (a 400 with the toast
or the bulk bar's notice under htmx, the message of the page gone back to without it), never
a 500, and change nothing: no row, no audit event."""
import pytest
from django.contrib.messages import get_messages
from django.urls import reverse

from reviews.models import AuditEvent, Candidate, CandidateStatus
from reviews.services.candidates import MAX_BULK_ITEMS
from reviews.services.claims import MAX_CLAIM
from tests.conftest import candidate
from tests.dump import table_digests
from tests.review.conftest import propose

BULK = reverse("reviews:bulk-decide")
UNDO_BULK = reverse("reviews:undo-bulk")
CLAIM = reverse("reviews:claim")
QUEUE = reverse("reviews:queue")
HTMX = {"HTTP_HX_REQUEST": "true", "HTTP_HX_CURRENT_URL": "http://testserver/review/"}
# Rows a request touches whatever it asks: sessions and the sign-in throttle's records.
VOLATILE = ("django_session", "axes_")

# Ids and selections that are not what the forms send: not a number, digits of another
# script (str.isdigit() says yes, int() says no), a NUL, zero, a sign, past the bigint.
BAD_IDS = ["x", "²", "١٢", "1\x00", "0", "-1", "+1", " 1", "1 ", "9" * 19, ""]
BAD_SELECTIONS = ["1", "1:", ":1", "1:x", "x:1", "²:1", "1:²", "1\x00:1", "1:1\x00", "1:-1", "9" * 19 + ":1",
                  "1:" + "9" * 10, "1:1:1"]
BAD_COUNTS = ["many", " ", "0", "-5", str(MAX_CLAIM + 1), "5\x00", "1e9", "9" * 5000, "5;1"]


@pytest.fixture
def items(tenant):
    return propose(tenant, "bulk", *[candidate(field="preference", value=f"likes {n}") for n in range(2)])


def messages_of(response) -> list[str]:
    return [str(message) for message in get_messages(response.wsgi_request)]


def statuses(items) -> set[str]:
    return set(Candidate.objects.filter(pk__in=[item.pk for item in items]).values_list("status", flat=True))


def refused_and_unchanged(client, url: str, data: dict, *, reason: str):
    """POST ``data`` with and without htmx: refused with ``reason`` both ways, nothing written."""
    client.raise_request_exception = False
    before = table_digests(skip=VOLATILE)
    events = AuditEvent.objects.count()
    htmx = client.post(url, data, **HTMX)
    assert htmx.status_code == 400, (data, htmx.status_code, htmx.exc_info)
    assert reason in htmx.content.decode(), (data, htmx.content.decode()[:500])
    plain = client.post(url, {**data, "next": QUEUE})
    assert plain.status_code in (302, 400), (data, plain.status_code, plain.exc_info)
    shown = messages_of(plain) if plain.status_code == 302 else [plain.content.decode()]
    assert any(reason in text for text in shown), (data, shown)
    assert table_digests(skip=VOLATILE) == before and AuditEvent.objects.count() == events, data
    return htmx, plain


class TestBulkDecision:
    @pytest.mark.parametrize("bad", BAD_SELECTIONS)
    @pytest.mark.parametrize("name", ["selected", "selected_all"])
    def test_a_malformed_selection_is_refused(self, items, reviewer_client, name, bad):
        good = [f"{item.pk}:{item.version}" for item in items]
        htmx, plain = refused_and_unchanged(
            reviewer_client, BULK, {name: [*good, bad], "decision": "approve"},
            reason="The selection is malformed; reload the page and try again.",
        )
        assert "data-bulk-error" in htmx.content.decode() and "hx-swap-oob" not in htmx.content.decode()
        assert plain.status_code == 400 and 'id="bulk-form"' in plain.content.decode()  # the bulk page
        assert statuses(items) == {CandidateStatus.PENDING_REVIEW}

    @pytest.mark.parametrize("decision", ["delete", "APPROVE", "approve\x00", "", None])
    def test_an_unknown_decision_is_refused(self, items, reviewer_client, decision):
        data = {"selected": [f"{item.pk}:1" for item in items], "note": "spam"}
        if decision is not None:
            data["decision"] = decision
        refused_and_unchanged(reviewer_client, BULK, data, reason="Choose approve or reject.")
        assert statuses(items) == {CandidateStatus.PENDING_REVIEW}

    def test_too_many_items_are_refused_whole_even_split_across_both_lists(self, items, reviewer_client):
        half = MAX_BULK_ITEMS // 2 + 1
        data = {"selected": [f"{n}:1" for n in range(1, half + 1)],
                "selected_all": [f"{n}:1" for n in range(half + 1, 2 * half + 1)] + [f"{items[0].pk}:1"],
                "decision": "approve", "confirmed": f"approve:{2 * half + 1}"}
        refused_and_unchanged(reviewer_client, BULK, data, reason="Too many items selected at once.")
        assert statuses(items) == {CandidateStatus.PENDING_REVIEW}

    def test_a_note_past_the_fields_length_is_refused(self, items, reviewer_client):
        data = {"selected": [f"{item.pk}:1" for item in items], "decision": "reject", "note": "x" * 2001}
        refused_and_unchanged(reviewer_client, BULK, data, reason="2000")
        assert statuses(items) == {CandidateStatus.PENDING_REVIEW}

    def test_the_same_item_twice_is_one_item_and_the_ticked_version_wins(self, items, reviewer_client):
        first, second = items
        html = reviewer_client.post(BULK, {"selected": [f"{first.pk}:1"], "decision": "approve",
                                           "selected_all": [f"{first.pk}:7", f"{second.pk}:1", f"{second.pk}:1"]},
                                    **HTMX).content.decode()
        assert "Approved 2 items." in html and statuses(items) == {CandidateStatus.APPROVED}


class TestUndoBulk:
    @pytest.fixture
    def decided(self, tenant, reviewer_client):
        # Two subjects: of two values published side by side in one field, the first's undo
        # is refused once the second is published beside it (the slot moved), bulk or not.
        items = [*propose(tenant, "ann", candidate(field="preference", value="likes tea")),
                 *propose(tenant, "ben", candidate(field="preference", value="likes jazz"))]
        reviewer_client.post(BULK, {"selected": [f"{item.pk}:1" for item in items], "decision": "approve"})
        assert statuses(items) == {CandidateStatus.APPROVED}
        list(get_messages(reviewer_client.get(QUEUE).wsgi_request))  # the decision's own message, shown
        return items

    def test_a_valid_undo_still_takes_the_bulk_decision_back(self, decided, reviewer_client):
        response = reviewer_client.post(UNDO_BULK, {"ids": [item.pk for item in decided], "next": QUEUE})
        assert response.status_code == 302 and response["Location"] == QUEUE
        assert messages_of(response) == ["Undone: 2 items are back in the queue."]
        assert statuses(decided) == {CandidateStatus.PENDING_REVIEW}
        assert AuditEvent.objects.filter(action="candidate.decision_undone").count() == 2

    @pytest.mark.parametrize("bad", BAD_IDS)
    def test_a_malformed_id_is_refused_and_nothing_is_undone(self, decided, reviewer_client, bad):
        htmx, _plain = refused_and_unchanged(
            reviewer_client, UNDO_BULK, {"ids": [decided[0].pk, bad]},
            reason="The selection is malformed; reload the page and try again.",
        )
        assert '<div id="toast" class="toast error"' in htmx.content.decode()
        assert statuses(decided) == {CandidateStatus.APPROVED}
        assert not AuditEvent.objects.filter(action="candidate.decision_undone").exists()

    def test_no_ids_is_refused(self, decided, reviewer_client):
        refused_and_unchanged(reviewer_client, UNDO_BULK, {}, reason="There is nothing to undo.")
        assert statuses(decided) == {CandidateStatus.APPROVED}

    def test_too_many_ids_are_refused_whole_not_cut_short(self, decided, reviewer_client):
        ids = [item.pk for item in decided] + list(range(10**9, 10**9 + MAX_BULK_ITEMS))
        refused_and_unchanged(reviewer_client, UNDO_BULK, {"ids": ids}, reason="Too many items selected at once.")
        assert statuses(decided) == {CandidateStatus.APPROVED}

    def test_an_auditor_may_not_undo(self, decided, auditor_client):
        assert auditor_client.post(UNDO_BULK, {"ids": [decided[0].pk]}).status_code == 403
        assert statuses(decided) == {CandidateStatus.APPROVED}


class TestClaim:
    @pytest.mark.parametrize("bad", BAD_COUNTS)
    def test_a_count_that_is_not_1_to_max_is_refused(self, review_queue, reviewer_client, bad):
        htmx, plain = refused_and_unchanged(reviewer_client, CLAIM, {"count": bad},
                                            reason="Choose how many items to claim.")
        assert '<div id="toast" class="toast error"' in htmx.content.decode()
        assert plain.status_code == 302 and plain["Location"] == QUEUE
        assert not Candidate.objects.exclude(claimed_by="").exists()

    def test_a_valid_claim_without_a_count_claims_the_menus_default(self, tenant, reviewer_client):
        propose(tenant, "many", *[candidate(field="preference", value=f"likes {n}") for n in range(12)])
        response = reviewer_client.post(CLAIM, {"next": QUEUE})
        assert messages_of(response)[0].startswith("Claimed 10 items")
        assert AuditEvent.objects.filter(action="candidates.claimed").count() == 1

    def test_the_largest_count_is_accepted(self, review_queue, reviewer_client):
        response = reviewer_client.post(CLAIM, {"count": str(MAX_CLAIM), "next": QUEUE}, **HTMX)
        assert response.status_code == 200 and "Claimed " in response.content.decode()
