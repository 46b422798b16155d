"""GET /metrics (SPEC §8): 404 while MEMORY_METRICS_TOKEN is unset, the token required,
the series counted where things happen and read from the database at scrape time."""
import re

import pytest
from django.db import transaction
from prometheus_client.parser import text_string_to_metric_families

from reviews.actors import Actor
from reviews.models import Candidate, Scope
from reviews.services.candidates import candidate_approve, candidate_reject
from reviews.webhooks.delivery import deliver_due
from tests.conftest import candidate
from tests.webhooks.conftest import endpoint, private_allowed, receiver  # noqa: F401 - fixtures

TOKEN = "scrape-me-0123456789"


@pytest.fixture
def metrics_on(settings):
    settings.MEMORY_METRICS_TOKEN = TOKEN
    settings.PROMETHEUS_MULTIPROC_DIR = ""
    return settings


def scrape(client) -> dict[tuple, float]:
    response = client.get("/metrics", HTTP_AUTHORIZATION=f"Bearer {TOKEN}")
    assert response.status_code == 200, response.content
    assert response["Content-Type"].startswith("text/plain")
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(response.content.decode())
        for sample in family.samples
    }


def value(samples, name, **labels) -> float:
    return samples.get((name, tuple(sorted(labels.items()))), 0.0)


def test_it_is_not_there_while_the_token_is_unset(client, db, settings):
    settings.MEMORY_METRICS_TOKEN = ""
    assert client.get("/metrics").status_code == 404
    assert client.get("/metrics", HTTP_AUTHORIZATION="Bearer ").status_code == 404


@pytest.mark.parametrize("header", [None, "Bearer wrong", f"Token {TOKEN}", f"Bearer {TOKEN}x"])
def test_it_requires_the_token(client, db, metrics_on, header):
    extra = {"HTTP_AUTHORIZATION": header} if header else {}
    response = client.get("/metrics", **extra)
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "unauthenticated"
    assert b"memory_portal_" not in response.content


def test_queue_items_by_tenant_and_status_and_the_oldest_age(client, tenant, other_tenant, submit, metrics_on):
    submit(tenant, "u1", candidate(field="role", value="engineer", confidence=0.9))  # pending_review
    submit(tenant, "u1", candidate(field="location", value="Berlin", confidence=0.6))  # pending_user
    submit(other_tenant, "u2", candidate(field="role", value="chef", confidence=0.9))
    samples = scrape(client)
    assert value(samples, "memory_portal_queue_items", tenant=tenant.slug, status="pending_review") == 1
    assert value(samples, "memory_portal_queue_items", tenant=tenant.slug, status="pending_user") == 1
    assert value(samples, "memory_portal_queue_items", tenant=other_tenant.slug, status="pending_review") == 1
    assert 0 <= value(samples, "memory_portal_queue_oldest_age_seconds", tenant=tenant.slug) < 60
    assert ("memory_portal_recall_records_waiting", ()) in samples


def test_decisions_and_time_to_decision_are_counted_once_committed(
    client, tenant, submit, metrics_on, django_capture_on_commit_callbacks
):
    before = scrape(client)
    first, second = (
        Candidate.objects.get(pk=r.candidate_id)
        for r in submit(tenant, "u1", candidate(field="role", value="engineer", confidence=0.9),
                        candidate(field="name", value="Al", confidence=0.9))
    )
    with django_capture_on_commit_callbacks(execute=True):
        candidate_approve(tenant=tenant, candidate_id=first.pk, version=first.version, actor=Actor("reviewer", "1"))
        candidate_reject(tenant=tenant, candidate_id=second.pk, version=second.version, note="no",
                         actor=Actor("reviewer", "1"))
    after = scrape(client)
    for outcome in ("approved", "rejected"):
        assert value(after, "memory_portal_decisions_total", outcome=outcome) == value(
            before, "memory_portal_decisions_total", outcome=outcome) + 1
    assert value(after, "memory_portal_time_to_decision_seconds_count") == value(
        before, "memory_portal_time_to_decision_seconds_count") + 2


def test_a_rolled_back_decision_counts_nothing(client, tenant, submit, metrics_on, django_capture_on_commit_callbacks):
    (result,) = submit(tenant, "u1", candidate(field="role", value="engineer", confidence=0.9))
    item = Candidate.objects.get(pk=result.candidate_id)
    before = scrape(client)
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        with pytest.raises(RuntimeError), transaction.atomic():
            candidate_approve(tenant=tenant, candidate_id=item.pk, version=item.version, actor=Actor("reviewer", "1"))
            raise RuntimeError("rolled back")
    assert callbacks == []
    assert scrape(client).get(("memory_portal_decisions_total", (("outcome", "approved"),)), 0.0) == value(
        before, "memory_portal_decisions_total", outcome="approved")


def test_recall_latency_is_observed(client, tenant, make_client, metrics_on):
    recall = make_client(tenant, [Scope.RECALL])
    before = value(scrape(client), "memory_portal_recall_latency_seconds_count")
    for _ in range(3):
        assert recall.get("/api/v1/recall", {"user_id": "u1"}).status_code == 200
    assert value(scrape(client), "memory_portal_recall_latency_seconds_count") == before + 3


def test_webhook_deliveries_by_outcome(client, tenant, endpoint, receiver, publish, metrics_on):
    receiver.answer_with((500, 0))
    before = scrape(client)
    publish(tenant, "u1", field="name", value="Alice")
    deliver_due()
    deliver_due()
    after = scrape(client)
    for outcome in ("http_error", "delivered"):
        assert value(after, "memory_portal_webhook_deliveries_total", outcome=outcome) == value(
            before, "memory_portal_webhook_deliveries_total", outcome=outcome) + 1


def test_nothing_is_counted_while_metrics_are_off(client, tenant, make_client, metrics_on):
    recall = make_client(tenant, [Scope.RECALL])
    before = value(scrape(client), "memory_portal_recall_latency_seconds_count")
    metrics_on.MEMORY_METRICS_TOKEN = ""
    assert recall.get("/api/v1/recall", {"user_id": "u1"}).status_code == 200
    metrics_on.MEMORY_METRICS_TOKEN = TOKEN
    assert value(scrape(client), "memory_portal_recall_latency_seconds_count") == before


def test_every_name_starts_with_the_prefix(client, db, metrics_on):
    response = client.get("/metrics", HTTP_AUTHORIZATION=f"Bearer {TOKEN}").content.decode()
    names = set(re.findall(r"^# TYPE (\S+)", response, re.M))
    assert names and all(name.startswith("memory_portal_") for name in names)
