"""Bulk decisions in a real browser: select all in the filter over several pages, confirm the
count, and a refusal that keeps the selection."""
import re

import pytest
from playwright.sync_api import expect

from reviews.models import AuditEvent, Candidate, CandidateStatus
from tests.browser.axe import assert_no_axe_violations
from tests.conftest import candidate
from tests.review.conftest import _fresh_stats_cache, propose  # noqa: F401 (fixtures)

pytestmark = pytest.mark.django_db(transaction=True)
PAGES_OF_ITEMS = 62  # more than three pages of 20, and above the confirmation threshold (50)


def test_select_all_over_several_pages_then_confirm(page, login, screenshot, tenant, reviewer):
    items = propose(tenant, "bob", *[candidate(field="preference", value=f"likes {n}") for n in range(PAGES_OF_ITEMS)])
    [other] = propose(tenant, "carol", candidate(field="location", value="Lisbon"))  # outside the filter
    login("rita")
    page.select_option("#id_field", "preference")
    page.click("[data-filters] button[type=submit]")
    page.wait_for_function("() => location.search.includes('field=preference')")
    expect(page.locator("[data-item]")).to_have_count(20)  # the first page only
    # Every checkbox is named after its item.
    expect(page.get_by_role("checkbox", name=re.compile(r"^Select user:bob \S.* “likes 0”$"))).to_have_count(1)

    page.click("[data-select-all]")
    expect(page.locator("[data-selection-count]")).to_have_text(f"All {PAGES_OF_ITEMS} items of this filter are selected.")
    expect(page.locator("[data-selected-count]")).to_have_text(str(PAGES_OF_ITEMS))
    expect(page.locator("[data-select]:checked")).to_have_count(20)
    page.click("[data-more]")  # the next page arrives ticked too
    expect(page.locator("[data-select]:checked")).to_have_count(40)

    # A refusal (reject without a reason) is shown under the bar; the selection stays.
    page.click("#bulk-form button[value=reject]")
    expect(page.locator("[data-bulk-error]")).to_have_text("A reason is required to reject.")
    expect(page.locator("[data-selected-count]")).to_have_text(str(PAGES_OF_ITEMS))

    page.click("#bulk-form button[value=approve]")
    question = page.locator("[data-bulk-question]")
    expect(question).to_contain_text(f"Approve {PAGES_OF_ITEMS} items?")
    assert Candidate.objects.filter(status=CandidateStatus.APPROVED).count() == 0  # asked first
    assert_no_axe_violations(page)
    screenshot(page, "review-bulk-confirm")
    question.locator("[data-bulk-confirm]").click()

    # 62 decisions in one request: give a shared, loaded machine time.
    expect(page.locator("[data-bulk-summary]")).to_have_text(f"Approved {PAGES_OF_ITEMS} items.", timeout=60_000)
    decided = Candidate.objects.filter(pk__in=[item.pk for item in items], status=CandidateStatus.APPROVED).count()
    assert decided == PAGES_OF_ITEMS
    assert Candidate.objects.get(pk=other.pk).status == CandidateStatus.PENDING_REVIEW
    assert AuditEvent.objects.filter(action="candidates.bulk_approve", actor=f"reviewer:{reviewer.pk}").count() == 1
    # The headline follows, the selection is gone, the items on screen are decided lines.
    expect(page.locator('[data-count="in_filter"]')).to_have_text("0")
    expect(page.locator("[data-selected-count]")).to_have_text("0")
    expect(page.locator("[data-item].decided")).to_have_count(40)
    expect(page.locator("#toast form[data-undo]")).to_have_count(1)


def test_unticking_one_item_ends_select_all(page, login, tenant, reviewer):
    propose(tenant, "bob", *[candidate(field="preference", value=f"likes {n}") for n in range(25)])
    login("rita")
    page.click("[data-select-all]")
    expect(page.locator("[data-selected-count]")).to_have_text("25")
    page.locator("[data-select]").first.uncheck()
    expect(page.locator("[data-selection-count]")).to_have_count(0)
    expect(page.locator("[data-selected-count]")).to_have_text("19")
    page.fill("#bulk-note", "not preferences")
    page.click("#bulk-form button[value=reject]")
    expect(page.locator("[data-bulk-summary]")).to_have_text(re.compile(r"^Rejected 19 items\.$"), timeout=60_000)
    assert Candidate.objects.filter(status=CandidateStatus.REJECTED).count() == 19
