from reviews.models import AuditEvent, Fact


def test_tenant_seed_and_submit(tenant, submit):
    from tests.conftest import candidate

    results = submit(tenant, "alice", candidate(value="Alice", confidence=0.97))
    assert results[0].status == "auto_approved"
    assert Fact.objects.get().value == "Alice"
    assert AuditEvent.objects.filter(tenant_id=tenant.pk, action="fact.created").count() == 1
