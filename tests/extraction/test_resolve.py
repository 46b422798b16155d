"""Entity resolution: normalised names and aliases reach one entity per subject (SPEC §1)."""
import pytest

from reviews.extraction.resolve import canonical_entity_id, evidence_occurs, project_entity_id
from reviews.models import Candidate, Entity, EntityAlias, Fact
from reviews.services.ingest import extraction_context_build
from tests.conftest import candidate
from tests.ingest.helpers import ingest, message

pytestmark = pytest.mark.django_db


def test_alice_in_every_spelling_and_我_reach_her_one_user_entity(tenant, submit):
    results = submit(
        tenant,
        "alice",
        *[candidate(field="preference", value=f"p{i}", entity_id=name) for i, name in enumerate(["Alice", "alice", "ALICE ", "我"])],
    )

    entities = {Candidate.objects.get(pk=r.candidate_id).entity_id for r in results}
    assert len(entities) == 1
    assert Entity.objects.filter(subject__user_id="alice").count() == 1


def test_the_name_she_gives_becomes_an_alias_the_extractor_is_shown(tenant, django_capture_on_commit_callbacks):
    ingest(tenant, message("m-1", "你好，我叫 Alice。", user_id="user-42"), capture=django_capture_on_commit_callbacks)
    ingest(tenant, message("m-2", "ALICE here again.", user_id="user-42"))

    user = Entity.objects.get(subject__user_id="user-42", entity_type="user")
    normalized = set(EntityAlias.objects.filter(entity=user).values_list("normalized", flat=True))
    assert {"user-42", "alice", "我", "i", "me"} <= normalized
    from reviews.models import Message

    context = extraction_context_build(Message.objects.select_related("subject__tenant").get(message_id="m-2"))
    (known,) = context.known_of_type("user")
    assert "Alice" in known.aliases  # so a model reads "Alice" in her thread as user:me


@pytest.mark.parametrize(
    "name",
    ["flask-migration", "FLASK-MIGRATION ", "Flask 迁移项目", "Flask 迁移", "the Flask migration project", "flask_migration"],
)
def test_a_project_is_reached_by_any_of_its_names(tenant, submit, name):
    submit(tenant, "alice", candidate(entity_type="project", entity_id="Flask 迁移项目", field="database", value="MySQL"))

    (result,) = submit(
        tenant, "alice", candidate(entity_type="project", entity_id=name, entity_name=name, field="tech_stack", value="Celery")
    )

    assert Entity.objects.filter(entity_type="project").count() == 1
    project = Entity.objects.get(entity_type="project")
    assert project.entity_id == "flask-migration"
    assert Candidate.objects.get(pk=result.candidate_id).entity == project


def test_a_known_alias_reaches_its_entity_even_when_its_id_differs(tenant, submit):
    submit(tenant, "alice", candidate(entity_type="project", entity_id="atlas", entity_name="星图计划", field="status", value="active"))

    submit(tenant, "alice", candidate(entity_type="project", entity_id="星图计划", field="database", value="TiDB"))

    assert list(Entity.objects.filter(entity_type="project").values_list("entity_id", flat=True)) == ["atlas"]


def test_two_subjects_projects_of_the_same_name_stay_two_entities(tenant, submit):
    for user_id in ("alice", "bob"):
        submit(
            tenant,
            user_id,
            candidate(entity_type="project", entity_id="flask-migration", entity_name="Flask 迁移项目", field="database",
                      value="MySQL" if user_id == "alice" else "SQLite", confidence=0.97),
        )

    projects = Entity.objects.filter(entity_type="project", entity_id="flask-migration")
    assert projects.count() == 2
    assert {f.subject.user_id: f.value for f in Fact.objects.filter(entity__in=projects)} == {
        "alice": "MySQL",
        "bob": "SQLite",
    }


def test_a_new_entity_is_flagged_as_new(tenant, submit):
    (first,) = submit(tenant, "alice", candidate(entity_type="project", entity_id="atlas", field="database", value="TiDB"))

    assert "new_entity" in first.flags
    assert Entity.objects.get(entity_id="atlas").is_new


@pytest.mark.parametrize(
    "entity_type,name,expected",
    [
        ("project", "Flask 迁移项目", "flask-migration"),
        ("project", "our billing service", "billing"),
        ("project", "检索项目", "retrieval"),
        ("project", "推荐系统", "recommendation"),
        ("organization", "the Acme", "acme"),
        ("organization", "星云科技", "星云科技"),
    ],
)
def test_canonical_ids(entity_type, name, expected):
    assert canonical_entity_id(entity_type, name) == expected
    assert project_entity_id(name.upper()) == project_entity_id(name)


def test_evidence_must_really_occur_in_the_message():
    content = "我负责 Flask 迁移项目，项目使用 MySQL。"
    assert evidence_occurs("项目使用 MySQL", content)
    assert evidence_occurs("项目使用  mysql", content)  # spacing and case aside
    assert evidence_occurs("ｍｙｓｑｌ", content)  # full-width forms (NFKC)
    assert not evidence_occurs("项目使用 PostgreSQL", content)
    assert not evidence_occurs("", content)


class TestMerge:
    """Two entities a reviewer recognises as one: aliases and facts move, audited."""

    def setup_projects(self, tenant, submit):
        submit(tenant, "alice", candidate(entity_type="project", entity_id="atlas", entity_name="Atlas",
                                          field="database", value="TiDB", confidence=0.97))
        submit(tenant, "alice", candidate(entity_type="project", entity_id="星图计划", field="tech_stack",
                                          value="Go", confidence=0.97))
        return Entity.objects.get(entity_id="atlas"), Entity.objects.get(entity_type="project", display_name="星图计划")

    def test_aliases_and_facts_move_and_the_name_resolves_to_the_survivor(self, tenant, submit):
        from reviews.actors import Actor
        from reviews.models import AuditEvent
        from reviews.services.entities import entity_merge

        target, source = self.setup_projects(tenant, submit)

        entity_merge(tenant=tenant, source_id=source.pk, target_id=target.pk, actor=Actor("reviewer", "7"))

        assert not Entity.objects.filter(pk=source.pk).exists()
        assert set(Fact.objects.filter(entity=target).values_list("field", "value")) == {("database", "TiDB"), ("tech_stack", "Go")}
        assert "星图计划" in set(EntityAlias.objects.filter(entity=target).values_list("alias", flat=True))
        event = AuditEvent.objects.get(tenant_id=tenant.pk, action="entity.merged")
        assert event.actor == "reviewer:7" and event.subject_user_id == "alice"
        (result,) = submit(tenant, "alice", candidate(entity_type="project", entity_id="星图计划", field="status", value="active"))
        assert Candidate.objects.get(pk=result.candidate_id).entity == target

    def test_another_tenants_or_subjects_entities_cannot_be_merged(self, tenant, other_tenant, submit):
        from reviews.actors import Actor
        from reviews.errors import InvalidInput, NotFound
        from reviews.services.entities import entity_merge

        target, source = self.setup_projects(tenant, submit)
        submit(tenant, "bob", candidate(entity_type="project", entity_id="atlas", field="database", value="MySQL"))
        bobs = Entity.objects.get(subject__user_id="bob", entity_type="project")

        with pytest.raises(NotFound):
            entity_merge(tenant=other_tenant, source_id=source.pk, target_id=target.pk, actor=Actor("reviewer", "7"))
        with pytest.raises(InvalidInput):
            entity_merge(tenant=tenant, source_id=bobs.pk, target_id=target.pk, actor=Actor("reviewer", "7"))
        assert Entity.objects.filter(pk__in=[source.pk, bobs.pk]).count() == 2
