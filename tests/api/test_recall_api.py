"""GET /api/v1/recall: scopes, parameters, the error shape, records, isolation, queries."""
import pytest
from django.db import connection
from django.test import Client

from reviews.models import RecallRecord, Scope
from reviews.services.tenants import api_key_create
from tests.api.recall_through_drf_urls import THROUGH_DRF

URL = "/api/v1/recall"
pytestmark = pytest.mark.django_db


@pytest.fixture
def recall_client(tenant, make_client):
    return make_client(tenant, [Scope.RECALL])


@pytest.fixture
def sensitive_client(tenant, make_client):
    return make_client(tenant, [Scope.RECALL, Scope.RECALL_SENSITIVE])


def assert_error(response, status, code):
    assert response.status_code == status, response.content
    payload = response.json()
    assert set(payload) == {"error"} and payload["error"]["code"] == code
    assert payload["error"]["message"] and isinstance(payload["error"]["details"], (dict, list))
    return payload["error"]


@pytest.fixture
def memory(publish, tenant):
    return {
        "name": publish(tenant, "u1", field="name", value="Alice", source_message_id="m1"),
        "tea": publish(tenant, "u1", field="preference", value="green tea"),
        "db": publish(tenant, "u1", entity_type="project", entity_id="flask-migration", field="database", value="PostgreSQL"),
        "health": publish(tenant, "u1", field="health", value="asthma"),
        "thread": publish(tenant, "u1", field="preference", value="French", scope="thread", thread_id="t1"),
    }


def test_it_returns_the_default_facts_and_a_recall_id(recall_client, memory):
    response = recall_client.get(URL, {"user_id": "u1"})

    assert response.status_code == 200
    body = response.json()
    assert set(body) == {"recall_id", "user_id", "facts"}
    assert body["user_id"] == "u1"
    assert [f["id"] for f in body["facts"]] == [memory["name"].pk, memory["tea"].pk]
    name = body["facts"][0]
    assert name == {
        "id": memory["name"].pk,
        "entity_type": "user",
        "entity_id": "u1",
        "field": "name",
        "value": "Alice",
        "confidence": memory["name"].confidence,
        "category": "identity",
        "sensitivity": "normal",
        "scope": "long_term",
        "source": "chat",
        "source_message_id": "m1",
        "version": 1,
        "updated_at": memory["name"].updated_at.isoformat(),
    }
    record = RecallRecord.objects.get(pk=body["recall_id"])
    assert record.caller == f"api_key:{recall_client.key.prefix}"
    assert record.facts == [{"id": memory["name"].pk, "version": 1}, {"id": memory["tea"].pk, "version": 1}]


def test_repeatable_entity_and_field_params(recall_client, memory):
    response = recall_client.get(URL + "?user_id=u1&entity=project:flask-migration&entity=user:u1&field=database&field=name")

    assert {f["id"] for f in response.json()["facts"]} == {memory["db"].pk, memory["name"].pk}


def test_explain_lists_what_was_left_out_without_values(recall_client, memory):
    response = recall_client.get(URL, {"user_id": "u1", "explain": "true"})

    excluded = response.json()["excluded"]
    assert excluded == sorted(
        [
            {"id": memory["db"].pk, "reason": "not_requested"},
            {"id": memory["health"].pk, "reason": "sensitive"},
            {"id": memory["thread"].pk, "reason": "other_thread"},
        ],
        key=lambda item: item["id"],
    )
    assert "asthma" not in response.content.decode()


def test_thread_and_q_params(recall_client, memory):
    response = recall_client.get(URL, {"user_id": "u1", "thread_id": "t1", "q": "flask database"})

    ids = [f["id"] for f in response.json()["facts"]]
    assert ids[0] == memory["db"].pk and memory["thread"].pk in ids


def test_sensitive_facts_with_the_scope_and_the_flag(sensitive_client, memory):
    without = sensitive_client.get(URL, {"user_id": "u1"}).json()["facts"]
    with_flag = sensitive_client.get(URL, {"user_id": "u1", "include_sensitive": "true"}).json()["facts"]

    assert memory["health"].pk not in [f["id"] for f in without]
    assert memory["health"].pk in [f["id"] for f in with_flag]


def test_include_sensitive_without_the_scope_is_forbidden(recall_client, memory):
    error = assert_error(recall_client.get(URL, {"user_id": "u1", "include_sensitive": "true"}), 403, "forbidden")
    assert error["details"] == {"scope": "recall:sensitive"}
    assert not RecallRecord.objects.exists()


def test_it_requires_recall_scope(ingest_client, memory):
    assert_error(ingest_client.get(URL, {"user_id": "u1"}), 403, "forbidden")


def test_it_requires_a_key(client, memory):
    assert_error(client.get(URL, {"user_id": "u1"}), 401, "unauthenticated")
    assert_error(client.get(URL, {"user_id": "u1"}, HTTP_AUTHORIZATION="Bearer nope"), 401, "unauthenticated")


@pytest.mark.parametrize(
    "params,field",
    [
        ({}, "user_id"),
        ({"user_id": ""}, "user_id"),
        ({"user_id": "x" * 129}, "user_id"),
        ({"user_id": "u1", "limit": "0"}, "limit"),
        ({"user_id": "u1", "limit": "201"}, "limit"),
        ({"user_id": "u1", "limit": "many"}, "limit"),
        ({"user_id": "u1", "entity": "flask-migration"}, "entity"),
        ({"user_id": "u1", "entity": ":x"}, "entity"),
        ({"user_id": "u1", "include_sensitive": "maybe"}, "include_sensitive"),
        ({"user_id": "u1", "explain": "2"}, "explain"),
        ({"user_id": "u1", "q": "x" * 501}, "q"),
        ({"user_id": "u1\x00"}, "user_id"),
        ({"user_id": "u1", "entities": "project:x"}, "entities"),
    ],
)
def test_bad_params_are_400_in_the_error_shape(recall_client, params, field):
    error = assert_error(recall_client.get(URL, params), 400, "invalid")
    assert field in error["details"]
    assert not RecallRecord.objects.exists()


def test_too_many_entities_is_400(recall_client):
    query = "&".join(f"entity=project:p{i}" for i in range(21))
    assert_error(recall_client.get(f"{URL}?user_id=u1&{query}"), 400, "invalid")


def test_another_tenants_key_sees_nothing(outsider_client, memory):
    response = outsider_client.get(URL, {"user_id": "u1", "q": "Alice", "explain": "true", "include_sensitive": "true"})

    assert response.status_code == 200
    assert response.json()["facts"] == [] and response.json()["excluded"] == []
    assert RecallRecord.objects.get().tenant.slug == "tenant-2"


@pytest.mark.parametrize(
    "params",
    [
        {"user_id": "u1"},
        {"user_id": "u1", "q": "flask database 数据库", "explain": "true", "thread_id": "t1"},
        {"user_id": "u1", "entity": ["project:flask-migration", "project:other"], "field": ["database", "name"]},
    ],
)
@pytest.mark.parametrize("facts", [0, 40])
@pytest.mark.parametrize("async_commit", [False, True])
def test_queries_per_recall_are_constant(
    recall_client, publish, tenant, django_assert_num_queries, settings, params, facts, async_commit
):
    """Once the key is known (read and its use recorded on its first call, then cached): the
    facts (one query, whatever the data or parameters) and the record, in either commit mode
    (MEMORY_RECALL_ASYNC_COMMIT adds no statement). With `q` too: the subject's vectors
    come with the facts, in the same statement."""
    settings.MEMORY_RECALL_ASYNC_COMMIT = async_commit
    for index in range(facts):
        entity = {"entity_type": "project", "entity_id": f"p{index % 7}"} if index % 2 else {}
        publish(tenant, "u1", field="preference" if not entity else "tech_stack", value=f"thing {index}", **entity)

    # The key's first call records its last use (at most once a minute): made before counting.
    assert recall_client.get(URL, {"user_id": "someone-else"}).status_code == 200
    with django_assert_num_queries(2):
        response = recall_client.get(URL, params)

    assert response.status_code == 200


@pytest.mark.parametrize(
    "accept", [None, "*/*", "application/json", "text/html, application/json;q=0.9", "application/*"]
)
def test_a_client_that_accepts_json_gets_json(recall_client, memory, accept):
    headers = {"HTTP_ACCEPT": accept} if accept is not None else {}
    response = recall_client.get(URL, {"user_id": "u1"}, **headers)
    assert response.status_code == 200, response.content
    assert response["Content-Type"] == "application/json"
    assert response.json()["facts"]


# Requests the plain view answers (GET or HEAD, JSON or no Accept): each is also sent to
# RecallApi through DRF's dispatch, which must answer the same.
AS_DRF_ANSWERS = {
    "facts": ("get", "?user_id=u1", {}),
    "explained, with q": ("get", "?user_id=u1&explain=true&q=tea", {}),
    "head": ("head", "?user_id=u1", {}),
    "accept json": ("get", "?user_id=u1&limit=5.0&explain=", {"HTTP_ACCEPT": "application/json"}),
    "no user_id": ("get", "", {}),
    "blank user_id": ("get", "?user_id=", {}),
    "not printable": ("get", "?user_id=u1%00", {}),
    "not utf-8": ("get", "?user_id=M%FCller", {}),
    "every field wrong": ("get", "?user_id=u1&limit=0&explain=2&entity=flask&field=&q=" + "x" * 501, {}),
    "list items": ("get", "?user_id=u1&entity=a:b&entity=bad&field=" + "f" * 81, {}),
    "too many entities": ("get", "?user_id=u1&" + "&".join(f"entity=p:{i}" for i in range(21)), {}),
    "unknown and repeated": ("get", "?user_id=a&user_id=b&zz=1&format=json", {}),
    "repeated": ("get", "?user_id=a&user_id=b&limit=1&limit=2", {}),
    "in Chinese": ("get", "?limit=0&include_sensitive=maybe", {"HTTP_ACCEPT_LANGUAGE": "zh-hans"}),
    "sensitive without the scope": ("get", "?user_id=u1&include_sensitive=true", {}),
}


# Callers refused before the parameters are read, with a request either way.
REFUSED_CALLERS = [(caller, case) for caller in ("ingest key", "no key", "unknown key", "basic auth")
                   for case in ("facts", "head", "every field wrong")]


@pytest.mark.urls("tests.api.recall_through_drf_urls")
@pytest.mark.parametrize(("caller", "case"), [("recall key", case) for case in AS_DRF_ANSWERS] + REFUSED_CALLERS)
def test_the_plain_view_answers_as_drf_does(recall_client, ingest_client, client, memory, caller, case):
    """Status, body (but the record's id) and headers, through the middlewares; a record
    for each answered call and none for a refused one."""
    method, query, extra = AS_DRF_ANSWERS[case]
    extra = {**extra, **{
        "unknown key": {"HTTP_AUTHORIZATION": "Bearer mp_unknown"}, "basic auth": {"HTTP_AUTHORIZATION": "Basic x"},
    }.get(caller, {})}
    sender = {"recall key": recall_client, "ingest key": ingest_client}.get(caller, client)
    records = RecallRecord.objects.count()

    plain = getattr(sender, method)(URL + query, **extra)
    drf = getattr(sender, method)(THROUGH_DRF + query, **extra)

    assert plain.status_code == drf.status_code, plain.content
    if plain.status_code == 200:
        assert RecallRecord.objects.count() == records + 2
        if method == "get":
            assert plain.json()["recall_id"] != drf.json()["recall_id"]
            assert {**plain.json(), "recall_id": 0} == {**drf.json(), "recall_id": 0}
    else:
        assert RecallRecord.objects.count() == records
        assert plain.content == drf.content
    ignored = {"X-Request-ID"} | ({"Content-Length"} if plain.status_code == 200 else set())
    assert {k: v for k, v in plain.headers.items() if k not in ignored} == {
        k: v for k, v in drf.headers.items() if k not in ignored
    }


def test_parameter_errors_are_in_each_requests_language(recall_client):
    """The parameters' fields are bound once per language: a message with a figure in it,
    once shown, is not shown in that language to the next caller."""
    def message(language):
        response = recall_client.get(URL, {"user_id": "u1", "limit": "0"}, HTTP_ACCEPT_LANGUAGE=language)
        return assert_error(response, 400, "invalid")["details"]["limit"]

    assert message("en") == ["Ensure this value is greater than or equal to 1."]
    assert message("zh-hans") == ["请确保该值大于或者等于 1。"]
    assert message("en") == ["Ensure this value is greater than or equal to 1."]


@pytest.mark.parametrize("method", ["post", "put", "patch", "delete"])
def test_other_methods_are_refused_as_drf_refuses_them(recall_client, client, memory, method):
    """After the key (a stranger learns nothing), in the error shape, with ``Allow``."""
    assert_error(getattr(client, method)(URL + "?user_id=u1"), 401, "unauthenticated")

    refused = getattr(recall_client, method)(URL + "?user_id=u1")

    assert_error(refused, 405, "method_not_allowed")
    assert refused["Allow"] == "GET, HEAD, OPTIONS"
    assert not RecallRecord.objects.exists()


def test_a_post_is_refused_in_the_error_shape_even_where_csrf_is_checked(tenant, memory):
    """The API authenticates by key, not cookie: the plain view is exempt from CSRF as DRF's
    views are, so a POST meets the key check and the 405, not Django's CSRF page."""
    _, raw = api_key_create(tenant=tenant, scopes=[Scope.RECALL])
    strict = Client(enforce_csrf_checks=True)

    assert_error(strict.post(URL + "?user_id=u1"), 401, "unauthenticated")
    assert_error(strict.post(URL + "?user_id=u1", HTTP_AUTHORIZATION=f"Bearer {raw}"), 405, "method_not_allowed")


def test_a_bug_is_a_500_in_the_error_shape_not_an_answer(recall_client, memory, monkeypatch):
    """The plain view turns the API's own failures into answers and nothing else: an
    exception it does not know reaches Django (logged, 500 in SPEC §7's shape)."""
    def broken(**kwargs):
        raise RuntimeError("a bug")

    monkeypatch.setattr("reviews.api.recall.recall_perform", broken)
    recall_client.raise_request_exception = False

    assert_error(recall_client.get(URL, {"user_id": "u1"}), 500, "server_error")


def test_a_client_that_accepts_no_json_is_told_so(recall_client, memory):
    assert_error(recall_client.get(URL, {"user_id": "u1"}, HTTP_ACCEPT="text/html"), 406, "not_acceptable")
    assert RecallRecord.objects.count() == 0  # refused before anything was selected or recorded


@pytest.mark.parametrize("format_", ["json", "xml", "api"])
def test_format_is_not_a_renderer_switch_but_an_unknown_parameter(recall_client, memory, format_):
    """The API answers JSON only: ``?format=`` is refused as any unknown parameter is, not
    answered with a 404 for an operation that exists (DRF's way for a format it lacks)."""
    error = assert_error(recall_client.get(URL, {"user_id": "u1", "format": format_}), 400, "invalid")

    assert error["details"] == {"format": ["Unknown field."]}
    assert RecallRecord.objects.count() == 0


def test_a_tenants_recall_records_go_with_it_without_a_database_constraint(recall_client, memory, tenant):
    """RecallRecord.tenant has no constraint in the database (its check locked the tenant's
    row on every recall); Django's cascade still deletes the records with their tenant."""
    assert recall_client.get(URL, {"user_id": "u1"}).status_code == 200
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT count(*) FROM pg_constraint WHERE conrelid = 'reviews_recallrecord'::regclass AND contype = 'f'"
            )
            assert cursor.fetchone()[0] == 0

    tenant.delete()

    assert not RecallRecord.objects.exists()
