"""The Django admin: superusers only; schema editable, memory read-only, audit untouchable."""
import pytest
from django.contrib.auth import get_user_model

from reviews.models import AuditEvent, FieldDefinition


@pytest.fixture
def superuser(db):
    return get_user_model().objects.create_superuser("root", "root@example.com", "pw-long-enough-1")


def test_a_superuser_sees_every_tenant(client, superuser, tenant, other_tenant):
    client.force_login(superuser)
    page = client.get("/admin/reviews/tenant/").content.decode()
    assert "tenant-1" in page and "tenant-2" in page


def test_the_schema_is_editable_in_the_admin(client, superuser, tenant):
    client.force_login(superuser)
    field = FieldDefinition.objects.get(tenant=tenant, entity_type="user", field="name")
    response = client.get(f"/admin/reviews/fielddefinition/{field.pk}/change/")
    assert response.status_code == 200 and 'name="retention_days"' in response.content.decode()


def test_audit_events_cannot_be_changed_or_deleted_in_the_admin(client, superuser, tenant):
    client.force_login(superuser)
    event = AuditEvent.objects.filter(tenant_id=tenant.pk).first()
    page = client.get(f"/admin/reviews/auditevent/{event.pk}/change/").content.decode()
    assert 'name="actor"' not in page  # read-only view, no form inputs
    assert client.post(f"/admin/reviews/auditevent/{event.pk}/delete/", {"post": "yes"}).status_code == 403
    assert AuditEvent.objects.filter(pk=event.pk).exists()


def test_tenant_staff_are_not_let_into_the_admin(client, reviewer, tenant_admin):
    for user in (reviewer, tenant_admin):
        client.force_login(user)
        response = client.get("/admin/reviews/tenant/")
        assert response.status_code == 302 and "/admin/login/" in response["Location"]
