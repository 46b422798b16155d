"""Erasing a subject ("forget me"): no value survives anywhere, the audit chain still verifies."""
import pytest

from reviews.actors import Actor
from reviews.audit import verify_tenant
from reviews.errors import NotFound
from reviews.models import AuditEvent, AuditPayload, Candidate, Fact, Message, RecallRecord, Subject
from reviews.publication import project_subject
from reviews.services.erasure import subject_erase

from .conftest import surviving
from .memory import ALL_VALUES, OTHER_NAME, OTHER_USER, USER

pytestmark = pytest.mark.django_db
ADMIN = Actor("api_key", "admin")


def test_no_value_of_the_subject_survives_in_any_table(memory, store, committed):
    assert list(surviving(ALL_VALUES)) == ALL_VALUES  # the dump does see them before
    store_before = list(store.search(("tenants", "tenant-1", "users")))
    assert any(item.key == USER for item in store_before)

    with committed():
        subject_erase(tenant=memory.tenant, user_id=USER, actor=ADMIN)

    assert surviving(ALL_VALUES) == {}
    assert verify_tenant(memory.tenant.pk).ok
    assert store.get(("tenants", "tenant-1", "users"), USER) is None
    assert list(store.search(("tenants", "tenant-1", "users", USER))) == []


def test_the_other_subject_and_the_subject_row_stay(memory, store, committed):
    with committed():
        subject_erase(tenant=memory.tenant, user_id=USER, actor=ADMIN)

    assert Subject.objects.filter(pk=memory.subject.pk).exists()
    assert OTHER_NAME in surviving([OTHER_NAME])
    assert Fact.objects.get(pk=memory.facts["other"].pk).value == OTHER_NAME
    assert Message.objects.filter(subject=memory.other).count() == 1
    assert store.get(("tenants", "tenant-1", "users"), OTHER_USER).value["facts"]["name"]["value"] == OTHER_NAME


def test_the_receipt_counts_what_went_and_is_audited_without_values(memory):
    receipt = subject_erase(tenant=memory.tenant, user_id=USER, actor=ADMIN).as_dict()

    assert receipt["scope"] == {"user_id": USER, "all": True}
    deleted = receipt["deleted"]
    assert deleted["facts"] == 7
    assert deleted["fact_versions"] == 8  # seven facts, one of them corrected once
    assert deleted["candidates"] == 8
    assert deleted["messages"] == 5
    assert deleted["recall_records"] == 1
    assert deleted["store_items"] == 2  # the user item and the project item
    assert deleted["audit_values"] > 0
    event = AuditEvent.objects.filter(tenant_id=memory.tenant.pk).order_by("-seq").first()
    assert (event.action, event.actor, event.subject_user_id) == ("subject.erased", "api_key:admin", USER)
    assert event.payload.after == receipt
    assert not Candidate.objects.filter(subject=memory.subject).exists()
    assert RecallRecord.objects.get(pk=memory.recall_id).query["q"] == ""


def test_the_subjects_events_keep_their_digests_and_lose_their_values(memory):
    events = AuditEvent.objects.filter(tenant_id=memory.tenant.pk, subject_user_id=USER)
    digests_before = dict(events.values_list("pk", "after_digest"))

    subject_erase(tenant=memory.tenant, user_id=USER, actor=ADMIN)

    assert dict(events.filter(pk__in=digests_before).values_list("pk", "after_digest")) == digests_before
    remaining = AuditPayload.objects.filter(tenant_id=memory.tenant.pk, subject_user_id=USER)
    assert list(remaining.values_list("event__action", flat=True)) == ["subject.erased"]


def test_erasing_twice_keeps_the_first_receipt(memory):
    subject_erase(tenant=memory.tenant, user_id=USER, actor=ADMIN)
    second = subject_erase(tenant=memory.tenant, user_id=USER, actor=ADMIN).as_dict()

    assert second["deleted"]["facts"] == 0
    receipts = AuditPayload.objects.filter(tenant_id=memory.tenant.pk, event__action="subject.erased")
    assert receipts.count() == 2
    assert verify_tenant(memory.tenant.pk).ok


def test_an_unknown_subject_is_not_found(tenant):
    with pytest.raises(NotFound):
        subject_erase(tenant=tenant, user_id="nobody", actor=ADMIN)


def test_another_tenants_subject_is_not_found(memory, other_tenant):
    with pytest.raises(NotFound):
        subject_erase(tenant=other_tenant, user_id=USER, actor=ADMIN)
    assert Fact.objects.filter(subject=memory.subject).count() == 7


def test_the_projection_task_sees_nothing_left(memory, store):
    subject_erase(tenant=memory.tenant, user_id=USER, actor=ADMIN)
    project_subject(memory.subject.pk)
    assert store.get(("tenants", "tenant-1", "users"), USER) is None
