"""The stats page at four widths in Chromium (issue 13, item 9): nothing scrolls the page
sideways, a table wider than the screen scrolls in its own container, the KPIs wrap onto
several rows on a phone, and axe-core finds nothing."""
from datetime import timedelta

import pytest
import time_machine
from django.utils import timezone

from tests.browser.axe import assert_no_axe_violations
from tests.browser.test_reviewer import signed_in_context
from tests.conftest import candidate
from tests.review.conftest import _fresh_stats_cache, approve_as, propose  # noqa: F401 (fixture)

pytestmark = pytest.mark.django_db(transaction=True)
WIDTHS = (1366, 1024, 768, 390)
# What a real deployment shows in the quality table: long extractor names and prompt ids.
EXTRACTOR = "llm:anthropic/claude-extraction-pipeline-v3"
PROMPT = "2026-11-evidence-rules-v12"  # prompt_version holds 32


@pytest.fixture
def busy_stats(tenant, reviewer, second_reviewer):
    """Two reviewers' decisions over the last days, several extractors, items still waiting."""
    # Past days only, at one in the morning: the figures do not depend on the hour the test runs.
    midnight = timezone.localtime().replace(hour=0, minute=0, second=0, microsecond=0)
    for day in range(1, 5):
        arrived = midnight - timedelta(days=day) + timedelta(hours=1)
        with time_machine.travel(arrived, tick=False):
            items = propose(tenant, f"user{day}",
                            *[candidate(field="preference", value=f"topic {day}-{index}") for index in range(3)],
                            extractor=f"{EXTRACTOR}-{day % 2}", prompt_version=PROMPT)
        for index, item in enumerate(items[:2]):
            with time_machine.travel(arrived + timedelta(minutes=10 * (index + 1) * day), tick=False):
                approve_as(reviewer if index else second_reviewer, item)
    propose(tenant, "waiting", candidate(field="location", value="Lisbon"), extractor="rules")
    return (midnight - timedelta(days=1)).date()  # yesterday: the newest two decisions, 10 and 20 minutes


@pytest.mark.parametrize("width", WIDTHS)
def test_the_stats_page_fits_each_width(browser, live_server, screenshot, busy_stats, width):
    context, page = signed_in_context(browser, live_server, "rita", viewport={"width": width, "height": 900})
    try:
        page.goto("/review/stats/")
        page.wait_for_load_state("networkidle")
        screenshot(page, f"review-stats-w{width}")
        assert page.evaluate("() => document.documentElement.scrollWidth <= window.innerWidth"), (
            f"the stats page scrolls sideways at {width}px by "
            f"{page.evaluate('() => document.documentElement.scrollWidth - window.innerWidth')}px"
        )
        # Every table sits in a scroll container no wider than the screen.
        assert page.evaluate("""() => [...document.querySelectorAll('table.data')].every(table => {
            const box = table.closest('.table-scroll');
            return box && box.getBoundingClientRect().right <= window.innerWidth;
        })""")
        kpi_rows = page.evaluate("() => new Set([...document.querySelectorAll('.kpi')].map(k => k.offsetTop)).size")
        kpis_inside = page.evaluate(
            "() => [...document.querySelectorAll('.kpi')].every(k => k.getBoundingClientRect().right <= window.innerWidth)"
        )
        assert kpis_inside
        if width == 390:
            # The quality table is wider than a phone: it scrolls in its box, not the page.
            assert page.evaluate("""() => {
                const box = document.querySelector('table[data-table=quality]').closest('.table-scroll');
                return box.scrollWidth > box.clientWidth;
            }""")
            assert kpi_rows >= 3  # five KPIs, two a row
        if width == 1366:
            assert kpi_rows == 1
        assert page.locator("[data-table=time-to-decision] tbody tr").count() == 14
        # The newest two items waited 10 and 20 minutes: p50 15 min, p90 19 min.
        newest = page.locator(f"[data-table=time-to-decision] tr[data-day='{busy_stats.isoformat()}']")
        assert (newest.locator("[data-p50]").inner_text(), newest.locator("[data-p90]").inner_text()) == ("15 min", "19 min")
        # Each of the four days back: 10 and 20 minutes × day → p50 halfway between them.
        assert page.locator("[data-table=time-to-decision] [data-p50]").evaluate_all(
            "cells => cells.map(c => c.dataset.p50).filter(Boolean)"
        ) == [str(15 * 60 * day) for day in range(1, 5)]
        assert page.locator("[data-table=pace] tbody tr").count() == 2
        assert_no_axe_violations(page)
    finally:
        context.close()
