"""Enqueuing a projection never fails a committed change, even with the broker down."""
import pytest

from reviews import background, publication
from reviews.actors import Actor
from reviews.services.candidates import candidate_approve
from tests.conftest import candidate
from tests.worker.brokers import celery_using_broker, unused_port


@pytest.fixture
def unreachable_broker(monkeypatch):
    monkeypatch.setattr(background, "_broker_down_until", {})
    with celery_using_broker(f"redis://127.0.0.1:{unused_port()}/0"):  # nothing listens there
        yield


def test_an_approval_answers_normally_when_the_broker_is_down(
    tenant, submit, reviewer, unreachable_broker, django_capture_on_commit_callbacks, monkeypatch
):
    lost = []
    monkeypatch.setattr(publication.logger, "warning", lambda message, *args: lost.append(message % args))
    [pending] = submit(tenant, "alice", candidate(field="location", value="Berlin", confidence=0.9))
    with django_capture_on_commit_callbacks(execute=True):
        decided = candidate_approve(
            tenant=tenant, candidate_id=pending.candidate_id, version=1, actor=Actor.reviewer(reviewer)
        )
    background.publisher.drain()
    assert decided.status == "approved"
    assert lost == [f"projection of subject {decided.subject_id} not queued; the hourly reconcile will repair it"]
