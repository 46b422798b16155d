"""`manage.py publish --check` reports drift; `--rebuild` makes the store match exactly."""
import pytest
from django.core.management import CommandError, call_command

from reviews.models import Fact
from reviews.publication import entity_namespace, project_subject, reconcile

from .conftest import user_item

pytestmark = pytest.mark.django_db


def run(*args):
    from io import StringIO

    out = StringIO()
    call_command("publish", *args, stdout=out)
    return out.getvalue()


@pytest.fixture
def drifted(store, publish, tenant):
    """A store that lost one item, holds a stale value, and has items nobody knows."""
    name = publish(tenant, "u1", field="name", value="Alice")
    publish(tenant, "u2", field="name", value="Bob")
    project = publish(tenant, "u3", entity_type="project", entity_id="site", field="status", value="live")
    for fact in (name, project):
        project_subject(fact.subject_id)
    Fact.objects.filter(pk=name.pk).update(value="Alicia")  # changed behind the projection's back
    store.put(entity_namespace("tenant-1", "ghost", "project"), "old", {"facts": {}})  # unknown user
    store.put(("tenants", "tenant-1", "users"), "ghost", {"facts": {}})  # unknown user key
    store.put(("tenants", "gone-tenant", "users"), "u1", {"facts": {}})  # unknown tenant
    return store


def test_check_reports_every_kind_of_drift(drifted):
    with pytest.raises(CommandError, match="missing 1, changed 1, extra 3"):
        run("--check")


def test_rebuild_repairs_everything_exactly(drifted):
    output = run("--rebuild")

    assert "missing 1, changed 1, extra 3" in output
    assert user_item(drifted, "u1")["facts"]["name"]["value"] == "Alicia"
    assert user_item(drifted, "u2")["facts"]["name"]["value"] == "Bob"
    assert user_item(drifted, "ghost") is None
    assert drifted.get(("tenants", "gone-tenant", "users"), "u1") is None
    assert "matches the facts" in run("--check")
    assert not reconcile()


def test_check_of_one_tenant_leaves_other_tenants_alone(drifted, other_tenant, publish):
    theirs = publish(other_tenant, "u9", field="name", value="Olga")
    project_subject(theirs.subject_id)

    with pytest.raises(CommandError, match="missing 1, changed 1, extra 2"):
        run("--check", "--tenant", "tenant-1")


def test_an_unknown_tenant_is_an_error(store):
    with pytest.raises(CommandError, match="No tenant"):
        run("--check", "--tenant", "nope")


def test_rebuild_on_an_empty_store(store, publish, tenant):
    publish(tenant, "u1", field="name", value="Alice")

    run("--rebuild")

    assert user_item(store, "u1")["facts"]["name"]["value"] == "Alice"
