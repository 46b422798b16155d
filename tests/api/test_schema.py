"""The OpenAPI schema validates and is served. schemathesis runs over all of it in
tests/fuzz/test_api_schemathesis.py."""
import pytest
from drf_spectacular.generators import SchemaGenerator
from drf_spectacular.validation import validate_schema

pytestmark = pytest.mark.django_db


def test_the_schema_validates_against_the_openapi_spec():
    validate_schema(SchemaGenerator().get_schema(request=None, public=True))


def test_the_schema_is_served_without_auth(client):
    response = client.get("/api/schema/?format=json")

    assert response.status_code == 200
    assert "/api/v1/recall" in response.json()["paths"]
