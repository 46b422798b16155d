"""The LangGraph Store projection of SPEC §5: layout, filters, idempotence, every change."""
from datetime import timedelta

import pytest
from django.utils import timezone

from reviews.actors import Actor
from reviews.models import Fact
from reviews.publication import entity_namespace, project_subject, store_location
from reviews.services.erasure import fact_delete
from reviews.services.facts import fact_edit

from .conftest import user_item

pytestmark = pytest.mark.django_db
REVIEWER = Actor("reviewer", "r1")


def test_the_store_matches_the_database_engine(store, settings):
    engine = settings.DATABASES["default"]["ENGINE"]
    kind = store_location()[0]
    assert kind == ("postgres" if engine.endswith("postgresql") else "sqlite")
    assert type(store).__name__ == ("PostgresStore" if kind == "postgres" else "SqliteStore")


def test_user_facts_land_under_the_users_key(store, publish, tenant):
    name = publish(tenant, "u1", field="name", value="Alice", source_message_id="m1")
    publish(tenant, "u1", field="preference", value="green tea")
    publish(tenant, "u1", field="preference", value="short answers")

    project_subject(name.subject_id)

    value = user_item(store, "u1")
    assert set(value) == {"facts"}
    assert value["facts"]["name"] == {
        "value": "Alice",
        "confidence": name.confidence,
        "source_message_id": "m1",
        "updated_at": name.updated_at.isoformat(),
    }
    assert [entry["value"] for entry in value["facts"]["preference"]] == ["green tea", "short answers"]


def test_other_entities_land_under_the_user_by_type(store, publish, tenant):
    fact = publish(tenant, "u1", entity_type="project", entity_id="flask-migration", field="database", value="MySQL")
    publish(tenant, "u1", entity_type="project", entity_id="flask-migration", field="tech_stack", value="Flask")

    project_subject(fact.subject_id)

    item = store.get(("tenants", "tenant-1", "users", "u1", "project"), "flask-migration")
    assert item.value["facts"]["database"]["value"] == "MySQL"
    assert [entry["value"] for entry in item.value["facts"]["tech_stack"]] == ["Flask"]
    assert user_item(store, "u1") is None  # no user facts: no user item


def test_sensitive_thread_and_expired_facts_are_not_projected(store, publish, tenant):
    name = publish(tenant, "u1", field="name", value="Alice")
    publish(tenant, "u1", field="health", value="asthma")
    publish(tenant, "u1", field="preference", value="French today", scope="thread", thread_id="t1")
    old = publish(tenant, "u1", field="role", value="intern")
    Fact.objects.filter(pk=old.pk).update(expires_at=timezone.now() - timedelta(minutes=1))

    project_subject(name.subject_id)

    assert set(user_item(store, "u1")["facts"]) == {"name"}


def test_edit_and_delete_reach_the_store(store, publish, tenant):
    name = publish(tenant, "u1", field="name", value="Alice")
    project = publish(tenant, "u1", entity_type="project", entity_id="site", field="status", value="live")
    project_subject(name.subject_id)

    fact_edit(tenant=tenant, fact_id=name.pk, value="Alicia", actor=REVIEWER)
    project_subject(name.subject_id)
    assert user_item(store, "u1")["facts"]["name"]["value"] == "Alicia"

    fact_delete(tenant=tenant, fact_id=project.pk, actor=REVIEWER)
    fact_delete(tenant=tenant, fact_id=name.pk, actor=REVIEWER)
    drift = project_subject(name.subject_id)
    assert user_item(store, "u1") is None
    assert store.get(entity_namespace("tenant-1", "u1", "project"), "site") is None
    assert len(drift.extra) == 2


def test_projection_is_idempotent(store, publish, tenant):
    fact = publish(tenant, "u1", field="name", value="Alice")

    first = project_subject(fact.subject_id)
    second = project_subject(fact.subject_id)

    assert first.counts == {"missing": 1, "changed": 0, "extra": 0}
    assert not second


def test_a_user_id_with_periods_is_escaped_in_namespaces(store, publish, tenant):
    fact = publish(tenant, "alice.smith@example.com", entity_type="project", entity_id="site", field="status", value="live")
    publish(tenant, "alice.smith@example.com", field="name", value="Alice")

    project_subject(fact.subject_id)

    assert user_item(store, "alice.smith@example.com")["facts"]["name"]["value"] == "Alice"
    namespace = ("tenants", "tenant-1", "users", "alice%2Esmith@example%2Ecom", "project")
    assert store.get(namespace, "site").value["facts"]["status"]["value"] == "live"


def test_tenants_do_not_share_items(store, publish, tenant, other_tenant):
    mine = publish(tenant, "u1", field="name", value="Alice")
    theirs = publish(other_tenant, "u1", field="name", value="Olga")

    project_subject(mine.subject_id)
    project_subject(theirs.subject_id)

    assert user_item(store, "u1")["facts"]["name"]["value"] == "Alice"
    assert user_item(store, "u1", "tenant-2")["facts"]["name"]["value"] == "Olga"


def test_a_commit_enqueues_the_projection(store, submit, tenant, django_capture_on_commit_callbacks):
    from tests.conftest import candidate

    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        submit(tenant, "u1", candidate(field="name", value="Alice", confidence=0.97), candidate(field="role", value="dev", confidence=0.97))

    assert len(callbacks) == 2  # one projection and one embedding sync per subject per transaction
    assert set(user_item(store, "u1")["facts"]) == {"name", "role"}


@pytest.mark.parametrize(
    "url,expected",
    [
        ("sqlite:////var/lib/mp/store.sqlite3", ("sqlite", "/var/lib/mp/store.sqlite3")),
        ("sqlite:///:memory:", ("sqlite", ":memory:")),
        ("postgresql://store@db:5432/memory", ("postgres", "postgresql://store@db:5432/memory")),
    ],
)
def test_memory_store_url_chooses_the_store(settings, url, expected):
    settings.MEMORY_STORE_URL = url
    assert store_location() == expected


def test_an_unknown_store_url_is_refused(settings):
    settings.MEMORY_STORE_URL = "redis://127.0.0.1:6379/0"
    with pytest.raises(ValueError, match="MEMORY_STORE_URL"):
        store_location()


def test_a_sqlite_store_elsewhere_gets_the_same_projection(settings, publish, tenant, tmp_path):
    from reviews.publication import close_store, get_store

    fact = publish(tenant, "u1", field="name", value="Alice")
    close_store()
    settings.MEMORY_STORE_URL = f"sqlite:///{tmp_path}/store.sqlite3"
    try:
        store = get_store()
        assert type(store).__name__ == "SqliteStore"
        project_subject(fact.subject_id)
        assert user_item(store, "u1")["facts"]["name"]["value"] == "Alice"
        assert not project_subject(fact.subject_id)
    finally:
        close_store()
