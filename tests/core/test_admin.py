"""The Django admin: superusers only; schema editable, memory read-only, audit untouchable."""
import json

import pytest
from django.contrib.auth import get_user_model

from reviews.models import AuditEvent, FieldDefinition, Membership


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


# --- Governance edits in the admin go through the services, so they are audited ---------------


def admin_events(tenant, action):
    return list(AuditEvent.objects.filter(tenant_id=tenant.pk, action=action).select_related("payload"))


def tenant_form(tenant, **changes):
    from reviews.services.governance import policy_snapshot

    data = {**policy_snapshot(tenant), "extractor": tenant.extractor, "prompt_version": tenant.prompt_version}
    data["auto_approve_at"] = "" if data["auto_approve_at"] is None else data["auto_approve_at"]
    data["source_priority"] = json.dumps(data["source_priority"])
    data["allowed_relation_names"] = "null"
    data.update(changes)
    # The schema inline, with no rows submitted (the existing ones stay as they are).
    data.update({f"field_definitions-{k}": v for k, v in {"TOTAL_FORMS": 0, "INITIAL_FORMS": 0}.items()})
    return data


def test_a_threshold_changed_in_the_admin_is_audited(client, superuser, tenant):
    client.force_login(superuser)
    response = client.post(f"/admin/reviews/tenant/{tenant.pk}/change/", tenant_form(tenant, confirm_below="0.7"))
    assert response.status_code == 302, response.content.decode()[:3000]
    (event,) = admin_events(tenant, "tenant.policy_changed")
    assert event.actor == f"reviewer:{superuser.pk}"
    assert (event.payload.before, event.payload.after) == ({"confirm_below": 0.8}, {"confirm_below": 0.7})


def test_a_bad_threshold_in_the_admin_is_a_form_error(client, superuser, tenant):
    client.force_login(superuser)
    response = client.post(f"/admin/reviews/tenant/{tenant.pk}/change/", tenant_form(tenant, reject_below="0.9"))
    assert response.status_code == 200 and "must not exceed confirm_below" in response.content.decode()
    tenant.refresh_from_db()
    assert tenant.reject_below == 0.5 and not admin_events(tenant, "tenant.policy_changed")


def test_the_extractor_chosen_in_the_admin_is_audited(client, superuser, tenant):
    client.force_login(superuser)
    response = client.post(f"/admin/reviews/tenant/{tenant.pk}/change/", tenant_form(tenant, extractor="rules"))
    assert response.status_code == 302
    (event,) = admin_events(tenant, "tenant.extractor_changed")
    assert event.payload.after == {"extractor": "rules", "prompt_version": ""}


def test_a_field_changed_in_the_admin_is_audited(client, superuser, tenant):
    client.force_login(superuser)
    field = FieldDefinition.objects.get(tenant=tenant, entity_type="user", field="role")
    data = {"cardinality": "one", "sensitivity": "normal", "category": "identity", "auto_approve": "", "retention_days": "30"}
    response = client.post(f"/admin/reviews/fielddefinition/{field.pk}/change/", data)
    assert response.status_code == 302, response.content.decode()[:3000]
    (event,) = admin_events(tenant, "tenant.schema_changed")
    assert (event.object_id, event.payload.before["auto_approve"], event.payload.after["auto_approve"]) == (
        "user.role", True, False,
    )
    assert event.payload.after["retention_days"] == 30


def test_a_field_added_in_the_admin_is_audited(client, superuser, tenant):
    client.force_login(superuser)
    data = {"tenant": tenant.pk, "entity_type": "project", "field": "deadline", "cardinality": "one",
            "sensitivity": "normal", "category": "constraint", "retention_days": ""}
    assert client.post("/admin/reviews/fielddefinition/add/", data).status_code == 302
    (event,) = admin_events(tenant, "tenant.schema_changed")
    assert event.payload.before is None and event.payload.after["field"] == "deadline"


def test_staff_added_changed_and_removed_in_the_admin_are_audited(client, superuser, tenant, tenant_admin):
    client.force_login(superuser)
    user = get_user_model().objects.create_user("nina", password="pw-long-enough-1")
    assert client.post("/admin/reviews/membership/add/", {"user": user.pk, "tenant": tenant.pk, "role": "reviewer"}).status_code == 302
    membership = Membership.objects.get(user=user)
    assert client.post(f"/admin/reviews/membership/{membership.pk}/change/", {"role": "auditor"}).status_code == 302
    assert client.post(f"/admin/reviews/membership/{membership.pk}/delete/", {"post": "yes"}).status_code == 302
    assert [e.payload.after or e.payload.before for e in admin_events(tenant, "staff.added")][-1] == {
        "username": "nina", "role": "reviewer"}
    assert admin_events(tenant, "staff.role_changed")[0].payload.after == {"username": "nina", "role": "auditor"}
    assert admin_events(tenant, "staff.removed")[0].object_id == str(user.pk)
    assert not Membership.objects.filter(user=user).exists()


def test_the_admin_cannot_remove_a_tenants_last_admin(client, superuser, tenant, tenant_admin):
    client.force_login(superuser)
    membership = Membership.objects.get(user=tenant_admin)
    assert client.post(f"/admin/reviews/membership/{membership.pk}/delete/", {"post": "yes"}).status_code == 403
    response = client.post(f"/admin/reviews/membership/{membership.pk}/change/", {"role": "reviewer"})
    assert response.status_code == 200 and "last tenant admin" in response.content.decode()
    assert Membership.objects.get(pk=membership.pk).role == "tenant_admin"
    assert not admin_events(tenant, "staff.removed") and not admin_events(tenant, "staff.role_changed")


def test_deleting_a_members_account_in_the_admin_is_audited(client, superuser, tenant, reviewer):
    client.force_login(superuser)
    assert client.post(f"/admin/auth/user/{reviewer.pk}/delete/", {"post": "yes"}).status_code == 302
    assert admin_events(tenant, "staff.removed")[0].payload.before == {"username": "rita", "role": "reviewer"}


def test_the_admin_cannot_delete_the_account_of_a_tenants_last_admin(client, superuser, tenant, tenant_admin):
    client.force_login(superuser)
    assert client.post(f"/admin/auth/user/{tenant_admin.pk}/delete/", {"post": "yes"}).status_code == 403
    assert get_user_model().objects.filter(pk=tenant_admin.pk).exists()
    assert Membership.objects.filter(user=tenant_admin).exists()
    assert not admin_events(tenant, "staff.removed")


def test_an_account_without_a_tenant_is_deleted_in_the_admin_without_an_event(client, superuser, tenant):
    client.force_login(superuser)
    loner = get_user_model().objects.create_user("lone", password="pw-long-enough-1")
    assert client.post(f"/admin/auth/user/{loner.pk}/delete/", {"post": "yes"}).status_code == 302
    assert not get_user_model().objects.filter(pk=loner.pk).exists()
    assert not admin_events(tenant, "staff.removed")


def test_keys_revoked_in_the_admin_are_audited(client, superuser, tenant):
    from reviews.services.tenants import api_key_create

    key, _ = api_key_create(tenant=tenant, scopes=["recall"])
    client.force_login(superuser)
    response = client.post("/admin/reviews/apikey/", {"action": "revoke", "_selected_action": [key.pk]})
    assert response.status_code == 302
    key.refresh_from_db()
    assert key.revoked_at is not None
    assert admin_events(tenant, "api_key.revoked")[0].object_id == key.prefix
    assert client.post(f"/admin/reviews/apikey/{key.pk}/delete/", {"post": "yes"}).status_code == 403


def test_a_field_changed_in_the_tenants_inline_is_audited(client, superuser, tenant):
    client.force_login(superuser)
    field = FieldDefinition.objects.get(tenant=tenant, entity_type="user", field="location")
    data = tenant_form(tenant)
    data.update({
        "field_definitions-TOTAL_FORMS": 1, "field_definitions-INITIAL_FORMS": 1,
        "field_definitions-0-id": field.pk, "field_definitions-0-tenant": tenant.pk,
        "field_definitions-0-cardinality": "one", "field_definitions-0-sensitivity": "sensitive",
        "field_definitions-0-category": "constraint", "field_definitions-0-retention_days": "",
    })
    response = client.post(f"/admin/reviews/tenant/{tenant.pk}/change/", data)
    assert response.status_code == 302, response.content.decode()[:3000]
    (event,) = admin_events(tenant, "tenant.schema_changed")
    assert (event.payload.before["sensitivity"], event.payload.after["sensitivity"]) == ("personal", "sensitive")
    assert not admin_events(tenant, "tenant.policy_changed")
