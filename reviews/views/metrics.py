"""GET /metrics (SPEC §8): Prometheus text format, for a scraper holding MEMORY_METRICS_TOKEN."""
import hmac

from django.conf import settings
from django.http import Http404, HttpResponse, JsonResponse
from django.views.decorators.http import require_GET
from prometheus_client import CONTENT_TYPE_LATEST

from ..metrics import exposition


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
