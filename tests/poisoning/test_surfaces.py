"""Recall stays data (issue 41): values sent with hidden characters through the candidates
API, approved by a reviewer, come back from the recall API, the mem0-compatible API, MCP
and the LangGraph Store with none of them."""
import json

import pytest

from reviews import publication
from reviews.actors import Actor
from reviews.models import Candidate, Scope, Subject
from reviews.poisoning.characters import find_hidden
from reviews.services.candidates import candidate_approve
from tests.compat.conftest import key  # noqa: F401  (keys of any scopes, a fixture)
from tests.compat.test_mcp_server import run
from tests.conftest import candidate
from tests.fixtures.make_poisoning_corpus import ATTACKS
from tests.publication.conftest import store  # noqa: F401  (the projection's store, emptied around the test)

USER = "alice"
HIDDEN = ["\u200b", "\u202e", "\u2066", "\ufeff", "\u00ad", "\U000e0041\U000e0042", "\ufe00\ufe01\ufe02"]


def _values():
    """Each hidden class inside a word, and corpus attacks with an invisible copy appended."""
    words = [f"tea{hidden}pot {index}" for index, hidden in enumerate(HIDDEN)]
    smuggled = [
        f"likes tea {index}" + "".join(chr(0xE0000 + ord(c)) for c in text if ord(c) < 128)
        for index, text in enumerate(ATTACKS["override"][:3] + ATTACKS["url"][:3])
    ]
    return words + smuggled


def _publish_through_the_api(tenant, make_client) -> list[str]:
    client = make_client(tenant, [Scope.INGEST])
    values = _values()
    response = client.post_json("/api/v1/candidates", {
        "user_id": USER,
        "candidates": [candidate(field="preference", value=value, confidence=0.99) for value in values],
    })
    assert response.status_code == 201, response.content
    for result in response.json()["results"]:
        assert result["status"] == "pending_review"
        waiting = Candidate.objects.get(pk=result["candidate_id"])
        assert "hidden_characters" in waiting.flags
        candidate_approve(tenant=tenant, candidate_id=waiting.pk, version=waiting.version,
                          actor=Actor("reviewer", "7"))
    return values


def _assert_clean(text: str, what: str) -> None:
    assert not find_hidden(text).found, f"{what} returned a hidden character: {text[:300]!r}"


@pytest.mark.django_db
def test_recall_and_mem0_return_no_hidden_character(tenant, make_client):
    values = _publish_through_the_api(tenant, make_client)
    recall = make_client(tenant, [Scope.RECALL]).get("/api/v1/recall", {"user_id": USER, "limit": 50})
    assert recall.status_code == 200
    assert len([f for f in recall.json()["facts"] if f["field"] == "preference"]) == len(values)
    _assert_clean(recall.content.decode(), "recall")

    mem0 = make_client(tenant, [Scope.RECALL])
    for response in (
        mem0.post_json("/compat/mem0/v3/memories/", {"filters": {"user_id": USER}}),
        mem0.post_json("/compat/mem0/v3/memories/search/", {"query": "tea pot", "filters": {"user_id": USER}}),
    ):
        assert response.status_code == 200, response.content
        _assert_clean(response.content.decode(), "mem0")


@pytest.mark.django_db
def test_the_store_holds_no_hidden_character(tenant, make_client, store):  # noqa: F811
    _publish_through_the_api(tenant, make_client)
    publication.project_subject(Subject.objects.get(tenant=tenant, user_id=USER).pk)
    items = publication._search_all(store, ("tenants",))
    assert items
    _assert_clean(json.dumps([(item.namespace, item.key, item.value) for item in items], ensure_ascii=False), "store")


@pytest.mark.django_db(transaction=True)
def test_mcp_returns_no_hidden_character(mcp_url, tenant, make_client, key):  # noqa: F811
    values = _publish_through_the_api(tenant, make_client)
    _, raw = key(Scope.RECALL)
    [recalled] = run(mcp_url, raw, ("recall_memories", {"user_id": USER}))
    assert not recalled.is_error
    facts = recalled.structured_content["facts"]
    assert len([fact for fact in facts if fact["field"] == "preference"]) == len(values)
    _assert_clean(json.dumps(recalled.structured_content, ensure_ascii=False), "mcp")
    _assert_clean(" ".join(getattr(block, "text", "") for block in recalled.content), "mcp")
