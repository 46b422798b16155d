"""The axe-core helper itself: it finds what it should, says it readably, and passes a clean page."""
import pytest

from tests.browser.axe import assert_no_axe_violations, run_axe

BAD = """<!doctype html><html lang="en"><head><title>bad</title></head><body><main>
<h1>Queue</h1><form><input type="checkbox" name="ids"><img src="data:,"></form></main></body></html>"""
GOOD = """<!doctype html><html lang="en"><head><title>good</title></head><body><main>
<h1>Queue</h1><form><label>Select item 1 <input type="checkbox" name="ids"></label></form></main></body></html>"""


def test_it_reports_each_violation_with_rule_and_element(page):
    page.set_content(BAD)
    rules = {violation["id"] for violation in run_axe(page)}
    assert {"label", "image-alt"} <= rules
    with pytest.raises(AssertionError) as failure:
        assert_no_axe_violations(page)
    message = str(failure.value)
    assert "- label (critical): Form elements must have labels" in message
    assert '<input type="checkbox" name="ids">' in message


def test_it_passes_a_clean_page_and_can_skip_a_named_rule(page):
    page.set_content(GOOD)
    assert_no_axe_violations(page)
    page.set_content(BAD)
    assert_no_axe_violations(page, disable=("label", "image-alt"))


def test_it_runs_under_a_strict_content_security_policy(page):
    page.set_content(GOOD.replace("<head>", "<head><meta http-equiv=\"Content-Security-Policy\" content=\"script-src 'none'\">"))
    assert_no_axe_violations(page)
