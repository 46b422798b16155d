"""The OpenAPI schema validates and is served. schemathesis runs over all of it in
tests/fuzz/test_api_schemathesis.py."""
import pytest
from drf_spectacular.generators import SchemaGenerator
from drf_spectacular.validation import validate_schema

from reviews.api.schema import ERROR_COMPONENTS, add_common_error_responses

pytestmark = pytest.mark.django_db


def test_the_schema_validates_against_the_openapi_spec():
    validate_schema(SchemaGenerator().get_schema(request=None, public=True))


def test_the_schema_is_served_without_auth(client):
    response = client.get("/api/schema/?format=json")

    assert response.status_code == 200
    assert "/api/v1/recall" in response.json()["paths"]


def _schema():
    return SchemaGenerator().get_schema(request=None, public=True)


def test_every_operation_documents_the_shared_errors_in_the_error_shape():
    schema = _schema()
    error = {"$ref": "#/components/schemas/ApiError"}
    recall = schema["paths"]["/api/v1/recall"]["get"]["responses"]
    assert list(recall) == ["200", "400", "401", "403", "429"]
    assert recall["429"]["content"]["application/json"]["schema"] == error
    for name, component in ERROR_COMPONENTS.items():  # the hook's fallback is what DRF's serializer gives
        assert schema["components"]["schemas"][name] == component
    for path, operations in schema["paths"].items():
        for method, operation in operations.items():
            codes = set(operation["responses"])
            assert {"400", "401", "403", "429"} <= codes, (method, path)
            assert ("404" in codes) or "{" not in path, (method, path)
            assert {"413", "415"} <= codes or method not in ("post", "put", "patch"), (method, path)


def test_an_operations_own_error_is_kept_and_the_error_component_added_when_missing():
    result = {"paths": {
        "/api/v1/things/{id}": {"post": {"responses": {"409": {"description": "stale"}}}},
        "/api/v1/other": {"parameters": [], "get": {"responses": {"200": {"description": ""}}}},
    }}

    add_common_error_responses(result, None, None, True)

    thing = result["paths"]["/api/v1/things/{id}"]["post"]["responses"]
    assert list(thing) == ["400", "401", "403", "404", "409", "413", "415", "429"]
    assert thing["409"] == {"description": "stale"}
    assert list(result["paths"]["/api/v1/other"]["get"]["responses"]) == ["200", "400", "401", "403", "429"]
    assert result["paths"]["/api/v1/other"]["parameters"] == []
    assert set(result["components"]["schemas"]) == {"ApiError", "ApiErrorDetail"}


def test_recall_is_documented_as_if_its_drf_view_were_routed_there():
    """/api/v1/recall is a plain Django view (reviews/api/recall.py); the preprocessing hook
    documents it with RecallApi. The whole schema equals the one drf-spectacular makes
    with RecallApi routed at that path."""
    from django.urls import path

    from memory_portal.urls import urlpatterns
    from reviews.api.recall import RecallApi

    routed = SchemaGenerator(patterns=[path("api/v1/recall", RecallApi.as_view()), *urlpatterns])

    documented = _schema()
    assert documented == routed.get_schema(request=None, public=True)
    assert documented["paths"]["/api/v1/recall"]["get"]["operationId"] == "v1_recall_retrieve"
    assert list(documented["paths"]) == sorted(documented["paths"])  # in its place, not appended
