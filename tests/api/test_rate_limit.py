"""MEMORY_API_RATE: calls per API key, counted per fixed window (reviews/api/base.py)."""
import pytest
from django.core.cache import cache

from reviews.models import Scope

pytestmark = pytest.mark.django_db

RECALL = "/api/v1/recall"


@pytest.fixture
def three_a_minute(api_rate):
    """Three calls a minute, on a clock the test moves; starts 50 s into a minute."""
    clock = api_rate("3/min")
    cache.clear()
    yield clock
    cache.clear()


def recall(client):
    return client.get(RECALL, {"user_id": "u1"})


def test_over_the_rate_is_429_until_the_window_ends(three_a_minute, tenant, make_client):
    client = make_client(tenant, [Scope.RECALL])
    assert [recall(client).status_code for _ in range(3)] == [200, 200, 200]

    refused = recall(client)

    assert refused.status_code == 429
    error = refused.json()["error"]
    assert error["code"] == "rate_limited"
    assert error["details"]["retry_after"] == 10  # the minute ends 10 s later
    three_a_minute["now"] += 10  # the next minute
    assert recall(client).status_code == 200


def test_each_key_has_its_own_count(three_a_minute, tenant, other_tenant, make_client):
    busy, quiet, outsider = (
        make_client(tenant, [Scope.RECALL]),
        make_client(tenant, [Scope.RECALL]),
        make_client(other_tenant, [Scope.RECALL]),
    )
    for _ in range(3):
        recall(busy)
    assert recall(busy).status_code == 429

    assert recall(quiet).status_code == 200
    assert recall(outsider).status_code == 200


def test_a_keys_count_is_one_number_whatever_the_rate(three_a_minute, tenant, make_client):
    """The cost of counting does not grow with the rate: no list of past calls is kept."""
    client = make_client(tenant, [Scope.RECALL])
    for _ in range(5):
        recall(client)

    window = int(three_a_minute["now"] // 60)
    assert cache.get(f"throttle_api_key_{client.key.prefix}:{window}") == 5  # refused calls count too


def test_a_refused_call_counts_once_whichever_path_answers_it(three_a_minute, tenant, make_client):
    """Recall's plain view (reviews/api/recall.py) counts a call before reading its
    parameters, as DRF's views do: a 400 is counted once, and the fourth call is refused."""
    client = make_client(tenant, [Scope.RECALL])
    answers = [client.get(RECALL, {"user_id": "u1", "limit": "0"}).status_code for _ in range(2)]
    answers += [recall(client).status_code, recall(client).status_code]

    assert answers == [400, 400, 200, 429]


@pytest.mark.urls("tests.api.recall_through_drf_urls")
def test_the_plain_view_refuses_over_the_rate_as_drf_does(three_a_minute, tenant, make_client):
    """The same 429, body and Retry-After, from recall's plain view and through DRF."""
    from tests.api.recall_through_drf_urls import THROUGH_DRF

    client = make_client(tenant, [Scope.RECALL])
    for _ in range(3):
        recall(client)

    plain, drf = client.get(RECALL, {"user_id": "u1"}), client.get(THROUGH_DRF, {"user_id": "u1"})

    assert plain.status_code == drf.status_code == 429
    assert plain.content == drf.content and plain["Retry-After"] == drf["Retry-After"] == "10"
