"""Checks the browser tests make of a page as a person sees it, in one place."""
import re

CHINESE = re.compile(r"[\u3400-\u9fff]")


def assert_within_window(page) -> None:
    """Nothing on the page is wider than the window: no sideways scrolling, nothing cut off."""
    assert page.evaluate("() => document.documentElement.scrollWidth <= window.innerWidth"), page.url


def assert_heading_in(page, language: str) -> None:
    """The page's first heading reads in ``language`` ("zh" or "en"): Chinese characters in
    it exactly when the page is in Chinese."""
    heading = page.locator("h1").first.inner_text()
    assert (CHINESE.search(heading) is not None) == (language == "zh"), (page.url, heading)
