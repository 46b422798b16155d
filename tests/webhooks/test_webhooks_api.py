"""GET/POST /api/v1/webhooks, DELETE /api/v1/webhooks/{id} (SPEC §7): scope admin, the
secret shown once, audited; a URL that could reach inside the network is a 400 naming the rule."""
import socket

import pytest

from reviews.models import AuditAction, AuditEvent, Scope, WebhookEndpoint
from tests.api.test_recall_api import assert_error

URL = "/api/v1/webhooks"


def events(tenant, action):
    return list(AuditEvent.objects.filter(tenant_id=tenant.pk, action=action).select_related("payload"))


def resolves(name: str) -> bool:
    try:
        socket.getaddrinfo(name, 443)
    except socket.gaierror:
        return False
    return True


def test_it_registers_an_endpoint_with_its_secret_shown_once(admin_client_key, tenant, receiver, private_allowed):
    response = admin_client_key.post_json(
        URL, {"url": receiver.url, "events": ["fact.published", "candidate.pending_user"], "description": "chat app"}
    )
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["secret"].startswith("whsec_") and body["url"] == receiver.url
    assert body["events"] == ["candidate.pending_user", "fact.published"]
    assert response["Cache-Control"] == "no-store"
    endpoint = WebhookEndpoint.objects.get(pk=body["id"])
    assert endpoint.tenant == tenant and endpoint.secret == body["secret"]
    (event,) = events(tenant, AuditAction.WEBHOOK_CREATED)
    assert (event.object_id, event.actor) == (str(endpoint.pk), f"api_key:{admin_client_key.key.prefix}")
    assert event.payload.after["url"] == receiver.url and body["secret"] not in str(event.payload.after)
    # Listed afterwards, without the secret.
    listed = admin_client_key.get(URL).json()["results"]
    assert [e["id"] for e in listed] == [endpoint.pk] and "secret" not in listed[0]
    assert listed[0]["disabled_at"] is None


def test_it_removes_an_endpoint_audited(admin_client_key, tenant, endpoint):
    hook, secret = endpoint
    response = admin_client_key.delete(f"{URL}/{hook.pk}")
    assert response.status_code == 204, response.content
    assert not WebhookEndpoint.objects.filter(pk=hook.pk).exists()
    (event,) = events(tenant, AuditAction.WEBHOOK_DELETED)
    assert event.object_id == str(hook.pk) and event.payload.before["url"] == hook.url
    assert secret not in str(event.payload.before)
    assert_error(admin_client_key.delete(f"{URL}/{hook.pk}"), 404, "not_found")


@pytest.mark.parametrize(
    ("url", "rule"),
    [
        ("https://localhost/hooks", "loopback_address"),
        ("https://127.0.0.2/hooks", "loopback_address"),
        ("https://[::1]/hooks", "loopback_address"),
        ("https://[::ffff:127.0.0.1]/hooks", "loopback_address"),
        ("https://0.0.0.0/hooks", "loopback_address"),
        ("https://10.1.2.3/hooks", "private_address"),
        ("https://192.168.0.7/hooks", "private_address"),
        ("https://[fd12::1]/hooks", "private_address"),
        ("https://169.254.10.1/hooks", "link_local_address"),
        ("https://169.254.169.254/latest/meta-data", "metadata_address"),
        ("https://100.100.100.200/", "metadata_address"),
        ("http://93.184.216.34/hooks", "https_required"),
        ("ftp://93.184.216.34/hooks", "invalid_url"),
        ("https://user:pw@93.184.216.34/hooks", "invalid_url"),
        ("https://no-such-host.invalid/hooks", "unresolvable_host"),
    ],
)
def test_a_url_that_could_reach_inside_is_refused_naming_the_rule(admin_client_key, tenant, url, rule):
    error = assert_error(admin_client_key.post_json(URL, {"url": url, "events": ["fact.published"]}), 400, "invalid")
    assert error["details"] == {"url": rule} and rule in error["message"]
    assert not WebhookEndpoint.objects.exists() and not events(tenant, AuditAction.WEBHOOK_CREATED)


@pytest.mark.parametrize("name", ["localhost", "localhost.localdomain"])
def test_a_name_that_resolves_to_loopback_is_refused(admin_client_key, name):
    if not resolves(name):
        pytest.skip(f"{name} does not resolve here")
    error = assert_error(
        admin_client_key.post_json(URL, {"url": f"https://{name}:8443/x", "events": ["fact.deleted"]}), 400, "invalid"
    )
    assert error["details"] == {"url": "loopback_address"}


def test_private_receivers_are_allowed_when_the_operator_says_so(admin_client_key, private_allowed):
    response = admin_client_key.post_json(URL, {"url": "http://127.0.0.2:9/x", "events": ["fact.deleted"]})
    assert response.status_code == 201, response.content


@pytest.mark.parametrize(
    "body",
    [{}, {"url": "https://93.184.216.34/"}, {"url": "https://93.184.216.34/", "events": []},
     {"url": "https://93.184.216.34/", "events": ["fact.exploded"]},
     {"url": "https://93.184.216.34/", "events": ["fact.published"], "secret": "mine"},
     {"url": 7, "events": ["fact.published"]}],
)
def test_bad_input_is_a_400_and_creates_nothing(admin_client_key, body):
    assert_error(admin_client_key.post_json(URL, body), 400, "invalid")
    assert not WebhookEndpoint.objects.exists()


def test_it_requires_the_admin_scope(tenant, make_client, endpoint):
    hook, _ = endpoint
    client = make_client(tenant, [s for s in Scope.values if s != Scope.ADMIN])
    assert_error(client.get(URL), 403, "forbidden")
    assert_error(client.post_json(URL, {"url": "https://93.184.216.34/", "events": ["fact.deleted"]}), 403, "forbidden")
    assert_error(client.delete(f"{URL}/{hook.pk}"), 403, "forbidden")
    assert WebhookEndpoint.objects.count() == 1 and not events(tenant, AuditAction.WEBHOOK_DELETED)


def test_it_requires_a_key(client, db):
    assert_error(client.get(URL), 401, "unauthenticated")


def test_another_tenants_endpoints_are_invisible(outsider_client, endpoint, other_tenant):
    hook, _ = endpoint
    assert outsider_client.get(URL).json() == {"results": []}
    assert_error(outsider_client.delete(f"{URL}/{hook.pk}"), 404, "not_found")
    assert WebhookEndpoint.objects.filter(pk=hook.pk).exists()
    assert not events(other_tenant, AuditAction.WEBHOOK_DELETED)
