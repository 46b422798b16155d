"""Migration 0024: rows stored before the poisoning checks get what new rows get (SPEC §3).

The rows are put in the old state (hidden characters in the stored value, evidence and
versions, no flag), the migration's function runs, and every one of them is clean, flagged,
its original kept escaped and its change audited on its own tenant's chain.
"""
import importlib

from django.apps import apps

from reviews.audit import verify_tenant
from reviews.models import AuditEvent, AuditPayload, Candidate, CandidateFlag, CandidateStatus, Fact, FactVersion
from reviews.poisoning.characters import SUSPECT
from reviews.policy.normalize import value_digest
from tests.conftest import candidate
from tests.dump import dump_all_tables

migration = importlib.import_module("reviews.migrations.0026_clean_stored_hidden_characters")

TAGS = "likes tea\U000e0041\U000e0042"
ZERO_WIDTH = "B\u200bob"
BIDI = "prefers \u202etxet\u202c replies"


def _old_state(fact: Fact, value: str, evidence: str = "") -> None:
    """What the tables held for ``fact`` before the checks: the text as sent, everywhere."""
    Fact.objects.filter(pk=fact.pk).update(value=value, value_digest=value_digest(value), **(
        {"evidence": evidence} if evidence else {}))
    FactVersion.objects.filter(fact_id=fact.pk).update(value=value)
    published_by = FactVersion.objects.filter(fact_id=fact.pk).values_list("candidate_id", flat=True)
    Candidate.objects.filter(pk__in=published_by).update(value=value, flags=[], flag_details={})


def _hidden_anywhere() -> list[str]:
    rows = []
    for model, fields in ((Fact, ("value", "evidence")), (FactVersion, ("value",)), (Candidate, ("value", "evidence"))):
        for name in fields:
            rows += [f"{model.__name__}.{name}: {text!r}" for text in model.objects.filter(
                **{f"{name}__regex": SUSPECT.pattern}).values_list(name, flat=True)]
    return rows


def _events(tenant, action):
    return list(AuditEvent.objects.filter(tenant_id=tenant.pk, action=action).order_by("seq"))


def test_stored_hidden_characters_are_removed_kept_escaped_flagged_and_audited(tenant, other_tenant, publish, submit):
    tea = publish(tenant, "alice", field="preference", value="likes tea", evidence="I like tea")
    _old_state(tea, TAGS, evidence="I like tea\u200b")
    untouched = publish(tenant, "alice", field="preference", value="hiking")
    bob = publish(other_tenant, "bob", field="name", value="Bob")
    _old_state(bob, ZERO_WIDTH)
    [waiting] = submit(tenant, "carol", candidate(field="preference", value="prefers text replies", confidence=0.6))
    Candidate.objects.filter(pk=waiting.candidate_id).update(value=BIDI)
    waiting_status = Candidate.objects.get(pk=waiting.candidate_id).status
    assert waiting_status in (CandidateStatus.PENDING_REVIEW, CandidateStatus.PENDING_USER)
    assert len(_hidden_anywhere()) >= 6

    counts = migration.clean_stored_hidden_characters(apps)

    assert counts == {"candidates": 3, "facts": 2}
    assert _hidden_anywhere() == []
    # Nowhere else either (the dump writes hidden characters as escapes).
    dump = dump_all_tables()
    assert not any(code in dump for code in ("\\U000e0041", "\\u200b", "\\u202e"))

    tea.refresh_from_db()
    assert (tea.value, tea.evidence, tea.status) == ("likes tea", "I like tea", "active")
    assert tea.value_digest == value_digest("likes tea")
    assert tea.provenance[-1]["escaped"] == {"value": "likes tea⟨U+E0041⟩⟨U+E0042⟩", "evidence": "I like tea⟨U+200B⟩"}
    assert list(tea.versions.values_list("value", flat=True)) == ["likes tea"]
    published_by = Candidate.objects.get(pk=tea.versions.get().candidate_id)
    assert CandidateFlag.HIDDEN_CHARACTERS in published_by.flags
    assert published_by.flag_details["value"] == "likes tea⟨U+E0041⟩⟨U+E0042⟩"

    waiting_row = Candidate.objects.get(pk=waiting.candidate_id)
    assert waiting_row.value == "prefers txet replies"
    assert waiting_row.flag_details["value"] == "prefers ⟨U+202E⟩txet⟨U+202C⟩ replies"
    assert CandidateFlag.HIDDEN_CHARACTERS in waiting_row.flags and waiting_row.status == waiting_status

    before = untouched.updated_at, untouched.version
    untouched.refresh_from_db()
    assert (untouched.value, untouched.provenance[-1].get("escaped"), (untouched.updated_at, untouched.version)) == (
        "hiking", None, before)

    # Audited on each row's own tenant's chain, the escaped original before and the flag after.
    [tea_event] = _events(tenant, "fact.cleaned")
    assert (tea_event.object_id, tea_event.actor, tea_event.subject_user_id) == (
        str(tea.pk), "system:hidden_characters_cleanup", "alice")
    payload = AuditPayload.objects.get(event=tea_event)
    assert payload.before["value"] == "likes tea⟨U+E0041⟩⟨U+E0042⟩"
    assert payload.after["value"] == "likes tea" and payload.after["flags"] == ["hidden_characters"]
    assert {e.object_id for e in _events(tenant, "candidate.cleaned")} == {str(published_by.pk), str(waiting.candidate_id)}
    [bob_event] = _events(other_tenant, "fact.cleaned")
    assert bob_event.object_id == str(bob.pk) and Fact.objects.get(pk=bob.pk).value == "Bob"
    assert not AuditEvent.objects.filter(tenant_id=tenant.pk, object_id=str(bob.pk), action="fact.cleaned").exists()
    assert verify_tenant(tenant.pk).ok and verify_tenant(other_tenant.pk).ok


def test_running_it_again_changes_nothing(tenant, publish):
    fact = publish(tenant, "alice", field="name", value="Bob")
    _old_state(fact, ZERO_WIDTH)
    assert migration.clean_stored_hidden_characters(apps) == {"candidates": 1, "facts": 1}
    events = AuditEvent.objects.filter(tenant_id=tenant.pk).count()
    dump = dump_all_tables()

    assert migration.clean_stored_hidden_characters(apps) == {"candidates": 0, "facts": 0}
    assert AuditEvent.objects.filter(tenant_id=tenant.pk).count() == events
    assert dump_all_tables() == dump


def test_a_value_equal_to_another_once_clean_is_retired_naming_the_one_kept(tenant, publish):
    kept = publish(tenant, "alice", field="preference", value="green tea")
    twin = publish(tenant, "alice", field="preference", value="green teas")
    _old_state(twin, "green\u200b tea")

    migration.clean_stored_hidden_characters(apps)

    twin.refresh_from_db()
    kept.refresh_from_db()
    # Out of publication as an entity merge's clash: no value shown, the clean one in its versions.
    assert (twin.status, twin.value) == ("deleted", "")
    assert list(twin.versions.values_list("value", flat=True)) == ["green tea"]
    assert (kept.status, kept.value) == ("active", "green tea")
    [cleaned] = _events(tenant, "fact.cleaned")
    assert AuditPayload.objects.get(event=cleaned).after["merged_into"] == kept.pk
    [retired] = _events(tenant, "fact.retired")
    assert (retired.object_id, retired.actor, retired.reason_code) == (
        str(twin.pk), "system:hidden_characters_cleanup", "duplicate")
    assert retired.seq > cleaned.seq and verify_tenant(tenant.pk).ok


def test_with_nothing_hidden_it_writes_nothing(tenant, publish):
    publish(tenant, "alice", field="name", value="Alice")
    dump = dump_all_tables()
    assert migration.clean_stored_hidden_characters(apps) == {"candidates": 0, "facts": 0}
    assert dump_all_tables() == dump
