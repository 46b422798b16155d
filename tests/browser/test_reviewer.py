"""A reviewer's day in a real browser: sign in, filter, decide by keyboard and mouse, settle a
conflict, meet a colleague's earlier decision, switch language, and never run a user's markup."""
import re

import pytest
from playwright.sync_api import expect

from reviews.models import AuditEvent, Candidate, Fact
from tests.browser.conftest import sign_in_browser
from tests.conftest import candidate
from tests.review.conftest import (
    TEMPLATE_VALUE,
    XSS_VALUE,
    _fresh_stats_cache,
    approve_as,
    propose,
    review_queue,
)

pytestmark = pytest.mark.django_db(transaction=True)


def status_of(item) -> str:
    return Candidate.objects.get(pk=item.pk).status


def article(page, item):
    return page.locator(f"#item-{item.pk}")


def signed_in_context(browser, live_server, username, **options):
    """A browser context of its own (locale, viewport) with ``username`` signed in (conftest's ``sign_in_browser``)."""
    context = browser.new_context(base_url=live_server.url, locale=options.pop("locale", "en-US"), **options)
    page = context.new_page()
    page.set_default_timeout(10_000)
    sign_in_browser(page, live_server, username)
    return context, page


def test_sign_in_filter_and_approve_with_the_keyboard(page, login_through_form, screenshot, review_queue, reviewer):
    login_through_form("rita")
    expect(page).to_have_url(re.compile(r"/review/$"))
    expect(page.locator("[data-item]")).to_have_count(3)
    screenshot(page, "review-queue")

    page.select_option("#id_field", "location")
    page.click("[data-filters] button[type=submit]")
    page.wait_for_function("() => location.search.includes('field=location')")  # htmx pushed the filter
    expect(page.locator("[data-item]")).to_have_count(1)

    page.keyboard.press("?")
    expect(page.locator("[data-keys]")).to_have_attribute("open", "")
    page.keyboard.press("?")
    page.keyboard.press("j")
    page.keyboard.press("k")
    expect(article(page, review_queue.evidence)).to_have_attribute("aria-current", "true")
    page.keyboard.press("a")
    expect(page.locator("#toast")).to_contain_text(
        "Approved: location = “Berlin” is published."
    )
    assert status_of(review_queue.evidence) == "approved"
    assert AuditEvent.objects.get(action="candidate.approved").actor == f"reviewer:{reviewer.pk}"


def test_a_key_pressed_before_htmx_settles_still_decides_in_place(page, login, review_queue, reviewer):
    # htmx binds swapped-in forms only when it settles; a key pressed in that window once
    # submitted the bare form and reloaded the page. Widen the window so the race is certain.
    login("rita")
    page.evaluate("htmx.config.defaultSettleDelay = 3000; window.samePage = true")
    page.select_option("#id_field", "location")
    page.click("[data-filters] button[type=submit]")
    expect(page.locator("[data-item]")).to_have_count(1)
    expect(page.locator(".htmx-settling")).not_to_have_count(0)  # still inside the window

    page.keyboard.press("a")
    expect(page.locator("#toast")).to_contain_text(
        "Approved: location = “Berlin” is published."
    )
    assert page.evaluate("window.samePage") is True  # decided by htmx, not by a page load
    assert status_of(review_queue.evidence) == "approved"


def test_edit_then_approve_and_reject_with_a_reason(page, login, review_queue, reviewer):
    login("rita")
    # The first item is current; after a decision the focus moves on to the next open one.
    page.keyboard.press("e")
    edit = article(page, review_queue.evidence).locator("textarea[name=value]")
    expect(edit).to_be_focused()
    edit.fill("Berlin, Germany")
    article(page, review_queue.evidence).locator("details[data-action=edit] button[type=submit]").click()
    expect(page.locator("#toast")).to_contain_text("Edited and approved")
    assert Fact.objects.get(pk=Candidate.objects.get(pk=review_queue.evidence.pk).fact_id).value == "Berlin, Germany"

    # On a conflict, "a" takes the new value; the focus then moves on to the next open item.
    expect(article(page, review_queue.conflict)).to_have_attribute("aria-current", "true")
    page.keyboard.press("a")
    expect(page.locator("#toast")).to_contain_text("Took the proposed value: database = “PostgreSQL” is published.")
    assert Fact.objects.get(pk=review_queue.database_fact.pk).value == "PostgreSQL"
    expect(article(page, review_queue.new_entity)).to_have_attribute("aria-current", "true")
    page.keyboard.press("r")
    reason = article(page, review_queue.new_entity).locator("input[name=note]")
    expect(reason).to_be_focused()
    reason.press("Enter")  # an empty reason is refused by the browser before anything is sent
    assert status_of(review_queue.new_entity) == "pending_review"
    reason.fill("not their employer")
    reason.press("Enter")
    expect(page.locator("#toast")).to_contain_text("Rejected")
    item = Candidate.objects.get(pk=review_queue.new_entity.pk)
    assert (item.status, item.note) == ("rejected", "not their employer")


def test_approving_the_last_item_on_the_page_brings_the_next_page_and_focuses_its_first(page, login, tenant, reviewer):
    # One key per plain approval holds across pages: deciding the last open item on screen
    # fetches "More" and focuses the first item it brings (it once stayed on the decided line,
    # two more key presses before the next approval).
    from reviews.views.reviewer import QUEUE_PAGE_SIZE_HTML

    values = [candidate(field="preference", value=f"topic {i}") for i in range(QUEUE_PAGE_SIZE_HTML + 2)]
    items = propose(tenant, "bob", *values)
    login("rita")
    expect(page.locator("[data-item]")).to_have_count(QUEUE_PAGE_SIZE_HTML)
    for _ in range(QUEUE_PAGE_SIZE_HTML - 1):
        page.keyboard.press("j")
    last, following = items[QUEUE_PAGE_SIZE_HTML - 1], items[QUEUE_PAGE_SIZE_HTML]
    expect(article(page, last)).to_have_attribute("aria-current", "true")
    page.keyboard.press("a")
    expect(article(page, following)).to_be_focused()
    expect(article(page, following)).to_have_attribute("aria-current", "true")
    expect(article(page, last)).to_have_attribute("data-open", "0")  # the decision is sent in the background
    assert status_of(last) == "approved"
    page.keyboard.press("a")  # and the next approval is again one key
    expect(article(page, items[QUEUE_PAGE_SIZE_HTML + 1])).to_be_focused()
    expect(article(page, following)).to_have_attribute("data-open", "0")
    assert [status_of(item) for item in items[QUEUE_PAGE_SIZE_HTML - 1:]] == ["approved", "approved", "pending_review"]
    assert status_of(items[0]) == "pending_review"


# Every request for an item's body is counted and held back in the page (htmx asks with
# XMLHttpRequest) until releaseBodies(): the queue fetches the bodies of the focused item and
# the next ones ahead, and what the reviewer types meanwhile is certain to come before them.
# Held in the page, not by the network, so that "networkidle" after signing in still comes.
# A held request that is aborted is never sent, and says so as a sent one would (htmx ends
# the request on "abort"); window.bodiesAborted lists them.
HOLD_BODIES = """(() => {
  const { open, send, abort } = XMLHttpRequest.prototype;
  const candidate = (url) => Number(url.match(/candidates[/]([0-9]+)[/]body/)[1]);
  window.bodiesAsked = [];
  window.bodiesAborted = [];
  window.holdBodies = true;
  const held = [];
  XMLHttpRequest.prototype.open = function (method, url) { this._url = String(url); return open.apply(this, arguments); };
  XMLHttpRequest.prototype.send = function (body) {
    if (!/[/]body[?]/.test(this._url)) return send.call(this, body);
    window.bodiesAsked.push(candidate(this._url));
    if (!window.holdBodies) return send.call(this, body);
    this._held = true;
    held.push(() => { if (this._held) { this._held = false; send.call(this, body); } });
  };
  XMLHttpRequest.prototype.abort = function () {
    if (!this._held) return abort.call(this);
    this._held = false;
    window.bodiesAborted.push(candidate(this._url));
    this.dispatchEvent(new ProgressEvent("abort"));
    this.dispatchEvent(new ProgressEvent("loadend"));
  };
  window.releaseBodies = () => { window.holdBodies = false; held.splice(0).forEach((go) => go()); };
})();"""


def bodies_asked(page) -> list[int]:
    return page.evaluate("window.bodiesAsked")


def test_an_items_body_is_fetched_once_ahead_and_its_forms_work(page, login, review_queue, reviewer):
    page.add_init_script(HOLD_BODIES)
    login("rita")
    item = article(page, review_queue.new_entity)
    three = sorted([review_queue.evidence.pk, review_queue.conflict.pk, review_queue.new_entity.pk])
    # The focused item and the next two: their bodies are asked for before anyone opens them.
    page.wait_for_function("() => window.bodiesAsked.length === 3")
    assert sorted(bodies_asked(page)) == three
    expect(item.locator("[data-body-pending]")).to_have_count(1)
    expect(item.locator("details[data-action=reject]")).to_have_count(0)  # not on the page until it comes
    page.evaluate("releaseBodies()")
    expect(item.locator("[data-body-pending]")).to_have_count(0)
    expect(item.locator("details[data-action=reject]")).to_have_count(1)
    expect(item.locator(".item-body")).to_be_hidden()  # fetched, not shown: the item is still closed
    item.locator("summary.line").click()
    expect(item.locator(".item-body")).to_contain_text("Current facts")
    item.locator("summary.line").click()  # closed and opened again: asked once
    item.locator("summary.line").click()
    item.locator("details[data-action=reject] summary").click()
    item.locator("input[name=note]").fill("wrong company")
    item.locator("details[data-action=reject] button[type=submit]").click()
    expect(page.locator("#toast")).to_contain_text("Rejected")
    # Decided in place by htmx, no page load (which would have asked again); each body once.
    assert sorted(bodies_asked(page)) == three
    item = Candidate.objects.get(pk=review_queue.new_entity.pk)
    assert (item.status, item.note) == ("rejected", "wrong company")


def test_keys_typed_while_the_body_comes_go_to_its_field(page, login, review_queue, reviewer):
    page.add_init_script(HOLD_BODIES)
    login("rita")
    page.keyboard.press("r")  # the first item: its body (with the reason field) is on its way
    page.keyboard.type("moved to Paris")  # "o", "a", "r"...: typed, not keys of the queue
    page.keyboard.press("Enter")
    page.evaluate("releaseBodies()")
    expect(page.locator("#toast")).to_contain_text("Rejected")
    item = Candidate.objects.get(pk=review_queue.evidence.pk)
    assert (item.status, item.note) == ("rejected", "moved to Paris")
    assert status_of(review_queue.conflict) == "pending_review"

    # "e" on a conflict (its body came ahead) focuses the merged value; the keys typed replace it.
    expect(article(page, review_queue.conflict)).to_have_attribute("aria-current", "true")
    page.keyboard.press("e")
    page.keyboard.type("PostgreSQL 16")
    merged = page.locator(f"#merge-{review_queue.conflict.pk}")
    expect(merged).to_be_focused()
    expect(merged).to_have_value("PostgreSQL 16")
    merged.press("Enter")
    expect(page.locator("#toast")).to_contain_text("Published the merged value: database = “PostgreSQL 16”.")
    assert Fact.objects.get(pk=review_queue.database_fact.pk).value == "PostgreSQL 16"


def test_defer_and_bulk_approve_a_selection(page, login, tenant, review_queue, reviewer):
    extra = propose(tenant, "bob", candidate(field="preference", value="tea"), candidate(field="preference", value="jazz"))
    login("rita")
    page.keyboard.press("d")
    expect(page.locator("#toast")).to_contain_text("Sent to alice to confirm")
    assert status_of(review_queue.evidence) == "pending_user"

    page.keyboard.press("j")  # conflict -> new entity
    page.keyboard.press("x")
    page.keyboard.press("j")
    page.keyboard.press("x")
    expect(page.locator("[data-selected-count]")).to_have_text("2")
    page.click("#bulk-form button[value=approve]")
    expect(page.locator("[data-bulk-summary]")).to_have_text("Approved 2 items.")  # in place, by htmx
    assert [status_of(item) for item in (review_queue.new_entity, extra[0])] == ["approved", "approved"]
    assert status_of(extra[1]) == "pending_review"


def test_settle_a_conflict_side_by_side(page, login, screenshot, review_queue, reviewer):
    login("rita")
    page.goto(f"/review/candidates/{review_queue.conflict.pk}/")
    sides = page.locator("[data-conflict] .side")
    expect(sides.nth(0)).to_contain_text("MySQL")
    expect(sides.nth(1)).to_contain_text("PostgreSQL")
    expect(sides.nth(0)).to_contain_text("Confidence")
    expect(page.locator("button[data-resolution=keep_both]")).to_have_count(0)  # a `one` field
    screenshot(page, "review-conflict")
    page.keyboard.press("e")
    merged = page.locator(f"#merge-{review_queue.conflict.pk}")
    expect(merged).to_be_focused()
    merged.fill("PostgreSQL 16 (migrated from MySQL)")
    merged.press("Enter")  # submits "edit to merged value", not the first button of the row
    expect(page.locator("#toast")).to_contain_text("Published the merged value: database = “PostgreSQL 16 (migrated from MySQL)”.")
    fact = Fact.objects.get(pk=review_queue.database_fact.pk)
    assert (fact.value, fact.version) == ("PostgreSQL 16 (migrated from MySQL)", 2)


def test_the_second_reviewer_meets_the_stale_path(browser, live_server, review_queue, reviewer, second_reviewer):
    rita_context, rita = signed_in_context(browser, live_server, "rita")
    rob_context, rob = signed_in_context(browser, live_server, "rob")
    try:
        # rob loaded the page, and the first item's body, before rita decided: a body asked
        # for after her decision comes back as the item is now, which is the next test's path
        expect(rob.locator("[data-item]")).to_have_count(3)
        expect(article(rob, review_queue.evidence).locator("[data-body-pending]")).to_have_count(0)
        rita.keyboard.press("a")
        expect(rita.locator("#toast")).to_contain_text("Approved")

        rob.keyboard.press("a")  # from the line, as rob saw it
        notice = article(rob, review_queue.evidence).locator("[data-notice=stale]")
        expect(notice).to_contain_text("rita decided this item first: approved (location = “Berlin”)")
        expect(notice).to_contain_text("Your decision was not applied.")
        expect(article(rob, review_queue.evidence).locator("[data-action=approve]")).to_have_count(0)
        assert status_of(review_queue.evidence) == "approved"
        assert AuditEvent.objects.filter(action="candidate.approved").count() == 1
    finally:
        rita_context.close()
        rob_context.close()


def test_opening_an_item_a_colleague_decided_meanwhile_shows_it_as_it_is_now(browser, live_server, review_queue,
                                                                            reviewer, second_reviewer):
    # The body comes when the item is opened; a line out of date by then comes back whole.
    rita_context, rita = signed_in_context(browser, live_server, "rita")
    rob_context, rob = signed_in_context(browser, live_server, "rob")
    try:
        rob.add_init_script(HOLD_BODIES)  # rob's page asks for the bodies ahead: they come late
        rob.reload()
        expect(rob.locator("[data-item]")).to_have_count(3)
        rita.keyboard.press("a")
        expect(rita.locator("#toast")).to_contain_text("Approved")

        rob.keyboard.press("r")  # to reject it: its body is on its way, and the item has moved on
        rob.evaluate("releaseBodies()")
        item = article(rob, review_queue.evidence)
        notice = item.locator("[data-notice=stale]")
        expect(notice).to_contain_text("rita decided this item first: approved (location = “Berlin”)")
        expect(notice).to_contain_text("It is shown as it is now.")
        expect(item.locator("[data-decided]")).to_be_visible()  # open, with who decided it
        expect(item).to_be_focused()
        expect(item.locator("input[name=note]")).to_have_count(0)
        assert status_of(review_queue.evidence) == "approved"
        assert not AuditEvent.objects.filter(action="candidate.rejected").exists()
    finally:
        rita_context.close()
        rob_context.close()


def test_language_follows_the_browser_and_the_switcher(browser, live_server, page, login, review_queue, reviewer,
                                                      second_reviewer):
    login("rita")
    expect(page.locator("h1")).to_have_text("Review queue")
    page.click("form.language button[value=zh-hans]")
    expect(page.locator("h1")).to_have_text("审核队列")
    expect(page.locator("html")).to_have_attribute("lang", "zh-hans")
    page.click("form.language button[value=en]")
    expect(page.locator("h1")).to_have_text("Review queue")

    context, chinese = signed_in_context(browser, live_server, "rob", locale="zh-CN")
    try:
        expect(chinese.locator("h1")).to_have_text("审核队列")
        expect(chinese.locator(f"#item-{review_queue.evidence.pk} [data-action=approve] button")).to_contain_text("批准")
    finally:
        context.close()


def test_every_action_works_without_javascript(browser, live_server, review_queue, reviewer):
    context, page = signed_in_context(browser, live_server, "rita", java_script_enabled=False)
    try:
        article(page, review_queue.evidence).locator("[data-action=approve] button").click()
        expect(page.locator(".messages li.success")).to_have_text("Approved: location = “Berlin” is published.")
        assert status_of(review_queue.evidence) == "approved"
        item = article(page, review_queue.new_entity)
        item.locator("summary.line").click()  # expands in place: <details>, no script needed
        item.locator("[data-body-pending] a").click()  # the body is the item's own page without script
        expect(page).to_have_url(re.compile(rf"/review/candidates/{review_queue.new_entity.pk}/$"))
        item = article(page, review_queue.new_entity)
        item.locator("details[data-action=reject] summary").click()
        item.locator("input[name=note]").fill("wrong company")
        item.locator("details[data-action=reject] button[type=submit]").click()
        expect(page.locator(".messages li.success")).to_contain_text("Rejected")
        assert status_of(review_queue.new_entity) == "rejected"
    finally:
        context.close()


def test_hostile_values_render_as_text_on_every_page(page, login, tenant, reviewer, review_queue):
    from tests.review.conftest import store_thread

    store_thread(tenant, "eve", "t-x", [("x-1", "user", f"call me {XSS_VALUE} please")])
    xss, template = propose(
        tenant,
        "eve",
        candidate(value=XSS_VALUE, source_message_id="x-1", evidence=XSS_VALUE),
        candidate(entity_type="organization", entity_id="evil", entity_name=XSS_VALUE, field="industry",
                  value=TEMPLATE_VALUE),
        extractor=XSS_VALUE,
        prompt_version="</script>",
    )
    approve_as(reviewer, propose(tenant, "eve", candidate(field="preference", value=TEMPLATE_VALUE))[0])
    dialogs = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    login("rita")
    for path in (
        "/review/?user_id=eve",
        f"/review/candidates/{xss.pk}/",
        f"/review/entities/{template.entity_id}/",
        "/review/stats/",
        "/review/?user_id=eve&status=all",
    ):
        page.goto(path)
        page.wait_for_load_state("networkidle")
        expect(page.get_by_text(XSS_VALUE).first).to_be_visible()
        assert page.locator("img[src=x]").count() == 0
    page.goto("/review/?user_id=eve")
    expect(page.locator("[data-value]").filter(has_text=TEMPLATE_VALUE).first).to_be_visible()
    expect(page.locator("mark").first).to_have_text(XSS_VALUE)
    assert dialogs == []


def test_stats_page_in_chinese(page, login, screenshot, review_queue, reviewer, second_reviewer):
    approve_as(reviewer, review_queue.evidence)
    approve_as(second_reviewer, review_queue.new_entity)
    login("rita")
    page.click("form.language button[value=zh-hans]")
    page.goto("/review/stats/")
    expect(page.locator("h1")).to_have_text("审核统计")
    expect(page.locator("[data-chart=decisions] rect")).to_have_count(1)
    screenshot(page, "review-stats-zh")
