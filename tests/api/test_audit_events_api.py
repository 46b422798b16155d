"""GET /api/v1/audit/events (SPEC §7): the tenant's events, newest first, cursor-paged,
filtered, tenant-isolated, scope admin."""
import pytest

from reviews.models import AuditAction, AuditEvent, Scope
from reviews.services import governance
from reviews.actors import Actor
from tests.api.test_recall_api import assert_error

URL = "/api/v1/audit/events"
ADMIN = Actor("reviewer", "7")


@pytest.fixture
def changes(tenant):
    for value in (0.6, 0.7, 0.75):
        governance.tenant_policy_update(tenant=tenant, changes={"confirm_below": value}, actor=ADMIN)


def test_newest_first_with_values(admin_client_key, tenant, changes):
    body = admin_client_key.get(URL).json()
    seqs = [row["seq"] for row in body["results"]]
    assert seqs == sorted(seqs, reverse=True)
    assert seqs[0] == AuditEvent.objects.filter(tenant_id=tenant.pk).order_by("-seq").first().seq
    policy = [row for row in body["results"] if row["action"] == AuditAction.TENANT_POLICY_CHANGED]
    assert [row["after"] for row in policy] == [{"confirm_below": 0.75}, {"confirm_below": 0.7}, {"confirm_below": 0.6}]
    assert policy[0]["before"] == {"confirm_below": 0.7} and policy[0]["actor"] == "reviewer:7"


def test_cursor_pages_cover_every_event_once(admin_client_key, tenant, changes):
    seen, url = [], f"{URL}?limit=2"
    while url:
        body = admin_client_key.get(url).json()
        assert len(body["results"]) <= 2
        seen += [row["seq"] for row in body["results"]]
        url = body["next"]
    total = AuditEvent.objects.filter(tenant_id=tenant.pk).count()
    assert sorted(seen, reverse=True) == seen and len(set(seen)) == len(seen) == total


def test_filters_by_action_and_actor(admin_client_key, tenant, changes):
    rows = admin_client_key.get(URL, {"action": "tenant.*", "actor": "reviewer:7"}).json()["results"]
    assert len(rows) == 3 and {row["action"] for row in rows} == {AuditAction.TENANT_POLICY_CHANGED}
    rows = admin_client_key.get(URL, {"action": AuditAction.API_KEY_CREATED}).json()["results"]
    assert [row["object_id"] for row in rows] == [admin_client_key.key.prefix]


def test_filters_by_subject_and_time(admin_client_key, tenant, publish):
    publish(tenant, "u1", field="name", value="Alice")
    publish(tenant, "u2", field="name", value="Bob")
    rows = admin_client_key.get(URL, {"user_id": "u1"}).json()["results"]
    assert rows and {row["subject_user_id"] for row in rows} == {"u1"}
    last = AuditEvent.objects.filter(tenant_id=tenant.pk).order_by("-seq").first()
    rows = admin_client_key.get(URL, {"until": last.created_at.isoformat()}).json()["results"]
    assert last.seq not in [row["seq"] for row in rows]


def test_only_the_callers_tenant(admin_client_key, tenant, other_tenant, outsider_client):
    governance.tenant_policy_update(tenant=other_tenant, changes={"confirm_below": 0.6}, actor=ADMIN)
    for client, own in ((admin_client_key, tenant), (outsider_client, other_tenant)):
        hashes = {row["hash"] for row in client.get(URL, {"limit": 200}).json()["results"]}
        assert hashes == set(AuditEvent.objects.filter(tenant_id=own.pk).values_list("hash", flat=True))


@pytest.mark.parametrize("params", [{"cursor": "not-a-cursor"}, {"limit": 0}, {"limit": 201}, {"since": "yesterday"}, {"colour": "red"}])
def test_bad_parameters_are_a_400(admin_client_key, params):
    assert_error(admin_client_key.get(URL, params), 400, "invalid")


@pytest.mark.parametrize("seq", ["1_000", " 7", "+7", "٣", "0", "-3"])
def test_a_cursor_holds_only_what_the_api_writes(admin_client_key, seq):
    import base64

    token = base64.urlsafe_b64encode(f"seq.{seq}".encode()).decode().rstrip("=")

    assert_error(admin_client_key.get(URL, {"cursor": token}), 400, "invalid")


def test_it_requires_the_admin_scope(tenant, make_client, client):
    reviewer_key = make_client(tenant, [Scope.REVIEW, Scope.RECALL, Scope.INGEST])
    assert_error(reviewer_key.get(URL), 403, "forbidden")
    assert_error(client.get(URL), 401, "unauthenticated")
