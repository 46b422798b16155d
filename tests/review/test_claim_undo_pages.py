"""Claims and undo on the dashboard: the forms, the toast, the refusals, who may use them."""
from datetime import timedelta

import time_machine
from django.contrib.messages import get_messages
from django.urls import reverse
from django.utils import timezone

from reviews.models import Candidate
from tests.review.conftest import signed_in

QUEUE = reverse("reviews:queue")


def messages_of(response):
    return [str(message) for message in get_messages(response.wsgi_request)]


def undo_url(item):
    return reverse("reviews:candidate-undo", args=[item.pk])


def test_claiming_hides_the_items_from_a_colleague_and_shows_them_as_mine(review_queue, reviewer, second_reviewer):
    mine, theirs = signed_in(reviewer), signed_in(second_reviewer)
    response = mine.post(reverse("reviews:claim"), {"count": "2", "next": QUEUE})
    assert response.status_code == 302
    assert messages_of(response)[0].startswith("Claimed 2 items for 15 minutes")
    claimed = [review_queue.evidence, review_queue.conflict]
    html = mine.get(QUEUE).content.decode()
    assert html.count("claimed by you") >= 2
    colleague = theirs.get(QUEUE).content.decode()
    assert all(f'id="item-{item.pk}"' not in colleague for item in claimed)
    assert f'id="item-{review_queue.new_entity.pk}"' in colleague
    asked = theirs.get(QUEUE, {"claims": "all"}).content.decode()
    assert f'id="item-{review_queue.evidence.pk}"' in asked and "claimed by rita" in asked
    released = mine.post(reverse("reviews:claim"), {"release": "1", "next": QUEUE})
    assert messages_of(released) == ["Released 2 claimed items."]


def test_a_decision_offers_undo_and_undo_restores_the_item(review_queue, reviewer):
    client = signed_in(reviewer)
    item = review_queue.evidence
    html = client.post(reverse("reviews:candidate-approve", args=[item.pk]), {"version": 1},
                       HTTP_HX_REQUEST="true").content.decode()
    assert 'id="toast"' in html and 'data-expires="30"' in html and undo_url(item) in html
    html = client.post(undo_url(item), HTTP_HX_REQUEST="true").content.decode()
    assert "Undone: location = “Berlin” is back to pending review." in html
    assert Candidate.objects.get(pk=item.pk).status == "pending_review"


def test_too_late_to_undo_is_explained(review_queue, reviewer):
    client = signed_in(reviewer)
    item = review_queue.evidence
    client.post(reverse("reviews:candidate-approve", args=[item.pk]), {"version": 1})
    with time_machine.travel(timezone.now() + timedelta(seconds=31)):
        response = client.post(undo_url(item), {"next": QUEUE})
    assert messages_of(response)[-1].startswith("Too late to undo: a decision can be undone for 30 seconds.")
    assert Candidate.objects.get(pk=item.pk).status == "approved"


def test_an_auditor_may_neither_claim_nor_undo(review_queue, auditor, reviewer):
    client = signed_in(auditor)
    assert client.post(reverse("reviews:claim"), {"count": "5"}).status_code == 403
    assert client.post(undo_url(review_queue.evidence)).status_code == 403
    assert not Candidate.objects.exclude(claimed_by="").exists()


def test_another_tenants_item_cannot_be_undone(review_queue, reviewer, outsider):
    client = signed_in(reviewer)
    client.post(reverse("reviews:candidate-approve", args=[review_queue.evidence.pk]), {"version": 1})
    assert signed_in(outsider).post(undo_url(review_queue.evidence)).status_code == 404
    assert Candidate.objects.get(pk=review_queue.evidence.pk).status == "approved"


def test_keep_current_names_the_value_that_stays_published(review_queue, reviewer):
    conflict = review_queue.conflict
    response = signed_in(reviewer).post(
        reverse("reviews:candidate-settle", args=[conflict.pk]), {"version": 1, "resolution": "keep_old", "next": QUEUE}
    )
    assert messages_of(response) == [
        "Kept the current value: database = “MySQL” stays published; “PostgreSQL” was rejected."
    ]


def test_after_asking_the_user_the_card_says_it_waits_for_them(review_queue, reviewer):
    client = signed_in(reviewer)
    item = review_queue.evidence
    html = client.post(reverse("reviews:candidate-defer", args=[item.pk]), {"version": 1},
                       HTTP_HX_REQUEST="true").content.decode()
    card = html.split('id="toast"')[0]
    assert "waiting for alice" in card and "data-waiting" in card
    assert 'data-resolution="take_new"' not in card and 'data-action="approve"' not in card


def claim_form_inputs(html: str) -> dict:
    """The hidden inputs of the claim form's filter copy (#claim-filters), as a dict."""
    import html as markup
    import re

    [region] = re.findall(r'<span id="claim-filters"[^>]*>(.*?)</span>', html, flags=re.S)
    return {name: markup.unescape(value)
            for name, value in re.findall(r'<input type="hidden" name="([^"]+)" value="([^"]*)">', region)}


def test_the_claim_form_follows_the_filter_the_htmx_form_swapped_in(review_queue, reviewer):
    client = signed_in(reviewer)
    page = client.get(QUEUE).content.decode()
    assert claim_form_inputs(page) == {"next": QUEUE, "status": "pending_review"}
    # The filter form swaps #results only; the claim form's copy comes with it out of band.
    swapped = client.get(QUEUE, {"field": "location", "sort": "newest"}, HTTP_HX_REQUEST="true").content.decode()
    assert '<span id="claim-filters" data-claim-filters hx-swap-oob="true">' in swapped
    inputs = claim_form_inputs(swapped)
    assert (inputs["field"], inputs["sort"]) == ("location", "newest")
    assert inputs["next"] == f"{QUEUE}?field=location&sort=newest"
    response = client.post(reverse("reviews:claim"), {**inputs, "count": "5"})
    assert messages_of(response)[0].startswith("Claimed 1 items")
    assert list(Candidate.objects.exclude(claimed_by="").values_list("pk", flat=True)) == [review_queue.evidence.pk]
    assert response["Location"] == f"{QUEUE}?field=location&sort=newest"


def test_a_full_page_and_a_reader_get_no_out_of_band_copy(review_queue, reviewer, auditor):
    page = signed_in(reviewer).get(QUEUE, {"field": "location"}).content.decode()
    assert page.count('id="claim-filters"') == 1 and "hx-swap-oob" not in page.split('id="claim-filters"')[1][:40]
    assert claim_form_inputs(page)["field"] == "location"
    read_only = signed_in(auditor).get(QUEUE, {"field": "location"}, HTTP_HX_REQUEST="true").content.decode()
    assert 'id="claim-filters"' not in read_only


def test_with_htmx_a_claim_answers_with_the_queue_region_and_the_toast(review_queue, reviewer):
    client = signed_in(reviewer)
    response = client.post(reverse("reviews:claim"), {"count": "2", "next": f"{QUEUE}?field=location&cursor=x"},
                           HTTP_HX_REQUEST="true")
    html = response.content.decode()
    assert response.status_code == 200 and "<html" not in html
    assert html.lstrip().startswith('<p class="counts" id="counts"')  # #results' content: counts, then the page
    assert 'id="page"' in html and html.count('data-claim>claimed by you') == 1  # the filter shows one item
    assert f'id="item-{review_queue.evidence.pk}"' in html and f'id="item-{review_queue.conflict.pk}"' not in html
    assert '<div id="toast" class="toast success" role="status" aria-live="polite" hx-swap-oob="true">' \
           '<span>Claimed 2 items for 15 minutes; colleagues do not see them meanwhile.</span>' in html
    assert '<span id="claim-release" data-claim-release hx-swap-oob="true"><button type="submit" name="release"' in html
    # The page's address without the cursor: what the items' forms come back to.
    assert claim_form_inputs(html)["next"] == f"{QUEUE}?field=location"
    assert Candidate.objects.exclude(claimed_by="").count() == 2

    released = client.post(reverse("reviews:claim"), {"release": "1", "next": QUEUE}, HTTP_HX_REQUEST="true")
    html = released.content.decode()
    assert "<span>Released 2 claimed items.</span>" in html and "data-claim>" not in html
    assert '<span id="claim-release" data-claim-release hx-swap-oob="true"></span>' in html
    assert not Candidate.objects.exclude(claimed_by="").exists()


def test_with_htmx_a_bad_count_is_a_400_with_the_reason_in_the_toast(review_queue, reviewer):
    response = signed_in(reviewer).post(reverse("reviews:claim"), {"count": "many", "next": QUEUE},
                                        HTTP_HX_REQUEST="true")
    assert response.status_code == 400
    assert '<div id="toast" class="toast error"' in response.content.decode()
    assert "Choose how many items to claim." in response.content.decode()
    assert not Candidate.objects.exclude(claimed_by="").exists()
