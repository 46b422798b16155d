"""The subject's flows of "my memories" in Chromium, on a phone (390×844) and a desktop
(1366×900), in English and Simplified Chinese: delete with undo, the badge and the pause
banner updating in place, a correction's confirmation in view. Each page is checked with
axe-core and photographed (artifacts/screenshots/portal-<flow>-<lang>-<width>.png).

Selectors are ids and data attributes, so one test reads both languages; the words are
checked per language where they matter.
"""
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import expect

from reviews.actors import SYSTEM
from reviews.models import Candidate, CandidateStatus, DeletionStatus, Fact, FactDeletion, Subject
from reviews.services.portal import portal_link_create
from tests.browser.axe import assert_no_axe_violations
from tests.portal.conftest import alice, memory, say  # noqa: F401  (fixtures)

pytestmark = pytest.mark.django_db(transaction=True)

SIZES = {"phone": {"width": 390, "height": 844}, "desktop": {"width": 1366, "height": 900}}
LANGUAGES = {"en": "en-US", "zh": "zh-CN"}
WORDS = {
    "en": {"scheduled": "will be deleted at", "done": "deleted from your memories", "undone": "we keep this memory",
           "saved": "Saved.", "paused": "Memory is paused", "corrected": "You corrected this today."},
    "zh": {"scheduled": "将在", "done": "从你的记忆中", "undone": "我们保留这条记忆",
           "saved": "已保存", "paused": "记忆已暂停", "corrected": "你今天更正了这条记忆。"},
}


@pytest.fixture(params=[(size, lang) for size in SIZES for lang in LANGUAGES], ids=lambda p: f"{p[1]}-{p[0]}")
def subject_page(request, browser, live_server, tenant, alice):
    """A signed-in subject's page at one size in one language, and a name for its screenshots."""
    size, lang = request.param
    context = browser.new_context(
        base_url=live_server.url, locale=LANGUAGES[lang], viewport=SIZES[size],
        is_mobile=size == "phone", has_touch=size == "phone",
    )
    page = context.new_page()
    page.set_default_timeout(10_000)
    url, _ = portal_link_create(tenant=tenant, user_id="alice", actor=SYSTEM)
    page.goto(urlsplit(url).path)
    page.click("form button.wide")
    page.wait_for_url("**/me/")
    yield page, lang, f"{lang}-{SIZES[size]['width']}"
    context.close()


def fits(page):
    """Nothing spills sideways (phone first)."""
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")


def test_delete_shows_what_goes_then_undo_then_delete_for_good(subject_page, screenshot, settings, alice):
    page, lang, tag = subject_page
    page.goto(f"/me/facts/{alice.database.pk}/")
    page.click(f"a[href='/me/facts/{alice.database.pk}/delete/']")
    preview = page.locator("#delete-preview")
    expect(preview.locator("ul.reaches li")).to_have_count(3)  # memories, 1 message, the memory store
    assert_no_axe_violations(page)
    fits(page)
    screenshot(page, f"portal-delete-preview-{tag}")

    preview.locator("form button.danger").click()
    page.wait_for_url("**/me/")
    scheduled = page.locator("[data-status=scheduled]")
    expect(scheduled).to_contain_text(WORDS[lang]["scheduled"])
    expect(page.locator(f"#fact-{alice.database.pk}")).to_have_count(0)
    assert_no_axe_violations(page)
    screenshot(page, f"portal-delete-scheduled-{tag}")
    scheduled.locator("button").click()
    expect(page.locator(f"#fact-{alice.database.pk}")).to_be_visible()
    expect(page.locator("ul.messages")).to_contain_text(WORDS[lang]["undone"])
    assert FactDeletion.objects.get().status == DeletionStatus.UNDONE

    settings.MEMORY_UNDO_SECONDS = 3  # the live server reads the same settings: a short wait
    page.goto(f"/me/facts/{alice.database.pk}/delete/")
    page.locator("#delete-preview form button.danger").click()
    page.wait_for_url("**/me/")
    # htmx polls the panel; once the window has passed it turns into the receipt.
    done = page.locator("[data-status=done]")
    expect(done).to_contain_text(WORDS[lang]["done"], timeout=15_000)
    expect(page.locator("[data-status=scheduled]")).to_have_count(0)
    assert Fact.objects.get(pk=alice.database.pk).status == "deleted"
    assert_no_axe_violations(page)
    fits(page)
    screenshot(page, f"portal-delete-done-{tag}")


def test_the_badge_follows_each_answer(subject_page, screenshot, alice):
    page, lang, tag = subject_page
    page.goto("/me/waiting/")
    badge = page.locator("#waiting-tab .badge")
    # Only what is the subject's to decide counts (SPEC §4): items waiting for a reviewer do not.
    waiting = Candidate.objects.filter(subject__user_id="alice", status=CandidateStatus.PENDING_USER).count()
    assert waiting >= 2
    expect(badge).to_have_text(str(waiting))
    assert_no_axe_violations(page)
    for left, item in ((waiting - 1, alice.unsure), (waiting - 2, alice.plan)):
        page.locator(f"#item-{item.pk} form[action$='/reject/'] button").click()
        expect(page.locator(f"#item-{item.pk}.done")).to_be_visible()
        expect(badge).to_have_text(str(left))
    fits(page)
    screenshot(page, f"portal-badge-{tag}")


def test_pausing_shows_the_banner_at_once(subject_page, screenshot, tenant):
    page, lang, tag = subject_page
    page.goto("/me/controls/")
    expect(page.locator("#paused-banner .notice")).to_have_count(0)
    page.click("#pause button")
    page.wait_for_selector("#pause[data-paused='1']")
    expect(page.locator("#paused-banner .notice.paused")).to_contain_text(WORDS[lang]["paused"])
    assert Subject.objects.get(tenant=tenant, user_id="alice").collection_paused
    assert_no_axe_violations(page)
    fits(page)
    screenshot(page, f"portal-paused-{tag}")
    page.click("#pause button")
    page.wait_for_selector("#pause[data-paused='0']")
    expect(page.locator("#paused-banner .notice")).to_have_count(0)


def test_a_correction_is_confirmed_where_the_eye_is(subject_page, screenshot, alice):
    page, lang, tag = subject_page
    page.goto(f"/me/facts/{alice.database.pk}/")
    assert_no_axe_violations(page)
    page.fill("#fact-value", "PostgreSQL 16")
    page.click(f"form[action$='/facts/{alice.database.pk}/correct/'] button")
    page.wait_for_url(f"**/me/#fact-{alice.database.pk}")
    card = page.locator(f"#fact-{alice.database.pk}")
    saved = card.locator(".notice.saved")
    expect(saved).to_contain_text(WORDS[lang]["saved"])
    expect(saved).to_be_in_viewport()
    expect(card.locator(".source")).to_contain_text(WORDS[lang]["corrected"])
    assert_no_axe_violations(page)
    fits(page)
    screenshot(page, f"portal-corrected-{tag}")
