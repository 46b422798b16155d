"""Starting a background export never fails the request, even with the broker down."""
import pytest

from reviews import background
from reviews.actors import Actor
from reviews.exports import ExportFilters
from reviews.models import AuditExport
from reviews.services.audit_export import audit_export_start
from tests.worker.brokers import celery_using_broker, unused_port


@pytest.fixture
def unreachable_broker(monkeypatch):
    monkeypatch.setattr(background, "_broker_down_until", {})
    with celery_using_broker(f"redis://127.0.0.1:{unused_port()}/0"):  # nothing listens there
        yield


# Committed for real: the publisher thread has its own database connection.
@pytest.mark.django_db(transaction=True)
def test_a_lost_export_is_marked_failed_so_it_can_be_run_again(tenant, auditor, unreachable_broker):
    job = audit_export_start(tenant=tenant, filters=ExportFilters(), format="jsonl", actor=Actor.reviewer(auditor))
    background.publisher.drain()
    job = AuditExport.objects.get(pk=job.pk)
    assert job.status == "failed"
    assert "Run it again" in job.error
