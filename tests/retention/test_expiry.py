"""Retention with a frozen clock (SPEC §3 step 5, §5): expiry reaches recall and the store."""
from datetime import timedelta

import pytest
import time_machine
from django.core.management import call_command
from django.utils import timezone

from reviews import tasks
from reviews.actors import Actor
from reviews.audit import verify_tenant
from reviews.models import AuditEvent, Candidate, Fact, FactStatus, FieldDefinition, Message
from reviews.recall.query import RecallQuery
from reviews.services.candidates import candidate_approve
from reviews.recall.service import recall_perform
from reviews.recall.partitions import recall_partition_for
from reviews.services.retention import retention_sweep
from tests.conftest import candidate
from tests.erasure.conftest import surviving
from tests.erasure.memory import add_message

pytestmark = pytest.mark.django_db
USER = "u-ret"


def recalled_values(tenant, **query):
    # The beat makes recall records' partitions a week ahead; this clock jumps months.
    recall_partition_for(timezone.now())
    _, result = recall_perform(
        tenant=tenant,
        query=RecallQuery(user_id=USER, include_sensitive=True, **query),
        actor=Actor("api_key", "agent"),
        may_see_sensitive=True,
    )
    return {fact["value"] for fact in result.facts}


def projected(store):
    item = store.get(("tenants", "tenant-1", "users"), USER)
    return item.value["facts"] if item else {}


@pytest.fixture
def start():
    with time_machine.travel(timezone.now(), tick=False) as traveller:
        yield traveller


@pytest.fixture
def role_retention(tenant):
    """A normal (so projected) field with a 90-day retention."""
    FieldDefinition.objects.filter(tenant=tenant, entity_type="user", field="role").update(retention_days=90)


@pytest.fixture
def dated(start, tenant, publish, role_retention, committed, store):
    with committed():
        facts = {
            "health": publish(tenant, USER, field="health", value="hyperglossia"),
            "role": publish(tenant, USER, field="role", value="lighthouse keeper"),
            "name": publish(tenant, USER, field="name", value="Ottoline"),
        }
    return facts


def test_a_90_day_fact_is_there_on_day_89_and_gone_on_day_91(start, tenant, dated, store, committed):
    day0 = timezone.now()
    assert dated["health"].expires_at == day0 + timedelta(days=90)
    assert projected(store)["role"]["value"] == "lighthouse keeper"

    start.move_to(day0 + timedelta(days=89))
    with committed():
        report = retention_sweep()
    assert report.facts_expired == 0
    assert recalled_values(tenant) == {"hyperglossia", "lighthouse keeper", "Ottoline"}
    assert projected(store)["role"]["value"] == "lighthouse keeper"

    start.move_to(day0 + timedelta(days=91))
    with committed():
        report = retention_sweep()
    assert report.facts_expired == 2
    assert recalled_values(tenant) == {"Ottoline"}
    assert "role" not in projected(store) and projected(store)["name"]["value"] == "Ottoline"
    for key in ("health", "role"):
        fact = Fact.objects.get(pk=dated[key].pk)
        assert (fact.status, fact.value) == (FactStatus.EXPIRED, "")
    assert surviving(["hyperglossia", "lighthouse keeper"]) == {}
    assert verify_tenant(tenant.pk).ok


def test_every_expiry_is_audited_by_the_system(start, tenant, dated, committed):
    start.move_to(timezone.now() + timedelta(days=91))
    retention_sweep()

    events = AuditEvent.objects.filter(tenant_id=tenant.pk, action="fact.expired").order_by("seq")
    assert [(e.actor, e.object_id, e.reason_code) for e in events] == [
        ("system", str(dated["health"].pk), "retention_expired"),
        ("system", str(dated["role"].pk), "retention_expired"),
    ]
    assert events[0].payload.before["field"] == "health" and "value" not in events[0].payload.before
    receipt = AuditEvent.objects.get(tenant_id=tenant.pk, action="memory.expired")
    assert receipt.payload.after["deleted"]["facts"] == 2


def test_candidates_stay_for_the_figures_with_their_value_blanked(start, tenant, dated):
    start.move_to(timezone.now() + timedelta(days=91))
    retention_sweep()
    health_candidate = Candidate.objects.get(fact_id=dated["health"].pk)
    assert (health_candidate.status, health_candidate.value) == ("approved", "")


def test_a_kept_sensitive_fact_does_not_expire(start, tenant, submit):
    result = submit(tenant, USER, candidate(field="health", value="hyperglossia", confidence=0.97))[0]
    pending = Candidate.objects.get(pk=result.candidate_id)
    kept = candidate_approve(
        tenant=tenant, candidate_id=pending.pk, version=pending.version, actor=Actor.subject(USER), keep=True
    )
    assert Fact.objects.get(pk=kept.fact_id).expires_at is None

    start.move_to(timezone.now() + timedelta(days=400))
    assert retention_sweep().facts_expired == 0
    assert recalled_values(tenant) == {"hyperglossia"}


def test_a_fact_republished_meanwhile_is_rechecked(start, tenant, dated):
    day0 = timezone.now()
    start.move_to(day0 + timedelta(days=91))
    Fact.objects.filter(pk=dated["role"].pk).update(expires_at=day0 + timedelta(days=200))
    assert retention_sweep().facts_expired == 1


def test_thread_memory_expires_when_the_thread_is_idle(start, tenant, publish, committed):
    day0 = timezone.now()
    add_message(tenant, USER, "m1", "t-1", "let's use tabs here")
    fact = publish(tenant, USER, field="preference", value="tabs only", scope="thread", thread_id="t-1")
    start.move_to(day0 + timedelta(days=5))
    add_message(tenant, USER, "m2", "t-1", "still here")  # activity: the clock restarts

    start.move_to(day0 + timedelta(days=11))
    assert retention_sweep().facts_expired == 0
    start.move_to(day0 + timedelta(days=12, seconds=1))
    assert retention_sweep().facts_expired == 1
    fact.refresh_from_db()
    assert fact.status == FactStatus.EXPIRED
    event = AuditEvent.objects.get(tenant_id=tenant.pk, action="fact.expired")
    assert event.reason_code == "thread_idle"


def test_open_thread_candidates_are_withdrawn_with_their_thread(start, tenant, submit):
    result = submit(
        tenant,
        USER,
        candidate(field="preference", value="maybe spaces", confidence=0.85, scope="thread", thread_id="t-7"),
    )[0]
    start.move_to(timezone.now() + timedelta(days=8))
    assert retention_sweep().candidates_withdrawn == 1
    withdrawn = Candidate.objects.get(pk=result.candidate_id)
    assert (withdrawn.status, withdrawn.value, withdrawn.reason) == ("withdrawn", "", "thread_idle")
    assert AuditEvent.objects.filter(tenant_id=tenant.pk, action="candidate.withdrawn").count() == 1


def test_messages_expire_after_the_tenants_retention(start, tenant):
    day0 = timezone.now()
    add_message(tenant, USER, "old", "t-1", "an old message")
    pending = add_message(tenant, USER, "pending", "t-1", "not extracted yet")
    Message.objects.filter(pk=pending.pk).update(extraction_status="pending")

    start.move_to(day0 + timedelta(days=29))
    assert retention_sweep().messages_deleted == 0
    start.move_to(day0 + timedelta(days=31))
    assert retention_sweep().messages_deleted == 1
    assert list(Message.objects.values_list("message_id", flat=True)) == ["pending"]
    event = AuditEvent.objects.get(tenant_id=tenant.pk, action="messages.expired")
    assert (event.actor, event.subject_user_id, event.payload.after["messages"]) == ("system", USER, 1)
    assert verify_tenant(tenant.pk).ok


def test_tenants_are_swept_apart(start, tenant, other_tenant, dated):
    start.move_to(timezone.now() + timedelta(days=91))
    assert retention_sweep(tenants=[other_tenant]).facts_expired == 0
    assert Fact.objects.filter(tenant=tenant, status=FactStatus.ACTIVE).count() == 3


def test_the_command_and_the_beat_task(start, tenant, dated, capsys):
    start.move_to(timezone.now() + timedelta(days=91))
    call_command("expire_facts", "--tenant", "tenant-1")
    assert "expired 2 facts" in capsys.readouterr().out
    tasks.expire_facts.delay()  # in-process without a broker; nothing left to do
    assert Fact.objects.filter(tenant=tenant, status=FactStatus.EXPIRED).count() == 2
