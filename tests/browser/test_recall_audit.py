"""An auditor follows a recall to the fact it returned and back, in a real browser."""
import pytest

from reviews.actors import Actor
from reviews.selectors import RecallQuery
from reviews.services.facts import fact_edit
from reviews.services.recall import recall_perform

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
    assert page.locator("text=changed since").is_visible()
    screenshot(page, "recall-detail")
    page.click(f"a[href='/audit/facts/{name.pk}/']")
    assert page.locator(f"#fact-recalls a[href='/audit/recalls/{record.pk}/']").is_visible()
    screenshot(page, "recall-fact")
