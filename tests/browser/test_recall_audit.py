"""An auditor follows a recall to the fact it returned and back, in a real browser."""
import pytest
from playwright.sync_api import expect

from reviews.actors import Actor
from reviews.recall.query import RecallQuery
from reviews.services.facts import fact_edit
from reviews.recall.service import recall_perform

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
        assert page.evaluate("() => document.documentElement.scrollWidth <= window.innerWidth"), url
        for table in page.locator("table.data").all():
            assert table.evaluate("t => t.closest('.table-scroll') !== null"), url
    page.goto("/audit/recalls/")
    label, field = page.locator("label[for=f-caller]").bounding_box(), page.locator("#f-caller").bounding_box()
    assert abs((label["y"] + label["height"] / 2) - (field["y"] + field["height"] / 2)) < 4
    screenshot(page, "recall-list-phone")
