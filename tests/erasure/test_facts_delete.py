"""Precise deletion (SPEC §4, §7): by field, entity, thread and one fact, scoped exactly."""
import pytest

from reviews.actors import Actor
from reviews.audit import verify_tenant
from reviews.errors import InvalidInput, NotFound
from reviews.models import (
    AuditEvent,
    Candidate,
    Entity,
    EntityAlias,
    Fact,
    FactStatus,
    FactVersion,
    Message,
    RecallRecord,
    SuppressedValue,
)
from reviews.services.erasure import facts_delete
from reviews.services.erasure import fact_delete

from .conftest import surviving
from .memory import ALL_VALUES, LOCATION, NAME, OTHER_USER, PROJECT_NAME, USER, VALUES

pytestmark = pytest.mark.django_db
ADMIN = Actor("api_key", "admin")


def kept(*groups):
    return [value for group in groups for value in VALUES[group]]


def gone(*groups):
    return {value: [] for group in groups for value in VALUES[group]}


def assert_only_gone(*groups):
    """The groups' values are nowhere; every other value of the subject is still there."""
    found = surviving(ALL_VALUES)
    assert {value: found.get(value, []) for value in kept(*groups)} == gone(*groups)
    assert [value for value in ALL_VALUES if value not in kept(*groups) and value not in found] == []


def user_item(store):
    item = store.get(("tenants", "tenant-1", "users"), USER)
    return item.value["facts"] if item else {}


def test_by_field_removes_every_version_and_only_that_field(memory, store, committed):
    with committed():
        receipt = facts_delete(tenant=memory.tenant, user_id=USER, field="location", actor=ADMIN)

    assert_only_gone("location")
    assert receipt.deleted["facts"] == 1 and receipt.deleted["fact_versions"] == 2
    assert receipt.scope == {"user_id": USER, "thread_id": None, "entity": None, "field": "location"}
    tombstone = Fact.objects.get(pk=memory.facts["location"].pk)
    assert (tombstone.status, tombstone.value) == (FactStatus.DELETED, "")
    assert "[deleted]" in Message.objects.get(message_id="m1").content
    assert NAME in Message.objects.get(message_id="m1").content  # only the value is cut out
    assert LOCATION not in str(RecallRecord.objects.get(pk=memory.recall_id).query)
    assert "location" not in user_item(store) and user_item(store)["name"]["value"] == NAME
    assert verify_tenant(memory.tenant.pk).ok


def test_by_field_suppresses_the_value(memory):
    facts_delete(tenant=memory.tenant, user_id=USER, field="location", actor=ADMIN)
    assert SuppressedValue.objects.filter(subject=memory.subject, field="location").count() == 1


def test_by_entity_removes_its_facts_candidates_and_names(memory, store, committed):
    with committed():
        receipt = facts_delete(tenant=memory.tenant, user_id=USER, entity="project:glimmerforge", actor=ADMIN)

    assert_only_gone("project", "project_name")
    assert receipt.deleted["facts"] == 2
    assert receipt.deleted["candidates"] == 3  # two published, one pending
    project = Entity.objects.get(subject=memory.subject, entity_type="project")
    assert (project.entity_id, project.display_name) == ("glimmerforge", "")
    assert list(EntityAlias.objects.filter(entity=project).values_list("alias", flat=True)) == ["glimmerforge"]
    assert store.get(("tenants", "tenant-1", "users", USER, "project"), "glimmerforge") is None
    assert user_item(store)["name"]["value"] == NAME
    assert verify_tenant(memory.tenant.pk).ok


def test_by_thread_removes_its_messages_and_what_they_taught(memory, store, committed):
    with committed():
        receipt = facts_delete(tenant=memory.tenant, user_id=USER, thread_id="t-2", actor=ADMIN)

    # t-2 was the source of the project facts and of the long-term preference; the
    # project itself (its name) stays, it is the entity's, not the thread's.
    assert_only_gone("project", "preference")
    assert receipt.deleted["messages"] == 2
    assert not Message.objects.filter(subject=memory.subject, thread_id="t-2").exists()
    assert Message.objects.filter(subject=memory.subject).count() == 3
    # Forgetting a thread is not refusing its values.
    assert not SuppressedValue.objects.filter(subject=memory.subject).exists()
    assert verify_tenant(memory.tenant.pk).ok


def test_by_thread_removes_thread_scoped_memory(memory):
    facts_delete(tenant=memory.tenant, user_id=USER, thread_id="t-3", actor=ADMIN)

    assert_only_gone("thread")
    assert Fact.objects.get(pk=memory.facts["thread"].pk).status == FactStatus.DELETED


def test_filters_combine(memory):
    receipt = facts_delete(
        tenant=memory.tenant, user_id=USER, entity="project:glimmerforge", field="tech_stack", actor=ADMIN
    )

    assert receipt.deleted["facts"] == 1
    assert Fact.objects.get(pk=memory.facts["database"].pk).status == FactStatus.ACTIVE
    assert Fact.objects.get(pk=memory.facts["tech"].pk).status == FactStatus.DELETED
    assert Entity.objects.get(subject=memory.subject, entity_type="project").display_name == PROJECT_NAME


def test_one_fact_leaves_no_value_behind(memory):
    tombstone = fact_delete(tenant=memory.tenant, fact_id=memory.facts["health"].pk, actor=ADMIN, user_id=USER)

    assert (tombstone.status, tombstone.value) == (FactStatus.DELETED, "")
    assert_only_gone("health")
    assert not FactVersion.objects.filter(fact=tombstone).exists()
    assert not Candidate.objects.filter(fact_id=tombstone.pk).exists()
    actions = list(
        AuditEvent.objects.filter(tenant_id=memory.tenant.pk).order_by("-seq").values_list("action", flat=True)[:2]
    )
    assert actions == ["memory.deleted", "fact.deleted"]
    deleted_event = AuditEvent.objects.get(tenant_id=memory.tenant.pk, action="fact.deleted")
    assert deleted_event.payload.before == {
        "entity": f"user:{USER}",
        "field": "health",
        "version": 1,
        "scope": "long_term",
        "thread_id": "",
        "expires_at": memory.facts["health"].expires_at.isoformat(),
    }
    assert verify_tenant(memory.tenant.pk).ok


def test_every_deletion_is_audited_with_its_receipt(memory):
    receipt = facts_delete(tenant=memory.tenant, user_id=USER, field="preference", actor=ADMIN)

    events = AuditEvent.objects.filter(tenant_id=memory.tenant.pk).order_by("-seq")
    receipt_event = events[0]
    assert (receipt_event.action, receipt_event.actor) == ("memory.deleted", "api_key:admin")
    assert receipt_event.payload.after == receipt.as_dict()
    assert [e.action for e in events[1:3]] == ["fact.deleted", "fact.deleted"]


def test_deleting_an_already_deleted_scope_deletes_nothing(memory):
    facts_delete(tenant=memory.tenant, user_id=USER, field="location", actor=ADMIN)
    again = facts_delete(tenant=memory.tenant, user_id=USER, field="location", actor=ADMIN)
    assert again.deleted["facts"] == 0


def test_the_other_subject_is_untouched(memory):
    facts_delete(tenant=memory.tenant, user_id=USER, field="name", actor=ADMIN)
    other = Fact.objects.get(pk=memory.facts["other"].pk)
    assert other.status == FactStatus.ACTIVE and other.subject.user_id == OTHER_USER


@pytest.mark.parametrize("entity", ["project", "project:", ":glimmerforge", ""])
def test_a_malformed_entity_is_invalid(memory, entity):
    with pytest.raises(InvalidInput):
        facts_delete(tenant=memory.tenant, user_id=USER, entity=entity or " : ", actor=ADMIN)


def test_an_unknown_entity_or_subject_is_not_found(memory, other_tenant):
    with pytest.raises(NotFound):
        facts_delete(tenant=memory.tenant, user_id=USER, entity="project:nope", actor=ADMIN)
    with pytest.raises(NotFound):
        facts_delete(tenant=memory.tenant, user_id="nobody", field="name", actor=ADMIN)
    with pytest.raises(NotFound):
        facts_delete(tenant=other_tenant, user_id=USER, field="name", actor=ADMIN)
    with pytest.raises(NotFound):
        fact_delete(tenant=other_tenant, fact_id=memory.facts["name"].pk, actor=ADMIN)
    with pytest.raises(NotFound):
        fact_delete(tenant=memory.tenant, fact_id=memory.facts["other"].pk, actor=ADMIN, user_id=USER)
    assert Fact.objects.filter(status=FactStatus.ACTIVE).count() == 8


def test_a_thread_or_field_the_subject_never_had_is_not_found(memory):
    with pytest.raises(NotFound):
        facts_delete(tenant=memory.tenant, user_id=USER, thread_id="t-9", actor=ADMIN)  # the other subject's
    with pytest.raises(NotFound):
        facts_delete(tenant=memory.tenant, user_id=USER, field="finance", actor=ADMIN)
