"""SPEC §7's input limits at the API's edge: JSON nested deeper than 64 levels, a boolean
where a number is expected, characters PostgreSQL cannot store → 400; nothing stored."""
import json

import pytest
from django.urls import URLPattern, URLResolver, get_resolver
from rest_framework import serializers

from reviews.api.keys import ApiKeyCreateApi
from reviews.api.parsers import MAX_JSON_DEPTH
from reviews.models import AuditEvent, Candidate, Message, Scope
from tests.conftest import candidate
from tests.dump import dump_all_tables

pytestmark = pytest.mark.django_db

# Every operation that reads a JSON body, with a body it would accept.
JSON_BODIES = {
    "/api/v1/messages": {"messages": [{"id": "m-1", "thread_id": "t-1", "user_id": "u1", "role": "user", "content": "hi"}]},
    "/api/v1/candidates": {"user_id": "u1", "candidates": [candidate()]},
    "/api/v1/keys": {"scopes": ["recall"]},
    "/api/v1/users/u1/portal-link": {},
    "/api/v1/review/candidates/1/approve": {"version": 1},
    "/compat/mem0/v3/memories/add/": {"messages": [{"role": "user", "content": "hi"}], "user_id": "u1"},
    "/compat/mem0/v3/memories/search/": {"query": "x", "user_id": "u1"},
}


def nested(depth: int, leaf="x") -> str:
    """A JSON document ``depth`` containers deep, without recursion of our own."""
    return "[" * (depth - 1) + json.dumps({"deep": leaf}) + "]" * (depth - 1)


@pytest.fixture
def every_scope(tenant, make_client):
    return make_client(tenant, list(Scope.values))


def assert_error(response, status, code):
    assert response.status_code == status, response.content
    error = response.json()["error"]
    assert error["code"] == code and error["message"]
    return error


@pytest.mark.parametrize("depth", [MAX_JSON_DEPTH + 1, 1_000, 100_000])
@pytest.mark.parametrize("path", JSON_BODIES)
def test_json_nested_deeper_than_the_limit_is_a_400_everywhere(every_scope, tenant, path, depth):
    before = dump_all_tables()

    error = assert_error(every_scope.post_json(path, nested(depth)), 400, "invalid")

    assert error["details"] == {"body": "too_deep"}
    assert dump_all_tables() == before


def test_depth_is_counted_in_objects_as_in_arrays(every_scope):
    deep_objects = '{"a":' * MAX_JSON_DEPTH + "1" + "}" * MAX_JSON_DEPTH
    deeper_objects = '{"a":' * (MAX_JSON_DEPTH + 1) + "1" + "}" * (MAX_JSON_DEPTH + 1)

    at_limit = every_scope.post_json("/api/v1/candidates", deep_objects)
    past_limit = every_scope.post_json("/api/v1/candidates", deeper_objects)

    assert at_limit.status_code == 400 and at_limit.json()["error"]["details"] != {"body": "too_deep"}
    assert past_limit.json()["error"]["details"] == {"body": "too_deep"}


def test_a_document_at_the_limit_reaches_the_serializer(every_scope):
    """64 levels parse; the serializer then says which field is wrong."""
    error = assert_error(every_scope.post_json("/api/v1/candidates", nested(MAX_JSON_DEPTH)), 400, "invalid")
    assert error["details"] != {"body": "too_deep"}


@pytest.mark.parametrize(
    "content",
    ['"a\\u0000b"', '"\\ud800"', '"x\\udfffy"'],
    ids=["nul", "lone high surrogate", "lone low surrogate"],
)
def test_unstorable_characters_are_refused_with_nothing_stored(ingest_client, content):
    body = '{"messages": [{"id": "m-1", "thread_id": "t-1", "user_id": "u1", "role": "user", "content": %s}]}' % content

    assert_error(ingest_client.post_json("/api/v1/messages", body), 400, "malformed_request")
    assert not Message.objects.exists()


def test_unstorable_characters_deep_in_a_key_are_refused(ingest_client):
    body = '{"messages": [{"id": "m-1", "thread_id": "t-1", "user_id": "u1", "role": "user", "content": "", "x": {"\\ud800": 1}}]}'
    assert_error(ingest_client.post_json("/api/v1/messages", body), 400, "malformed_request")


def test_a_surrogate_pair_is_an_ordinary_character(ingest_client):
    body = '{"messages": [{"id": "m-1", "thread_id": "t-1", "user_id": "u1", "role": "user", "content": "\\ud83d\\ude00"}]}'
    assert ingest_client.post_json("/api/v1/messages", body).status_code == 202
    assert Message.objects.get().content == "\U0001F600"


def test_a_leading_byte_order_mark_is_read_past(ingest_client):
    """RFC 8259 lets a parser ignore one, and some clients (PowerShell's) still send it."""
    body = '{"messages": [{"id": "m-1", "thread_id": "t-1", "user_id": "u1", "role": "user", "content": "hi"}]}'
    assert ingest_client.post_json("/api/v1/messages", "\ufeff".encode() + body.encode()).status_code == 202
    assert Message.objects.get().content == "hi"


def test_a_byte_order_mark_anywhere_else_is_still_malformed(ingest_client):
    body = '{"messages": [\ufeff{"id": "m-1", "thread_id": "t-1", "user_id": "u1", "role": "user", "content": "hi"}]}'
    assert_error(ingest_client.post_json("/api/v1/messages", body.encode()), 400, "malformed_request")
    assert not Message.objects.exists()


# --- Booleans are not numbers ---------------------------------------------------------------


def test_confidence_true_is_refused_not_auto_approved(ingest_client, tenant):
    response = ingest_client.post_json("/api/v1/candidates", {"user_id": "u1", "candidates": [candidate(confidence=True)]})

    error = assert_error(response, 400, "invalid")
    assert "confidence" in json.dumps(error["details"])
    assert not Candidate.objects.exists()
    assert not AuditEvent.objects.filter(tenant_id=tenant.pk, subject_user_id="u1").exists()


@pytest.mark.parametrize("number", [0.97, 1, 0])
def test_numbers_are_still_numbers(ingest_client, number):
    response = ingest_client.post_json("/api/v1/candidates", {"user_id": "u1", "candidates": [candidate(confidence=number)]})
    assert response.status_code == 201, response.content


def test_a_version_of_true_is_refused(tenant, submit, make_client):
    [result] = submit(tenant, "u1", candidate(confidence=0.5))
    client = make_client(tenant, [Scope.REVIEW])

    response = client.post_json(f"/api/v1/review/candidates/{result.candidate_id}/approve", {"version": True})

    assert_error(response, 400, "invalid")
    assert Candidate.objects.get(pk=result.candidate_id).version == 1


def test_mem0_search_refuses_a_top_k_of_true(tenant, make_client):
    client = make_client(tenant, [Scope.RECALL])
    response = client.post_json("/compat/mem0/v3/memories/search/", {"query": "x", "user_id": "u1", "top_k": True})
    assert response.status_code == 400
    assert "top_k" in json.dumps(response.json()["error"]["details"])


@pytest.mark.parametrize("conditions", [5, 1.5, True, "u1", {"user_id": "u1"}])
@pytest.mark.parametrize(
    "path, body",
    [
        ("/compat/mem0/v3/memories/", {}),
        ("/compat/mem0/v3/memories/search/", {"query": "x"}),
        ("/compat/mem0/v3/memories/add/", {"messages": [{"role": "user", "content": "hi"}]}),
    ],
)
def test_mem0_filters_whose_and_is_not_a_list_are_refused(every_scope, tenant, publish, path, body, conditions):
    """A number under ``filters.AND`` was iterated and raised a TypeError (a 500)."""
    publish(tenant, "u1", field="name", value="Alice")
    before = dump_all_tables()

    error = assert_error(every_scope.post_json(path, {**body, "filters": {"user_id": "u1", "AND": conditions}}), 400, "invalid")

    assert "AND" in error["details"]["filters"]
    assert dump_all_tables() == before


def _views():
    """Every view class the URLconf routes to."""
    def walk(patterns):
        for entry in patterns:
            if isinstance(entry, URLResolver):
                yield from walk(entry.url_patterns)
            elif isinstance(entry, URLPattern) and hasattr(entry.callback, "view_class"):
                yield entry.callback.view_class
    return set(walk(get_resolver().url_patterns))


def _input_serializers():
    """The serializers views read input with (their nested classes other than outputs)."""
    found = set()
    for view in _views():
        for klass in type.mro(view):
            for name, value in vars(klass).items():
                if isinstance(value, type) and issubclass(value, serializers.BaseSerializer) and "Output" not in name:
                    found.add(value)
    return found


def _numeric_fields(serializer, path=""):
    for name, field in serializer.fields.items():
        child = getattr(field, "child", None)
        if isinstance(field, serializers.BaseSerializer) and hasattr(field, "fields"):
            yield from _numeric_fields(field, f"{path}{name}.")
        elif isinstance(child, serializers.Serializer):
            yield from _numeric_fields(child, f"{path}{name}[].")
        elif isinstance(field, (serializers.FloatField, serializers.IntegerField, serializers.DecimalField)):
            yield f"{path}{name}", field


def test_every_numeric_input_field_of_every_view_refuses_a_boolean():
    checked = []
    for serializer_class in _input_serializers():
        for where, field in _numeric_fields(serializer_class()):
            for boolean in (True, False):
                with pytest.raises(serializers.ValidationError):
                    field.run_validation(boolean)
            checked.append(f"{serializer_class.__qualname__}.{where}")
    # The walk found the fields it is meant to guard (a walk finding nothing proves nothing).
    assert {"CandidateSubmitApi.InputSerializer.candidates[].confidence", "ReviewQueueApi.InputSerializer.min_confidence",
            "SearchApi.InputSerializer.top_k", "ListApi.PageSerializer.page_size"} <= set(checked), checked


# --- Strings are not numbers or booleans in a JSON body (issue 39) ---------------------------


@pytest.mark.parametrize("field, value", [("confidence", "0.9"), ("confidence", "1"), ("supersedes", "yes"),
                                          ("supersedes", "true")])
def test_a_string_for_a_number_or_boolean_of_a_candidate_is_a_400_naming_it(ingest_client, tenant, field, value):
    response = ingest_client.post_json("/api/v1/candidates",
                                       {"user_id": "u1", "candidates": [candidate(**{field: value})]})

    error = assert_error(response, 400, "invalid")
    assert field in json.dumps(error["details"])
    assert not Candidate.objects.exists()


def test_a_version_of_one_as_a_string_is_refused(tenant, submit, make_client):
    [result] = submit(tenant, "u1", candidate(confidence=0.5))
    client = make_client(tenant, [Scope.REVIEW])

    response = client.post_json(f"/api/v1/review/candidates/{result.candidate_id}/approve", {"version": "1"})

    error = assert_error(response, 400, "invalid")
    assert "version" in json.dumps(error["details"])
    assert Candidate.objects.get(pk=result.candidate_id).version == 1


@pytest.mark.parametrize("field, value", [("top_k", "5"), ("include_sensitive", "yes")])
def test_mem0_refuses_a_string_for_a_number_or_boolean(tenant, make_client, field, value):
    client = make_client(tenant, [Scope.RECALL])
    response = client.post_json("/compat/mem0/v3/memories/search/", {"query": "x", "user_id": "u1", field: value})
    assert response.status_code == 400
    assert field in json.dumps(response.json()["error"]["details"])


def test_a_query_string_is_text_and_still_read_as_numbers(tenant, make_client, publish):
    publish(tenant, "u1", field="name", value="Alice")
    response = make_client(tenant, [Scope.RECALL]).get("/api/v1/recall", {"user_id": "u1", "limit": "5",
                                                                         "explain": "true"})
    assert response.status_code == 200, response.content


def test_every_numeric_or_boolean_input_field_of_every_view_refuses_a_string_in_json():
    checked = []
    for serializer_class in _input_serializers():
        if getattr(serializer_class, "reads_query_text", False):
            continue  # query parameters, where every value is text
        serializer = serializer_class(data={})
        for where, field in _numeric_fields(serializer):
            with pytest.raises(serializers.ValidationError):
                field.run_validation("1")
            checked.append(f"{serializer_class.__qualname__}.{where}")
    assert {"CandidateSubmitApi.InputSerializer.candidates[].confidence",
            "SearchApi.InputSerializer.top_k"} <= set(checked), checked


# --- Numbers are not text in a JSON body (issue 38) ----------------------------------------


@pytest.fixture
def pending_item(tenant, submit):
    """An item waiting for a reviewer, so a decision on it would otherwise be taken."""
    [result] = submit(tenant, "u1", candidate(confidence=0.5))
    return result.candidate_id


# Each free-text field of each JSON operation: (path, body builder, the field given a number).
def _text_cases():
    yield "/api/v1/messages", lambda c: {"messages": [{"id": "m-1", "thread_id": "t-1", "user_id": "u1",
                                                        "role": "user", "content": 7}]}, "content"
    for field in ("value", "evidence", "entity_name", "field", "entity_type"):
        yield "/api/v1/candidates", (lambda f: lambda c: {"user_id": "u1", "candidates": [candidate(**{f: 7})]})(field), field
    yield "/api/v1/review/candidates/{c}/approve", lambda c: {"version": 1, "value": 7}, "value"
    yield "/api/v1/review/candidates/{c}/approve", lambda c: {"version": 1, "reason": 7.5}, "reason"
    yield "/api/v1/review/candidates/{c}/reject", lambda c: {"version": 1, "reason": 7}, "reason"
    yield "/api/v1/review/candidates/{c}/reject", lambda c: {"version": 1, "reason": "dup", "reason_label": 3}, "reason_label"
    yield "/api/v1/review/candidates/{c}/defer", lambda c: {"version": 1, "reason": 7}, "reason"
    yield "/api/v1/review/candidates/{c}/comments", lambda c: {"body": 7}, "body"
    yield "/api/v1/keys", lambda c: {"scopes": ["recall"], "name": 7}, "name"
    yield "/api/v1/webhooks", lambda c: {"url": "https://example.com/hook", "events": ["fact.published"],
                                         "description": 7}, "description"
    yield "/compat/mem0/v3/memories/add/", lambda c: {"messages": [{"role": "user", "content": 7}], "user_id": "u1"}, "content"
    yield "/compat/mem0/v3/memories/search/", lambda c: {"query": 7, "user_id": "u1"}, "query"


@pytest.mark.parametrize("path, body, field", [pytest.param(*case, id=f"{case[0]}:{case[2]}") for case in _text_cases()])
def test_a_number_where_text_is_expected_is_a_400_naming_it_with_nothing_stored(every_scope, pending_item, path, body,
                                                                               field):
    before = dump_all_tables()

    response = every_scope.post_json(path.format(c=pending_item), body(pending_item))

    error = assert_error(response, 400, "invalid")
    assert field in json.dumps(error["details"]), error
    assert dump_all_tables() == before


def test_a_correction_through_mem0_refuses_a_number_for_its_text(every_scope, tenant, publish):
    fact = publish(tenant, "u1", field="name", value="Alice")
    before = dump_all_tables()

    response = every_scope.put(f"/compat/mem0/v1/memories/{fact.pk}/", {"text": 7}, content_type="application/json")

    assert "text" in json.dumps(assert_error(response, 400, "invalid")["details"])
    assert dump_all_tables() == before


def test_text_is_still_text(every_scope, pending_item):
    response = every_scope.post_json(f"/api/v1/review/candidates/{pending_item}/comments", {"body": "7"})
    assert response.status_code == 201, response.content
    assert response.json()["body"] == "7"


def _text_fields(serializer, path=""):
    for name, field in serializer.fields.items():
        child = getattr(field, "child", None)
        if isinstance(field, serializers.BaseSerializer) and hasattr(field, "fields"):
            yield from _text_fields(field, f"{path}{name}.")
        elif isinstance(child, serializers.Serializer):
            yield from _text_fields(child, f"{path}{name}[].")
        elif isinstance(child, serializers.CharField):
            yield f"{path}{name}[]", child
        elif isinstance(field, serializers.CharField) and not isinstance(field, serializers.RegexField):
            yield f"{path}{name}", field


# Nested serializers that describe an answer though their name lacks "Output".
ANSWER_SHAPES = {ApiKeyCreateApi.ListSerializer}


def test_every_text_input_field_of_every_view_refuses_a_number():
    checked = []
    for serializer_class in _input_serializers() - ANSWER_SHAPES:
        for where, field in _text_fields(serializer_class(data={})):
            for number in (7, 7.5):
                with pytest.raises(serializers.ValidationError, match="number"):
                    field.run_validation(number)
            checked.append(f"{serializer_class.__qualname__}.{where}")
    assert {"CandidateSubmitApi.InputSerializer.candidates[].value", "CandidateCommentsApi.InputSerializer.body",
            "ReviewRejectApi.InputSerializer.reason", "PendingConfirmApi.InputSerializer.value",
            "MemoryApi.UpdateSerializer.text"} <= set(checked), checked
