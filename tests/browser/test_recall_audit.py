"""An auditor follows a recall to the fact it returned and back, in a real browser."""
import pytest
from playwright.sync_api import expect

from reviews.actors import Actor
from reviews.recall.query import RecallQuery
from reviews.services.facts import fact_edit
from reviews.recall.service import recall_perform
from tests.browser.axe import assert_no_axe_violations
from tests.browser.page_checks import assert_heading_in, assert_within_window
from tests.browser.test_reviewer import signed_in_context

pytestmark = pytest.mark.django_db(transaction=True)


def test_an_auditor_traces_a_recall_to_its_fact(page, login, screenshot, tenant, auditor, publish):
    name = publish(tenant, "user-42", field="name", value="Alice")
    publish(tenant, "user-42", field="preference", value="short answers")
    record, _ = recall_perform(
        tenant=tenant, query=RecallQuery(user_id="user-42", q="who am I"), actor=Actor("api_key", "agent1"), may_see_sensitive=False
    )
    fact_edit(tenant=tenant, fact_id=name.pk, value="Alicia", actor=Actor("reviewer", "r1"))

    login("audrey")
    page.goto("/audit/recalls/")
    page.fill("#f-user", "user-42")
    page.click("text=Filter")
    page.wait_for_function("() => location.search.includes('user_id=user-42')")  # htmx pushed the filter
    screenshot(page, "recall-list")
    page.click(f"a[href='/audit/recalls/{record.pk}/']")
    expect(page.locator("text=changed since")).to_be_visible()
    screenshot(page, "recall-detail")
    page.click(f"a[href='/audit/facts/{name.pk}/']")
    expect(page.locator(f"#fact-recalls a[href='/audit/recalls/{record.pk}/']")).to_be_visible()
    screenshot(page, "recall-fact")


def test_on_a_phone_the_recall_pages_keep_to_the_screen(page, login, screenshot, tenant, auditor, publish):
    """At 390 px the tables scroll inside their own region, the page itself does not, and a
    filter's label stays on the line of its input."""
    name = publish(tenant, "user-42", field="name", value="Alice")
    record, _ = recall_perform(
        tenant=tenant, query=RecallQuery(user_id="user-42", q="who am I"), actor=Actor("api_key", "agent1"), may_see_sensitive=False
    )
    page.set_viewport_size({"width": 390, "height": 844})
    login("audrey")
    for url in ("/audit/recalls/", f"/audit/recalls/{record.pk}/", f"/audit/facts/{name.pk}/"):
        page.goto(url)
        assert_within_window(page)
        for table in page.locator("table.data").all():
            assert table.evaluate("t => t.closest('.table-scroll') !== null"), url
    page.goto("/audit/recalls/")
    label, field = page.locator("label[for=f-caller]").bounding_box(), page.locator("#f-caller").bounding_box()
    assert abs((label["y"] + label["height"] / 2) - (field["y"] + field["height"] / 2)) < 4
    screenshot(page, "recall-list-phone")


@pytest.mark.parametrize("width, height", [(1366, 900), (390, 844)])
@pytest.mark.parametrize("locale", ["en-US", "zh-CN"])
def test_the_recall_pages_at_both_widths_and_languages(browser, live_server, screenshot, tenant, auditor, publish,
                                                       width, height, locale):
    """Long values (a user id and a question with no space to break at) stay inside the
    page, axe finds nothing, and the pages read in the auditor's language."""
    user_id = "customer-0042-" + "x" * 60
    name = publish(tenant, user_id, field="name", value="Alice")
    record, _ = recall_perform(
        tenant=tenant, query=RecallQuery(user_id=user_id, q="whatdoyouremember" * 8 + " 你记得我的名字吗"),
        actor=Actor("api_key", "agent1"), may_see_sensitive=False,
    )
    language = "zh" if locale.startswith("zh") else "en"
    context, page = signed_in_context(browser, live_server, "audrey", locale=locale,
                                      viewport={"width": width, "height": height})
    try:
        for url, shot in (("/audit/recalls/", "list"), (f"/audit/recalls/{record.pk}/", "detail"),
                          (f"/audit/facts/{name.pk}/", "fact")):
            page.goto(url)
            screenshot(page, f"recall-{shot}-{language}-{width}")
            assert_within_window(page)
            assert_no_axe_violations(page)
            assert_heading_in(page, language)
    finally:
        context.close()
