"""Playwright driving Debian's Chromium against pytest-django's live server.

Screenshots go to ``artifacts/screenshots/`` (kept by CI as the run's artifacts).
The browser is launched from /usr/bin/chromium with the flags this machine needs; no
browser is downloaded.
"""
import os
import shutil
from pathlib import Path

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.shortcuts import resolve_url
from django.test import Client

# Playwright's sync API runs an event loop in this thread; the ORM calls made by the test
# itself (fixtures, assertions) are still plain synchronous code.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

CHROMIUM = os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
CSP_VIOLATION = "Content Security Policy"
ARTIFACTS = Path(__file__).resolve().parents[2] / "artifacts" / "screenshots"


def pytest_collection_modifyitems(config, items):
    for item in items:
        if "tests/browser/" in str(item.fspath).replace(os.sep, "/"):
            item.add_marker(pytest.mark.browser)


@pytest.fixture(scope="session")
def browser():
    if not shutil.which(CHROMIUM) and not Path(CHROMIUM).exists():
        pytest.fail(f"Chromium not found at {CHROMIUM}: apt-get install chromium")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        yield browser
        browser.close()


@pytest.fixture
def page(browser, live_server):
    context = browser.new_context(base_url=live_server.url, locale="en-US", viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.set_default_timeout(10_000)
    broken_assets, csp_violations = [], []
    page.on(
        "response",
        lambda response: response.status >= 400
        and response.request.resource_type in ("stylesheet", "script", "image", "font")
        and broken_assets.append(f"{response.status} {response.url}"),
    )
    # Chromium reports what the Content-Security-Policy blocked on the console: an inline
    # script, a style="…" attribute, an injected <style>, eval. Any of them fails the test.
    page.on(
        "console",
        lambda message: CSP_VIOLATION in message.text and csp_violations.append(f"{page.url}: {message.text}"),
    )
    page.csp_violations = csp_violations  # tests/browser/test_csp.py provokes one on purpose
    yield page
    context.close()
    assert not broken_assets, f"a page referenced assets that failed to load: {broken_assets}"
    assert not csp_violations, f"the Content-Security-Policy blocked something: {csp_violations}"


@pytest.fixture
def screenshot():
    """screenshot(page, "queue") saves artifacts/screenshots/queue.png and returns the path."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)

    def take(page, name: str) -> Path:
        path = ARTIFACTS / f"{name}.png"
        page.screenshot(path=str(path), full_page=True)
        return path

    return take


def sign_in_browser(page, live_server, username: str) -> None:
    """Sign ``username`` in and open the page the sign-in form leads to (the queue).

    The browser is handed a session Django's test client made (``force_login``), as a
    signed-in browser holds one: most tests are about what comes after signing in, and the
    form's round trip and the wait for the network to fall quiet after it cost about a
    second a test. The form itself is driven by ``login_through_form`` (test_reviewer.py's
    sign-in test) and the sign-in tests of tests/review.
    """
    client = Client()
    client.force_login(get_user_model().objects.get(username=username))
    session = client.cookies[settings.SESSION_COOKIE_NAME].value
    page.context.add_cookies([{"name": settings.SESSION_COOKIE_NAME, "value": session, "url": live_server.url}])
    page.goto(resolve_url(settings.LOGIN_REDIRECT_URL))


@pytest.fixture
def login(page, live_server):
    """login(username) signs a staff user in (``sign_in_browser``) and opens the queue."""
    return lambda username: sign_in_browser(page, live_server, username)


@pytest.fixture
def login_through_form(page, live_server):
    """login_through_form(username) signs a staff user in through the real sign-in form."""
    from tests.conftest import PASSWORD

    def do(username: str, password: str = PASSWORD):
        page.goto("/login/")
        page.fill("input[name=username]", username)
        page.fill("input[name=password]", password)
        # The language switcher in the top bar has submit buttons too.
        page.click("form:has(input[name=password]) button[type=submit]")
        page.wait_for_load_state("networkidle")

    return do
