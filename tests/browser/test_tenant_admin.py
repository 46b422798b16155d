"""A tenant admin creates and revokes an API key and changes a threshold in the console,
in a real browser; each change is shown before it is saved and is then in the audit log
(the console's recent changes and GET /api/v1/audit/events)."""
import pytest
from playwright.sync_api import expect

from reviews.actors import Actor
from reviews.models import ApiKey, Scope, Tenant
from reviews.services.tenants import api_key_create
from reviews.webhooks.endpoints import webhook_create
from tests.browser.axe import assert_no_axe_violations
from tests.browser.page_checks import assert_heading_in
from tests.browser.conftest import ARTIFACTS
from tests.browser.test_reviewer import signed_in_context

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def audit_api(page, tenant):
    """audit_api(action) -> the tenant's events with that action, read through the API."""
    _key, raw = api_key_create(tenant=tenant, scopes=[Scope.ADMIN], name="auditor's script")

    def read(action: str) -> list[dict]:
        response = page.request.get(f"/api/v1/audit/events?action={action}", headers={"Authorization": f"Bearer {raw}"})
        assert response.status == 200, response.text()
        return response.json()["results"]

    return read


def recall_status(page, raw_key: str) -> int:
    return page.request.get("/api/v1/recall?user_id=u1", headers={"Authorization": f"Bearer {raw_key}"}).status


def test_a_key_is_created_shown_once_then_revoked(page, login, screenshot, tenant, tenant_admin, audit_api):
    login("adam")
    page.click("nav.topnav >> text=Tenant admin")
    page.click("nav.tabs >> text=API keys")
    page.fill("input[name=name]", "support bot")
    page.check("input[name=scopes][value=recall]")
    page.click("[data-form=key-create] >> text=Review the change")
    proposal = page.locator("[data-step=proposal]")
    proposal.wait_for()
    assert "support bot" in proposal.inner_text() and not ApiKey.objects.filter(name="support bot").exists()
    page.click("[data-confirm=key-create]")
    secret = page.locator("[data-secret-key]")
    secret.wait_for()
    raw_key = secret.inner_text().strip()
    key = ApiKey.objects.get(tenant=tenant, name="support bot")
    assert raw_key.startswith(f"mp_{key.prefix}_") and recall_status(page, raw_key) == 200
    expect(page.locator("[data-step=recorded] [data-action='api_key.created'] >> text=API key created")).to_be_visible()
    expect(page.locator(f"[data-table=recent] >> text={key.prefix}").first).to_be_visible()
    screenshot(page, "tenant-admin-key-created")
    assert [event["object_id"] for event in audit_api("api_key.created")][0] == key.prefix

    page.reload()  # the key is gone from the page for good
    assert raw_key not in page.content()
    page.click(f"[data-key='{key.prefix}'] >> text=Revoke")
    page.locator("[data-step=proposal]").wait_for()
    expect(page.locator("[data-step=proposal] >> text=revoked").first).to_be_visible()
    screenshot(page, "tenant-admin-key-revoke-confirm")
    page.click("[data-confirm=key-revoke]")
    page.locator("[data-step=recorded] [data-action='api_key.revoked'] >> text=API key revoked").wait_for()
    assert ApiKey.objects.get(pk=key.pk).revoked_at is not None
    assert recall_status(page, raw_key) == 401
    (revoked,) = audit_api("api_key.revoked")
    assert (revoked["object_id"], revoked["actor"]) == (key.prefix, f"reviewer:{tenant_admin.pk}")


def test_a_threshold_is_changed_after_seeing_before_and_after(page, login, screenshot, tenant, tenant_admin, audit_api):
    login("adam")
    page.goto("/tenant/policy/")
    assert_no_axe_violations(page)
    page.fill("input[name=confirm_below]", "0.7")
    page.click("[data-form=policy] >> text=Review the change")
    row = page.locator("[data-step=proposal] tr", has_text="confirm_below")
    row.wait_for()
    assert row.locator("td.before").inner_text() == "0.8" and row.locator("td.after").inner_text() == "0.7"
    assert Tenant.objects.get(pk=tenant.pk).confirm_below == 0.8
    screenshot(page, "tenant-admin-policy-confirm")
    page.click("[data-confirm=policy]")
    page.locator("[data-step=recorded] [data-action='tenant.policy_changed'] >> text=Policy changed").wait_for()
    assert Tenant.objects.get(pk=tenant.pk).confirm_below == 0.7
    assert_no_axe_violations(page)
    screenshot(page, "tenant-admin-policy-saved")
    (event,) = audit_api("tenant.policy_changed")
    assert (event["before"], event["after"]) == ({"confirm_below": 0.8}, {"confirm_below": 0.7})


def test_a_refused_threshold_is_explained_in_place(page, login, tenant, tenant_admin):
    login("adam")
    page.goto("/tenant/policy/")
    page.fill("input[name=reject_below]", "0.9")
    page.click("[data-form=policy] >> text=Review the change")
    page.locator("[data-step=refused]").wait_for()
    assert "must not exceed confirm_below" in page.locator("[data-step=refused]").inner_text()
    assert Tenant.objects.get(pk=tenant.pk).reject_below == 0.5


@pytest.mark.parametrize("width, height, name", [(390, 844, "phone"), (1366, 900, "desktop")])
@pytest.mark.parametrize("locale", ["en-US", "zh-CN"])
def test_the_console_at_phone_and_desktop_width(browser, live_server, screenshot, settings, tenant, tenant_admin,
                                                width, height, name, locale):
    """Every section of the console, with long values (a key's name, a receiver's address
    with no space in it): nothing wider than the window, axe clean, and the headings in the
    admin's language."""
    settings.MEMORY_WEBHOOK_ALLOW_PRIVATE = True
    api_key_create(tenant=tenant, scopes=[Scope.RECALL, Scope.INGEST], name="chat app for the customer service team, production")
    webhook_create(tenant=tenant, url="http://127.0.0.1:9/hooks/memory-portal/" + "receiver-" * 12, events=["fact.published"],
                   description="the CRM's memory receiver", actor=Actor.reviewer(tenant_admin))
    language = "zh" if locale.startswith("zh") else "en"
    context, page = signed_in_context(browser, live_server, "adam", locale=locale, viewport={"width": width, "height": height})
    try:
        for section in ("keys", "schema", "policy", "extractor", "webhooks", "staff"):
            page.goto(f"/tenant/{section}/")
            screenshot(page, f"tenant-admin-{section}-{language}-{name}")
            overflow = page.evaluate("() => document.documentElement.scrollWidth - document.documentElement.clientWidth")
            assert overflow <= 0, f"{section} overflows by {overflow}px at {width}px"
            assert_no_axe_violations(page)
            assert_heading_in(page, language)
    finally:
        context.close()


def in_view(page, selector: str) -> dict:
    """Where an element is against the window: its top inside the visible height, its left
    and right edges inside the width, and nothing in it cut off by its own box (text meant
    for screen readers only is 1 px on purpose)."""
    return page.eval_on_selector(selector, """element => {
        const box = element.getBoundingClientRect();
        const clipped = [element, ...element.querySelectorAll('*')].filter(node =>
            !node.closest('.visually-hidden') && ['hidden', 'clip'].includes(getComputedStyle(node).overflowX)
            && node.scrollWidth > node.clientWidth);
        return {top: box.top >= 0 && box.top < window.innerHeight, left: box.left >= 0,
                right: box.right <= document.documentElement.clientWidth, clipped: clipped.length,
                focused: document.activeElement === element};
    }""")


@pytest.mark.parametrize("language", ["en", "zh-hans"])
@pytest.mark.parametrize("width, height", [(1366, 900), (390, 844)])
def test_a_new_field_shows_what_will_change_where_the_admin_is(page, login, screenshot, live_server, tenant,
                                                               tenant_admin, width, height, language):
    page.set_viewport_size({"width": width, "height": height})
    login("adam")
    page.context.add_cookies([{"name": "django_language", "value": language, "url": live_server.url}])
    page.goto("/tenant/schema/")
    form = page.locator("[data-form=field-add]")
    form.scroll_into_view_if_needed()  # "Add a field" is under the whole field table
    form.locator("select[name=entity_type]").select_option("project")
    form.locator("input[name=field]").fill("deadline")
    form.locator("button[type=submit]").click()
    page.locator("[data-step=proposal]").wait_for()
    page.wait_for_function("document.activeElement && document.activeElement.dataset.step === 'proposal'")
    assert in_view(page, "[data-step=proposal]") == {
        "top": True, "left": True, "right": True, "clipped": 0, "focused": True}
    # Laid out as a table: each heading stands over its column (a grid once shifted them).
    columns = page.eval_on_selector("[data-step=proposal] table", """table => [table.tHead.rows[0],
        table.tBodies[0].rows[0]].map(row => [...row.cells].map(cell => Math.round(cell.getBoundingClientRect().left)))""")
    assert columns[0] == columns[1], columns
    assert_no_axe_violations(page)
    # What the admin sees (the window, not the whole page).
    page.screenshot(path=str(ARTIFACTS / f"tenant-admin-field-preview-{width}-{language}.png"))

    # A refusal comes where the admin is looking too.
    page.goto("/tenant/schema/")
    form.scroll_into_view_if_needed()
    form.locator("input[name=field]").fill("name")  # user.name is in the schema already
    form.locator("button[type=submit]").click()
    page.locator("[data-step=refused]").wait_for()
    page.wait_for_function("document.activeElement && document.activeElement.dataset.step === 'refused'")
    assert in_view(page, "[data-step=refused]")["top"]
