"""A tenant admin reads the extraction dry runs on a phone: the reports' tables scroll in
their own region, the page does not, and a report says who ran it and when in words."""
import pytest

from reviews.actors import Actor
from reviews.models import ExtractionDryRun
from tests.browser.axe import assert_no_axe_violations

pytestmark = pytest.mark.django_db(transaction=True)

FIGURES = {"messages": 12, "proposed": 5, "re_proposed": 3, "missed": 1, "new": 2, "refused": 0, "failures": 0}


def test_on_a_phone_the_dry_run_pages_keep_to_the_screen(page, login, screenshot, tenant, tenant_admin):
    example = {"user_id": "user-42", "message_id": "m-0001-a-long-message-id", "entity": "organization:acme-corporation",
               "field": "industry", "value": "Retail and wholesale of garden furniture"}
    report = ExtractionDryRun.objects.create(
        tenant=tenant, requested_by=str(Actor.reviewer(tenant_admin)), extractor="llm", prompt_version="entity-facts-v2",
        days=30, figures=FIGURES, examples={"new": [example]},
    )
    page.set_viewport_size({"width": 390, "height": 844})
    login("adam")
    for url in ("/review/dry-runs/", f"/review/dry-runs/{report.pk}/"):
        page.goto(url)
        assert page.evaluate("() => document.documentElement.scrollWidth <= window.innerWidth"), url
        for table in page.locator("table").all():
            assert table.evaluate("t => t.closest('.table-scroll') !== null"), url
        assert_no_axe_violations(page)
    ran = page.locator("p.muted", has_text="run by").first.inner_text()
    assert "run by adam." in ran and f"reviewer:{tenant_admin.pk}" not in ran
    screenshot(page, "dry-run-phone")
