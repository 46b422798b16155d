"""fact_edit and fact_delete: new versions, suppression, scoping and audit."""
import pytest

from reviews.actors import Actor
from reviews.errors import InvalidInput, NotFound, StaleVersion
from reviews.models import AuditEvent, AuditPayload, Fact
from reviews.services.erasure import fact_delete
from reviews.services.facts import fact_edit
from tests.conftest import candidate


@pytest.fixture
def name_fact(tenant, submit):
    [result] = submit(tenant, "alice", candidate(value="Alice", confidence=0.99))
    return Fact.objects.get(pk=result.fact_id)


def test_a_subject_correction_is_a_new_self_service_version(tenant, name_fact):
    edited = fact_edit(tenant=tenant, fact_id=name_fact.pk, value="Alice Zhang", actor=Actor.subject("alice"), user_id="alice")
    assert (edited.value, edited.version, edited.source) == ("Alice Zhang", 2, "self_service")
    assert list(edited.versions.values_list("version", "value", "source")) == [
        (1, "Alice", "chat"),
        (2, "Alice Zhang", "self_service"),
    ]
    event = AuditEvent.objects.get(tenant_id=tenant.pk, action="fact.edited")
    assert event.actor == "subject:alice"
    payload = AuditPayload.objects.get(event=event)
    assert (payload.before["value"], payload.after["value"]) == ("Alice", "Alice Zhang")


def test_a_subject_correction_then_outranks_chat(tenant, name_fact, submit):
    fact_edit(tenant=tenant, fact_id=name_fact.pk, value="Alice Zhang", actor=Actor.subject("alice"), user_id="alice")
    [chat] = submit(tenant, "alice", candidate(value="Ali", confidence=1.0, supersedes=True))
    assert (chat.status, chat.reason) == ("pending_review", "conflict")
    assert Fact.objects.get(pk=name_fact.pk).value == "Alice Zhang"


def test_edit_checks_the_expected_version(tenant, name_fact, reviewer):
    with pytest.raises(StaleVersion):
        fact_edit(tenant=tenant, fact_id=name_fact.pk, value="X", expected_version=7, actor=Actor.reviewer(reviewer))
    assert not AuditEvent.objects.filter(action="fact.edited").exists()


def test_edit_refuses_credentials_and_keeps_the_fact(tenant, name_fact, reviewer):
    with pytest.raises(InvalidInput):
        fact_edit(tenant=tenant, fact_id=name_fact.pk, value="password: hunter2", actor=Actor.reviewer(reviewer))
    name_fact.refresh_from_db()
    assert (name_fact.value, name_fact.version) == ("Alice", 1)


def test_another_subject_or_tenant_cannot_edit(tenant, other_tenant, name_fact, outsider):
    with pytest.raises(NotFound):
        fact_edit(tenant=tenant, fact_id=name_fact.pk, value="Eve", actor=Actor.subject("bob"), user_id="bob")
    with pytest.raises(NotFound):
        fact_edit(tenant=other_tenant, fact_id=name_fact.pk, value="Eve", actor=Actor.reviewer(outsider))
    assert Fact.objects.get(pk=name_fact.pk).value == "Alice"


def test_delete_suppresses_the_value_and_audits(tenant, name_fact, submit):
    fact_delete(tenant=tenant, fact_id=name_fact.pk, actor=Actor.subject("alice"), user_id="alice")
    assert not Fact.objects.filter(pk=name_fact.pk, status="active").exists()
    assert AuditEvent.objects.get(tenant_id=tenant.pk, action="fact.deleted").actor == "subject:alice"
    [again] = submit(tenant, "alice", candidate(value="alice", confidence=0.99))
    assert (again.status, again.reason) == ("rejected", "suppressed")


def test_delete_twice_is_not_found(tenant, name_fact, reviewer):
    fact_delete(tenant=tenant, fact_id=name_fact.pk, actor=Actor.reviewer(reviewer))
    with pytest.raises(NotFound):
        fact_delete(tenant=tenant, fact_id=name_fact.pk, actor=Actor.reviewer(reviewer))
    assert AuditEvent.objects.filter(action="fact.deleted").count() == 1
