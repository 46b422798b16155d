"""The tenant console's webhooks section: register (secret shown once), the delivery log
with every attempt, "send again", removal; tenant admins of the tenant only."""
import pytest

from reviews.actors import Actor
from reviews.models import AuditAction, AuditEvent, DeliveryStatus, WebhookDelivery, WebhookEndpoint
from reviews.webhooks.delivery import deliver_due
from reviews.webhooks.endpoints import webhook_create

URL = "/tenant/webhooks/"


@pytest.fixture
def admin(client, tenant_admin):
    client.force_login(tenant_admin)
    return client


def test_an_endpoint_is_registered_after_review_and_its_secret_shown_once(admin, tenant, receiver, private_allowed):
    data = {"url": receiver.url, "events": ["fact.published", "fact.deleted"], "description": "chat"}
    checked = admin.post("/tenant/webhooks/create", data)
    assert checked.status_code == 200 and not WebhookEndpoint.objects.exists()
    assert receiver.url in checked.content.decode()
    saved = admin.post("/tenant/webhooks/create", {**data, "step": "save"})
    endpoint = WebhookEndpoint.objects.get(tenant=tenant)
    page = saved.content.decode()
    assert endpoint.secret in page and "webhook.created" in page
    assert endpoint.secret not in admin.get(URL).content.decode()


def test_a_refused_url_is_shown_with_its_rule(admin, tenant):
    response = admin.post("/tenant/webhooks/create", {"url": "https://127.0.0.2/x", "events": ["fact.deleted"], "step": "save"})
    assert response.status_code == 400 and "loopback_address" in response.content.decode()
    assert not WebhookEndpoint.objects.exists()


def test_the_delivery_log_shows_every_attempt_and_sends_again(admin, tenant, endpoint, receiver, publish):
    receiver.answer_with((500, 0), (500, 0), (500, 0), (500, 0))
    publish(tenant, "u1", field="name", value="Alice")
    for _ in range(4):
        deliver_due()
    delivery = WebhookDelivery.objects.get()
    assert delivery.status == DeliveryStatus.FAILED
    page = admin.get(URL).content.decode()
    assert page.count('data-outcome="http_error"') == 4 and "HTTP 500" in page
    admin.post(f"/tenant/webhooks/deliveries/{delivery.pk}/resend", {"step": "save"})
    deliver_due()
    delivery.refresh_from_db()
    assert delivery.status == DeliveryStatus.DELIVERED
    assert AuditEvent.objects.filter(tenant_id=tenant.pk, action=AuditAction.WEBHOOK_RESENT).count() == 1
    assert 'data-outcome="delivered"' in admin.get(URL).content.decode()


def test_another_tenants_deliveries_are_not_shown_or_resent(admin, other_tenant, receiver, private_allowed, publish):
    webhook_create(tenant=other_tenant, url=receiver.url, events=["fact.published"], actor=Actor("system"))
    publish(other_tenant, "u9", field="name", value="Olga")
    delivery = WebhookDelivery.objects.get()
    assert "u9" not in admin.get(URL).content.decode()
    response = admin.post(f"/tenant/webhooks/deliveries/{delivery.pk}/resend", {"step": "save"})
    assert response.status_code == 400
    assert not AuditEvent.objects.filter(action=AuditAction.WEBHOOK_RESENT).exists()


@pytest.mark.parametrize("persona", ["reviewer", "auditor"])
def test_other_roles_are_refused(client, request, persona, endpoint):
    hook, _ = endpoint
    client.force_login(request.getfixturevalue(persona))
    assert client.get(URL).status_code == 403
    assert client.post(f"/tenant/webhooks/{hook.pk}/remove", {"step": "save"}).status_code == 403
    assert WebhookEndpoint.objects.filter(pk=hook.pk).exists()


def test_an_endpoint_is_removed(admin, tenant, endpoint):
    hook, _ = endpoint
    admin.post(f"/tenant/webhooks/{hook.pk}/remove", {"step": "save"})
    assert not WebhookEndpoint.objects.exists()
    assert AuditEvent.objects.filter(tenant_id=tenant.pk, action=AuditAction.WEBHOOK_DELETED).count() == 1


@pytest.mark.parametrize("language,delivered,timed_out", [("en", "delivered", "timed out"), ("zh-hans", "已送达", "超时")])
def test_a_deliverys_status_and_attempts_read_in_the_admins_language(admin, tenant, endpoint, receiver, publish,
                                                                     language, delivered, timed_out):
    receiver.answer_with((200, 1.0))  # slower than the 0.5 s timeout: the first try times out
    publish(tenant, "u1", field="name", value="Alice")
    deliver_due()
    deliver_due()
    delivery = WebhookDelivery.objects.get()
    assert delivery.status == DeliveryStatus.DELIVERED
    admin.cookies["django_language"] = language

    page = admin.get(URL, HTTP_ACCEPT_LANGUAGE=language).content.decode()

    row = page.split(f'data-delivery="{delivery.pk}"')[1].split("</tr>")[0]
    assert f'<span class="badge live">{delivered}</span>' in row
    timeout = row.split('data-outcome="timeout">')[1].split("</li>")[0]
    assert f"· {timed_out} ·" in timeout
