"""A reviewer's own pages, "My decisions" and "Saved views", at desktop and phone width in
English and Chinese, with long values: nothing wider than the window, axe clean, fields by
their label, the decision that can still be undone offers its undo."""
import pytest
from playwright.sync_api import expect

from reviews.actors import Actor
from reviews.services.saved_views import saved_view_save
from tests.browser.axe import assert_no_axe_violations
from tests.browser.page_checks import assert_heading_in, assert_within_window
from tests.browser.test_reviewer import signed_in_context
from tests.review.conftest import approve_as, review_queue  # noqa: F401 (fixture)

pytestmark = pytest.mark.django_db(transaction=True)

LONG_VIEW_NAME = "Berlin customers' locations and databases, oldest first, claimed by anyone"


@pytest.mark.parametrize("width, height", [(1366, 900), (390, 844)])
@pytest.mark.parametrize("locale, location, undo", [("en-US", "Location", "Undo"), ("zh-CN", "所在地", "撤销")])
def test_a_reviewers_own_pages_at_both_widths_and_languages(browser, live_server, screenshot, tenant, reviewer,
                                                            review_queue, width, height, locale, location, undo):
    approve_as(reviewer, review_queue.evidence)
    saved_view_save(tenant=tenant, owner=reviewer, name=LONG_VIEW_NAME,
                    queue_query="field=location&status=all&order=oldest&q=" + "Berlin" * 20,
                    actor=Actor.reviewer(reviewer))
    language = "zh" if locale.startswith("zh") else "en"
    context, page = signed_in_context(browser, live_server, "rita", locale=locale,
                                      viewport={"width": width, "height": height})
    try:
        page.goto("/review/mine/")
        row = page.locator(f"[data-decision]").first
        expect(row).to_contain_text(location)
        expect(row.locator("[data-undo-until]")).to_contain_text(undo)
        # Within the window on a phone too, beside the decision, not scrolled out of sight.
        assert row.locator("[data-undo-until]").bounding_box()["x"] + 40 <= width
        screenshot(page, f"my-decisions-{language}-{width}")
        assert_within_window(page)
        assert_no_axe_violations(page)

        page.goto("/review/views/")
        expect(page.locator("[data-view] a")).to_have_text(LONG_VIEW_NAME)
        screenshot(page, f"saved-views-{language}-{width}")
        assert_within_window(page)
        assert_no_axe_violations(page)
        assert_heading_in(page, language)
    finally:
        context.close()
