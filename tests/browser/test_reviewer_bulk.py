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
    # Choosing the field submits the filters by itself (hx-trigger "change"); a click on the
    # button as well sent a second request whose answer could arrive after "select all" and,
    # being a new filter, end the selection.
    page.select_option("#id_field", "preference")
    page.wait_for_function("() => location.search.includes('field=preference')")
    expect(page.locator('[data-count="in_filter"]')).to_have_text(str(PAGES_OF_ITEMS))
    page.wait_for_function("() => !document.querySelector('[data-filters].htmx-request')")
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


def test_refusals_of_the_bulk_and_claim_forms_show_their_reason(page, login, tenant, reviewer):
    # The forms' refusals are 400s: htmx swaps no 4xx by itself, so reviewer.js takes the bulk
    # form's and the claim form's in. A stale page (or a hand-made request) is the way there.
    items = propose(tenant, "bob", *[candidate(field="preference", value=f"likes {n}") for n in range(2)])
    login("rita")
    page.evaluate("window.samePage = true")
    page.keyboard.press("x")
    page.evaluate("""() => {
      const bad = document.createElement("input");
      Object.assign(bad, { type: "hidden", name: "selected_all", value: "1:x" });
      document.querySelector("[data-bulk-all]").appendChild(bad);
    }""")
    page.click("#bulk-form button[value=approve]")
    expect(page.locator("[data-bulk-error]")).to_have_text(
        "That input is not valid. The selection is malformed; reload the page and try again.")
    expect(page.locator("[data-select]:checked")).to_have_count(1)  # the ticked box stays
    assert set(Candidate.objects.filter(pk__in=[i.pk for i in items]).values_list("status", flat=True)) == {
        CandidateStatus.PENDING_REVIEW}
    assert not AuditEvent.objects.filter(action__startswith="candidates.bulk").exists()
    assert page.evaluate("window.samePage") is True

    # A count the claim menu does not offer: the reason in the toast, the queue as it was.
    page.evaluate("""() => {
      const menu = document.querySelector("#claim-count");
      menu.add(new Option("many", "many", true, true));
    }""")
    page.click("[data-claim-form] [data-claim]")
    expect(page.locator("#toast.error")).to_have_text("Choose how many items to claim.")
    expect(page.locator("[data-item]")).to_have_count(2)
    assert not Candidate.objects.exclude(claimed_by="").exists()
    assert page.evaluate("window.samePage") is True
