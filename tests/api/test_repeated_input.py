"""A name given twice is refused, never read as one of its values: a key repeated in a JSON
object, a single-valued query parameter repeated in a URL. Python keeps the last of either,
other parsers the first; a gateway that checked one and the API acting on the other would
disagree on whose memory is written, read or deleted. 400, nothing stored or deleted."""
import json

import pytest

from reviews.models import RecallRecord, Scope
from tests.api.test_input_limits import JSON_BODIES
from tests.dump import dump_all_tables

pytestmark = pytest.mark.django_db


@pytest.fixture
def every_scope(tenant, make_client):
    return make_client(tenant, list(Scope.values))


def repeating_the_first_key(body: dict) -> str:
    """``body`` as JSON with its first key given again at the end (``user_id`` twice if empty)."""
    if not body:
        return '{"user_id": "u1", "user_id": "u2"}'
    name, value = next(iter(body.items()))
    return json.dumps(body)[:-1] + f", {json.dumps(name)}: {json.dumps(value)}" + "}"


@pytest.mark.parametrize("path", JSON_BODIES)
def test_a_key_given_twice_in_a_json_body_is_a_400_everywhere(every_scope, path):
    before = dump_all_tables()

    response = every_scope.post_json(path, repeating_the_first_key(JSON_BODIES[path]))

    assert response.status_code == 400, response.content
    error = response.json()["error"]
    assert error["code"] == "malformed_request"
    assert "appears more than once in one object" in error["message"]
    assert dump_all_tables() == before


def test_a_key_repeated_deep_in_a_message_is_named_and_nothing_is_ingested(every_scope):
    body = (
        '{"messages": [{"id": "m-1", "thread_id": "t-1", "user_id": "alice", "user_id": "bob",'
        ' "role": "user", "content": "I live in Berlin."}]}'
    )
    before = dump_all_tables()

    response = every_scope.post_json("/api/v1/messages", body)

    assert response.status_code == 400, response.content
    assert response.json()["error"]["message"] == (
        'Malformed JSON: the key "user_id" appears more than once in one object'
    )
    assert dump_all_tables() == before


def test_the_same_key_spelt_with_an_escape_is_the_same_key(every_scope):
    body = '{"user_id": "alice", "user\\u005fid": "bob", "candidates": []}'

    response = every_scope.post_json("/api/v1/candidates", body)

    assert response.status_code == 400, response.content
    assert '"user_id" appears more than once' in response.json()["error"]["message"]


def test_a_hostile_repeated_key_is_quoted_short_and_in_ascii(every_scope):
    key = "\ud800" + "k" * 10_000  # a lone surrogate, then far more than a message should carry
    body = "{" + f"{json.dumps(key)}: 1, {json.dumps(key)}: 2" + "}"

    response = every_scope.post_json("/api/v1/keys", body)

    assert response.status_code == 400, response.content
    message = response.json()["error"]["message"]
    assert message == f'Malformed JSON: the key "\\ud800{"k" * 63}" appears more than once in one object'


def test_the_same_keys_in_sibling_objects_are_not_a_repetition(every_scope):
    messages = [
        {"id": f"m-{n}", "thread_id": "t-1", "user_id": "alice", "role": "user", "content": f"Message {n}."}
        for n in (1, 2)
    ]

    response = every_scope.post_json("/api/v1/messages", {"messages": messages})

    assert response.status_code == 202, response.content
    assert response.json()["accepted"] == 2


# Every operation that reads a query string, with a single-valued parameter given twice.
REPEATED_PARAMETERS = [
    ("get", "/api/v1/recall?user_id=alice&user_id=bob", "user_id"),
    ("get", "/api/v1/recall?user_id=alice&limit=1&limit=200", "limit"),
    ("get", "/api/v1/recall?user_id=alice&include_sensitive=false&include_sensitive=true", "include_sensitive"),
    ("get", "/api/v1/review/candidates?status=pending_review&status=approved", "status"),
    ("get", "/api/v1/audit/events?user_id=alice&user_id=bob", "user_id"),
    ("get", "/api/v1/audit/export?user_id=alice&user_id=bob", "user_id"),
    ("delete", "/api/v1/users/alice/facts?field=location&field=health", "field"),
    ("delete", "/api/v1/users/alice/facts?thread_id=t-1&thread_id=t-2", "thread_id"),
    ("delete", "/compat/mem0/v1/memories/?user_id=alice&user_id=bob", "user_id"),
    ("post", "/compat/mem0/v3/memories/?page=1&page=2", "page"),
]


@pytest.mark.parametrize(("method", "path", "name"), REPEATED_PARAMETERS)
def test_a_single_valued_parameter_given_twice_is_a_400_with_nothing_changed(every_scope, tenant, publish, method, path, name):
    publish(tenant, "alice", entity_id="alice", field="location", value="Berlin")
    publish(tenant, "bob", entity_id="bob", field="location", value="Paris")
    before = dump_all_tables()

    if method == "post":
        response = every_scope.post_json(path, {"user_id": "alice"})
    else:
        response = getattr(every_scope, method)(path)

    assert response.status_code == 400, response.content
    error = response.json()["error"]
    assert error["code"] == "invalid"
    assert error["details"] == {name: ["Given 2 times; give it once."]}
    assert dump_all_tables() == before
    assert not RecallRecord.objects.exists()


def test_repeatable_parameters_still_repeat(every_scope, tenant, publish):
    publish(tenant, "alice", entity_id="alice", field="location", value="Berlin")
    publish(tenant, "alice", entity_id="alice", field="role", value="engineer")

    response = every_scope.get("/api/v1/recall?user_id=alice&field=location&field=role")

    assert response.status_code == 200, response.content
    assert sorted(fact["field"] for fact in response.json()["facts"]) == ["location", "role"]


def test_a_repeated_parameter_from_a_stranger_is_still_a_401(client):
    response = client.get("/api/v1/recall?user_id=alice&user_id=bob")

    assert response.status_code == 401, response.content
    assert not RecallRecord.objects.exists()


# The mem0 surface names the subject (and thread) at the top level or in `filters`.
TWO_USERS = {
    "top level and filters": {"user_id": "alice", "filters": {"user_id": "bob"}},
    "filters and AND": {"filters": {"user_id": "alice", "AND": [{"user_id": "bob"}]}},
    "within AND": {"filters": {"AND": [{"user_id": "alice"}, {"user_id": "bob"}]}},
}


@pytest.mark.parametrize("path", ["/compat/mem0/v3/memories/", "/compat/mem0/v3/memories/search/"])
@pytest.mark.parametrize("body", TWO_USERS.values(), ids=TWO_USERS.keys())
def test_a_mem0_read_that_names_two_users_is_refused(every_scope, tenant, publish, path, body):
    publish(tenant, "alice", entity_id="alice", field="location", value="Berlin")
    publish(tenant, "bob", entity_id="bob", field="location", value="Paris")

    response = every_scope.post_json(path, {"query": "where", **body})

    assert response.status_code == 400, response.content
    details = json.dumps(response.json()["error"]["details"])
    assert "Two different users are named; name one." in details
    assert "Paris" not in response.content.decode() and "Berlin" not in response.content.decode()
    assert not RecallRecord.objects.exists()


def test_a_mem0_add_that_names_two_runs_stores_nothing(every_scope):
    before = dump_all_tables()
    body = {"messages": [{"role": "user", "content": "I live in Berlin."}], "user_id": "alice",
            "run_id": "r-1", "filters": {"run_id": "r-2"}}

    response = every_scope.post_json("/compat/mem0/v3/memories/add/", body)

    assert response.status_code == 400, response.content
    assert "Two different runs (threads) are named; name one." in json.dumps(response.json()["error"]["details"])
    assert dump_all_tables() == before


def test_the_same_user_named_twice_alike_is_one_user(every_scope, tenant, publish):
    publish(tenant, "alice", entity_id="alice", field="location", value="Berlin")
    body = {"user_id": "alice", "filters": {"user_id": "alice", "AND": [{"user_id": "alice"}]}}

    response = every_scope.post_json("/compat/mem0/v3/memories/", body)

    assert response.status_code == 200, response.content
    results = response.json()["results"]
    assert [(memory["user_id"], memory["metadata"]["value"]) for memory in results] == [("alice", "Berlin")]
