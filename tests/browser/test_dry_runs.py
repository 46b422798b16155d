"""A tenant admin reads the extraction dry runs at desktop and phone width, in English and
Chinese: the reports' tables scroll in their own region and the page does not, the groups
and the extractor read as words in the page's language (not as codes), the figures under
their own headings, and a report says who ran it and when in words."""
import pytest
from playwright.sync_api import expect

from reviews.actors import Actor
from reviews.models import ExtractionDryRun
from tests.browser.axe import assert_no_axe_violations
from tests.browser.page_checks import assert_within_window
from tests.browser.test_reviewer import signed_in_context

pytestmark = pytest.mark.django_db(transaction=True)

FIGURES = {"messages": 12, "proposed": 5, "re_proposed": 3, "missed": 1, "new": 2, "refused": 0, "failures": 0}
# Long values: an id with no space to break at, a value longer than a phone is wide.
EXAMPLE = {"user_id": "user-42", "message_id": "m-0001-a-long-message-id-without-any-space-to-break-at",
           "entity": "organization:acme-corporation-international-holdings", "field": "industry",
           "value": "Retail and wholesale of garden furniture, outdoor lighting and everything for the terrace"}
WORDS = {
    "en-US": {"extractor": "LLM (OpenAI-compatible)", "group": "Re-proposed", "headline": "Would propose new values",
              "section": "New", "ran": "run by adam."},
    "zh-CN": {"extractor": "LLM（兼容 OpenAI）", "group": "再次提出", "headline": "会提出新的值",
              "section": "新的", "ran": "adam"},
}


@pytest.mark.parametrize("width, height", [(1366, 900), (390, 844)])
@pytest.mark.parametrize("locale", ["en-US", "zh-CN"])
def test_the_dry_run_pages_at_both_widths_and_languages(browser, live_server, screenshot, tenant, tenant_admin,
                                                        width, height, locale):
    words = WORDS[locale]
    report = ExtractionDryRun.objects.create(
        tenant=tenant, requested_by=str(Actor.reviewer(tenant_admin)), extractor="llm", prompt_version="entity-facts-v2",
        days=30, figures=FIGURES, examples={"new": [EXAMPLE]},
    )
    language = "zh" if locale.startswith("zh") else "en"
    context, page = signed_in_context(browser, live_server, "adam", locale=locale,
                                      viewport={"width": width, "height": height})
    try:
        for url, name in (("/review/dry-runs/", "dry-runs"), (f"/review/dry-runs/{report.pk}/", "dry-run")):
            page.goto(url)
            assert_within_window(page)
            for table in page.locator("table").all():
                assert table.evaluate("t => t.closest('.table-scroll') !== null"), url
            assert_no_axe_violations(page)
            screenshot(page, f"{name}-{language}-{width}")
            if name == "dry-runs":
                row = page.locator("tr", has=page.locator(f'a[href="{url}{report.pk}/"]'))
                expect(row.locator("td").nth(1)).to_have_text(words["extractor"])
                expect(row.locator("td.num")).to_have_text(["12", "3", "1", "2", "0"])
                expect(page.locator("th.num").nth(1)).to_have_text(words["group"])
        expect(page.locator("h1")).to_contain_text(words["extractor"])
        expect(page.locator(".kpi", has_text=words["headline"]).locator("b")).to_have_text("2")
        expect(page.locator("[data-examples=new] h2")).to_have_text(words["section"])
        expect(page.locator("[data-examples]")).to_have_count(1)  # only a group with examples has a section
        ran = page.locator("p.muted").first.inner_text()
        assert words["ran"] in ran and f"reviewer:{tenant_admin.pk}" not in ran
    finally:
        context.close()
