"""A subject's "delete this memory" is scheduled, undoable, then carried out (SPEC §4, §6)."""
from datetime import timedelta

import pytest
from django.core.management import call_command
from django.utils import timezone

from reviews.actors import Actor
from reviews.errors import InvalidTransition, NotFound
from reviews.models import AuditAction, AuditEvent, DeletionStatus, Fact, FactDeletion
from reviews.services.deletions import (
    due_deletions_carry_out,
    fact_deletion_carry_out,
    fact_deletion_schedule,
    fact_deletion_undo,
    fact_erase_preview,
)
from reviews.services.erasure import facts_delete
from tests.portal.conftest import alice, memory, say  # noqa: F401  (fixtures)

ALICE = Actor.subject("alice")


def schedule(tenant, fact):
    return fact_deletion_schedule(tenant=tenant, user_id="alice", fact_id=fact.pk, actor=ALICE)


def past_due():
    FactDeletion.objects.update(due_at=timezone.now() - timedelta(seconds=1))


def actions(tenant):
    return list(AuditEvent.objects.filter(tenant_id=tenant.pk).order_by("seq").values_list("action", flat=True))


def test_scheduling_changes_nothing_but_the_row_and_its_event(tenant, alice):
    before = actions(tenant)
    deletion = schedule(tenant, alice.name)
    assert deletion.status == DeletionStatus.SCHEDULED
    assert (deletion.due_at - deletion.requested_at) == timedelta(seconds=30)
    assert Fact.objects.get(pk=alice.name.pk).value == "Alice"
    assert actions(tenant) == before + [AuditAction.FACT_DELETION_SCHEDULED]
    # Asking twice is the same deletion, and no second event.
    assert schedule(tenant, alice.name).pk == deletion.pk
    assert actions(tenant) == before + [AuditAction.FACT_DELETION_SCHEDULED]


def test_nothing_happens_before_the_window_ends(tenant, alice):
    deletion = schedule(tenant, alice.name)
    assert fact_deletion_carry_out(deletion_id=deletion.pk).status == DeletionStatus.SCHEDULED
    assert due_deletions_carry_out() == 0
    assert Fact.objects.get(pk=alice.name.pk).status == "active"


def test_the_sweep_carries_it_out_once_with_the_subject_as_actor(tenant, alice, capsys):
    deletion = schedule(tenant, alice.name)
    past_due()
    call_command("expire_facts")
    assert "carried out 1 scheduled deletions" in capsys.readouterr().out
    deletion.refresh_from_db()
    assert deletion.status == DeletionStatus.DONE and deletion.receipt["deleted"]["facts"] == 1
    assert Fact.objects.get(pk=alice.name.pk).status == "deleted"
    erased = AuditEvent.objects.get(tenant_id=tenant.pk, action=AuditAction.FACT_DELETED)
    assert erased.actor == "subject:alice"
    # Idempotent: a second run (or a late task) does nothing.
    before = actions(tenant)
    assert fact_deletion_carry_out(deletion_id=deletion.pk).status == DeletionStatus.DONE
    assert due_deletions_carry_out() == 0 and actions(tenant) == before


def test_undo_inside_the_window_and_too_late_after_it(tenant, alice):
    kept = schedule(tenant, alice.name)
    fact_deletion_undo(tenant=tenant, user_id="alice", deletion_id=kept.pk, actor=ALICE)
    assert actions(tenant)[-1] == AuditAction.FACT_DELETION_UNDONE
    late = schedule(tenant, alice.database)
    past_due()
    due_deletions_carry_out()
    assert Fact.objects.get(pk=alice.name.pk).value == "Alice"
    assert Fact.objects.get(pk=alice.database.pk).status == "deleted"
    with pytest.raises(InvalidTransition):
        fact_deletion_undo(tenant=tenant, user_id="alice", deletion_id=late.pk, actor=ALICE)


def test_it_requires_the_subject_whose_fact_it_is(tenant, other_tenant, alice, memory):
    memory(tenant, "bob")
    deletion = schedule(tenant, alice.name)
    with pytest.raises(NotFound):
        fact_deletion_undo(tenant=tenant, user_id="bob", deletion_id=deletion.pk, actor=Actor.subject("bob"))
    with pytest.raises(NotFound):
        fact_deletion_undo(tenant=other_tenant, user_id="alice", deletion_id=deletion.pk, actor=ALICE)
    with pytest.raises(NotFound):
        fact_deletion_schedule(tenant=tenant, user_id="bob", fact_id=alice.name.pk, actor=Actor.subject("bob"))
    assert FactDeletion.objects.get().status == DeletionStatus.SCHEDULED


def test_a_fact_gone_meanwhile_is_done_with_nothing_to_delete(tenant, alice):
    deletion = schedule(tenant, alice.name)
    facts_delete(tenant=tenant, user_id="alice", field="name", actor=ALICE)
    past_due()
    fact_deletion_carry_out(deletion_id=deletion.pk)
    deletion.refresh_from_db()
    assert deletion.status == DeletionStatus.DONE and deletion.receipt["deleted"]["facts"] == 0


def test_the_preview_counts_what_the_deletion_then_removes_and_writes_nothing(tenant, alice):
    before = actions(tenant)
    preview = fact_erase_preview(tenant=tenant, user_id="alice", fact_id=alice.name.pk, actor=ALICE)
    assert actions(tenant) == before and Fact.objects.get(pk=alice.name.pk).value == "Alice"
    schedule(tenant, alice.name)
    past_due()
    due_deletions_carry_out()
    receipt = FactDeletion.objects.get().receipt
    # The scheduling event is one more readable payload about the fact, erased with it.
    expected = {**preview.as_dict()["deleted"]}
    expected["audit_values"] += 1
    assert expected == receipt["deleted"]
    assert preview.as_dict()["redacted"] == receipt["redacted"]
