"""entity_merge keeps history: no fact or version is removed by a merge (SPEC §1)."""
import pytest

from reviews.actors import Actor
from reviews.models import AuditEvent, AuditPayload, Entity, Fact, FactVersion
from reviews.services.entities import entity_merge
from tests.conftest import candidate

REVIEWER = Actor("reviewer", "7")


def project(entity_id, **fields):
    return [
        candidate(entity_type="project", entity_id=entity_id, entity_name=entity_id, field=field, value=value,
                  confidence=0.97)
        for field, values in fields.items()
        for value in (values if isinstance(values, list) else [values])
    ]


@pytest.fixture
def clashing(tenant, submit):
    """Two entities of one project: the same tech_stack value, and two databases."""
    submit(tenant, "alice", *project("atlas", database="TiDB", tech_stack=["Go", "Rust"]))
    submit(tenant, "alice", *project("星图计划", database="MySQL", tech_stack=["Go", "Python"]))
    target = Entity.objects.get(entity_id="atlas")
    source = Entity.objects.exclude(pk=target.pk).get(entity_type="project")
    return target, source


def test_clashing_facts_move_to_the_target_as_history_and_every_named_id_resolves(tenant, clashing):
    target, source = clashing
    source_facts = {f.field + ":" + f.value: f.pk for f in Fact.objects.filter(entity=source)}
    versions_before = set(FactVersion.objects.filter(fact__entity__in=[source, target]).values_list("pk", flat=True))

    entity_merge(tenant=tenant, source_id=source.pk, target_id=target.pk, actor=REVIEWER)

    event = AuditEvent.objects.get(tenant_id=tenant.pk, action="entity.merged")
    named = AuditPayload.objects.get(event=event).before
    retired = named["retired_facts"]
    assert sorted(retired) == sorted([source_facts["database:MySQL"], source_facts["tech_stack:Go"]])
    assert set(named["moved_facts"]) == set(source_facts.values())
    # Every fact id the event names still resolves, now under the target.
    assert Fact.objects.filter(pk__in=named["moved_facts"], entity=target).count() == len(named["moved_facts"])
    for pk in retired:
        fact = Fact.objects.get(pk=pk)
        assert (fact.status, fact.value, fact.entity_id) == ("deleted", "", target.pk)
        assert fact.versions.exists()  # the retired value stays in its history
    assert set(FactVersion.objects.filter(pk__in=versions_before).values_list("pk", flat=True)) == versions_before
    assert FactVersion.objects.get(fact_id=source_facts["database:MySQL"]).value == "MySQL"
    # The target's active values are untouched; the non-clashing one moved in.
    active = set(Fact.objects.filter(entity=target, status="active").values_list("field", "value"))
    assert active == {("database", "TiDB"), ("tech_stack", "Go"), ("tech_stack", "Rust"), ("tech_stack", "Python")}
    # Each retirement is its own audited transition.
    retirements = AuditEvent.objects.filter(tenant_id=tenant.pk, action="fact.retired")
    assert sorted(int(e.object_id) for e in retirements) == sorted(retired)
    assert {e.reason_code for e in retirements} == {"entity_merged"}


def test_a_field_deletion_after_a_merge_reaches_the_retired_history(tenant, clashing):
    from reviews.services.erasure import facts_delete

    target, source = clashing
    entity_merge(tenant=tenant, source_id=source.pk, target_id=target.pk, actor=REVIEWER)
    receipt = facts_delete(tenant=tenant, user_id="alice", actor=REVIEWER, entity="project:atlas", field="database")
    assert receipt.deleted["facts"] == 2  # the active TiDB and the retired MySQL
    assert not FactVersion.objects.filter(fact__entity=target, fact__field="database").exists()


def test_a_clash_is_found_when_the_two_digests_were_made_under_different_keys(tenant, submit, settings):
    """A digest-key rotation between the two entities' facts: the same value is still a clash."""
    settings.MEMORY_DIGEST_KEY, settings.MEMORY_DIGEST_OLD_KEYS = "k1-digest-key", []
    submit(tenant, "alice", *project("atlas", tech_stack="Go"))
    settings.MEMORY_DIGEST_KEY, settings.MEMORY_DIGEST_OLD_KEYS = "k2-digest-key", ["k1-digest-key"]
    submit(tenant, "alice", *project("星图计划", tech_stack="Go"))
    target = Entity.objects.get(entity_id="atlas")
    source = Entity.objects.exclude(pk=target.pk).get(entity_type="project")
    source_go = Fact.objects.get(entity=source)
    assert source_go.value_digest != Fact.objects.get(entity=target).value_digest

    entity_merge(tenant=tenant, source_id=source.pk, target_id=target.pk, actor=REVIEWER)

    assert list(Fact.objects.filter(entity=target, status="active").values_list("value", flat=True)) == ["Go"]
    assert Fact.objects.get(pk=source_go.pk).status == "deleted"
    retired = AuditEvent.objects.get(tenant_id=tenant.pk, action="fact.retired")
    assert retired.object_id == str(source_go.pk)
