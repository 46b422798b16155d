"""The review API (SPEC §7): the queue and approve / reject / defer, with the 409 path."""
import pytest

from reviews.models import AuditEvent, Candidate, Fact, Scope
from tests.conftest import candidate
from tests.review.conftest import approve_as, propose, review_queue  # noqa: F401 (fixture)

LIST = "/api/v1/review/candidates"


def decide(client, item, action, body):
    return client.post_json(f"{LIST}/{item.pk}/{action}", body)


@pytest.fixture
def review_client(tenant, make_client):
    return make_client(tenant, [Scope.REVIEW])


class TestList:
    def test_pending_review_by_default_in_spec_shape(self, review_queue, review_client):
        response = review_client.get(LIST)
        assert response.status_code == 200
        body = response.json()
        assert [row["id"] for row in body["results"]] == [
            review_queue.evidence.pk, review_queue.conflict.pk, review_queue.new_entity.pk
        ]
        assert body["next"] is None
        first = body["results"][0]
        for key in ("id", "version", "user_id", "entity_type", "entity_id", "field", "value", "confidence", "kind",
                    "scope", "thread_id", "status", "reason", "conflict", "source", "source_message_id", "evidence",
                    "created_at"):
            assert key in first
        assert (first["user_id"], first["field"], first["value"], first["conflict"]) == ("alice", "location", "Berlin", None)
        conflict = body["results"][1]["conflict"]
        assert (conflict["value"], conflict["fact_id"]) == ("MySQL", review_queue.database_fact.pk)

    @pytest.mark.parametrize(
        "params,expected",
        [
            ({"status": "pending_user"}, ["waiting_for_user"]),
            ({"field": "location"}, ["evidence"]),
            ({"field": "relation:*"}, []),
            ({"entity_type": "organization"}, ["new_entity"]),
            ({"sensitivity": "personal"}, ["evidence"]),
            ({"conflict": "true"}, ["conflict"]),
            ({"new_entity": "false"}, ["evidence"]),
            ({"user_id": "bob"}, []),
            ({"min_confidence": "0.95"}, []),
            ({"max_confidence": "0.9", "age": "lt1d"}, ["evidence", "conflict", "new_entity"]),
        ],
    )
    def test_filters(self, review_queue, review_client, params, expected):
        response = review_client.get(LIST, params)
        assert response.status_code == 200, response.json()
        assert [row["id"] for row in response.json()["results"]] == [getattr(review_queue, name).pk for name in expected]

    def test_cursor_pages_through_everything(self, tenant, review_client):
        created = propose(tenant, "bob", *[candidate(field="preference", value=f"v{i}") for i in range(7)])
        seen, url = [], f"{LIST}?limit=3&field=preference"
        while url:
            body = review_client.get(url).json()
            seen += [row["id"] for row in body["results"]]
            url = body["next"]
            assert url is None or ("field=preference" in url and url.startswith("http://testserver/"))
        assert seen == [c.pk for c in created]

    @pytest.mark.parametrize(
        "params", [{"limit": "201"}, {"limit": "0"}, {"status": "nope"}, {"min_confidence": "2"},
                   {"cursor": "%%%"}, {"unknown": "1"}, {"conflict": "maybe"}]
    )
    def test_bad_parameters_are_400_in_the_error_shape(self, review_client, params):
        response = review_client.get(LIST, params)
        assert response.status_code == 400
        assert response.json()["error"]["code"] == "invalid"

    def test_it_requires_review_scope(self, tenant, make_client, review_queue):
        response = make_client(tenant, [Scope.INGEST, Scope.RECALL]).get(LIST)
        assert response.status_code == 403 and response.json()["error"]["code"] == "forbidden"

    def test_it_requires_a_key(self, client):
        assert client.get(LIST).status_code == 401

    def test_another_tenant_sees_nothing(self, review_queue, outsider_client):
        assert outsider_client.get(LIST, {"status": "all"}).json() == {"results": [], "next": None}

    def test_query_count_does_not_grow_with_page_size(self, tenant, review_client, django_assert_max_num_queries):
        propose(tenant, "bob", *[candidate(field="preference", value=f"v{i}") for i in range(60)])
        for limit in (2, 60):
            with django_assert_max_num_queries(3):
                assert len(review_client.get(LIST, {"limit": limit}).json()["results"]) == limit


class TestDecisions:
    def test_approve(self, review_queue, review_client):
        response = decide(review_client, review_queue.evidence, "approve", {"version": 1})
        assert response.status_code == 200
        body = response.json()
        assert (body["status"], body["version"], body["reason"]) == ("approved", 2, "reviewer_approved")
        assert body["decided_by"] == f"api_key:{review_client.key.prefix}"
        assert AuditEvent.objects.filter(action="candidate.approved", actor=body["decided_by"]).count() == 1

    def test_approve_with_a_value_edits(self, review_queue, review_client):
        body = decide(review_client, review_queue.evidence, "approve", {"version": 1, "value": "Berlin, DE"}).json()
        assert (body["value"], body["reason"]) == ("Berlin, DE", "reviewer_edited")
        assert Fact.objects.get(pk=Candidate.objects.get(pk=body["id"]).fact_id).value == "Berlin, DE"

    def test_reject_needs_a_reason(self, review_queue, review_client):
        response = decide(review_client, review_queue.evidence, "reject", {"version": 1})
        assert response.status_code == 400 and "reason" in response.json()["error"]["details"]
        body = decide(review_client, review_queue.evidence, "reject", {"version": 1, "reason": "moved"}).json()
        assert body["status"] == "rejected"
        assert AuditEvent.objects.filter(action="candidate.rejected").count() == 1

    def test_defer(self, review_queue, review_client):
        body = decide(review_client, review_queue.evidence, "defer", {"version": 1}).json()
        assert (body["status"], body["reason"]) == ("pending_user", "deferred")
        assert AuditEvent.objects.filter(action="candidate.deferred").count() == 1

    def test_a_stale_version_is_409_naming_who_decided(self, review_queue, review_client, reviewer):
        approve_as(reviewer, review_queue.evidence)
        response = decide(review_client, review_queue.evidence, "reject", {"version": 1, "reason": "no"})
        assert response.status_code == 409
        error = response.json()["error"]
        assert error["code"] == "stale_version"
        assert (error["details"]["decided_by"], error["details"]["status"]) == (f"reviewer:{reviewer.pk}", "approved")
        assert Candidate.objects.get(pk=review_queue.evidence.pk).status == "approved"

    def test_deferring_what_waits_for_the_user_is_409(self, review_queue, review_client):
        response = decide(review_client, review_queue.waiting_for_user, "defer", {"version": 1})
        assert response.status_code == 409 and response.json()["error"]["code"] == "invalid_transition"

    @pytest.mark.parametrize("body", [{}, {"version": 0}, {"version": "x"}, {"version": 1, "extra": 1}])
    def test_bad_bodies_are_400(self, review_queue, review_client, body):
        assert decide(review_client, review_queue.evidence, "approve", body).status_code == 400

    @pytest.mark.parametrize("action", ["approve", "reject", "defer"])
    def test_another_tenants_item_is_404(self, review_queue, outsider_client, action):
        response = decide(outsider_client, review_queue.evidence, action, {"version": 1, "reason": "x"})
        assert response.status_code == 404 and response.json()["error"]["code"] == "not_found"
        assert Candidate.objects.get(pk=review_queue.evidence.pk).status == "pending_review"

    @pytest.mark.parametrize("action", ["approve", "reject", "defer"])
    def test_it_requires_review_scope(self, tenant, make_client, review_queue, action):
        response = decide(make_client(tenant, [Scope.INGEST]), review_queue.evidence, action, {"version": 1, "reason": "x"})
        assert response.status_code == 403
        assert Candidate.objects.get(pk=review_queue.evidence.pk).status == "pending_review"
