"""POST /api/v1/keys and DELETE /api/v1/keys/{prefix} (SPEC §7): scope admin, the key
shown once, both audited by prefix, revocation effective within the cache time."""
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.db import connection

from reviews.models import ApiKey, AuditAction, AuditEvent, Scope
from tests.api.test_recall_api import assert_error
from tests.conftest import KeyClient

URL = "/api/v1/keys"
ROOT = Path(__file__).resolve().parents[2]


def events(tenant, action):
    return list(AuditEvent.objects.filter(tenant_id=tenant.pk, action=action).select_related("payload"))


def test_it_creates_a_key_shown_once(admin_client_key, tenant):
    response = admin_client_key.post_json(URL, {"scopes": ["recall", "ingest"], "source": "business_system", "name": "crm"})
    assert response.status_code == 201, response.content
    body = response.json()
    assert set(body) == {"key", "prefix", "scopes", "source", "name", "expires_at"} and body["expires_at"] is None
    assert (body["scopes"], body["source"], body["name"]) == (["ingest", "recall"], "business_system", "crm")
    assert response["Cache-Control"] == "no-store"
    key = ApiKey.objects.get(prefix=body["prefix"])
    assert key.tenant == tenant and body["key"] not in (key.key_hash, key.prefix)
    # The new key works, with its scopes.
    new_client = KeyClient(body["key"], key)
    assert new_client.get("/api/v1/recall", {"user_id": "u1"}).status_code == 200
    (event,) = events(tenant, AuditAction.API_KEY_CREATED)[-1:]
    assert (event.object_id, event.actor) == (body["prefix"], f"api_key:{admin_client_key.key.prefix}")
    assert body["key"] not in str(event.payload.after)


@pytest.mark.parametrize(
    "body",
    [{}, {"scopes": []}, {"scopes": ["everything"]}, {"scopes": ["recall"], "source": "reviewer"}, {"scopes": ["recall"], "owner": "x"}],
)
def test_bad_input_is_a_400_and_creates_nothing(admin_client_key, tenant, body):
    keys_before = ApiKey.objects.count()
    assert_error(admin_client_key.post_json(URL, body), 400, "invalid")
    assert ApiKey.objects.count() == keys_before


def test_it_requires_the_admin_scope(tenant, make_client):
    client = make_client(tenant, [Scope.INGEST, Scope.RECALL, Scope.REVIEW])
    target = client.key
    assert_error(client.post_json(URL, {"scopes": ["admin"]}), 403, "forbidden")
    assert_error(client.delete(f"{URL}/{target.prefix}"), 403, "forbidden")
    assert ApiKey.objects.filter(tenant=tenant).count() == 1 and ApiKey.objects.get(pk=target.pk).revoked_at is None
    assert not events(tenant, AuditAction.API_KEY_REVOKED)


def test_it_requires_a_key(client, db):
    assert_error(client.post(URL, data={"scopes": ["recall"]}, content_type="application/json"), 401, "unauthenticated")
    assert_error(client.delete(f"{URL}/abcd1234"), 401, "unauthenticated")


def test_it_revokes_a_key_by_prefix(admin_client_key, ingest_client, tenant):
    assert ingest_client.get("/api/v1/recall", {"user_id": "u1"}).status_code == 403  # authenticated (cached)
    response = admin_client_key.delete(f"{URL}/{ingest_client.key.prefix}")
    assert response.status_code == 200, response.content
    assert response.json()["prefix"] == ingest_client.key.prefix and response.json()["revoked_at"]
    # Revoked through this process: refused on its next call.
    assert_error(ingest_client.post_json("/api/v1/messages", {"messages": []}), 401, "unauthenticated")
    (event,) = events(tenant, AuditAction.API_KEY_REVOKED)
    assert event.object_id == ingest_client.key.prefix
    assert_error(admin_client_key.delete(f"{URL}/{ingest_client.key.prefix}"), 409, "invalid_transition")


def test_another_tenants_key_is_not_found(admin_client_key, outsider_client, other_tenant):
    assert_error(admin_client_key.delete(f"{URL}/{outsider_client.key.prefix}"), 404, "not_found")
    assert_error(admin_client_key.delete(f"{URL}/nosuchkey"), 404, "not_found")
    assert ApiKey.objects.get(pk=outsider_client.key.pk).revoked_at is None
    assert outsider_client.get("/api/v1/recall", {"user_id": "u1"}).status_code == 200


@pytest.mark.parametrize(
    "prefix", ["ab%00cd12", "%00", "%ED%A0%80", "%01%1B%5B31m", "x" * 10_000, "ABCD1234", "9" * 40, "abcd1234%2F.."]
)
def test_a_prefix_no_key_can_have_is_not_found_and_revokes_nothing(admin_client_key, ingest_client, tenant, prefix):
    """A NUL reached the key lookup and PostgreSQL refused the query (a 500); only a
    prefix's own shape is routed now."""
    assert_error(admin_client_key.delete(f"{URL}/{prefix}"), 404, "not_found")
    assert not ApiKey.objects.filter(tenant=tenant, revoked_at__isnull=False).exists()
    assert not events(tenant, AuditAction.API_KEY_REVOKED)
    assert ingest_client.post_json("/api/v1/messages", {"messages": []}).status_code == 400  # still a live key


def test_the_schema_documents_both_operations(client, db):
    paths = client.get("/api/schema/?format=json").json()["paths"]
    assert "post" in paths["/api/v1/keys"] and "delete" in paths["/api/v1/keys/{prefix}"]


def revoke_in_another_process(tenant, prefix: str) -> None:
    """`manage.py revoke_api_key` in its own process, on the test database."""
    db = connection.settings_dict
    url = f"postgres://{db['USER']}:{db['PASSWORD'] or ''}@{db['HOST']}:{db['PORT'] or 5432}/{db['NAME']}"
    env = {**os.environ, "DATABASE_URL": url, "DJANGO_SETTINGS_MODULE": "memory_portal.settings"}
    done = subprocess.run(
        [sys.executable, "manage.py", "revoke_api_key", tenant.slug, prefix],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "Revoked key" in done.stdout


@pytest.mark.django_db(transaction=True)
def test_a_key_revoked_by_another_process_stops_working_within_the_cache_time(
    tenant, make_client, settings, monkeypatch
):
    """This process keeps trusting its cached lookup until MEMORY_API_KEY_CACHE_SECONDS
    have passed since it looked the key up, never longer."""
    from reviews.services import tenants

    settings.MEMORY_API_KEY_CACHE_SECONDS = 60
    client = make_client(tenant, [Scope.RECALL])
    assert client.get("/api/v1/recall", {"user_id": "u1"}).status_code == 200
    revoke_in_another_process(tenant, client.key.prefix)
    assert ApiKey.objects.get(pk=client.key.pk).revoked_at is not None
    assert client.get("/api/v1/recall", {"user_id": "u1"}).status_code == 200  # still cached here
    now = tenants.time.monotonic()
    monkeypatch.setattr(tenants.time, "monotonic", lambda: now + settings.MEMORY_API_KEY_CACHE_SECONDS + 0.1)
    assert_error(client.get("/api/v1/recall", {"user_id": "u1"}), 401, "unauthenticated")
    assert [e.actor for e in events(tenant, AuditAction.API_KEY_REVOKED)] == ["system"]


@pytest.mark.django_db(transaction=True)
def test_without_the_cache_another_processs_revocation_is_immediate(tenant, make_client, settings):
    settings.MEMORY_API_KEY_CACHE_SECONDS = 0
    client = make_client(tenant, [Scope.RECALL])
    assert client.get("/api/v1/recall", {"user_id": "u1"}).status_code == 200
    revoke_in_another_process(tenant, client.key.prefix)
    assert_error(client.get("/api/v1/recall", {"user_id": "u1"}), 401, "unauthenticated")
