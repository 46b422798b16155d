"""GET /api/v1/audit/export (SPEC §7): streamed, filtered, tenant-bound, admin scope."""
import csv
import io
import json

import pytest

from reviews.exports import COLUMNS, verify_export_file
from reviews.models import AuditChainHead, AuditEvent, Scope
from tests.api.test_candidates_api import assert_error
from tests.erasure.memory import USER, build_memory

pytestmark = pytest.mark.django_db
URL = "/api/v1/audit/export"


@pytest.fixture
def memory(tenant, publish, submit):
    return build_memory(tenant, publish, submit)


def streamed(response) -> bytes:
    assert response.status_code == 200, response.content
    assert response.streaming
    return b"".join(response.streaming_content)


def test_jsonl_by_default_with_manifest_matching_the_chain(admin_client_key, memory, tenant):
    response = admin_client_key.get(URL)
    assert response["Content-Type"].startswith("application/x-ndjson")
    assert response["Content-Disposition"].startswith('attachment; filename="audit-tenant-1-')
    data = streamed(response)
    lines = [json.loads(line) for line in data.splitlines()]
    manifest = lines[-1]["manifest"]
    head = AuditChainHead.objects.get(tenant_id=tenant.pk)
    # The export's own "audit.exported" event is recorded first, so it is the head.
    assert lines[-2]["action"] == "audit.exported"
    assert manifest["chain_head"] == {"seq": head.seq, "hash": head.hash}
    assert manifest["rows"] == len(lines) - 1 == head.seq
    assert verify_export_file(io.BytesIO(data)).ok


def test_the_export_itself_is_audited(admin_client_key, memory, tenant):
    streamed(admin_client_key.get(f"{URL}?format=csv&action=fact.*"))
    event = AuditEvent.objects.filter(tenant_id=tenant.pk).order_by("-seq").first()
    assert (event.action, event.actor) == ("audit.exported", f"api_key:{admin_client_key.key.prefix}")
    assert event.payload.after["format"] == "csv"
    assert event.payload.after["filters"]["action"] == "fact.*"


def test_csv(admin_client_key, memory):
    response = admin_client_key.get(f"{URL}?format=csv")
    assert response["Content-Type"].startswith("text/csv")
    records = list(csv.reader(io.StringIO(streamed(response).decode())))
    assert records[0] == COLUMNS and records[-1][0] == "#manifest"


def test_filters(admin_client_key, memory, tenant):
    last = AuditEvent.objects.filter(tenant_id=tenant.pk).order_by("-seq").first()
    query = f"user_id={USER}&action=fact.*&since=2000-01-01T00:00:00Z&until={last.created_at.isoformat()}"
    data = streamed(admin_client_key.get(URL, {"user_id": USER, "action": "fact.*", "since": "2000-01-01T00:00:00Z"}))
    rows = [json.loads(line) for line in data.splitlines()][:-1]
    assert rows and {row["subject_user_id"] for row in rows} == {USER}
    assert {row["action"] for row in rows} <= {"fact.created", "fact.updated", "fact.edited", "fact.merged"}
    assert streamed(admin_client_key.get(f"{URL}?{query.replace('+', '%2B')}"))


def test_an_empty_range_is_an_empty_export_with_a_manifest(admin_client_key, memory):
    data = streamed(admin_client_key.get(URL, {"since": "2999-01-01T00:00:00Z"}))
    lines = [json.loads(line) for line in data.splitlines()]
    assert len(lines) == 1 and lines[0]["manifest"]["rows"] == 0


@pytest.mark.parametrize(
    "params",
    [
        {"format": "xml"},
        {"since": "yesterday"},
        {"since": "2024-01-02T00:00:00Z", "until": "2024-01-01T00:00:00Z"},
        {"object": "fact:1:2 x" * 20},
        {"tenant": "tenant-2"},
    ],
)
def test_bad_parameters_are_400(admin_client_key, memory, params):
    assert_error(admin_client_key.get(URL, params), 400, "invalid")


@pytest.mark.parametrize("scopes", [[Scope.REVIEW], [Scope.INGEST, Scope.RECALL, Scope.RECALL_SENSITIVE]])
def test_it_requires_the_admin_scope(make_client, tenant, memory, scopes):
    assert_error(make_client(tenant, scopes).get(URL), 403, "forbidden")


def test_it_requires_a_key(client):
    assert client.get(URL).status_code == 401


def test_another_tenants_key_exports_only_its_own_events(outsider_client, memory, other_tenant):
    data = streamed(outsider_client.get(URL, {"user_id": USER}))
    lines = [json.loads(line) for line in data.splitlines()]
    assert len(lines) == 1 and lines[0]["manifest"]["tenant"] == other_tenant.slug
    data = streamed(outsider_client.get(URL))
    assert {json.loads(line).get("tenant_id") for line in data.splitlines()[:-1]} == {other_tenant.pk}


def test_it_reads_in_pages_not_all_at_once(admin_client_key, memory, tenant, django_assert_num_queries, monkeypatch):
    """Memory stays flat: one keyset query per page of events, however long the chain."""
    monkeypatch.setattr("reviews.exports.CHUNK", 5)
    response = admin_client_key.get(URL)
    total = AuditEvent.objects.filter(tenant_id=tenant.pk).count()
    with django_assert_num_queries(-(-total // 5) + 1):  # the pages, then the empty one
        data = b"".join(response.streaming_content)
    assert json.loads(data.splitlines()[-1])["manifest"]["rows"] == total
