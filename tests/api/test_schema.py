"""The OpenAPI schema validates, and schemathesis finds no server error in the recall and
candidates endpoints (bounded examples, through the WSGI app in this process)."""
import pytest
import schemathesis
from django.core import signals
from django.db import close_old_connections
from drf_spectacular.generators import SchemaGenerator
from drf_spectacular.validation import validate_schema
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error

from memory_portal.wsgi import application
from reviews.models import Scope
from reviews.services.tenants import api_key_create

pytestmark = pytest.mark.django_db
MAX_EXAMPLES = 50


def test_the_schema_validates_against_the_openapi_spec():
    validate_schema(SchemaGenerator().get_schema(request=None, public=True))


def test_the_schema_is_served_without_auth(client):
    response = client.get("/api/schema/?format=json")

    assert response.status_code == 200
    assert "/api/v1/recall" in response.json()["paths"]


@pytest.fixture
def raw_key(tenant, publish):
    """A key with every scope, over a subject with some published memory."""
    publish(tenant, "u1", field="name", value="Alice")
    publish(tenant, "u1", entity_type="project", entity_id="flask-migration", field="database", value="PostgreSQL")
    publish(tenant, "u1", field="health", value="asthma")
    return api_key_create(tenant=tenant, scopes=list(Scope.values))[1]


@pytest.fixture
def wsgi_requests_keep_the_test_connection(db):
    """Requests go straight to the WSGI app, so Django would close the test's connection
    at the end of each one; its own test client avoids that the same way."""
    signals.request_started.disconnect(close_old_connections)
    signals.request_finished.disconnect(close_old_connections)
    yield
    signals.request_started.connect(close_old_connections)
    signals.request_finished.connect(close_old_connections)


# Loaded at collection: serving the schema needs no database. (schemathesis' lazy
# `from_fixture` loader does not run on this pytest.)
schema = schemathesis.openapi.from_wsgi("/api/schema/?format=json", application)


@schema.include(path_regex=r"^/api/v1/(recall|candidates|review/candidates)").parametrize()
@settings(max_examples=MAX_EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck), database=None)
def test_no_server_errors(case, raw_key, wsgi_requests_keep_the_test_connection):
    response = case.call(headers={"Authorization": f"Bearer {raw_key}"})
    case.validate_response(response, checks=[not_a_server_error])
