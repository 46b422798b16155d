"""A fact the subject deleted leaves recall and the store at once, during its undo window,
and comes back on Undo; the erasure proper happens after the window (SPEC §4, §5)."""
from reviews.actors import Actor
from reviews.models import Fact
from reviews.publication import project_subject
from reviews.services.deletions import fact_deletion_schedule, fact_deletion_undo
from tests.portal.conftest import alice, memory, say  # noqa: F401  (fixtures)
from tests.publication.conftest import store, user_item  # noqa: F401  (fixtures)
from tests.recall.conftest import ids, reasons

ALICE = Actor.subject("alice")


def test_a_deleted_fact_is_not_recalled_during_the_window_and_is_after_undo(tenant, alice, recall):
    _, before = recall("alice", explain=True)
    assert alice.name.pk in ids(before)
    deletion = fact_deletion_schedule(tenant=tenant, user_id="alice", fact_id=alice.name.pk, actor=ALICE)

    _, during = recall("alice", explain=True)
    assert alice.name.pk not in ids(during)
    # Not even named among what was left out: for the agent it is gone.
    assert alice.name.pk not in reasons(during)
    _, asked_by_id = recall("alice", fact_ids=(alice.name.pk,))
    assert ids(asked_by_id) == []
    assert Fact.objects.get(pk=alice.name.pk).status == "active"  # the row waits for the window

    fact_deletion_undo(tenant=tenant, user_id="alice", deletion_id=deletion.pk, actor=ALICE)
    _, after = recall("alice")
    assert alice.name.pk in ids(after)


def test_another_subjects_deletion_changes_nothing_for_them(tenant, alice, memory, recall):
    bob = memory(tenant, "bob")
    fact_deletion_schedule(tenant=tenant, user_id="alice", fact_id=alice.name.pk, actor=ALICE)
    _, result = recall("bob")
    assert bob.name.pk in ids(result)


def test_the_store_drops_it_during_the_window_and_gets_it_back_on_undo(store, tenant, alice):
    project_subject(alice.name.subject_id)
    assert user_item(store, "alice")["facts"]["name"]["value"] == "Alice"
    deletion = fact_deletion_schedule(tenant=tenant, user_id="alice", fact_id=alice.name.pk, actor=ALICE)
    project_subject(alice.name.subject_id)
    assert "name" not in user_item(store, "alice")["facts"]
    fact_deletion_undo(tenant=tenant, user_id="alice", deletion_id=deletion.pk, actor=ALICE)
    project_subject(alice.name.subject_id)
    assert user_item(store, "alice")["facts"]["name"]["value"] == "Alice"
