"""An item's own page in a real browser (issue 38.6): reached from the queue, its history
and its comment thread; a comment posted with htmx (and refused when empty) at a laptop's
and a phone's width, in English and in Chinese; long comments wrap, nothing is clipped, and
axe stays clean. The queue's age badges are looked at on the way."""
from datetime import timedelta

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from reviews.actors import Actor
from reviews.models import Candidate, CandidateComment
from reviews.services.comments import candidate_comment_add
from tests.browser.axe import assert_no_axe_violations
from tests.browser.test_reviewer import signed_in_context
from tests.conftest import candidate
from tests.review.conftest import propose

pytestmark = pytest.mark.django_db(transaction=True)

LONG_ENGLISH = " ".join(["The user said Lisbon in March and Porto in May, so ask before approving either value."] * 4)
LONG_CHINESE = "用户三月说在里斯本工作五月又说在波尔图工作请先和用户确认再批准任何一个值" * 3
NO_SPACES = "https://wiki.example.org/reviewing/guidelines/locations-and-moves-between-offices-explained?anchor=conflicts"

# What the page prints text in: history lines and their values, comments, the form.
TEXT_ELEMENTS = "[data-item-history] li, [data-item-history] .text, .comment, .comment-body, .comment-head, [data-comment-form]"

CLIPPED = """(selector) => Array.from(document.querySelectorAll(selector))
  .filter((element) => element.getClientRects().length)
  .map((element) => ({
    text: element.textContent.trim().slice(0, 50),
    scroll: element.scrollWidth,
    client: element.clientWidth,
    ellipsis: getComputedStyle(element).textOverflow === "ellipsis",
    offRight: element.getBoundingClientRect().right > document.documentElement.clientWidth + 1,
  }))
  .filter((box) => box.scroll > box.client + 1 || box.ellipsis || box.offRight)"""


WIDER_THAN_THE_WINDOW = """() => document.documentElement.scrollWidth <= window.innerWidth ? [] :
  Array.from(document.querySelectorAll("body *"))
    .filter((element) => element.getBoundingClientRect().right > window.innerWidth + 1)
    .map((element) => element.tagName + "." + element.className + " " + Math.round(element.getBoundingClientRect().right))
    .slice(0, 8)"""


@pytest.fixture
def item(tenant, reviewer, second_reviewer):
    fresh, late = propose(
        tenant, "lena",
        candidate(field="location", value="Lisbon", confidence=0.9),
        candidate(field="role", value="Engineer", confidence=0.9),
    )
    Candidate.objects.filter(pk=late.pk).update(created_at=timezone.now() - timedelta(hours=30))
    for author, body in ((second_reviewer, LONG_ENGLISH), (second_reviewer, NO_SPACES), (reviewer, LONG_CHINESE)):
        candidate_comment_add(tenant=tenant, candidate_id=fresh.pk, author=author, body=body, actor=Actor.reviewer(author))
    return fresh


@pytest.mark.parametrize("width, height", [(1366, 900), (390, 844)])
@pytest.mark.parametrize("locale", ["en-US", "zh-CN"])
def test_history_and_comments_at_both_widths_and_languages(browser, live_server, item, screenshot, width, height, locale):
    language = "zh" if locale.startswith("zh") else "en"
    context, page = signed_in_context(browser, live_server, "rita", locale=locale, viewport={"width": width, "height": height})
    try:
        page.goto("/review/")
        # The queue's age badges say in words where each item stands.
        expect(page.locator("[data-age=over]")).to_have_count(2)  # the late line and the headline's oldest
        expect(page.locator(f"#item-{item.pk} [data-age=within]")).to_be_visible()
        assert_no_axe_violations(page)
        screenshot(page, f"item-queue-ages-{language}-{width}")

        # From the queue to the item's page: open the line, follow "History and comments".
        page.locator(f"#item-{item.pk} summary.line").click()
        page.locator(f"#item-{item.pk} [data-item-page]").click()
        page.wait_for_url(f"**/review/candidates/{item.pk}/#history")
        history = page.locator("[data-item-history] > li")
        expect(history.first).to_have_attribute("data-history-event", "candidate.submitted")
        expect(page.locator("[data-history-event='candidate.commented']")).to_have_count(3)
        expect(page.locator("[data-history-actor]", has_text="rob").first).to_be_visible()
        expect(page.locator("[data-comment]")).to_have_count(3)

        # An empty comment is refused beside the field; the text stays to fix.
        textarea = page.locator("[data-comment-form] textarea")
        textarea.fill("   ")
        page.locator("[data-comment-form] button[type=submit]").click()
        expect(page.locator("[data-comment-error]")).to_be_visible()
        expect(textarea).to_have_attribute("aria-invalid", "true")
        expect(textarea).to_be_focused()  # the swap keeps the reader in the field
        assert CandidateComment.objects.filter(candidate=item).count() == 3

        # Posting swaps the thread in place (keys typed in the field are text, not shortcuts).
        textarea = page.locator("[data-comment-form] textarea")
        textarea.fill("")
        textarea.type("agree, ask the user")
        page.locator("[data-comment-form] button[type=submit]").click()
        expect(page.locator("[data-comment]")).to_have_count(4)
        expect(page.locator("[data-comment]").last).to_contain_text("agree, ask the user")
        expect(page.locator("[data-comment-form] textarea")).to_have_value("")
        expect(page.locator("[data-history-event='candidate.commented']")).to_have_count(4)  # out of band
        assert Candidate.objects.get(pk=item.pk).status == "pending_review"  # "a" approved nothing
        assert CandidateComment.objects.filter(candidate=item).count() == 4

        clipped = page.evaluate(CLIPPED, TEXT_ELEMENTS)
        assert not clipped, f"{width} {locale}: clipped: {clipped}"
        wide = page.evaluate(WIDER_THAN_THE_WINDOW)
        assert not wide, f"{width} {locale}: wider than the window: {wide}"
        assert_no_axe_violations(page)
        page.locator("#comments").scroll_into_view_if_needed()
        screenshot(page, f"item-page-{language}-{width}")
    finally:
        context.close()


def test_an_auditor_sees_the_thread_without_the_form(browser, live_server, item, auditor):
    context, page = signed_in_context(browser, live_server, "audrey", viewport={"width": 1366, "height": 900})
    try:
        page.goto(f"/review/candidates/{item.pk}/")
        expect(page.locator("[data-comment]")).to_have_count(3)
        expect(page.locator("[data-comment-form]")).to_have_count(0)
        expect(page.locator("[data-comments-read-only]")).to_be_visible()
        assert_no_axe_violations(page)
    finally:
        context.close()


@pytest.mark.parametrize("locale", ["en-US", "zh-CN"])
def test_a_decision_on_the_page_shows_in_its_history_without_a_reload(browser, live_server, item, screenshot, locale):
    context, page = signed_in_context(browser, live_server, "rita", locale=locale, viewport={"width": 390, "height": 844})
    try:
        page.goto(f"/review/candidates/{item.pk}/")
        expect(page.locator("[data-history-event='candidate.rejected']")).to_have_count(0)
        loads = page.evaluate("() => performance.getEntriesByType('navigation').length")
        page.locator(f"#item-{item.pk} details[data-action=reject] > summary").click()
        page.locator(f"#reason-{item.pk}").fill("she moved to Porto")
        page.locator(f"#reason-{item.pk}").press("Enter")

        expect(page.locator("[data-history-event='candidate.rejected']")).to_have_count(1)
        expect(page.locator("[data-history-event='candidate.rejected']")).to_contain_text("she moved to Porto")
        assert page.evaluate("() => performance.getEntriesByType('navigation').length") == loads  # no reload
        assert Candidate.objects.get(pk=item.pk).status == "rejected"
        assert_no_axe_violations(page)
        language = "zh" if locale.startswith("zh") else "en"
        page.locator("#history").scroll_into_view_if_needed()
        screenshot(page, f"item-page-decided-{language}-390")

        # The toast's Undo answers the same way: the history gains the undo.
        page.locator("#toast [data-undo] button").click()
        expect(page.locator("[data-history-event='candidate.decision_undone']")).to_have_count(1)
        assert Candidate.objects.get(pk=item.pk).status == "pending_review"
        assert page.evaluate("() => performance.getEntriesByType('navigation').length") == loads
    finally:
        context.close()
