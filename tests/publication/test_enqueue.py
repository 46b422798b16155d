"""Enqueuing a projection never fails a committed change, even with the broker down."""
import logging

import pytest

from memory_portal.celery import app
from reviews import background
from reviews.actors import Actor
from reviews.services.candidates import candidate_approve
from tests.conftest import candidate


@pytest.fixture
def unreachable_broker(monkeypatch):
    saved = {key: app.conf[key] for key in ("task_always_eager", "broker_url")}
    app.conf.update(task_always_eager=False, broker_url="redis://127.0.0.1:1/0")  # nothing listens on port 1
    monkeypatch.setattr(background, "_broker_down_until", {})
    # Celery keeps its connection pool on the app: drop it so the next use follows broker_url.
    monkeypatch.setattr(app, "_pool", None)
    yield
    app.conf.update(saved)


def test_an_approval_answers_normally_when_the_broker_is_down(
    tenant, submit, reviewer, unreachable_broker, django_capture_on_commit_callbacks, caplog
):
    [pending] = submit(tenant, "alice", candidate(field="location", value="Berlin", confidence=0.9))
    with django_capture_on_commit_callbacks(execute=True):
        decided = candidate_approve(
            tenant=tenant, candidate_id=pending.candidate_id, version=1, actor=Actor.reviewer(reviewer)
        )
    background.publisher.drain()
    assert decided.status == "approved"
    assert "projection of subject" in caplog.text and "reconcile" in caplog.text
