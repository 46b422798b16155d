import pytest

from reviews.actors import Actor
from reviews.recall.query import RecallQuery
from reviews.recall.service import recall_perform

AGENT = Actor("api_key", "agent")


@pytest.fixture
def recall(tenant):
    """recall(user_id, sensitive_scope=False, **query) -> (record, result) for tenant-1."""

    def run(user_id, *, sensitive_scope=False, on=None, **query):
        return recall_perform(
            tenant=on or tenant,
            query=RecallQuery(user_id=user_id, **query),
            actor=AGENT,
            may_see_sensitive=sensitive_scope,
        )

    return run


def ids(result):
    return [fact["id"] for fact in result.facts]


def reasons(result):
    return {item["id"]: item["reason"] for item in result.excluded}
