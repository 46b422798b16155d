"""GET/DELETE /api/v1/users/{user_id}/facts and DELETE .../facts/{id} (SPEC §7)."""
import pytest

from reviews.audit import verify_tenant
from reviews.models import AuditEvent, Fact, FactStatus, Scope, Subject
from tests.api.test_candidates_api import assert_error
from tests.erasure.memory import LOCATION, LOCATION_OLD, NAME, OTHER_USER, USER, build_memory

pytestmark = pytest.mark.django_db
URL = f"/api/v1/users/{USER}/facts"


@pytest.fixture
def memory(tenant, publish, submit):
    return build_memory(tenant, publish, submit)


def test_it_lists_every_fact_with_history(admin_client_key, memory, django_assert_max_num_queries):
    with django_assert_max_num_queries(6):
        response = admin_client_key.get(URL)
    assert response.status_code == 200
    body = response.json()
    assert body["user_id"] == USER
    assert len(body["facts"]) == 7
    location = next(f for f in body["facts"] if f["field"] == "location")
    assert (location["value"], location["version"], location["status"]) == (LOCATION, 2, "active")
    assert [v["value"] for v in location["history"]] == [LOCATION_OLD, LOCATION]
    assert location["history"][1]["reason"] == "moved"
    assert {f["entity_type"] for f in body["facts"]} == {"user", "project"}


def test_deleted_facts_are_listed_as_tombstones(admin_client_key, memory):
    admin_client_key.delete(f"{URL}?field=location")
    location = next(f for f in admin_client_key.get(URL).json()["facts"] if f["field"] == "location")
    assert (location["status"], location["value"], location["history"]) == ("deleted", "", [])


def test_delete_by_field_returns_the_receipt(admin_client_key, memory, tenant):
    response = admin_client_key.delete(f"{URL}?field=location")
    assert response.status_code == 200
    receipt = response.json()
    assert receipt["scope"] == {"user_id": USER, "thread_id": None, "entity": None, "field": "location"}
    assert receipt["deleted"]["facts"] == 1 and receipt["deleted"]["fact_versions"] == 2
    assert set(receipt["deleted"]) >= {
        "facts", "fact_versions", "candidates", "messages", "recall_records", "store_items", "embeddings", "audit_values"
    }
    assert receipt["at"]
    event = AuditEvent.objects.filter(tenant_id=tenant.pk).order_by("-seq").first()
    assert (event.action, event.actor) == ("memory.deleted", f"api_key:{admin_client_key.key.prefix}")
    assert Fact.objects.get(pk=memory.facts["name"].pk).value == NAME


def test_delete_by_entity_and_thread(admin_client_key, memory):
    response = admin_client_key.delete(f"{URL}?entity=project:glimmerforge")
    assert response.json()["deleted"]["facts"] == 2
    response = admin_client_key.delete(f"{URL}?thread_id=t-3")
    assert response.json()["deleted"]["facts"] == 1
    assert response.json()["deleted"]["messages"] == 1


def test_delete_without_filters_erases_the_subject(admin_client_key, memory, tenant):
    response = admin_client_key.delete(URL)
    assert response.status_code == 200
    assert response.json()["scope"] == {"user_id": USER, "all": True}
    assert not Fact.objects.filter(subject=memory.subject).exists()
    assert Subject.objects.filter(tenant=tenant, user_id=USER).exists()
    assert verify_tenant(tenant.pk).ok


def test_a_misspelt_filter_is_refused_rather_than_erasing_everything(admin_client_key, memory):
    assert_error(admin_client_key.delete(f"{URL}?thread=t-3"), 400, "invalid")
    assert Fact.objects.filter(subject=memory.subject, status=FactStatus.ACTIVE).count() == 7


@pytest.mark.parametrize("query", ["entity=project", "entity=:x", "field=" + "f" * 81])
def test_malformed_filters_are_400(admin_client_key, memory, query):
    assert_error(admin_client_key.delete(f"{URL}?{query}"), 400, "invalid")


def test_unknown_entity_or_user_is_404(admin_client_key, memory):
    assert_error(admin_client_key.delete(f"{URL}?entity=project:nope"), 404, "not_found")
    assert_error(admin_client_key.delete("/api/v1/users/nobody/facts"), 404, "not_found")
    assert_error(admin_client_key.get("/api/v1/users/nobody/facts"), 404, "not_found")


def test_delete_one_fact(admin_client_key, memory):
    fact_id = memory.facts["health"].pk
    response = admin_client_key.delete(f"{URL}/{fact_id}")
    assert response.status_code == 200
    assert response.json()["scope"] == {"user_id": USER, "fact_id": fact_id}
    assert Fact.objects.get(pk=fact_id).status == FactStatus.DELETED
    # Deleting it again: it is no longer there.
    assert_error(admin_client_key.delete(f"{URL}/{fact_id}"), 404, "not_found")


def test_one_fact_of_another_subject_is_404(admin_client_key, memory):
    other_fact = memory.facts["other"].pk
    assert_error(admin_client_key.delete(f"{URL}/{other_fact}"), 404, "not_found")
    assert Fact.objects.get(pk=other_fact).status == FactStatus.ACTIVE
    assert admin_client_key.delete(f"/api/v1/users/{OTHER_USER}/facts/{other_fact}").status_code == 200


@pytest.mark.parametrize("scopes", [[Scope.REVIEW], [Scope.INGEST, Scope.RECALL, Scope.RECALL_SENSITIVE]])
def test_it_requires_the_admin_scope(make_client, tenant, memory, scopes):
    client = make_client(tenant, scopes)
    assert_error(client.get(URL), 403, "forbidden")
    assert_error(client.delete(URL), 403, "forbidden")
    assert_error(client.delete(f"{URL}/{memory.facts['name'].pk}"), 403, "forbidden")
    assert Fact.objects.filter(subject=memory.subject, status=FactStatus.ACTIVE).count() == 7


def test_it_requires_a_key(client, memory):
    assert client.get(URL).status_code == 401
    assert client.delete(URL).status_code == 401


def test_another_tenants_key_sees_and_deletes_nothing(outsider_client, memory):
    assert_error(outsider_client.get(URL), 404, "not_found")
    assert_error(outsider_client.delete(URL), 404, "not_found")
    assert_error(outsider_client.delete(f"{URL}?field=name"), 404, "not_found")
    assert_error(outsider_client.delete(f"{URL}/{memory.facts['name'].pk}"), 404, "not_found")
    assert Fact.objects.filter(subject=memory.subject, status=FactStatus.ACTIVE).count() == 7
