"""Recall's `q` by meaning (SPEC §5): across Chinese and English, never past the filters,
`limit` after ranking, scores with `explain`, nothing unrelated in relevant mode; the same
ranking behind mem0's `search`. Real embeddings (the local encoder), real HTTP API."""
import numpy as np
import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from reviews.embeddings.ranking import NEAR_DUPLICATE, Scored, fold_near_duplicates
from reviews.models import FactEmbedding, Scope

URL = "/api/v1/recall"
SEARCH = "/compat/mem0/v3/memories/search/"
pytestmark = pytest.mark.django_db


@pytest.fixture
def recall_client(tenant, make_client):
    return make_client(tenant, [Scope.RECALL])


@pytest.fixture
def memory(tenant, publish, submit, store, committed):
    """A subject who states some things in Chinese and some in English, plus facts recall
    must withhold: sensitive, another thread's, and one still pending review."""
    with committed():
        facts = {
            "food": publish(tenant, "u1", field="preference", value="喜欢吃辣的川菜"),
            "coffee": publish(tenant, "u1", field="preference", value="drinks black coffee without sugar"),
            "role": publish(tenant, "u1", field="role", value="high-school physics teacher"),
            "billing_db": publish(tenant, "u1", entity_type="project", entity_id="billing-service",
                                  entity_name="计费系统", field="database", value="阿里云上的 PostgreSQL"),
            "app_db": publish(tenant, "u1", entity_type="project", entity_id="mobile-app",
                              entity_name="Mobile App", field="database", value="MongoDB Atlas cluster"),
            "allergy": publish(tenant, "u1", field="health", value="对花生过敏"),
            "trip": publish(tenant, "u1", field="preference", value="planning a trip to Tokyo next month",
                            scope="thread", thread_id="t-earlier"),
        }
        pending = submit(tenant, "u1", {"entity_type": "user", "entity_id": "me", "field": "preference",
                                        "value": "wants to switch the team to Rust", "confidence": 0.5})[0]
    assert pending.fact_id is None
    return facts


def values(response):
    assert response.status_code == 200, response.content
    return [fact["value"] for fact in response.json()["facts"]]


def test_an_english_question_finds_a_chinese_fact(recall_client, memory):
    found = values(recall_client.get(URL, {"user_id": "u1", "q": "what cuisine do they enjoy", "limit": 3}))
    assert found[0] == "喜欢吃辣的川菜"


def test_a_chinese_question_finds_an_english_fact(recall_client, memory):
    found = values(recall_client.get(URL, {"user_id": "u1", "q": "他是做什么工作的", "limit": 3}))
    assert found[0] == "high-school physics teacher"


def test_another_entity_joins_only_when_it_bears_on_the_question(recall_client, memory):
    asked = values(recall_client.get(URL, {"user_id": "u1", "q": "which storage engine backs the Mobile App"}))
    assert asked[0] == "MongoDB Atlas cluster"
    unasked = values(recall_client.get(URL, {"user_id": "u1", "q": "how do they take their morning brew"}))
    assert "MongoDB Atlas cluster" not in unasked and "阿里云上的 PostgreSQL" not in unasked
    assert unasked[0] == "drinks black coffee without sugar"


def test_limit_cuts_after_ranking(recall_client, memory):
    found = values(recall_client.get(URL, {"user_id": "u1", "q": "how do they take their morning brew", "limit": 1}))
    assert found == ["drinks black coffee without sugar"]


@pytest.mark.parametrize("relevant", ["false", "true"])
@pytest.mark.parametrize(
    "q, thread_id, forbidden",
    [
        ("any food allergies", "", "对花生过敏"),  # sensitive, key without the scope
        ("upcoming travel plans", "t-current", "planning a trip to Tokyo next month"),  # another thread
        ("which new programming language do they want to adopt", "", "wants to switch the team to Rust"),  # pending
    ],
)
def test_guard_questions_surface_nothing_forbidden(recall_client, memory, q, thread_id, forbidden, relevant):
    response = recall_client.get(URL, {"user_id": "u1", "q": q, "thread_id": thread_id, "relevant": relevant,
                                       "explain": "true"})
    assert forbidden not in values(response)
    assert forbidden not in response.content.decode()


@pytest.mark.parametrize("q", ["what is the capital of France", "明天天气怎么样", "how do I reverse a linked list"])
def test_unrelated_questions_get_nothing_in_relevant_mode(recall_client, memory, q):
    assert values(recall_client.get(URL, {"user_id": "u1", "q": q, "relevant": "true"})) == []
    assert values(recall_client.get(URL, {"user_id": "u1", "q": q}))  # the default set, as without relevant


def test_relevant_mode_returns_what_bears_on_the_question(recall_client, memory):
    found = values(recall_client.get(URL, {"user_id": "u1", "q": "计费系统用的是什么数据库", "relevant": "true"}))
    assert found and found[0] == "阿里云上的 PostgreSQL"
    assert "drinks black coffee without sugar" not in found


def test_explain_gives_each_fact_its_score_best_first(recall_client, memory):
    body = recall_client.get(URL, {"user_id": "u1", "q": "what cuisine do they enjoy", "explain": "true"}).json()
    scores = [fact["score"] for fact in body["facts"]]
    assert scores == sorted(scores, reverse=True) and len(scores) == len(body["facts"]) > 1
    assert body["facts"][0]["value"] == "喜欢吃辣的川菜" and scores[0] > 0.3
    reasons = {item["id"]: item["reason"] for item in body["excluded"]}
    assert reasons[memory["allergy"].pk] == "sensitive"
    assert reasons[memory["app_db"].pk] == "not_requested"
    no_q = recall_client.get(URL, {"user_id": "u1", "explain": "true"}).json()
    assert all("score" not in fact for fact in no_q["facts"])


def test_a_fact_without_a_current_embedding_still_ranks_by_its_words(recall_client, memory):
    FactEmbedding.objects.filter(fact=memory["app_db"]).update(text_digest="stale")
    found = values(recall_client.get(URL, {"user_id": "u1", "q": "MongoDB", "relevant": "true"}))
    # First by its words alone; another database may follow by meaning (a one-word question
    # resembles no generic request, so its bar is low).
    assert found[0] == "MongoDB Atlas cluster"


def test_relevant_must_be_a_boolean(recall_client, memory):
    response = recall_client.get(URL, {"user_id": "u1", "q": "food", "relevant": "perhaps"})
    assert response.status_code == 400
    assert response.json()["error"]["code"] and "relevant" in response.json()["error"]["details"]


def test_another_tenants_subject_is_never_ranked(tenant, other_tenant, make_client, memory, publish, committed):
    with committed():
        publish(other_tenant, "u1", field="preference", value="loves sushi and Japanese food")
    found = values(make_client(tenant, [Scope.RECALL]).get(URL, {"user_id": "u1", "q": "what cuisine do they enjoy"}))
    assert "loves sushi and Japanese food" not in found
    theirs = values(make_client(other_tenant, [Scope.RECALL]).get(URL, {"user_id": "u1", "q": "what cuisine"}))
    assert theirs == ["loves sushi and Japanese food"]


def test_mem0_search_ranks_the_same_way_relevant_only(recall_client, memory):
    response = recall_client.post_json(SEARCH, {"query": "what cuisine do they enjoy", "filters": {"user_id": "u1"}})
    assert response.status_code == 200, response.content
    results = response.json()["results"]
    assert results[0]["memory"].endswith("喜欢吃辣的川菜") and results[0]["score"] > 0.3
    unrelated = recall_client.post_json(SEARCH, {"query": "what is the capital of France", "filters": {"user_id": "u1"}})
    assert unrelated.json()["results"] == []


def test_mem0_search_needs_the_recall_scope(tenant, make_client, memory):
    response = make_client(tenant, [Scope.INGEST]).post_json(
        SEARCH, {"query": "what cuisine do they enjoy", "filters": {"user_id": "u1"}}
    )
    assert response.status_code == 403


def test_near_duplicates_are_folded():
    same = np.array([1.0, 0.0, 0.0], dtype=np.float32)
    close = np.array([NEAR_DUPLICATE + 0.01, (1 - (NEAR_DUPLICATE + 0.01) ** 2) ** 0.5, 0.0], dtype=np.float32)
    other = np.array([0.0, 0.0, 1.0], dtype=np.float32)
    ranked = [Scored(0, 0.9, True), Scored(1, 0.85, True), Scored(2, 0.5, True)]
    kept = fold_near_duplicates(ranked, [same, close, other], limit=5)
    assert [item.index for item in kept] == [0, 2]


def test_q_costs_no_more_statements_than_plain_recall(recall_client, memory):
    recall_client.get(URL, {"user_id": "u1", "q": "what cuisine do they enjoy"})  # the key and the question cached
    counts = {}
    for label, params in (("plain", {"user_id": "u1"}), ("q", {"user_id": "u1", "q": "what cuisine do they enjoy"})):
        with CaptureQueriesContext(connection) as captured:
            assert recall_client.get(URL, params).status_code == 200
        counts[label] = len(captured.captured_queries)
    # The vectors come with the recall statement itself, not in a second round trip.
    assert counts["q"] == counts["plain"]


def test_a_vector_made_by_another_embedder_is_not_used(recall_client, memory):
    FactEmbedding.objects.filter(fact=memory["food"]).update(embedder="openai:another-model")
    found = values(recall_client.get(URL, {"user_id": "u1", "q": "what cuisine do they enjoy", "relevant": "true"}))
    assert "喜欢吃辣的川菜" not in found  # no shared word, and its vector is not the current embedder's


def test_vectors_stored_in_single_precision_before_still_rank_by_meaning(recall_client, memory):
    for row in FactEmbedding.objects.all():
        FactEmbedding.objects.filter(pk=row.pk).update(vector=np.asarray(row.as_array(), dtype="<f4").tobytes())
    assert {len(vector) for vector in FactEmbedding.objects.values_list("vector", flat=True)} == {512 * 4}
    found = values(recall_client.get(URL, {"user_id": "u1", "q": "what cuisine do they enjoy", "limit": 3}))
    assert found[0] == "喜欢吃辣的川菜"
