"""schemathesis finds no server error in POST /api/v1/messages (bounded examples, in process)."""
import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error

from memory_portal.wsgi import application
from reviews.models import Scope
from reviews.services.tenants import api_key_create
from tests.api.test_schema import wsgi_requests_keep_the_test_connection  # noqa: F401 - a fixture

pytestmark = pytest.mark.django_db

schema = schemathesis.openapi.from_wsgi("/api/schema/?format=json", application)


@pytest.fixture
def raw_key(tenant):
    return api_key_create(tenant=tenant, scopes=[Scope.INGEST])[1]


@schema.include(path_regex=r"^/api/v1/messages$").parametrize()
@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck), database=None)
def test_no_server_errors(case, raw_key, wsgi_requests_keep_the_test_connection):  # noqa: F811
    response = case.call(headers={"Authorization": f"Bearer {raw_key}"})
    case.validate_response(response, checks=[not_a_server_error])
