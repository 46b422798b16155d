"""Counts that are true (issue 38.4): every count the queue page shows equals the database's
after decisions, claims, releases and undos; each decision's answer carries the headline
and "Release mine" out of band, so the page never keeps the counts it loaded with."""
import re

from django.urls import reverse
from django.utils import timezone

from reviews.actors import Actor
from reviews.models import AuditEvent, Candidate, CandidateStatus
from tests.conftest import candidate
from tests.review.conftest import page_with_counts, propose, signed_in

QUEUE = reverse("reviews:queue")
HTMX = {"HX-Request": "true"}


def shown_counts(html: str) -> dict[str, int]:
    return {name: int(value) for name, value in re.findall(r'data-count="(\w+)">([\d,]+)<', html)}


def database_counts(tenant, reviewer) -> dict[str, int]:
    waiting = Candidate.objects.filter(tenant=tenant, status=CandidateStatus.PENDING_REVIEW)
    return {
        "waiting": waiting.count(),
        "in_filter": waiting.count(),  # the page's default filter: pending review
        "contested": waiting.filter(flags__contains=["contested"]).count(),
        "mine": waiting.filter(claimed_by=str(Actor.reviewer(reviewer)), claim_expires_at__gt=timezone.now()).count(),
    }


def assert_page_agrees(client, tenant, reviewer, html: str | None = None):
    html = html if html is not None else page_with_counts(client, QUEUE)
    assert shown_counts(html) == database_counts(tenant, reviewer)
    return html


def decide(client, item, action: str, **fields):
    item.refresh_from_db()
    response = client.post(
        reverse(f"reviews:candidate-{action}", args=[item.pk]),
        {"version": item.version, "next": QUEUE, **fields},
        headers=HTMX,
    )
    assert response.status_code == 200, response.content.decode()[:500]
    return response.content.decode()


def test_every_decision_answers_with_the_headline_counted_again(tenant, review_queue, reviewer):
    client = signed_in(reviewer)
    assert_page_agrees(client, tenant, reviewer)
    for action, item, fields in (
        ("approve", review_queue.evidence, {}),
        ("defer", review_queue.new_entity, {}),
        ("reject", review_queue.conflict, {"note": "wrong"}),
    ):
        answer = decide(client, item, action, **fields)
        assert 'id="counts" data-counts hx-swap-oob="true"' in answer
        assert shown_counts(answer) == database_counts(tenant, reviewer), action
        assert_page_agrees(client, tenant, reviewer)
    assert database_counts(tenant, reviewer)["waiting"] == 0  # the counts did move


def test_undo_answers_with_the_headline_counted_again(tenant, review_queue, reviewer):
    client = signed_in(reviewer)
    decide(client, review_queue.evidence, "approve")
    undone = client.post(reverse("reviews:candidate-undo", args=[review_queue.evidence.pk]), {"next": QUEUE}, headers=HTMX)
    assert undone.status_code == 200
    assert shown_counts(undone.content.decode()) == database_counts(tenant, reviewer)
    assert database_counts(tenant, reviewer)["waiting"] == 3


def test_claim_and_release_counts_are_exact_after_a_claimed_item_is_sent_to_the_user(tenant, reviewer):
    propose(tenant, "carol", *[candidate(field="preference", value=f"tea {n}", confidence=0.9) for n in range(8)])
    client = signed_in(reviewer)
    claimed = client.post(reverse("reviews:claim"), {"count": "5", "next": QUEUE}, headers=HTMX).content.decode()
    assert "Claimed 5 items" in claimed
    assert_page_agrees(client, tenant, reviewer, claimed)
    mine = Candidate.objects.filter(claimed_by=str(Actor.reviewer(reviewer))).order_by("pk")
    deferred = mine.first()
    answer = decide(client, deferred, "defer")
    assert shown_counts(answer)["mine"] == 4 == database_counts(tenant, reviewer)["mine"]
    # "4 claimed by you" leads to exactly four items.
    listed = page_with_counts(client, QUEUE, {"claims": "mine"})
    assert len(re.findall(r'<article class="item', listed)) == 4 == shown_counts(listed)["mine"]
    released = client.post(reverse("reviews:claim"), {"release": "1", "next": QUEUE}, headers=HTMX).content.decode()
    assert "Released 4 claimed items." in released
    assert AuditEvent.objects.filter(action="candidates.released").latest("seq").object_id == "4"
    assert_page_agrees(client, tenant, reviewer, released)
    assert database_counts(tenant, reviewer)["mine"] == 0


def test_an_outsider_cannot_decide_and_learns_no_counts(tenant, review_queue, outsider):
    client = signed_in(outsider)
    item = review_queue.evidence
    response = client.post(reverse("reviews:candidate-approve", args=[item.pk]), {"version": item.version}, headers=HTMX)
    assert response.status_code == 404 and b"data-count" not in response.content


# --- Bulk decisions and their undo ---------------------------------------------------------------

BULK = reverse("reviews:bulk-decide")
FROM_THE_QUEUE = {**HTMX, "HX-Current-URL": f"http://testserver{QUEUE}"}


def bulk(client, decision: str, items, **fields):
    for item in items:
        item.refresh_from_db()
    response = client.post(
        BULK,
        {"selected": [f"{item.pk}:{item.version}" for item in items], "decision": decision, "next": QUEUE, **fields},
        headers=FROM_THE_QUEUE,
    )
    assert response.status_code == 200, response.content.decode()[:500]
    return response.content.decode()


def undo_bulk(client, items) -> str:
    """The toast's Undo: a plain form, answered with the queue page it came from."""
    response = client.post(reverse("reviews:undo-bulk"), {"ids": [item.pk for item in items], "next": QUEUE})
    assert response.status_code == 302 and response.url == QUEUE
    return page_with_counts(client, QUEUE)


def test_a_bulk_decision_and_its_undo_leave_every_count_true(tenant, review_queue, reviewer):
    # Two items propose the same value for one slot: approving one closes the other.
    lyon, lyon_again, bob = [
        *propose(tenant, "carol", candidate(field="location", value="Lyon", confidence=0.9),
                 candidate(field="location", value="Lyon", confidence=0.85, source_message_id="m-9")),
        *propose(tenant, "bob", candidate(field="location", value="Oslo", confidence=0.9)),
    ]
    client = signed_in(reviewer)
    claimed = client.post(reverse("reviews:claim"), {"count": "5", "next": QUEUE}, headers=HTMX).content.decode()
    assert_page_agrees(client, tenant, reviewer, claimed)
    before = database_counts(tenant, reviewer)

    answer = bulk(client, "approve", [lyon, bob])
    assert 'id="counts" data-counts hx-swap-oob="true"' in answer
    assert shown_counts(answer) == database_counts(tenant, reviewer)
    assert database_counts(tenant, reviewer)["waiting"] == before["waiting"] - 3  # lyon_again was closed too
    # "Release mine" follows the claims the decisions ended.
    assert re.search(r'<span id="claim-release" data-claim-release hx-swap-oob="true">', answer)
    assert_page_agrees(client, tenant, reviewer)

    page = undo_bulk(client, [lyon, bob])
    assert_page_agrees(client, tenant, reviewer, page)
    assert database_counts(tenant, reviewer)["waiting"] == before["waiting"]
    lyon_again.refresh_from_db()
    assert lyon_again.status == CandidateStatus.PENDING_REVIEW


def test_a_bulk_rejection_and_its_undo_leave_every_count_true(tenant, review_queue, reviewer):
    client = signed_in(reviewer)
    items = [review_queue.evidence, review_queue.conflict]
    before = database_counts(tenant, reviewer)
    answer = bulk(client, "reject", items, note="not said")
    assert shown_counts(answer) == database_counts(tenant, reviewer)
    assert database_counts(tenant, reviewer)["waiting"] == before["waiting"] - 2
    page = undo_bulk(client, items)
    assert_page_agrees(client, tenant, reviewer, page)
    assert database_counts(tenant, reviewer) == before


def test_undoing_an_approval_on_the_page_reopens_the_item_it_closed(tenant, reviewer):
    lyon, lyon_again = propose(tenant, "carol", candidate(field="location", value="Lyon", confidence=0.9),
                               candidate(field="location", value="Lyon", confidence=0.85, source_message_id="m-9"))
    client = signed_in(reviewer)
    before = database_counts(tenant, reviewer)
    approved = decide(client, lyon, "approve")
    assert shown_counts(approved)["waiting"] == before["waiting"] - 2
    undone = client.post(reverse("reviews:candidate-undo", args=[lyon.pk]), {"next": QUEUE}, headers=HTMX)
    assert undone.status_code == 200
    assert shown_counts(undone.content.decode()) == database_counts(tenant, reviewer) == before
    lyon_again.refresh_from_db()
    assert (lyon_again.status, lyon_again.reason) == ("pending_review", "needs_review")
    reopened = AuditEvent.objects.filter(action="candidate.decision_undone", object_id=str(lyon_again.pk)).get()
    assert reopened.actor == str(Actor.reviewer(reviewer))


def test_an_outsider_cannot_decide_in_bulk_or_undo(tenant, review_queue, outsider):
    client = signed_in(outsider)
    item = review_queue.evidence
    client.post(BULK, {"selected": [f"{item.pk}:{item.version}"], "decision": "approve", "next": QUEUE},
                headers=FROM_THE_QUEUE)
    client.post(reverse("reviews:undo-bulk"), {"ids": [item.pk], "next": QUEUE})
    item.refresh_from_db()
    assert item.status == CandidateStatus.PENDING_REVIEW
    assert not AuditEvent.objects.filter(tenant_id=tenant.pk, action="candidates.bulk_approve").exists()
