"""A tenant admin registers a webhook endpoint in the console, reads the delivery log
(each attempt, a failed one included) and sends a delivery again, in a real browser."""
import pytest
from playwright.sync_api import expect

from reviews.background import publisher
from reviews.models import DeliveryStatus, WebhookDelivery, WebhookEndpoint
from tests.browser.axe import assert_no_axe_violations
from tests.webhooks.conftest import private_allowed, receiver  # noqa: F401 - fixtures

pytestmark = pytest.mark.django_db(transaction=True)


def test_the_delivery_log_shows_attempts_and_sends_again(
    page, login, screenshot, tenant, tenant_admin, receiver, private_allowed, publish  # noqa: F811
):
    login("adam")
    page.click("nav.topnav >> text=Tenant admin")
    page.click("nav.tabs >> text=Webhooks")
    page.fill("input[name=url]", receiver.url)
    page.check("input[name=events][value='fact.published']")
    page.fill("input[name=description]", "chat app")
    page.click("[data-form=webhook-create] >> text=Review the change")
    page.locator("[data-step=proposal]").wait_for()
    assert not WebhookEndpoint.objects.exists()
    page.click("[data-confirm=webhook-create]")
    secret = page.locator("[data-secret-key]")
    secret.wait_for()
    endpoint = WebhookEndpoint.objects.get(tenant=tenant)
    assert secret.inner_text().strip() == endpoint.secret
    expect(page.locator("[data-step=recorded] [data-action='webhook.created'] >> text=Webhook added")).to_be_visible()

    receiver.answer_with((500, 0))
    publish(tenant, "u1", field="name", value="Alice")  # committed: sent by the background lane
    publisher.drain()
    delivery = WebhookDelivery.objects.get()
    assert delivery.attempts == 1 and delivery.last_status_code == 500

    page.goto("/tenant/webhooks/")
    row = page.locator(f"[data-delivery='{delivery.pk}']")
    assert "HTTP 500" in row.inner_text() and "fact.published" in row.inner_text()
    expect(page.locator(f"[data-endpoint='{endpoint.pk}'] [data-state=failing]")).to_be_visible()
    row.locator("text=Send again").click()
    page.locator("[data-step=proposal]").wait_for()
    page.click("[data-confirm=webhook-resend]")
    page.locator("[data-step=recorded] [data-action='webhook.resent'] >> text=Webhook delivery resent").wait_for()
    publisher.drain()
    delivery.refresh_from_db()
    assert delivery.status == DeliveryStatus.DELIVERED and len(receiver.requests) == 2

    page.goto("/tenant/webhooks/")
    row = page.locator(f"[data-delivery='{delivery.pk}']")
    assert row.locator("[data-outcome=http_error]").count() == 1
    assert row.locator("[data-outcome=delivered]").count() == 1
    expect(page.locator(f"[data-endpoint='{endpoint.pk}'] [data-state=enabled]")).to_be_visible()
    screenshot(page, "tenant-admin-webhook-deliveries")
    assert_no_axe_violations(page)
