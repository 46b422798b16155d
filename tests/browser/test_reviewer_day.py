"""Issue 13 in a real browser: claims by two reviewers at once, undo restoring publication
and the LangGraph Store, search, the help overlay, layouts at four widths and axe-core on
every staff page."""
import time

import pytest
from playwright.sync_api import expect

from reviews import publication
from reviews.models import Candidate, Fact, FactStatus
from tests.browser.axe import assert_no_axe_violations
from tests.browser.test_reviewer import article, signed_in_context, status_of
from tests.conftest import candidate
from tests.review.conftest import _fresh_stats_cache, approve_as, propose, review_queue  # noqa: F401 (fixtures)

pytestmark = pytest.mark.django_db(transaction=True)
WIDTHS = (1366, 1024, 768, 390)


def projected_location(user_id="alice", tenant="tenant-1"):
    item = publication.get_store().get(("tenants", tenant, "users"), user_id)
    return ((item.value if item else {}).get("facts") or {}).get("location", {}).get("value")


def eventually(check, timeout=10.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.1)
    return check()


def test_two_reviewers_claim_in_two_browsers_and_never_share(browser, live_server, tenant, reviewer, second_reviewer):
    items = propose(tenant, "bob", *[candidate(field="preference", value=f"topic {i}") for i in range(8)])
    rita_context, rita = signed_in_context(browser, live_server, "rita")
    rob_context, rob = signed_in_context(browser, live_server, "rob")
    try:
        rita.select_option("#claim-count", "5")
        rita.keyboard.press("c")  # claim the next 5: the queue region is swapped, not the page
        expect(rita.locator("#toast")).to_contain_text("Claimed 5 items")
        expect(rita.locator("[data-claim].mine")).to_have_count(5)
        rob.reload()
        rob.select_option("#claim-count", "5")
        rob.click("[data-claim-form] [data-claim]")
        expect(rob.locator("#toast")).to_contain_text("Claimed 3 items")
        mine = set(Candidate.objects.filter(claimed_by=f"reviewer:{reviewer.pk}").values_list("pk", flat=True))
        theirs = set(Candidate.objects.filter(claimed_by=f"reviewer:{second_reviewer.pk}").values_list("pk", flat=True))
        assert len(mine) == 5 and len(theirs) == 3 and not mine & theirs
        rob.goto("/review/")
        shown = {int(i.split("-")[1]) for i in rob.locator("[data-item]").evaluate_all("els => els.map(e => e.id)")}
        assert shown == theirs  # rita's claims are not shown to rob
        expect(rob.locator("[data-claim]").first).to_be_visible()
        rob.select_option("#id_claims", "all")
        rob.click("[data-filters] button[type=submit]")
        expect(rob.locator("[data-item]")).to_have_count(len(items))
        expect(rob.get_by_text("claimed by rita").first).to_be_visible()
    finally:
        rita_context.close()
        rob_context.close()


def test_undo_restores_publication_and_the_store(page, login, review_queue, reviewer):
    login("rita")
    item = review_queue.evidence
    page.keyboard.press("a")
    expect(page.locator("#toast")).to_contain_text("Approved: location = “Berlin” is published.")
    fact_id = Candidate.objects.get(pk=item.pk).fact_id
    assert eventually(lambda: projected_location() == "Berlin")
    page.keyboard.press("u")
    expect(page.locator("#toast")).to_contain_text("Undone: location = “Berlin” is back to pending review.")
    assert status_of(item) == "pending_review"
    assert Fact.objects.get(pk=fact_id).status == FactStatus.DELETED
    assert eventually(lambda: projected_location() is None)
    expect(article(page, item).locator("[data-action=approve]")).to_have_count(1)  # open again, in place


def test_undo_is_refused_once_a_colleague_moved_the_fact(page, login, tenant, review_queue, reviewer, second_reviewer):
    login("rita")
    page.keyboard.press("a")
    expect(page.locator("#toast")).to_contain_text("is published")
    [later] = propose(tenant, "alice", candidate(field="location", value="Hamburg"))
    from reviews.actors import Actor
    from reviews.services.candidates import candidate_settle_conflict

    candidate_settle_conflict(tenant=tenant, candidate_id=later.pk, version=later.version, resolution="take_new",
                              actor=Actor.reviewer(second_reviewer))
    page.keyboard.press("u")
    expect(page.locator("#toast")).to_contain_text("Not undone: the item or its fact changed after your decision")
    assert status_of(review_queue.evidence) == "approved"


def test_search_and_the_help_overlay(page, login, tenant, review_queue, reviewer):
    propose(tenant, "bob", candidate(field="preference", value="green tea"), candidate(field="preference", value="jazz"))
    login("rita")
    page.keyboard.press("/")
    expect(page.locator("[data-search]")).to_be_focused()
    page.keyboard.type("green")
    page.keyboard.press("Enter")
    page.wait_for_function("() => location.search.includes('q=green')")
    expect(page.locator("[data-item]")).to_have_count(1)
    expect(page.locator("[data-count=in_filter]")).to_have_text("1")
    page.locator("[data-item]").first.click()
    page.keyboard.press("Escape")
    page.keyboard.press("?")
    dialog = page.locator("[data-keys]")
    expect(dialog).to_be_visible()
    for key in ("Ctrl", "u", "c", "/", "?"):
        expect(dialog.locator("kbd", has_text=key).first).to_be_visible()
    page.keyboard.press("Escape")
    expect(dialog).to_be_hidden()


def test_a_filter_left_out_is_named_above_the_results_the_rest_applied(page, login, tenant, review_queue, reviewer):
    # The filter form's htmx swap of a 400: reviewer.js lets it in, so the reviewer sees why.
    propose(tenant, "bob", candidate(field="preference", value="green tea"))
    login("rita")
    page.evaluate("document.querySelector('#id_user_id').value = 'bob\\u0007'")  # a control character
    page.fill("[data-search]", "green")
    page.click("[data-filters] button[type=submit]")
    errors = page.locator("#results [data-filter-errors]")
    expect(errors).to_be_visible()
    expect(errors).to_contain_text("User:")
    expect(page.locator("#results [data-item]")).to_have_count(1)  # the search still applied
    assert page.evaluate("document.querySelectorAll('#results [data-item] [data-value]')[0].textContent") == "green tea"


def test_ctrl_enter_saves_an_edit_and_enter_sends_a_reason(page, login, review_queue, reviewer):
    login("rita")
    page.keyboard.press("e")
    edit = article(page, review_queue.evidence).locator("textarea[name=value]")
    expect(edit).to_be_focused()
    edit.fill("Berlin, DE")
    page.keyboard.press("Enter")  # a new line, not a submission
    assert status_of(review_queue.evidence) == "pending_review"
    page.keyboard.press("Control+Enter")
    expect(page.locator("#toast")).to_contain_text("Edited and approved")
    assert Fact.objects.get(pk=Candidate.objects.get(pk=review_queue.evidence.pk).fact_id).value == "Berlin, DE"


# The one page whose script reads the width as it loads (reviewer.js folds the queue's
# filters on a phone): loaded afresh at each width. CSS follows a resize, so the others are
# loaded once and resized through the widths.
READS_WIDTH_ON_LOAD = ("/review/",)


@pytest.mark.slow
def test_staff_pages_fit_and_pass_axe_at_each_width(browser, live_server, screenshot, tenant, review_queue, reviewer,
                                                    auditor):
    approve_as(reviewer, review_queue.new_entity)
    pages = {
        "rita": ["/review/", f"/review/candidates/{review_queue.conflict.pk}/", "/review/stats/",
                 f"/review/entities/{review_queue.new_entity.entity_id}/", "/audit/log/"],
        "audrey": ["/audit/log/", "/audit/", "/audit/verify/", "/audit/recalls/"],
    }
    for username, paths in pages.items():
        context, page = signed_in_context(browser, live_server, username, viewport={"width": WIDTHS[0], "height": 900})
        try:
            for path in paths:
                for width in WIDTHS:
                    page.set_viewport_size({"width": width, "height": 900})
                    if width == WIDTHS[0] or path in READS_WIDTH_ON_LOAD:
                        response = page.goto(path)
                        page.wait_for_load_state("networkidle")
                    name = path.strip("/").replace("/", "-") or "home"
                    screenshot(page, f"w{width}-{username}-{name}")
                    overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
                    assert overflow <= 1, f"{path} at {width}px scrolls sideways by {overflow}px"
                    assert_no_axe_violations(page)
                    if path == "/audit/log/" and username == "rita":
                        assert response.status == 403
        finally:
            context.close()


def test_on_a_phone_the_filters_fold_away_above_the_queue(browser, live_server, tenant, review_queue, reviewer):
    context, page = signed_in_context(browser, live_server, "rita", viewport={"width": 390, "height": 844})
    try:
        page.goto("/review/")
        fold = page.locator("[data-filters-fold]")
        expect(fold).not_to_have_attribute("open", "")
        first = page.locator("[data-item]").first
        assert first.bounding_box()["y"] < 844  # the queue starts on the first screen
        page.keyboard.press("/")  # search opens them
        expect(page.locator("[data-search]")).to_be_focused()
        expect(fold).to_have_attribute("open", "")

        page.goto("/review/?field=location")  # opened with a filter: shown as applied
        expect(fold).to_have_attribute("open", "")
        page.locator("[data-filters-fold] > summary").click()
        expect(fold).not_to_have_attribute("open", "")
        assert_no_axe_violations(page)
    finally:
        context.close()
    context, page = signed_in_context(browser, live_server, "rita", viewport={"width": 1366, "height": 900})
    try:
        page.goto("/review/")
        expect(page.locator("[data-filters-fold]")).to_have_attribute("open", "")
    finally:
        context.close()


def test_the_headline_follows_the_page_and_says_so_when_it_cannot_be_read(page, login, review_queue, reviewer):
    login("rita")
    page.goto("/review/")
    expect(page.locator("[data-count=waiting]")).to_have_text("3")  # asked for once the page was shown
    expect(page.locator("[data-counts-pending]")).to_have_count(0)
    page.route("**/review/counts*", lambda route: route.fulfill(status=500, body="boom"))
    page.goto("/review/?field=location")
    expect(page.locator("[data-item]")).to_have_count(1)  # the items do not wait for the counts
    expect(page.locator("[data-counts-status]")).to_have_text(
        "The counts could not be read; reload the page to try again.")
    expect(page.locator("#counts")).not_to_have_attribute("aria-busy", "true")


def test_a_contested_item_says_the_subjects_word_on_its_line_and_its_history_when_opened(page, login, screenshot, tenant,
                                                                                       reviewer):
    from reviews.actors import Actor
    from reviews.services.portal import fact_contest

    [role] = propose(tenant, "bob", candidate(field="role", value="chef", confidence=0.9))
    approve_as(reviewer, role)
    fact_contest(tenant=tenant, user_id="bob", fact_id=Candidate.objects.get(pk=role.pk).fact_id,
                 actor=Actor.subject("bob"), note="I don't cook any more <b>at all</b>")
    login("rita")
    page.goto("/review/?flag=contested")
    note = page.locator("[data-subject-note-line]")
    expect(note).to_have_text("bob says: “I don't cook any more <b>at all</b>”")  # escaped: shown as typed
    for width in (1366, 390):
        page.set_viewport_size({"width": width, "height": 900})
        expect(note).to_be_visible()
        screenshot(page, f"queue-contested-line-{width}")
    page.set_viewport_size({"width": 1366, "height": 900})
    page.locator("[data-item] summary.line").first.click()
    expect(page.locator("[data-history]")).to_contain_text("chef")
    expect(note).to_be_hidden()  # the open body has the note whole
