"""MEMORY_CACHE_URL: the API rate limit counted in Redis, where every web process sees it."""
import pytest
import redis

from memory_portal.settings import shared_cache
from reviews.models import Scope
from tests.worker.brokers import unused_port

pytestmark = pytest.mark.django_db


def test_a_keys_calls_are_counted_in_the_shared_cache(redis_server, settings, tenant, make_client, api_rate):
    url, port = redis_server()
    settings.CACHES = shared_cache(url)
    api_rate("2/min")
    client = make_client(tenant, [Scope.RECALL])

    for _ in range(2):
        assert client.get("/api/v1/recall", {"user_id": "u1"}).status_code == 200
    response = client.get("/api/v1/recall", {"user_id": "u1"})
    assert response.status_code == 429 and response.json()["error"]["code"] == "rate_limited"

    shared = redis.Redis(host="127.0.0.1", port=port)
    assert len(shared.keys("memory-portal:*throttle_api_key*")) == 1
    shared.flushdb()  # the count lives in Redis alone: forgotten there, the key may call again
    assert client.get("/api/v1/recall", {"user_id": "u1"}).status_code == 200


def test_with_the_cache_down_calls_are_served_uncounted_and_it_is_logged(settings, tenant, make_client, caplog):
    settings.CACHES = shared_cache(f"redis://127.0.0.1:{unused_port()}/0")  # nothing listens there
    client = make_client(tenant, [Scope.RECALL])

    response = client.get("/api/v1/recall", {"user_id": "u1"})

    assert response.status_code == 200, response.content
    assert "API rate limit not applied: the cache is unavailable" in caplog.text
