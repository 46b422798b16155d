"""Ingest messages through the real service, extraction run as it would after commit."""
from reviews.actors import Actor
from reviews.domain import MessageInput
from reviews.services.ingest import messages_ingest

ACTOR = Actor("api_key", "test")


def message(id, content, *, user_id="alice", thread_id="t-1", role="user", created_at=None):
    return MessageInput(id=id, thread_id=thread_id, user_id=user_id, role=role, content=content, created_at=created_at)


def ingest(tenant, *messages, capture=None):
    """messages_ingest; with ``capture`` (django_capture_on_commit_callbacks) the extraction runs too."""
    if capture is None:
        return messages_ingest(tenant=tenant, messages=list(messages), actor=ACTOR)
    with capture(execute=True):
        return messages_ingest(tenant=tenant, messages=list(messages), actor=ACTOR)
