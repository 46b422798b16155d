"""GET /api/v1/ answers with an index of the API, not a 404 page."""
import re

from django.urls import resolve
from drf_spectacular.generators import SchemaGenerator

from reviews.api.urls import urlpatterns


def test_the_api_index_lists_every_operation(client, db):
    response = client.get("/api/v1/")
    assert response.status_code == 200 and response["Content-Type"] == "application/json"
    body = response.json()
    assert body["schema"] == "http://testserver/api/schema/" and body["docs"] == "http://testserver/api/docs/"
    assert client.get(body["health"]["liveness"]).status_code == 200
    # Every operation named resolves to a route of this API (ids filled in), and every
    # route of the API is named.
    # The method is checked against the schema, which documents every operation whether a
    # DRF view or a plain one answers it (recall); the index and the schema name path
    # parameters differently ({id}, {candidate_id}).
    schema = SchemaGenerator().get_schema(request=None, public=True)
    documented = {(re.sub(r"{[^}]+}", "{}", path), method) for path, ops in schema["paths"].items() for method in ops}
    routes = set()
    for operation in body["operations"]:
        template = operation["path"].removeprefix("http://testserver")
        path = template.replace("{user_id}", "u-1").replace("{id}", "1").replace("{prefix}", "abcd1234")
        match = resolve(path)
        assert match.namespace == "api" and match.url_name != "index", operation
        assert (re.sub(r"{[^}]+}", "{}", template), operation["method"].lower()) in documented, operation
        routes.add(match.url_name)
    assert routes == {pattern.name for pattern in urlpatterns} - {"index"}
