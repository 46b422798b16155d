"""The reviewer's keys do not wait for the server: a decision is sent in the background, the
decided item says "sending" and the focus is on the next one at once; the answer swaps in
the decided line (or the refusal, on the item, with the reviewer's place kept); `c` claims
by swapping the queue region only."""
import pytest
from playwright.sync_api import expect

from reviews.models import AuditEvent, Candidate
from tests.browser.test_reviewer import HOLD_BODIES, article, bodies_asked, status_of
from tests.conftest import candidate
from tests.review.conftest import _fresh_stats_cache, approve_as, propose  # noqa: F401 (fixtures)

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def three(tenant):
    return propose(tenant, "bob", *[candidate(field="preference", value=f"topic {i}") for i in range(3)])


@pytest.fixture
def bob_and_carol(tenant):
    """Two open items each of bob's (first in the queue) and carol's (a filter to switch to)."""
    return (
        propose(tenant, "bob", *[candidate(field="preference", value=f"bob {i}") for i in range(2)]),
        propose(tenant, "carol", *[candidate(field="preference", value=f"carol {i}") for i in range(2)]),
    )


def filter_by_user(page, user_id):
    """The filter form, sent by htmx: only the user's items, the address updated."""
    page.fill("#id_user_id", user_id)
    page.click("[data-filters] button[type=submit]")
    page.wait_for_function(f"() => location.search.includes('user_id={user_id}')")


class Held:
    """Requests to a decision URL held back until release(): the answer is slow."""

    def __init__(self, page, pattern: str):
        self.page, self.pattern, self.routes = page, pattern, []
        self.handler = lambda route: self.routes.append(route)
        page.route(pattern, self.handler)

    def release(self):
        while self.routes:
            self.routes.pop(0).continue_()
        self.page.unroute(self.pattern)


def test_the_focus_moves_on_before_the_answer_and_the_answer_swaps_in_the_decided_line(page, login, three, reviewer):
    first, second, _third = three
    login("rita")
    expect(article(page, first)).to_be_focused()
    held = Held(page, f"**/review/candidates/{first.pk}/approve")
    page.keyboard.press("a")
    expect(article(page, second)).to_be_focused()  # without waiting for the server
    expect(article(page, second)).to_have_attribute("aria-current", "true")
    expect(article(page, first)).to_have_attribute("data-pending", "1")
    expect(article(page, first).locator("[data-pending-note]")).to_be_visible()
    expect(article(page, first).locator("[data-pending-note]")).to_have_text("sending your decision…")
    assert status_of(first) == "pending_review"  # really still on its way
    held.release()
    expect(article(page, first)).to_have_attribute("data-open", "0")
    expect(article(page, first).locator("[data-pending-note]")).to_have_count(0)
    expect(page.locator("#toast")).to_contain_text("Approved: preference = “topic 0” is published.")
    expect(article(page, second)).to_be_focused()  # the answer did not take the focus back
    assert status_of(first) == "approved"
    page.keyboard.press("u")  # the toast's Undo, for the item just approved
    expect(page.locator("#toast")).to_contain_text("Undone: preference = “topic 0” is back to pending review.")
    expect(article(page, first)).to_be_focused()
    assert status_of(first) == "pending_review"


def test_u_pressed_before_the_answer_undoes_that_decision_once_it_is_made(page, login, three, reviewer):
    first, second, _third = three
    login("rita")
    page.keyboard.press("a")  # first: answered
    expect(page.locator("#toast")).to_contain_text("“topic 0” is published")
    held = Held(page, f"**/review/candidates/{second.pk}/approve")
    page.keyboard.press("a")  # second: on its way, the toast still offers the first's Undo
    expect(article(page, second)).to_have_attribute("data-pending", "2")
    page.keyboard.press("u")
    held.release()
    expect(page.locator("#toast")).to_contain_text("Undone: preference = “topic 1” is back to pending review.")
    assert (status_of(first), status_of(second)) == ("approved", "pending_review")
    assert AuditEvent.objects.filter(action="candidate.decision_undone", object_id=str(second.pk)).count() == 1
    assert not AuditEvent.objects.filter(action="candidate.decision_undone", object_id=str(first.pk)).exists()


def test_a_decision_refused_after_the_focus_moved_on_shows_on_its_item(page, login, three, reviewer, second_reviewer):
    first, second, _third = three
    login("rita")
    approve_as(second_reviewer, first)  # rob was quicker; rita's page still offers it
    page.keyboard.press("a")
    expect(article(page, second)).to_be_focused()
    notice = article(page, first).locator("[data-notice=stale]")
    expect(notice).to_contain_text("rob decided this item first: approved (preference = “topic 0”)")  # the 409's item
    expect(page.locator("#toast")).to_contain_text("Your decision was not applied.")
    expect(page.locator("#toast form[data-undo]")).to_have_count(0)
    expect(article(page, second)).to_be_focused()  # the reviewer's place is kept
    expect(article(page, second)).to_have_attribute("aria-current", "true")
    assert not AuditEvent.objects.filter(action="candidate.approved", actor=f"reviewer:{reviewer.pk}").exists()
    page.keyboard.press("a")  # and the next decision goes on as usual
    expect(page.locator("#toast")).to_contain_text("“topic 1” is published")
    assert status_of(second) == "approved"


def test_no_answer_to_swap_in_reopens_the_item_with_the_reason(page, login, three, reviewer):
    first, second, third = three
    login("rita")
    page.route(f"**/review/candidates/{first.pk}/approve", lambda route: route.fulfill(status=403, body="Forbidden"))
    page.keyboard.press("a")
    expect(article(page, second)).to_be_focused()
    failure = article(page, first).locator("[data-failed=refused]")
    expect(failure).to_be_visible()
    expect(failure).to_contain_text("Not applied: the server refused this decision")
    expect(page.locator("#toast")).to_contain_text("Not applied: the server refused this decision")
    expect(article(page, first)).not_to_have_attribute("data-pending", "1")
    expect(article(page, first).locator("[data-action=approve]")).to_have_count(1)  # open, to decide again
    expect(article(page, second)).to_be_focused()

    page.route(f"**/review/candidates/{second.pk}/approve", lambda route: route.abort("connectionrefused"))
    page.keyboard.press("a")
    expect(article(page, third)).to_be_focused()
    expect(article(page, second).locator("[data-failed=network]")).to_contain_text("the server could not be reached")
    assert (status_of(first), status_of(second)) == ("pending_review", "pending_review")

    page.unroute(f"**/review/candidates/{first.pk}/approve")
    page.keyboard.press("k")
    page.keyboard.press("k")
    expect(article(page, first)).to_be_focused()
    page.keyboard.press("a")  # decided again, this time it goes through
    expect(page.locator("#toast")).to_contain_text("“topic 0” is published")
    expect(article(page, first).locator("[data-failed]")).to_have_count(0)
    expect(article(page, second)).to_be_focused()  # the next open item
    assert status_of(first) == "approved"
    assert Candidate.objects.get(pk=first.pk).decided_by == f"reviewer:{reviewer.pk}"


def test_c_claims_by_swapping_the_queue_region_and_keeps_the_reviewers_place(page, login, tenant, reviewer):
    items = propose(tenant, "bob", *[candidate(field="preference", value=f"topic {i}") for i in range(8)])
    login("rita")
    page.evaluate("window.samePage = true")
    page.select_option("#claim-count", "5")
    page.keyboard.press("Escape")  # out of the select, back to the queue
    page.keyboard.press("j")
    expect(article(page, items[1])).to_be_focused()
    page.keyboard.press("c")
    expect(page.locator("#toast")).to_contain_text("Claimed 5 items for 15 minutes")
    expect(page.locator("[data-claim].mine")).to_have_count(5)
    expect(article(page, items[1]).locator("[data-claim]")).to_have_text("claimed by you")
    expect(article(page, items[1])).to_be_focused()  # the same item, swapped in with its claim
    expect(page.locator("[data-count=mine]")).to_have_text("5")
    assert page.evaluate("window.samePage") is True  # not a page load
    assert set(Candidate.objects.filter(claimed_by=f"reviewer:{reviewer.pk}").values_list("pk", flat=True)) == {
        item.pk for item in items[:5]}
    release = page.locator("[data-claim-release] button[name=release]")
    expect(release).to_be_visible()  # came with the claim, out of band
    release.click()
    expect(page.locator("#toast")).to_contain_text("Released 5 claimed items.")
    expect(page.locator("[data-claim].mine")).to_have_count(0)
    expect(release).to_have_count(0)
    assert page.evaluate("window.samePage") is True
    assert not Candidate.objects.exclude(claimed_by="").exists()


def test_claiming_after_a_filter_change_claims_from_the_filtered_set(page, login, tenant, reviewer):
    # The filter form swaps only #results; the claim form's copy of the filters travels with it
    # out of band. Without it "claim next" claimed in the filters the page was loaded with.
    bobs = propose(tenant, "bob", *[candidate(field="preference", value=f"bob {i}") for i in range(3)])
    carols = propose(tenant, "carol", *[candidate(field="preference", value=f"carol {i}") for i in range(3)])
    login("rita")
    page.evaluate("window.samePage = true")
    expect(page.locator("[data-item]")).to_have_count(6)
    filter_by_user(page, "carol")
    expect(page.locator("[data-item]")).to_have_count(3)
    page.select_option("#claim-count", "5")
    page.keyboard.press("Escape")
    page.keyboard.press("c")
    expect(page.locator("#toast")).to_contain_text("Claimed 3 items")
    claimed = set(Candidate.objects.filter(claimed_by=f"reviewer:{reviewer.pk}").values_list("pk", flat=True))
    assert claimed == {item.pk for item in carols}
    assert not claimed & {item.pk for item in bobs}
    expect(page.locator("[data-item]")).to_have_count(3)  # still the filtered queue
    expect(page.locator("[data-claim].mine")).to_have_count(3)
    assert "user_id=carol" in page.url and page.evaluate("window.samePage") is True


def test_nearing_the_page_end_the_next_page_is_fetched_ahead(page, login, tenant, reviewer):
    # Deciding the last open item on screen used to wait for "More" (a request behind the
    # decisions still on their way); five from the end it is fetched ahead instead.
    from reviews.views.reviewer import QUEUE_PAGE_SIZE_HTML

    items = propose(tenant, "bob", *[candidate(field="preference", value=f"topic {i}")
                                      for i in range(QUEUE_PAGE_SIZE_HTML + 3)])
    login("rita")
    expect(page.locator("[data-item]")).to_have_count(QUEUE_PAGE_SIZE_HTML)
    for index in range(QUEUE_PAGE_SIZE_HTML - 6):
        page.keyboard.press("a")
        expect(article(page, items[index + 1])).to_be_focused()
    expect(page.locator("[data-item]")).to_have_count(QUEUE_PAGE_SIZE_HTML)  # six open ahead: not yet
    page.keyboard.press("a")  # five open items follow the one focused now
    expect(page.locator("[data-item]")).to_have_count(QUEUE_PAGE_SIZE_HTML + 3)
    for index in range(QUEUE_PAGE_SIZE_HTML - 5, QUEUE_PAGE_SIZE_HTML + 2):
        expect(article(page, items[index])).to_be_focused()
        page.keyboard.press("a")
    expect(article(page, items[-1])).to_be_focused()
    expect(page.locator("[data-pending]")).to_have_count(0)  # every answer is in
    assert Candidate.objects.filter(status="approved").count() == QUEUE_PAGE_SIZE_HTML + 2


def test_a_body_that_comes_back_out_of_date_does_not_take_the_focus_back(page, login, three, reviewer,
                                                                         second_reviewer):
    first, second, _third = three
    page.add_init_script(HOLD_BODIES)
    login("rita")
    page.keyboard.press("o")  # open the first item: its body (asked for ahead) is on its way
    page.keyboard.press("j")  # and the reviewer moves on before it comes
    expect(article(page, second)).to_be_focused()
    approve_as(second_reviewer, first)  # meanwhile a colleague decides it: the body comes back whole
    page.evaluate("releaseBodies()")
    expect(article(page, first).locator("[data-decided]")).to_contain_text("Decided by rob")
    expect(article(page, second)).to_be_focused()
    expect(article(page, second)).to_have_attribute("aria-current", "true")


# htmx binds the forms of swapped-in markup when it settles, 20 ms after the swap; the bench
# pressed Enter in that window about one run in five (the body arrived while the last letters
# of the reason were typed) and the reason field's bare form submitted itself, reloading the
# page. A long settle delay holds the window open, so the Enter surely falls in it.
LATE_SETTLE = "() => { htmx.config.defaultSettleDelay = 60000; }"


def test_enter_in_a_body_just_arrived_sends_the_reason_by_htmx(page, login, three, reviewer):
    first, second, _third = three
    page.add_init_script(HOLD_BODIES)
    login("rita")
    page.evaluate("window.samePage = true")
    page.evaluate(LATE_SETTLE)
    page.keyboard.press("r")  # the body, with the reason field, is on its way
    page.keyboard.type("not a ")  # kept, and given to the field when it comes
    page.evaluate("releaseBodies()")
    reason = page.locator(f"#reason-{first.pk}")
    expect(reason).to_be_focused()
    expect(reason).to_have_value("not a ")
    page.keyboard.type("preference")  # typed into the field itself, the swap not yet settled
    page.keyboard.press("Enter")
    expect(article(page, second)).to_be_focused()
    expect(page.locator("#toast")).to_contain_text("Rejected")
    assert page.evaluate("window.samePage") is True  # sent by htmx, not a page load
    rejected = Candidate.objects.get(pk=first.pk)
    assert (rejected.status, rejected.note) == ("rejected", "not a preference")


def test_decisions_on_their_way_when_c_claims_are_answered_on_the_new_regions_lines(page, login, tenant, reviewer):
    # The claim's region is made before the two approvals reach the server: it shows both
    # items open. Their lines, still sending, take those places, so that the answers land where
    # the reviewer sees them and the items are not offered to decide a second time.
    items = propose(tenant, "bob", *[candidate(field="preference", value=f"topic {i}") for i in range(6)])
    login("rita")
    page.evaluate("window.samePage = true")
    held = Held(page, "**/review/candidates/*/approve")
    page.keyboard.press("a")
    page.keyboard.press("a")
    expect(article(page, items[2])).to_be_focused()
    page.keyboard.press("c")
    expect(page.locator("#toast")).to_contain_text("Claimed 6 items")
    expect(article(page, items[0])).to_have_attribute("data-pending", "1")
    expect(article(page, items[1])).to_have_attribute("data-pending", "2")
    expect(article(page, items[2])).to_be_focused()  # the reviewer's place is kept
    expect(page.locator("[data-late]")).to_be_hidden()  # both are in the new region
    held.release()
    expect(article(page, items[0])).to_have_attribute("data-open", "0")
    expect(article(page, items[1])).to_have_attribute("data-open", "0")
    expect(page.locator("#toast")).to_contain_text("Approved: preference = “topic 1” is published.")
    expect(article(page, items[2])).to_be_focused()
    assert [status_of(item) for item in items[:3]] == ["approved", "approved", "pending_review"]
    assert page.evaluate("window.samePage") is True


def test_decisions_on_their_way_when_the_filter_changes_are_answered_above_the_new_region(page, login, bob_and_carol, reviewer):
    bobs, carols = bob_and_carol
    login("rita")
    page.evaluate("window.samePage = true")
    approved = Held(page, f"**/review/candidates/{bobs[0].pk}/approve")
    refused = Held(page, f"**/review/candidates/{bobs[1].pk}/approve")
    page.keyboard.press("a")
    page.keyboard.press("a")
    expect(page.locator("[data-item][data-pending]")).to_have_count(2)
    late = page.locator("[data-late]")
    expect(late).to_be_hidden()
    filter_by_user(page, "carol")
    expect(page.locator("#results [data-item]")).to_have_count(2)  # carol's: bob's lines are not in it
    expect(late).to_be_visible()
    expect(late.locator(f"#item-{bobs[0].pk}")).to_have_attribute("data-pending", "1")
    expect(late.locator(f"#item-{bobs[1].pk}")).to_have_attribute("data-pending", "2")
    expect(article(page, carols[0])).to_be_focused()  # an open item of the new region

    approved.release()
    expect(late.locator(f"#item-{bobs[0].pk}")).to_have_attribute("data-open", "0")
    expect(late.locator(f"#item-{bobs[0].pk} .badge.status-approved")).to_be_visible()  # its decided line
    refused.routes.pop().fulfill(status=403, body="Forbidden")
    failure = late.locator(f"#item-{bobs[1].pk} [data-failed=refused]")
    expect(failure).to_contain_text("Not applied: the server refused this decision")
    expect(late.locator(f"#item-{bobs[1].pk}")).not_to_have_attribute("data-pending", "2")
    expect(article(page, carols[0])).to_be_focused()  # the answers did not take the focus
    assert (status_of(bobs[0]), status_of(bobs[1])) == ("approved", "pending_review")

    late.locator("[data-late-clear]").click()
    expect(late).to_be_hidden()
    assert page.evaluate("window.samePage") is True


def test_u_undoes_the_newest_decision_when_its_answer_lands_above_the_new_region(page, login, bob_and_carol, reviewer):
    # Sent, then the filter changed: its line waits in "Sent before the queue changed". When
    # its answer lands there it is the newest decision: the toast offers its Undo, and `u`
    # takes it back even after a claim's toast has replaced that Undo (the line outlives the
    # claim's swap of the region, with its own Undo; `u` used to find nothing to undo).
    bobs, carols = bob_and_carol
    login("rita")
    page.evaluate("window.samePage = true")
    held = Held(page, f"**/review/candidates/{bobs[0].pk}/approve")
    page.keyboard.press("a")
    expect(article(page, bobs[0])).to_have_attribute("data-pending", "1")
    filter_by_user(page, "carol")
    late = page.locator("[data-late]")
    expect(late.locator(f"#item-{bobs[0].pk}")).to_have_attribute("data-pending", "1")
    expect(article(page, carols[0])).to_be_focused()

    held.release()
    expect(late.locator(f"#item-{bobs[0].pk} .badge.status-approved")).to_be_visible()
    expect(page.locator("#toast")).to_contain_text("Approved: preference = “bob 0” is published.")
    expect(page.locator(f'#toast form[data-undo][action$="/{bobs[0].pk}/undo"]')).to_have_count(1)
    page.keyboard.press("c")  # carol's two: the claim's notice takes the toast
    expect(page.locator("#toast")).to_contain_text("Claimed 2 items")
    expect(late.locator(f"#item-{bobs[0].pk}")).to_be_visible()  # not in the claimed region: it stays
    page.keyboard.press("u")
    expect(page.locator("#toast")).to_contain_text("Undone: preference = “bob 0” is back to pending review.")
    expect(late.locator(f"#item-{bobs[0].pk}")).to_have_attribute("data-open", "1")
    assert status_of(bobs[0]) == "pending_review"
    assert AuditEvent.objects.filter(action="candidate.decision_undone", object_id=str(bobs[0].pk)).count() == 1
    assert [status_of(item) for item in (bobs[1], *carols)] == ["pending_review"] * 3
    page.keyboard.press("u")  # nothing newer to take back: the undone decision is not undone twice
    page.wait_for_timeout(300)
    assert AuditEvent.objects.filter(action="candidate.decision_undone").count() == 1
    assert page.evaluate("window.samePage") is True


def test_u_pressed_before_a_late_answer_undoes_it_once_it_lands_above_the_new_region(page, login, bob_and_carol, reviewer):
    bobs, carols = bob_and_carol
    login("rita")
    held = Held(page, f"**/review/candidates/{bobs[0].pk}/approve")
    page.keyboard.press("a")
    filter_by_user(page, "carol")
    late = page.locator("[data-late]")
    expect(late.locator(f"#item-{bobs[0].pk}")).to_have_attribute("data-pending", "1")
    page.keyboard.press("u")  # still on its way: undone as soon as it is made
    held.release()
    expect(page.locator("#toast")).to_contain_text("Undone: preference = “bob 0” is back to pending review.")
    assert status_of(bobs[0]) == "pending_review"
    assert AuditEvent.objects.filter(action="candidate.decision_undone", object_id=str(bobs[0].pk)).count() == 1
    assert status_of(carols[0]) == "pending_review"  # the focused item was not decided instead


def test_the_bodies_of_the_next_items_come_ahead_so_r_and_e_do_not_wait(page, login, tenant, reviewer):
    items = propose(tenant, "bob", *[candidate(field="preference", value=f"topic {i}") for i in range(6)])
    page.add_init_script(HOLD_BODIES)
    login("rita")
    page.wait_for_function("() => window.bodiesAsked.length === 3")
    assert sorted(bodies_asked(page)) == [item.pk for item in items[:3]]  # the focused item and the next two
    page.evaluate("releaseBodies()")
    page.keyboard.press("a")  # the focus moves on: one more body is asked for, two ahead of it
    expect(article(page, items[1])).to_be_focused()
    page.wait_for_function("() => window.bodiesAsked.length === 4")
    assert bodies_asked(page)[-1] == items[3].pk
    expect(article(page, items[2]).locator("[data-body-pending]")).to_have_count(0)
    page.keyboard.press("j")
    page.keyboard.press("r")  # its body is here: the reason field opens with the key
    expect(page.locator(f"#reason-{items[2].pk}")).to_be_focused()
    page.keyboard.type("not a preference")
    page.keyboard.press("Enter")
    expect(page.locator("#toast")).to_contain_text("Rejected: preference = “topic 2”.")
    page.keyboard.press("e")  # items[3], focused after the rejection: its body came ahead too
    expect(page.locator(f"#edit-{items[3].pk}")).to_be_focused()
    page.keyboard.type("topic 3 (corrected)")
    page.keyboard.press("Control+Enter")
    expect(page.locator("#toast")).to_contain_text("Edited and approved: preference = “topic 3 (corrected)”")
    asked = bodies_asked(page)
    assert len(asked) == len(set(asked))  # no body twice
    rejected, edited = Candidate.objects.get(pk=items[2].pk), Candidate.objects.get(pk=items[3].pk)
    assert (rejected.status, rejected.note) == ("rejected", "not a preference")
    assert (edited.status, edited.value) == ("approved", "topic 3 (corrected)")


def test_a_decision_made_while_its_items_body_is_on_its_way_aborts_the_body(page, login, three, reviewer):
    # The focused item's body is fetched ahead, so `a` often comes while it is on its way. Made
    # after the approval, it would be the whole item, out of date, for a line the decision's
    # answer has replaced already (or is about to): the body's request is aborted instead.
    first, second, _third = three
    errors = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.add_init_script(HOLD_BODIES)
    login("rita")
    page.wait_for_function("() => window.bodiesAsked.length === 3")
    page.keyboard.press("a")
    expect(article(page, first)).to_have_attribute("data-open", "0")
    expect(page.locator("#toast")).to_contain_text("Approved: preference = “topic 0” is published.")
    page.evaluate("releaseBodies()")  # the others come
    expect(article(page, second).locator("[data-body-pending]")).to_have_count(0)
    expect(article(page, first)).to_have_attribute("data-open", "0")  # still the decision's answer
    expect(article(page, first).locator("[data-notice]")).to_have_count(0)  # no "decided first"
    expect(article(page, second)).to_be_focused()
    assert not errors  # such a body failed in the page: its target ("#item-N") was gone
    assert page.evaluate("window.bodiesAborted") == [first.pk]


def test_a_body_fetched_ahead_that_comes_back_out_of_date_stays_a_line_with_its_notice(page, login, three,
                                                                                      reviewer, second_reviewer):
    first, _second, third = three
    page.add_init_script(HOLD_BODIES)
    login("rita")
    page.wait_for_function("() => window.bodiesAsked.length === 3")
    approve_as(second_reviewer, third)  # a colleague decides an item two ahead
    page.evaluate("releaseBodies()")
    expect(article(page, third).locator("[data-notice=stale]")).to_contain_text("rob decided this item first")
    assert article(page, third).locator("details[data-expand]").evaluate("details => details.open") is False
    expect(article(page, first)).to_be_focused()
