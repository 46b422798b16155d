"""Metrics for operators (SPEC §8 ``GET /metrics``): the series, where they are counted,
and the collector that reads the database at scrape time.

Two kinds of series:

- **counted** where things happen, in the process that did them: decisions, extraction
  outcomes, webhook deliveries (``Counter``), time to decision and recall latency
  (``Histogram``). Under gunicorn every worker writes its own files in
  ``PROMETHEUS_MULTIPROC_DIR`` (prometheus-client's multiprocess mode) and a scrape sums
  them, whichever worker answers it. A count is made once the change commits (a
  rolled-back decision counts nothing).
- **read** at scrape time from the database and the recall stream (reviews/views/metrics.py):
  queue items by tenant and status, the oldest waiting item's age, recall records waiting
  to be written. Exact whatever the number of processes, and nothing to keep in step.

Counting is on only while ``MEMORY_METRICS_TOKEN`` is set (:func:`enabled`): nobody can
scrape otherwise, and recall then pays nothing for it.
"""
from __future__ import annotations

import time
from functools import wraps

from django.conf import settings
from django.db import transaction
from prometheus_client import CollectorRegistry, Counter, Histogram

from .models import AuditAction

PREFIX = "memory_portal"

# Each series lives in a registry of its own module, not prometheus-client's global one:
# the scrape decides how to gather them (summed over workers, or this process alone).
COUNTED = CollectorRegistry(auto_describe=True)

DECISIONS = Counter(
    f"{PREFIX}_decisions", "People's decisions on queue items, by outcome.", ["outcome"], registry=COUNTED
)
TIME_TO_DECISION = Histogram(
    f"{PREFIX}_time_to_decision_seconds",
    "From a candidate's arrival to a person's decision.",
    buckets=(60, 300, 900, 3600, 4 * 3600, 86400, 3 * 86400, 7 * 86400, 30 * 86400),
    registry=COUNTED,
)
RECALL_LATENCY = Histogram(
    f"{PREFIX}_recall_latency_seconds",
    "Time to answer GET /api/v1/recall.",
    buckets=(0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5),
    registry=COUNTED,
)
EXTRACTIONS = Counter(
    f"{PREFIX}_extractions", "Messages through extraction, by outcome.", ["outcome"], registry=COUNTED
)
WEBHOOK_DELIVERIES = Counter(
    f"{PREFIX}_webhook_deliveries", "Webhook delivery attempts, by outcome.", ["outcome"], registry=COUNTED
)

# The decisions the queue counts, by the audit action that records them.
DECISION_OUTCOMES = {
    AuditAction.CANDIDATE_APPROVED: "approved",
    AuditAction.CANDIDATE_EDITED_APPROVED: "edited",
    AuditAction.CANDIDATE_REJECTED: "rejected",
    AuditAction.CANDIDATE_DEFERRED: "deferred",
}
EXTRACTION_OUTCOMES = {
    AuditAction.MESSAGE_EXTRACTED: "done",
    AuditAction.MESSAGE_EXTRACTION_FAILED: "failed",
}

# The series the scrape reads from the database (names checked by the dashboard's test).
QUEUE_ITEMS = f"{PREFIX}_queue_items"
QUEUE_OLDEST_AGE = f"{PREFIX}_queue_oldest_age_seconds"
RECALL_RECORDS_WAITING = f"{PREFIX}_recall_records_waiting"


def enabled() -> bool:
    return bool(settings.MEMORY_METRICS_TOKEN)


def count_audited(drafts) -> None:
    """Count what the audit events of a transaction say happened, once it commits."""
    if not enabled():
        return
    outcomes = [(DECISIONS, DECISION_OUTCOMES.get(d.action)) for d in drafts]
    outcomes += [(EXTRACTIONS, EXTRACTION_OUTCOMES.get(d.action)) for d in drafts]
    outcomes = [(counter, outcome) for counter, outcome in outcomes if outcome]
    if outcomes:
        transaction.on_commit(lambda: [counter.labels(outcome).inc() for counter, outcome in outcomes])


def decision_timed(arrived_at, decided_at) -> None:
    if enabled():
        seconds = max((decided_at - arrived_at).total_seconds(), 0.0)
        transaction.on_commit(lambda: TIME_TO_DECISION.observe(seconds))


def delivery_attempted(outcome: str) -> None:
    if enabled():
        WEBHOOK_DELIVERIES.labels(outcome).inc()


def timed_recall(view):
    """Wraps the recall view: its latency, from the router's call to the response."""

    @wraps(view)
    def timed(request, *args, **kwargs):
        if not enabled():
            return view(request, *args, **kwargs)
        started = time.perf_counter()
        try:
            return view(request, *args, **kwargs)
        finally:
            RECALL_LATENCY.observe(time.perf_counter() - started)

    return timed
