"""The management commands of issue 2."""
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from reviews.models import ApiKey, AuditEvent, FieldDefinition, Membership, Tenant
from reviews.services.tenants import api_key_authenticate


def run(*args):
    out, err = StringIO(), StringIO()
    call_command(*args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def test_create_tenant_seeds_the_default_schema(db):
    out, _ = run("create_tenant", "acme")
    tenant = Tenant.objects.get(slug="acme")
    assert "Created tenant acme" in out
    fields = FieldDefinition.objects.filter(tenant=tenant)
    assert fields.count() == 16
    health = fields.get(entity_type="user", field="health")
    assert (health.sensitivity, health.auto_approve, health.retention_days) == ("sensitive", False, 90)
    assert fields.get(entity_type="user", field="location").auto_approve is False
    assert fields.get(entity_type="project", field="database").auto_approve is True
    assert AuditEvent.objects.filter(tenant_id=tenant.pk, action="tenant.created").exists()


@pytest.mark.parametrize("slug", ["Not A Slug", "", "a/b"])
def test_create_tenant_refuses_bad_slugs(db, slug):
    with pytest.raises(CommandError):
        run("create_tenant", slug)
    assert not Tenant.objects.exists()


def test_create_tenant_refuses_duplicates(tenant):
    with pytest.raises(CommandError, match="already exists"):
        run("create_tenant", "tenant-1")


def test_create_api_key_prints_the_key_once_on_its_last_line(tenant):
    out, err = run("create_api_key", "tenant-1", "--scopes", "ingest,recall", "--source", "business_system")
    raw = out.strip().splitlines()[-1]
    key = api_key_authenticate(raw)
    assert key is not None and key.tenant == tenant
    assert (key.scopes, key.source) == (["ingest", "recall"], "business_system")
    assert raw not in err and raw not in str(ApiKey.objects.values_list())
    assert AuditEvent.objects.filter(tenant_id=tenant.pk, action="api_key.created").exists()


@pytest.mark.parametrize("args", [["--scopes", "ingest,superpowers"], ["--scopes", ""]])
def test_create_api_key_refuses_unknown_scopes(tenant, args):
    with pytest.raises(CommandError):
        run("create_api_key", "tenant-1", *args)
    assert not ApiKey.objects.exists()


def test_create_api_key_needs_a_tenant(db):
    with pytest.raises(CommandError, match="No tenant"):
        run("create_api_key", "nowhere", "--scopes", "ingest")


def test_create_reviewer(tenant):
    run("create_reviewer", "tenant-1", "aud", "--role", "auditor", "--password", "pw-long-enough-1")
    membership = Membership.objects.get(user__username="aud")
    assert (membership.tenant, membership.role) == (tenant, "auditor")
    assert membership.user.check_password("pw-long-enough-1")
    assert AuditEvent.objects.filter(tenant_id=tenant.pk, action="staff.added").exists()


def test_verify_audit_reports_each_tenant(tenant, other_tenant):
    out, _ = run("verify_audit")
    assert "tenant-1: ok" in out and "tenant-2: ok" in out
    with pytest.raises(CommandError, match="No tenant"):
        run("verify_audit", "--tenant", "ghost")


def test_revoke_api_key(tenant):
    from reviews.models import ApiKey
    from reviews.services.tenants import api_key_create

    key, _ = api_key_create(tenant=tenant, scopes=["recall"])
    out, _ = run("revoke_api_key", "tenant-1", key.prefix)
    assert f"Revoked key {key.prefix}" in out
    assert ApiKey.objects.get(pk=key.pk).revoked_at is not None
    assert AuditEvent.objects.filter(tenant_id=tenant.pk, action="api_key.revoked", object_id=key.prefix).exists()
    with pytest.raises(CommandError, match="already revoked"):
        run("revoke_api_key", "tenant-1", key.prefix)


def test_revoke_api_key_names_only_the_tenants_own_keys(tenant, other_tenant):
    from reviews.models import ApiKey
    from reviews.services.tenants import api_key_create

    key, _ = api_key_create(tenant=other_tenant, scopes=["recall"])
    with pytest.raises(CommandError, match="No such API key"):
        run("revoke_api_key", "tenant-1", key.prefix)
    assert ApiKey.objects.get(pk=key.pk).revoked_at is None
