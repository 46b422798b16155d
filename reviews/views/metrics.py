"""GET /metrics (SPEC §8): Prometheus text format, for a scraper holding MEMORY_METRICS_TOKEN.

The counted series are defined in reviews/metrics.py; the ones read at scrape time are
collected here, from the database and the recall stream.
"""
import hmac

from django.conf import settings
from django.db.models import Count, Min
from django.http import Http404, HttpResponse, JsonResponse
from django.utils import timezone
from django.views.decorators.http import require_GET
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.multiprocess import MultiProcessCollector

from ..metrics import COUNTED, QUEUE_ITEMS, QUEUE_OLDEST_AGE, RECALL_RECORDS_WAITING
from ..models import OPEN_CANDIDATE_STATUSES, Candidate, Tenant
from ..recall.records import recall_records_waiting


class DatabaseCollector:
    """The series read at scrape time."""

    def collect(self):
        slugs = dict(Tenant.objects.values_list("pk", "slug"))
        items = GaugeMetricFamily(QUEUE_ITEMS, "Open queue items, by tenant and status.", labels=["tenant", "status"])
        oldest = GaugeMetricFamily(QUEUE_OLDEST_AGE, "Age of the oldest open queue item, by tenant.", labels=["tenant"])
        now = timezone.now()
        rows = (
            Candidate.objects.filter(status__in=OPEN_CANDIDATE_STATUSES)
            .values("tenant_id", "status")
            .annotate(n=Count("pk"), first=Min("created_at"))
            .order_by()
        )
        first_by_tenant: dict[int, object] = {}
        for row in rows:
            items.add_metric([slugs.get(row["tenant_id"], ""), row["status"]], row["n"])
            known = first_by_tenant.get(row["tenant_id"])
            first_by_tenant[row["tenant_id"]] = row["first"] if known is None else min(known, row["first"])
        for tenant_id, first in first_by_tenant.items():
            oldest.add_metric([slugs.get(tenant_id, "")], (now - first).total_seconds())
        yield items
        yield oldest
        waiting = GaugeMetricFamily(RECALL_RECORDS_WAITING, "Recall records handed off and not yet written.")
        waiting.add_metric([], recall_records_waiting())
        yield waiting


def exposition() -> bytes:
    """The text a scrape gets: the counted series (every worker's, summed) and the read ones."""
    if settings.PROMETHEUS_MULTIPROC_DIR:
        counted = CollectorRegistry()
        MultiProcessCollector(counted, path=settings.PROMETHEUS_MULTIPROC_DIR)
    else:
        counted = COUNTED
    read = CollectorRegistry(auto_describe=False)
    read.register(DatabaseCollector())
    return generate_latest(counted) + generate_latest(read)


@require_GET
def metrics(request):
    token = settings.MEMORY_METRICS_TOKEN
    if not token:
        raise Http404("Metrics are off (MEMORY_METRICS_TOKEN is unset).")
    given = request.headers.get("Authorization", "")
    if not hmac.compare_digest(given.encode(), f"Bearer {token}".encode()):
        body = {"error": {"code": "unauthenticated", "message": "A valid metrics token is required.", "details": {}}}
        return JsonResponse(body, status=401, headers={"WWW-Authenticate": "Bearer"})
    return HttpResponse(exposition(), content_type=CONTENT_TYPE_LATEST)
