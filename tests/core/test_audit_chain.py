"""The audit chain: append-only in the database, tamper-evident, erasable values."""
import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import DatabaseError, connection, transaction

from reviews.actors import Actor
from reviews.audit import verify_tenant
from reviews.models import AuditEvent, AuditPayload
from reviews.services.candidates import candidate_approve
from tests.conftest import candidate


@pytest.fixture
def history(tenant, submit, reviewer):
    """A few real events: submissions, a policy decision, an approval."""
    submit(tenant, "alice", candidate(value="Alice", confidence=0.97))
    [pending] = submit(tenant, "alice", candidate(field="location", value="Berlin", confidence=0.9))
    candidate_approve(tenant=tenant, candidate_id=pending.candidate_id, version=1, actor=Actor.reviewer(reviewer))
    return AuditEvent.objects.filter(tenant_id=tenant.pk).order_by("seq")


def tamper(sql, params):
    """Change the stored trail behind the application's back, trigger disabled."""
    with connection.cursor() as cursor:
        cursor.execute("ALTER TABLE reviews_auditevent DISABLE TRIGGER USER")
        cursor.execute("ALTER TABLE reviews_auditpayload DISABLE TRIGGER USER")
        cursor.execute(sql, params)
        cursor.execute("ALTER TABLE reviews_auditevent ENABLE TRIGGER USER")
        cursor.execute("ALTER TABLE reviews_auditpayload ENABLE TRIGGER USER")


def test_the_chain_verifies_and_the_command_says_so(tenant, history, capsys):
    result = verify_tenant(tenant.pk)
    assert result.ok and result.events == history.count() > 5
    assert [e.seq for e in history] == list(range(1, history.count() + 1))
    call_command("verify_audit")
    assert f"tenant-1: ok, {history.count()} events" in capsys.readouterr().out


def test_each_event_links_to_the_one_before(history):
    events = list(history)
    for previous, event in zip(events, events[1:]):
        assert event.prev_hash == previous.hash


def test_the_database_refuses_updates_and_deletes(history):
    event = history.first()
    with pytest.raises(DatabaseError), transaction.atomic():
        AuditEvent.objects.filter(pk=event.pk).update(actor="someone-else")
    with pytest.raises(DatabaseError), transaction.atomic():
        AuditEvent.objects.filter(pk=event.pk).delete()
    payload = AuditPayload.objects.first()
    with pytest.raises(DatabaseError), transaction.atomic():
        AuditPayload.objects.filter(pk=payload.pk).update(reason="rewritten")


def test_tampering_with_an_event_is_detected_and_named(tenant, history):
    victim = history[3]
    tamper("UPDATE reviews_auditevent SET actor = %s WHERE id = %s", ["reviewer:999", victim.pk])
    result = verify_tenant(tenant.pk)
    assert not result.ok
    assert (result.broken.seq, result.broken.event_id) == (victim.seq, victim.pk)
    assert "hash" in result.broken.problem
    with pytest.raises(CommandError, match=f"event #{victim.seq} \\(id {victim.pk}\\)"):
        call_command("verify_audit")


def test_tampering_with_a_stored_value_is_detected(tenant, history):
    payload = AuditPayload.objects.filter(after__value="Berlin").first()
    tamper(
        "UPDATE reviews_auditpayload SET after = jsonb_set(after::jsonb, '{value}', '\"Paris\"') WHERE event_id = %s",
        [payload.pk],
    )
    result = verify_tenant(tenant.pk)
    assert result.broken.event_id == payload.pk
    assert "digests" in result.broken.problem


def test_a_removed_event_is_detected(tenant, history):
    victim = history[2]
    tamper("DELETE FROM reviews_auditevent WHERE id = %s", [victim.pk])
    result = verify_tenant(tenant.pk)
    assert result.broken.seq == victim.seq + 1
    assert "gap" in result.broken.problem


def test_a_truncated_tail_is_detected_by_the_head(tenant, history):
    last = history.last()
    tamper("DELETE FROM reviews_auditevent WHERE id = %s", [last.pk])
    result = verify_tenant(tenant.pk)
    assert not result.ok and "head" in result.broken.problem


def test_erased_values_leave_a_verifiable_chain(tenant, history):
    deleted, _ = AuditPayload.objects.filter(subject_user_id="alice").delete()
    assert deleted > 0
    assert verify_tenant(tenant.pk).ok


def test_chains_are_per_tenant(tenant, other_tenant, history, submit):
    submit(other_tenant, "zed", candidate(value="Zed", confidence=0.97))
    other = AuditEvent.objects.filter(tenant_id=other_tenant.pk).order_by("seq")
    assert other.first().seq == 1
    assert verify_tenant(other_tenant.pk).ok and verify_tenant(tenant.pk).ok
