"""API keys with expiry, "last used" and rotation (issue 38.6): the API and the services."""
import time
from datetime import timedelta

import pytest
from django.utils import timezone

from reviews.models import ApiKey, AuditEvent, AuditPayload, Scope, Source
from reviews.services.api_keys import api_key_mark_used, api_key_marks_clear
from reviews.services.tenants import api_key_authenticate, api_key_cache_clear, api_key_create
from tests.conftest import KeyClient

KEYS = "/api/v1/keys"


@pytest.fixture(autouse=True)
def _fresh_process_state():
    api_key_cache_clear()
    api_key_marks_clear()
    yield
    api_key_cache_clear()
    api_key_marks_clear()


@pytest.fixture
def crm_key(tenant):
    return api_key_create(tenant=tenant, scopes=[Scope.INGEST, Scope.RECALL], source=Source.BUSINESS_SYSTEM, name="crm")


def events(tenant, action):
    return list(AuditEvent.objects.filter(tenant_id=tenant.pk, action=action).order_by("seq"))


def recall_status(raw):
    client = KeyClient(raw, None)
    return client.get("/api/v1/recall", {"user_id": "nobody"}).status_code


class TestExpiry:
    def test_a_key_made_with_an_expiry_says_so_and_is_audited(self, tenant, admin_client_key):
        ends = timezone.now() + timedelta(days=7)
        response = admin_client_key.post_json(KEYS, {"scopes": ["recall"], "expires_at": ends.isoformat()})
        assert response.status_code == 201
        key = ApiKey.objects.get(prefix=response.json()["prefix"])
        assert abs(key.expires_at - ends) < timedelta(seconds=1)
        assert response.json()["expires_at"] is not None
        created = events(tenant, "api_key.created")[-1]
        assert AuditPayload.objects.get(event=created).after["expires_at"] == key.expires_at.isoformat()
        assert recall_status(response.json()["key"]) == 200

    @pytest.mark.parametrize("when", ["2001-01-01T00:00:00Z", "tomorrow", 5])
    def test_an_expiry_in_the_past_or_not_a_time_is_a_400(self, tenant, admin_client_key, when):
        before = ApiKey.objects.count()
        response = admin_client_key.post_json(KEYS, {"scopes": ["recall"], "expires_at": when})
        assert response.status_code == 400 and "error" in response.json()
        assert ApiKey.objects.count() == before

    def test_an_expired_key_is_refused_even_from_the_cache(self, tenant):
        _key, raw = api_key_create(tenant=tenant, scopes=[Scope.RECALL], expires_at=timezone.now() + timedelta(seconds=1))
        assert recall_status(raw) == 200  # now in this process's cache
        time.sleep(1.1)
        assert api_key_authenticate(raw) is None
        assert recall_status(raw) == 401


class TestRotation:
    def test_a_rotation_makes_a_twin_and_the_old_key_works_through_the_grace(self, tenant, admin_client_key, crm_key):
        old, old_raw = crm_key
        response = admin_client_key.post_json(f"{KEYS}/{old.prefix}/rotate", {"grace_seconds": 3600})
        assert response.status_code == 201, response.json()
        body = response.json()
        new = ApiKey.objects.get(prefix=body["prefix"])
        assert (new.scopes, new.source, new.name) == (old.scopes, old.source, old.name)
        assert body["replaces"] == old.prefix and body["key"].startswith(f"mp_{new.prefix}_")
        old.refresh_from_db()
        assert old.replaced_by == new.prefix and old.revoked_at is None
        assert abs(old.expires_at - (timezone.now() + timedelta(hours=1))) < timedelta(minutes=1)
        assert recall_status(old_raw) == 200 and recall_status(body["key"]) == 200

        [rotated] = events(tenant, "api_key.rotated")
        assert rotated.object_id == old.prefix and rotated.actor == f"api_key:{admin_client_key.key.prefix}"
        recorded = AuditPayload.objects.get(event=rotated)
        assert recorded.before["replaced_by"] == "" and recorded.after["replaced_by"] == new.prefix
        assert events(tenant, "api_key.created")[-1].object_id == new.prefix

        # After the grace (moved into the past here, and the authentication cache's few
        # seconds passed), the old key is refused; the new one goes on.
        ApiKey.objects.filter(pk=old.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
        api_key_cache_clear()
        assert recall_status(old_raw) == 401 and recall_status(body["key"]) == 200

    def test_no_grace_ends_the_old_key_at_once(self, admin_client_key, crm_key):
        old, old_raw = crm_key
        assert admin_client_key.post_json(f"{KEYS}/{old.prefix}/rotate", {"grace_seconds": 0}).status_code == 201
        assert recall_status(old_raw) == 401

    def test_the_default_grace_is_the_setting(self, settings, admin_client_key, crm_key):
        settings.MEMORY_API_KEY_ROTATION_GRACE_SECONDS = 600
        old, _ = crm_key
        admin_client_key.post_json(f"{KEYS}/{old.prefix}/rotate", {})
        old.refresh_from_db()
        assert abs(old.expires_at - (timezone.now() + timedelta(minutes=10))) < timedelta(minutes=1)

    def test_a_rotated_key_cannot_be_rotated_again(self, tenant, admin_client_key, crm_key):
        old, _ = crm_key
        admin_client_key.post_json(f"{KEYS}/{old.prefix}/rotate", {})
        response = admin_client_key.post_json(f"{KEYS}/{old.prefix}/rotate", {})
        assert response.status_code == 409 and response.json()["error"]["code"] == "invalid_transition"
        assert len(events(tenant, "api_key.rotated")) == 1

    @pytest.mark.parametrize("body", [{"grace_seconds": -1}, {"grace_seconds": 31 * 86400}, {"grace_seconds": True},
                                      {"grace": 5}])
    def test_a_bad_grace_is_a_400(self, tenant, admin_client_key, crm_key, body):
        old, _ = crm_key
        response = admin_client_key.post_json(f"{KEYS}/{old.prefix}/rotate", body)
        assert response.status_code == 400 and "error" in response.json()
        assert ApiKey.objects.get(pk=old.pk).replaced_by == "" and not events(tenant, "api_key.rotated")

    def test_it_requires_the_admin_scope(self, tenant, make_client, crm_key):
        old, _ = crm_key
        response = make_client(tenant, [Scope.REVIEW]).post_json(f"{KEYS}/{old.prefix}/rotate", {})
        assert response.status_code == 403
        assert ApiKey.objects.get(pk=old.pk).replaced_by == "" and not events(tenant, "api_key.rotated")

    def test_another_tenants_key_is_not_found(self, other_tenant, admin_client_key):
        key, _ = api_key_create(tenant=other_tenant, scopes=[Scope.RECALL])
        response = admin_client_key.post_json(f"{KEYS}/{key.prefix}/rotate", {})
        assert response.status_code == 404
        assert ApiKey.objects.get(pk=key.pk).replaced_by == ""


class TestLastUsed:
    def test_a_call_marks_the_key_used_and_the_list_shows_it(self, tenant, other_tenant, admin_client_key, crm_key):
        key, raw = crm_key
        outsider, _ = api_key_create(tenant=other_tenant, scopes=[Scope.RECALL])
        assert ApiKey.objects.get(pk=key.pk).last_used_at is None
        recall_status(raw)
        used = ApiKey.objects.get(pk=key.pk).last_used_at
        assert used is not None and timezone.now() - used < timedelta(minutes=1)

        listed = {row["prefix"]: row for row in admin_client_key.get(KEYS).json()["results"]}
        assert listed[key.prefix]["last_used_at"] is not None and listed[key.prefix]["name"] == "crm"
        assert outsider.prefix not in listed  # another tenant's keys are never listed
        assert "key" not in listed[key.prefix] and "key_hash" not in listed[key.prefix]

    def test_it_is_written_at_most_once_a_minute_per_key(self, crm_key):
        key, _ = crm_key
        assert api_key_mark_used(key) is True
        assert api_key_mark_used(key) is False
        # A write never moves the time back, whatever another process wrote meanwhile.
        later = timezone.now() + timedelta(hours=1)
        ApiKey.objects.filter(pk=key.pk).update(last_used_at=later)
        api_key_marks_clear()
        assert api_key_mark_used(key) is False
        assert ApiKey.objects.get(pk=key.pk).last_used_at == later

    def test_the_list_requires_the_admin_scope(self, tenant, make_client):
        assert make_client(tenant, [Scope.RECALL]).get(KEYS).status_code == 403
