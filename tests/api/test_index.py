"""GET /api/v1/ answers with an index of the API, not a 404 page."""
from django.urls import resolve

from reviews.api.urls import urlpatterns


def test_the_api_index_lists_every_operation(client, db):
    response = client.get("/api/v1/")
    assert response.status_code == 200 and response["Content-Type"] == "application/json"
    body = response.json()
    assert body["schema"] == "http://testserver/api/schema/" and body["docs"] == "http://testserver/api/docs/"
    assert client.get(body["health"]["liveness"]).status_code == 200
    # Every operation named resolves to a route of this API (ids filled in), and every
    # route of the API is named.
    routes = set()
    for operation in body["operations"]:
        path = operation["path"].removeprefix("http://testserver")
        path = path.replace("{user_id}", "u-1").replace("{id}", "1").replace("{prefix}", "abcd1234")
        match = resolve(path)
        assert match.namespace == "api" and match.url_name != "index", operation
        assert operation["method"].lower() in match.func.view_class.http_method_names
        routes.add(match.url_name)
    assert routes == {pattern.name for pattern in urlpatterns} - {"index"}
