"""/metrics under a real gunicorn with two workers (prometheus-client's multiprocess mode):
whichever worker answers the scrape, it reports the counts of both, summed."""
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from reviews.models import Scope
from reviews.services.tenants import api_key_create, tenant_create
from tests.gunicorn import serving

TOKEN = "scrape-me-0123456789"
RECALLS = 60
pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def gunicorn_two_workers(tmp_path):
    metrics_dir = tmp_path / "prometheus"
    metrics_dir.mkdir()
    (metrics_dir / "counter_99999.db").write_bytes(b"left by an earlier run")  # emptied at start
    with serving(workers=2, MEMORY_METRICS_TOKEN=TOKEN, PROMETHEUS_MULTIPROC_DIR=str(metrics_dir)) as port:
        yield f"http://127.0.0.1:{port}", metrics_dir


def recall_count(base: str) -> float:
    response = httpx.get(f"{base}/metrics", headers={"Authorization": f"Bearer {TOKEN}"})
    assert response.status_code == 200, response.text
    for family in text_string_to_metric_families(response.text):
        for sample in family.samples:
            if sample.name == "memory_portal_recall_latency_seconds_count":
                return sample.value
    return 0.0


def test_a_scrape_sums_both_workers(gunicorn_two_workers):
    base, metrics_dir = gunicorn_two_workers
    tenant = tenant_create(slug="metrics")
    _, raw = api_key_create(tenant=tenant, scopes=[Scope.RECALL])
    headers = {"Authorization": f"Bearer {raw}"}

    def recall(_):
        # A new connection each time: the sync workers take turns accepting them.
        return httpx.get(f"{base}/api/v1/recall", params={"user_id": "u1"}, headers=headers).status_code

    with ThreadPoolExecutor(max_workers=6) as pool:
        assert set(pool.map(recall, range(RECALLS))) == {200}
    workers = {path.stem.rsplit("_", 1)[1] for path in metrics_dir.glob("histogram_*.db")}
    assert len(workers) == 2, "both workers must have answered recalls"
    assert not (metrics_dir / "counter_99999.db").exists()
    # Several scrapes, answered by either worker: always the sum.
    assert {recall_count(base) for _ in range(6)} == {RECALLS}
