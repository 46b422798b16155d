"""Governance services (SPEC §4 tenant admin): schema, policy, extractor, keys and staff.
Each change is one audit event with before and after; each refused change names why."""
import pytest

from reviews.actors import Actor
from reviews.errors import InvalidInput, InvalidTransition, NotFound
from reviews.models import (
    ApiKey,
    AuditAction,
    AuditEvent,
    FieldDefinition,
    Membership,
    Role,
    Scope,
    Sensitivity,
    Tenant,
)
from reviews.extraction.rules import RULES_VERSION
from reviews.services import governance
from reviews.services.tenants import (
    api_key_authenticate,
    api_key_create,
    api_key_revoke,
    staff_add,
    staff_create,
    staff_remove,
    staff_role_change,
)

ADMIN = Actor("reviewer", "99")


def last_event(tenant, action):
    event = AuditEvent.objects.filter(tenant_id=tenant.pk, action=action).order_by("-seq").first()
    assert event is not None, f"no {action} event"
    return event


def count(tenant, action):
    return AuditEvent.objects.filter(tenant_id=tenant.pk, action=action).count()


# --- Field schema ---------------------------------------------------------------------------------


def test_adding_a_field_records_it_after(tenant):
    governance.field_add(
        tenant=tenant, entity_type="project", field="deadline",
        attributes={"category": "constraint", "retention_days": 30}, actor=ADMIN,
    )
    definition = FieldDefinition.objects.get(tenant=tenant, entity_type="project", field="deadline")
    assert (definition.cardinality, definition.sensitivity, definition.retention_days) == ("one", "normal", 30)
    event = last_event(tenant, AuditAction.TENANT_SCHEMA_CHANGED)
    assert (event.actor, event.object_id) == ("reviewer:99", "project.deadline")
    assert event.payload.before is None
    assert event.payload.after["category"] == "constraint" and event.payload.after["retention_days"] == 30


@pytest.mark.parametrize(
    "entity_type, field, attributes, message",
    [
        ("user", "name", {}, "already has"),
        ("User Type", "x", {}, "entity type"),
        ("usr", "nickname", {}, "Unknown entity type; a field is for one of: user, project, organization, preference"),
        ("user", "Bad Field", {}, "field name"),
        ("user", "hobby", {"sensitivity": "secret"}, "Unknown sensitivity"),
        ("user", "hobby", {"colour": "red"}, "Unknown field attributes"),
        ("user", "hobby", {"sensitivity": "sensitive", "auto_approve": True}, "only on normal"),
        ("user", "hobby", {"retention_days": 0}, "Retention"),
    ],
)
def test_a_bad_new_field_is_refused_and_nothing_is_recorded(tenant, entity_type, field, attributes, message):
    fields_before = FieldDefinition.objects.filter(tenant=tenant).count()
    with pytest.raises(InvalidInput, match=message):
        governance.field_add(tenant=tenant, entity_type=entity_type, field=field, attributes=attributes, actor=ADMIN)
    assert FieldDefinition.objects.filter(tenant=tenant).count() == fields_before
    assert count(tenant, AuditAction.TENANT_SCHEMA_CHANGED) == 0


def test_changing_a_field_records_before_and_after(tenant):
    governance.field_update(
        tenant=tenant, entity_type="user", field="role", changes={"auto_approve": False, "retention_days": 365},
        actor=ADMIN,
    )
    event = last_event(tenant, AuditAction.TENANT_SCHEMA_CHANGED)
    assert (event.payload.before["auto_approve"], event.payload.after["auto_approve"]) == (True, False)
    assert (event.payload.before["retention_days"], event.payload.after["retention_days"]) == (None, 365)


def test_a_change_that_changes_nothing_records_nothing(tenant):
    governance.field_update(tenant=tenant, entity_type="user", field="name", changes={"auto_approve": True}, actor=ADMIN)
    assert count(tenant, AuditAction.TENANT_SCHEMA_CHANGED) == 0


def test_making_a_field_sensitive_reaches_its_published_facts(tenant, publish):
    fact = publish(tenant, "u1", entity_type="project", entity_id="p", field="database", value="MySQL")
    governance.field_update(
        tenant=tenant, entity_type="project", field="database",
        changes={"auto_approve": False, "sensitivity": Sensitivity.SENSITIVE}, actor=ADMIN,
    )
    fact.refresh_from_db()
    assert fact.sensitivity == Sensitivity.SENSITIVE
    assert last_event(tenant, AuditAction.TENANT_SCHEMA_CHANGED).payload.after["facts_updated"] == 1


def test_a_sensitive_field_keeps_auto_approval_off(tenant):
    with pytest.raises(InvalidInput, match="only on normal"):
        governance.field_update(
            tenant=tenant, entity_type="user", field="role", changes={"sensitivity": Sensitivity.PERSONAL}, actor=ADMIN
        )


def test_a_many_field_becomes_one_only_while_no_subject_holds_several_values(tenant, publish):
    publish(tenant, "u1", entity_type="project", entity_id="p", field="tech_stack", value="Django")
    publish(tenant, "u1", entity_type="project", entity_id="p", field="tech_stack", value="Celery")
    with pytest.raises(InvalidInput, match="several active values"):
        governance.field_update(
            tenant=tenant, entity_type="project", field="tech_stack", changes={"cardinality": "one"}, actor=ADMIN
        )
    publish(tenant, "u1", field="preference", value="short answers")
    governance.field_update(tenant=tenant, entity_type="user", field="preference", changes={"cardinality": "one"}, actor=ADMIN)
    assert FieldDefinition.objects.get(tenant=tenant, entity_type="user", field="preference").cardinality == "one"


def test_an_unknown_field_is_not_found(tenant):
    with pytest.raises(NotFound):
        governance.field_update(tenant=tenant, entity_type="user", field="shoe_size", changes={}, actor=ADMIN)


def test_another_tenants_field_is_not_found(tenant, other_tenant):
    governance.field_add(tenant=tenant, entity_type="project", field="deadline", attributes={}, actor=ADMIN)
    with pytest.raises(NotFound):
        governance.field_update(
            tenant=other_tenant, entity_type="project", field="deadline", changes={"retention_days": 3}, actor=ADMIN
        )


# --- Policy -----------------------------------------------------------------------------------------


def test_changing_thresholds_records_only_what_changed(tenant):
    governance.tenant_policy_update(tenant=tenant, changes={"confirm_below": 0.7, "reject_below": 0.5}, actor=ADMIN)
    tenant.refresh_from_db()
    assert tenant.confirm_below == 0.7
    event = last_event(tenant, AuditAction.TENANT_POLICY_CHANGED)
    assert (event.payload.before, event.payload.after) == ({"confirm_below": 0.8}, {"confirm_below": 0.7})


def test_source_priorities_are_policy(tenant):
    priority = {"business_system": 4, "self_service": 3, "reviewer": 5, "chat": 1}
    governance.tenant_policy_update(tenant=tenant, changes={"source_priority": priority}, actor=ADMIN)
    tenant.refresh_from_db()
    assert tenant.priority_of("reviewer") == 5
    assert last_event(tenant, AuditAction.TENANT_POLICY_CHANGED).payload.after == {"source_priority": priority}


@pytest.mark.parametrize(
    "changes, message",
    [
        ({"reject_below": 0.9}, "must not exceed confirm_below"),
        ({"confirm_below": 1.5}, "from 0 to 1"),
        ({"auto_approve_at": 0.6}, "must not be below confirm_below"),
        ({"reject_below": True}, "from 0 to 1"),
        ({"source_priority": {"chat": 1}}, "every source"),
        ({"source_priority": {"chat": -1, "reviewer": 2, "self_service": 3, "business_system": 4}}, "whole number"),
        ({"message_retention_days": 0}, "whole number of days"),
        ({"confidence": 0.5}, "Unknown policy settings"),
    ],
)
def test_bad_policy_is_refused_and_nothing_changes(tenant, changes, message):
    with pytest.raises(InvalidInput, match=message):
        governance.tenant_policy_update(tenant=tenant, changes=changes, actor=ADMIN)
    assert governance.policy_snapshot(Tenant.objects.get(pk=tenant.pk)) == governance.policy_snapshot(tenant)
    assert count(tenant, AuditAction.TENANT_POLICY_CHANGED) == 0


def test_auto_approval_can_be_switched_off(tenant):
    governance.tenant_policy_update(tenant=tenant, changes={"auto_approve_at": None}, actor=ADMIN)
    assert Tenant.objects.get(pk=tenant.pk).auto_approve_at is None


def test_a_new_threshold_applies_to_the_next_candidate(tenant, submit):
    from tests.conftest import candidate

    assert submit(tenant, "u1", candidate(confidence=0.75))[0].status == "pending_user"
    governance.tenant_policy_update(tenant=tenant, changes={"confirm_below": 0.7}, actor=ADMIN)
    tenant.refresh_from_db()
    assert submit(tenant, "u2", candidate(confidence=0.75))[0].status != "pending_user"


# --- Extractor -----------------------------------------------------------------------------------


def test_choosing_the_extractor_records_before_and_after(tenant):
    governance.tenant_extractor_set(tenant=tenant, extractor="rules", prompt_version=RULES_VERSION, actor=ADMIN)
    event = last_event(tenant, AuditAction.TENANT_EXTRACTOR_CHANGED)
    assert event.payload.before == {"extractor": "", "prompt_version": ""}
    assert event.payload.after == {"extractor": "rules", "prompt_version": RULES_VERSION}


def test_the_chosen_extractor_is_the_one_that_runs(tenant, settings):
    from reviews.extraction import get_extractor

    settings.MEMORY_EXTRACTOR = "llm"
    tenant = governance.tenant_extractor_set(tenant=tenant, extractor="rules", prompt_version="", actor=ADMIN)
    assert get_extractor(tenant).name == "rules"


@pytest.mark.parametrize("extractor, version", [("gpt", ""), ("rules", "entity-facts-v1"), ("llm", "v0")])
def test_an_unknown_extractor_or_version_is_refused(tenant, extractor, version):
    with pytest.raises(InvalidInput):
        governance.tenant_extractor_set(tenant=tenant, extractor=extractor, prompt_version=version, actor=ADMIN)
    assert count(tenant, AuditAction.TENANT_EXTRACTOR_CHANGED) == 0


# --- API keys -------------------------------------------------------------------------------------


def test_revoking_a_key_records_it_by_prefix(tenant):
    key, raw = api_key_create(tenant=tenant, scopes=[Scope.RECALL], name="bot", actor=ADMIN)
    assert api_key_authenticate(raw) is not None  # cached in this process
    api_key_revoke(tenant=tenant, prefix=key.prefix, actor=ADMIN)
    assert api_key_authenticate(raw) is None  # this process forgets it at once
    event = last_event(tenant, AuditAction.API_KEY_REVOKED)
    assert event.object_id == key.prefix
    assert event.payload.before["revoked_at"] is None and event.payload.after["revoked_at"]
    created = last_event(tenant, AuditAction.API_KEY_CREATED)
    assert created.object_id == key.prefix
    for payload in (event.payload, created.payload):
        assert raw not in str(payload.before) + str(payload.after)


def test_a_key_is_revoked_once(tenant):
    key, _ = api_key_create(tenant=tenant, scopes=[Scope.RECALL])
    api_key_revoke(tenant=tenant, prefix=key.prefix, actor=ADMIN)
    with pytest.raises(InvalidTransition):
        api_key_revoke(tenant=tenant, prefix=key.prefix, actor=ADMIN)
    assert count(tenant, AuditAction.API_KEY_REVOKED) == 1


def test_another_tenants_key_is_not_found(tenant, other_tenant):
    key, _ = api_key_create(tenant=other_tenant, scopes=[Scope.RECALL])
    with pytest.raises(NotFound):
        api_key_revoke(tenant=tenant, prefix=key.prefix, actor=ADMIN)
    assert ApiKey.objects.get(pk=key.pk).revoked_at is None


# --- Staff ------------------------------------------------------------------------------------------


def test_staff_added_changed_and_removed_are_each_recorded(tenant, tenant_admin):
    user = staff_create(tenant=tenant, username="nina", role=Role.REVIEWER, password="pw-long-enough-1", actor=ADMIN)
    assert last_event(tenant, AuditAction.STAFF_ADDED).payload.after == {"username": "nina", "role": "reviewer"}
    staff_role_change(tenant=tenant, user_id=user.pk, role=Role.AUDITOR, actor=ADMIN)
    event = last_event(tenant, AuditAction.STAFF_ROLE_CHANGED)
    assert (event.payload.before["role"], event.payload.after["role"]) == ("reviewer", "auditor")
    staff_remove(tenant=tenant, user_id=user.pk, actor=ADMIN)
    user.refresh_from_db()
    assert not user.is_active and not Membership.objects.filter(user=user).exists()
    assert last_event(tenant, AuditAction.STAFF_REMOVED).payload.before == {"username": "nina", "role": "auditor"}


def test_the_last_tenant_admin_cannot_leave_or_step_down(tenant, tenant_admin):
    for attempt in (
        lambda: staff_remove(tenant=tenant, user_id=tenant_admin.pk, actor=Actor.reviewer(tenant_admin)),
        lambda: staff_role_change(tenant=tenant, user_id=tenant_admin.pk, role=Role.REVIEWER, actor=ADMIN),
    ):
        with pytest.raises(InvalidInput, match="last tenant admin"):
            attempt()
    assert Membership.objects.get(user=tenant_admin).role == Role.TENANT_ADMIN
    second = staff_create(tenant=tenant, username="ada", role=Role.TENANT_ADMIN, password="pw-long-enough-1")
    staff_remove(tenant=tenant, user_id=tenant_admin.pk, actor=Actor.reviewer(tenant_admin))
    assert Membership.objects.filter(user=second, role=Role.TENANT_ADMIN).exists()


def test_staff_of_another_tenant_are_not_found(tenant, outsider):
    with pytest.raises(NotFound):
        staff_role_change(tenant=tenant, user_id=outsider.pk, role=Role.AUDITOR, actor=ADMIN)
    with pytest.raises(NotFound):
        staff_remove(tenant=tenant, user_id=outsider.pk, actor=ADMIN)
    assert Membership.objects.get(user=outsider).role == Role.REVIEWER


def test_an_account_works_in_one_tenant(tenant, outsider):
    with pytest.raises(InvalidInput, match="already works"):
        staff_add(tenant=tenant, user=outsider, role=Role.REVIEWER, actor=ADMIN)


def test_an_unknown_role_is_refused(tenant, reviewer):
    with pytest.raises(InvalidInput, match="Unknown role"):
        staff_role_change(tenant=tenant, user_id=reviewer.pk, role="owner", actor=ADMIN)
