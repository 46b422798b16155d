"""The tenant console's keys table: expiry, "last used" and rotation (issue 38.6)."""
from datetime import timedelta

import pytest
from django.utils import timezone

from reviews.models import ApiKey, AuditEvent, Scope
from reviews.services.api_keys import api_key_mark_used, api_key_marks_clear
from reviews.services.tenants import api_key_authenticate, api_key_cache_clear, api_key_create


@pytest.fixture(autouse=True)
def _fresh_process_state():
    api_key_cache_clear()
    api_key_marks_clear()


@pytest.fixture
def admin(client, tenant_admin):
    client.force_login(tenant_admin)
    return client


def row_of(page: str, prefix: str) -> str:
    start = page.index(f'data-key="{prefix}"')
    return page[start : page.index("</tr>", start)]


def test_the_table_shows_last_use_and_expiry(admin, tenant):
    used, _ = api_key_create(tenant=tenant, scopes=[Scope.RECALL], name="bot")
    ends = timezone.now() + timedelta(days=3)
    idle, _ = api_key_create(tenant=tenant, scopes=[Scope.RECALL], name="idle", expires_at=ends)
    api_key_mark_used(used)
    page = admin.get("/tenant/keys/").content.decode()
    assert "never" not in row_of(page, used.prefix) and "<time datetime=" in row_of(page, used.prefix)
    idle_row = row_of(page, idle.prefix)
    assert "never" in idle_row and "until" in idle_row and ends.strftime("%Y-%m-%d") in idle_row


def test_a_key_is_made_with_an_expiry(admin, tenant):
    data = {"name": "temp", "scopes": ["recall"], "source": "chat", "expires_at": "2099-01-01T10:00"}
    preview = admin.post("/tenant/keys/create", data).content.decode()
    assert "expires_at" in preview and not ApiKey.objects.filter(name="temp").exists()
    admin.post("/tenant/keys/create", {**data, "step": "save"})
    assert ApiKey.objects.get(name="temp").expires_at.year == 2099


def test_a_past_expiry_is_refused_and_nothing_made(admin, tenant):
    data = {"name": "temp", "scopes": ["recall"], "source": "chat", "expires_at": "2001-01-01T10:00", "step": "save"}
    response = admin.post("/tenant/keys/create", data)
    assert response.status_code == 400 and "A key&#x27;s expiry must be in the future." in response.content.decode()
    assert not ApiKey.objects.filter(name="temp").exists()


def test_a_key_is_rotated_after_confirmation(admin, tenant):
    old, old_raw = api_key_create(tenant=tenant, scopes=[Scope.RECALL, Scope.INGEST], name="crm")
    preview = admin.post(f"/tenant/keys/{old.prefix}/rotate", {"grace_hours": "2"}).content.decode()
    assert "what will change" in preview and "keeps working until" in preview
    assert not ApiKey.objects.filter(replaced_by__gt="").exists()

    page = admin.post(f"/tenant/keys/{old.prefix}/rotate", {"grace_hours": "2", "step": "save"}).content.decode()
    old.refresh_from_db()
    new = ApiKey.objects.get(prefix=old.replaced_by)
    assert (new.scopes, new.name) == (old.scopes, "crm")
    raw = page.split("data-secret-key>")[1].split("<")[0]
    assert api_key_authenticate(raw).pk == new.pk and api_key_authenticate(old_raw).pk == old.pk
    assert abs(old.expires_at - (timezone.now() + timedelta(hours=2))) < timedelta(minutes=1)
    assert AuditEvent.objects.get(tenant_id=tenant.pk, action="api_key.rotated").object_id == old.prefix
    assert 'data-action="api_key.rotated">API key rotated</span>' in page  # the recorded event is shown
    # The old row says what replaced it and offers no second rotation.
    listing = admin.get("/tenant/keys/").content.decode()
    assert new.prefix in row_of(listing, old.prefix)
    assert f"/tenant/keys/{old.prefix}/rotate" not in listing


def test_another_tenants_key_cannot_be_rotated(admin, other_tenant):
    key, _ = api_key_create(tenant=other_tenant, scopes=[Scope.RECALL])
    response = admin.post(f"/tenant/keys/{key.prefix}/rotate", {"step": "save"})
    assert response.status_code == 400
    assert ApiKey.objects.get(pk=key.pk).replaced_by == ""
    assert not AuditEvent.objects.filter(action="api_key.rotated").exists()


def test_a_reviewer_cannot_rotate(client, reviewer, tenant):
    key, _ = api_key_create(tenant=tenant, scopes=[Scope.RECALL])
    client.force_login(reviewer)
    response = client.post(f"/tenant/keys/{key.prefix}/rotate", {"step": "save"})
    assert response.status_code == 403
    assert ApiKey.objects.get(pk=key.pk).replaced_by == ""
