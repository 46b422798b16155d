"""A tenant admin creates and revokes an API key and changes a threshold in the console,
in a real browser; each change is shown before it is saved and is then in the audit log
(the console's recent changes and GET /api/v1/audit/events)."""
import pytest

from reviews.models import ApiKey, Scope, Tenant
from reviews.services.tenants import api_key_create
from tests.browser.axe import assert_no_axe_violations

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
    assert page.locator("[data-step=recorded] >> text=api_key.created").is_visible()
    assert page.locator(f"[data-table=recent] >> text={key.prefix}").first.is_visible()
    screenshot(page, "tenant-admin-key-created")
    assert [event["object_id"] for event in audit_api("api_key.created")][0] == key.prefix

    page.reload()  # the key is gone from the page for good
    assert raw_key not in page.content()
    page.click(f"[data-key='{key.prefix}'] >> text=Revoke")
    page.locator("[data-step=proposal]").wait_for()
    assert page.locator("[data-step=proposal] >> text=revoked").first.is_visible()
    screenshot(page, "tenant-admin-key-revoke-confirm")
    page.click("[data-confirm=key-revoke]")
    page.locator("[data-step=recorded] >> text=api_key.revoked").wait_for()
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
    page.locator("[data-step=recorded] >> text=tenant.policy_changed").wait_for()
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
def test_the_console_at_phone_and_desktop_width(page, login, screenshot, tenant, tenant_admin, width, height, name):
    api_key_create(tenant=tenant, scopes=[Scope.RECALL, Scope.INGEST], name="chat app")
    page.set_viewport_size({"width": width, "height": height})
    login("adam")
    for section in ("keys", "schema", "staff"):
        page.goto(f"/tenant/{section}/")
        overflow = page.evaluate("() => document.documentElement.scrollWidth - document.documentElement.clientWidth")
        assert overflow <= 0, f"{section} overflows by {overflow}px at {width}px"
        assert_no_axe_violations(page)
        screenshot(page, f"tenant-admin-{section}-{name}")
