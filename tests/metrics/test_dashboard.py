"""docs/grafana-dashboard.json is built from what /metrics exports: every query names at
least one series, and every series it names is one a real scrape of the app shows."""
import json
import re
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.metrics.test_metrics_endpoint import TOKEN

DASHBOARD = Path(__file__).resolve().parents[2] / "docs" / "grafana-dashboard.json"
SERIES = re.compile(r"\bmemory_portal_[a-z0-9_]+")


def queries(node):
    """Every PromQL text in the dashboard: panel targets and template variables."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key in ("expr", "definition") and isinstance(value, str):
                yield value
            elif key == "query" and isinstance(value, str) and "(" in value:
                yield value
            else:
                yield from queries(value)
    elif isinstance(node, list):
        for item in node:
            yield from queries(item)


@pytest.fixture
def exported(client, db, settings):
    settings.MEMORY_METRICS_TOKEN = TOKEN
    settings.PROMETHEUS_MULTIPROC_DIR = ""
    text = client.get("/metrics", HTTP_AUTHORIZATION=f"Bearer {TOKEN}").content.decode()
    names = set()
    for family in text_string_to_metric_families(text):
        names.add(family.name)
        names |= {sample.name for sample in family.samples}
        if family.type == "counter":
            names.add(f"{family.name}_total")
        if family.type == "histogram":
            names |= {f"{family.name}_{suffix}" for suffix in ("bucket", "count", "sum")}
    return names


def test_every_query_names_an_exported_series(exported):
    found = list(queries(json.loads(DASHBOARD.read_text())))
    assert len(found) >= 10
    for query in found:
        named = set(SERIES.findall(query))
        assert named, f"a query names no series: {query}"
        assert named <= exported, f"not exported: {sorted(named - exported)} in {query}"


def test_every_exported_family_has_a_panel(exported):
    named = {name for query in queries(json.loads(DASHBOARD.read_text())) for name in SERIES.findall(query)}
    families = {re.sub(r"_(total|bucket|count|sum)$", "", name) for name in named}
    assert {
        "memory_portal_queue_items", "memory_portal_queue_oldest_age_seconds", "memory_portal_decisions",
        "memory_portal_time_to_decision_seconds", "memory_portal_recall_latency_seconds",
        "memory_portal_extractions", "memory_portal_webhook_deliveries", "memory_portal_recall_records_waiting",
    } <= families
