"""The real ``mem0ai`` client against a live server (SPEC §7a): unchanged client code,
governed semantics, the scopes of SPEC §7 and tenant isolation."""
import os
import tempfile

import pytest

# Before mem0 is imported: no telemetry, and its config file in a scratch directory.
os.environ["MEM0_TELEMETRY"] = "False"
os.environ.setdefault("MEM0_DIR", tempfile.mkdtemp(prefix="mem0-"))

from mem0 import AsyncMemoryClient, MemoryClient  # noqa: E402
from mem0.exceptions import AuthenticationError, MemoryNotFoundError, ValidationError  # noqa: E402

from reviews.audit import verify_tenant  # noqa: E402
from reviews.models import AuditEvent, Fact, FactStatus, Message, RecallRecord, Scope  # noqa: E402
from tests.compat.conftest import USER, run_async  # noqa: E402

pytestmark = pytest.mark.django_db(transaction=True)

READ_WRITE = [Scope.INGEST, Scope.RECALL, Scope.ADMIN]


@pytest.fixture
def host(live_server):
    return f"{live_server.url}/compat/mem0"




def _values(results):
    return {item["metadata"]["field"]: item["metadata"]["value"] for item in results}


def test_the_sync_client_works_unchanged(host, key, memory, tenant):
    api_key, raw = key(*READ_WRITE)
    client = MemoryClient(api_key=raw, host=host)
    assert (client.org_id, client.project_id) == ("tenant-1", "tenant-1")

    added = client.add([{"role": "user", "content": "I live in Berlin."}], user_id=USER)
    assert added["status"] == "PENDING" and added["accepted"] == 1
    assert Message.objects.filter(tenant=tenant, subject__user_id=USER, content="I live in Berlin.").exists()

    listed = client.get_all(filters={"user_id": USER})
    # Published facts only: the sensitive one needs recall:sensitive, Berlin awaits the user.
    assert _values(listed["results"]) == {"name": "Alice", "database": "PostgreSQL"}
    assert listed["count"] == 2 and listed["next"] is None
    name = next(item for item in listed["results"] if item["metadata"]["field"] == "name")
    assert name["memory"] == "name: Alice" and name["user_id"] == USER and name["categories"] == ["identity"]

    found = client.search("which database", filters={"user_id": USER}, top_k=5)["results"]
    assert found[0]["memory"] == "project flask-migration database: PostgreSQL"
    assert found[0]["score"] > 0 and found[0]["score"] >= found[-1]["score"]

    database_id = str(memory["database"].pk)
    assert client.get(database_id)["metadata"]["value"] == "PostgreSQL"
    assert [entry["event"] for entry in client.history(database_id)] == ["ADD"]

    corrected = client.update(database_id, text="MySQL")
    assert corrected["status"] == "auto_approved"  # an explicit correction of an auto-approvable field
    assert client.get(database_id)["metadata"]["value"] == "MySQL"
    history = client.history(database_id)
    assert [(entry["old_memory"], entry["new_memory"]) for entry in history] == [(None, "PostgreSQL"), ("PostgreSQL", "MySQL")]

    entities = client.users()["results"]
    assert [(entity["name"], entity["total_memories"]) for entity in entities] == [(USER, 3)]

    receipt = client.delete(database_id)["receipt"]
    assert receipt["deleted"]["facts"] == 1 and receipt["scope"]["fact_id"] == memory["database"].pk
    assert Fact.objects.get(pk=memory["database"].pk).status == FactStatus.DELETED
    with pytest.raises(MemoryNotFoundError):
        client.get(database_id)

    erased = client.delete_all(user_id=USER)["receipt"]
    assert erased["scope"]["user_id"] == USER and erased["deleted"]["facts"] >= 2
    assert client.get_all(filters={"user_id": USER})["results"] == []

    # Every read is traced like a recall; every write is audited on the chain.
    records = RecallRecord.objects.filter(tenant=tenant)
    assert {(record.caller, record.query["channel"]) for record in records} == {(f"api_key:{api_key.prefix}", "mem0")}
    actions = set(AuditEvent.objects.filter(tenant_id=tenant.pk, actor=f"api_key:{api_key.prefix}").values_list("action", flat=True))
    assert {"messages.ingested", "fact.deleted", "subject.erased"} <= actions
    assert verify_tenant(tenant.pk).ok


def test_the_async_client_works_unchanged(host, key, memory):
    _, raw = key(*READ_WRITE)
    database_id = str(memory["database"].pk)

    async def scenario():
        async with AsyncMemoryClient(api_key=raw, host=host) as client:
            added = await client.add("I live in Berlin.", user_id=USER)
            listed = await client.get_all(filters={"user_id": USER})
            found = await client.search("database", filters={"user_id": USER})
            one = await client.get(database_id)
            history = await client.history(database_id)
            users = await client.users()
            corrected = await client.update(database_id, text="SQLite")
            deleted = await client.delete(database_id)
            erased = await client.delete_all(user_id=USER)
            return added, listed, found, one, history, users, corrected, deleted, erased

    added, listed, found, one, history, users, corrected, deleted, erased = run_async(scenario())
    assert added["status"] == "PENDING"
    assert _values(listed["results"]) == {"name": "Alice", "database": "PostgreSQL"}
    assert found["results"][0]["id"] == database_id
    assert one["memory"] == "project flask-migration database: PostgreSQL" and len(history) == 1
    assert users["results"][0]["name"] == USER
    assert corrected["status"] == "auto_approved"
    assert deleted["receipt"]["scope"]["fact_id"] == memory["database"].pk
    assert erased["receipt"]["scope"]["user_id"] == USER
    assert not Fact.objects.filter(subject__user_id=USER, status=FactStatus.ACTIVE).exists()


def test_sensitive_memories_need_the_recall_sensitive_scope(host, key, memory):
    health_id = str(memory["health"].pk)
    plain = MemoryClient(api_key=key(Scope.RECALL)[1], host=host)
    with pytest.raises(MemoryNotFoundError):
        plain.get(health_id)
    cleared = MemoryClient(api_key=key(Scope.RECALL, Scope.RECALL_SENSITIVE)[1], host=host)
    assert cleared.get(health_id)["metadata"]["value"] == "asthma"
    # As with the recall API, sensitive facts come only when asked for.
    assert "health" not in _values(cleared.get_all(filters={"user_id": USER})["results"])
    assert "health" in _values(cleared.get_all(filters={"user_id": USER}, include_sensitive=True)["results"])
    found = cleared.search("asthma", filters={"user_id": USER}, include_sensitive=True)["results"]
    assert found[0]["metadata"]["value"] == "asthma"
    with pytest.raises(AuthenticationError):  # asking without the scope is refused, not ignored
        plain.get_all(filters={"user_id": USER}, include_sensitive=True)


def test_a_recall_only_key_cannot_write_or_delete(host, key, memory, tenant):
    client = MemoryClient(api_key=key(Scope.RECALL)[1], host=host)
    database_id = str(memory["database"].pk)
    with pytest.raises(AuthenticationError) as refused:
        client.delete(database_id)
    assert refused.value.debug_info["status_code"] == 403
    assert "'admin' scope" in refused.value.message
    with pytest.raises(AuthenticationError):
        client.delete_all(user_id=USER)
    with pytest.raises(AuthenticationError):
        client.update(database_id, text="MySQL")
    with pytest.raises(AuthenticationError):
        client.add("I live in Paris.", user_id=USER)
    assert Fact.objects.get(pk=memory["database"].pk).status == FactStatus.ACTIVE
    assert not Message.objects.filter(tenant=tenant).exists()


def test_an_ingest_only_key_cannot_read(host, key, memory):
    client = MemoryClient(api_key=key(Scope.INGEST)[1], host=host)
    with pytest.raises(AuthenticationError):
        client.search("database", filters={"user_id": USER})
    with pytest.raises(AuthenticationError):
        client.get_all(filters={"user_id": USER})
    with pytest.raises(AuthenticationError):
        client.get(str(memory["name"].pk))


def test_an_unknown_key_is_refused_at_once(host):
    with pytest.raises(ValueError, match="Unknown or revoked API key"):
        MemoryClient(api_key="mp_not-a-real-key", host=host)


def test_another_tenant_sees_and_deletes_nothing(host, key, memory, other_tenant):
    outsider = MemoryClient(api_key=key(*Scope.values, of=other_tenant)[1], host=host)
    assert outsider.org_id == "tenant-2"
    for memory_id in (memory["name"].pk, memory["database"].pk):
        with pytest.raises(MemoryNotFoundError):
            outsider.get(str(memory_id))
        with pytest.raises(MemoryNotFoundError):
            outsider.history(str(memory_id))
        with pytest.raises(MemoryNotFoundError):
            outsider.update(str(memory_id), text="hijacked")
        with pytest.raises(MemoryNotFoundError):
            outsider.delete(str(memory_id))
    assert outsider.get_all(filters={"user_id": USER})["results"] == []
    assert outsider.search("Alice", filters={"user_id": USER})["results"] == []
    assert outsider.users()["results"] == []
    with pytest.raises(MemoryNotFoundError):
        outsider.delete_all(user_id=USER)
    assert Fact.objects.filter(subject__user_id=USER, status=FactStatus.ACTIVE).count() == 3


def test_bad_input_is_a_client_error_with_a_detail(host, key, memory):
    client = MemoryClient(api_key=key(*READ_WRITE)[1], host=host)
    with pytest.raises(ValidationError) as missing_user:
        client.get_all(filters={"agent_id": "helper"})
    assert "user_id" in str(missing_user.value.details)
    with pytest.raises(ValidationError):
        client.search("database", filters={"user_id": USER}, top_k=0)
    with pytest.raises(ValidationError):
        client.delete_all()  # never "delete everything"
    with pytest.raises(MemoryNotFoundError):
        client.get("not-a-number")
    assert Fact.objects.filter(subject__user_id=USER, status=FactStatus.ACTIVE).count() == 3
