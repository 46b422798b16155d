"""The Django admin's "export audit events" action (superusers, SPEC §6)."""
import io
import json

import pytest
from django.contrib.auth import get_user_model

from reviews.exports import verify_export_file
from reviews.models import AuditEvent

pytestmark = pytest.mark.django_db
URL = "/admin/reviews/auditevent/"


@pytest.fixture
def superuser(db):
    return get_user_model().objects.create_superuser("root", "root@example.com", "pw-long-enough-1")


def test_a_superuser_exports_a_tenants_selected_events(client, superuser, tenant, memory):
    client.force_login(superuser)
    events = AuditEvent.objects.filter(tenant_id=tenant.pk, action="fact.created")
    response = client.post(URL, {"action": "export_jsonl", "_selected_action": [e.pk for e in events]})
    assert response.status_code == 200 and response.streaming
    data = b"".join(response.streaming_content)
    lines = [json.loads(line) for line in data.splitlines()]
    assert [row["seq"] for row in lines[:-1]] == sorted(e.seq for e in events)
    assert lines[-1]["manifest"]["rows"] == events.count()
    assert not lines[-1]["manifest"]["contiguous"]
    assert verify_export_file(io.BytesIO(data)).ok
    exported = AuditEvent.objects.filter(tenant_id=tenant.pk).order_by("-seq").first()
    assert (exported.action, exported.actor) == ("audit.exported", f"reviewer:{superuser.pk}")


def test_a_selection_across_tenants_is_refused(client, superuser, tenant, other_tenant):
    client.force_login(superuser)
    events = AuditEvent.objects.filter(tenant_id__in=[tenant.pk, other_tenant.pk])
    response = client.post(URL, {"action": "export_csv", "_selected_action": [e.pk for e in events]}, follow=True)
    assert "one tenant" in response.content.decode()


def test_tenant_staff_cannot_use_the_admin(client, auditor, tenant):
    client.force_login(auditor)
    event = AuditEvent.objects.filter(tenant_id=tenant.pk).first()
    response = client.post(URL, {"action": "export_jsonl", "_selected_action": [event.pk]})
    assert response.status_code == 302 and "/admin/login/" in response["Location"]
