"""Liveness and readiness (SPEC §7): no auth, no tenant data."""
import redis
from django.conf import settings
from django.db import connection
from django.http import JsonResponse

from memory_portal.celery import app as celery_app

from ..recall.records import handed_off, recall_records_waiting


def healthz(request):
    return JsonResponse({"status": "ok"})


def readyz(request):
    checks = {}
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
        checks["database"] = "ok"
    except Exception as exc:  # noqa: BLE001 - readiness reports any failure
        checks["database"] = f"error: {exc.__class__.__name__}"
    if not settings.TASKS_IN_PROCESS:
        try:
            with celery_app.connection_for_write() as conn:
                conn.ensure_connection(max_retries=1, timeout=2)
            checks["broker"] = "ok"
        except Exception as exc:  # noqa: BLE001
            checks["broker"] = f"error: {exc.__class__.__name__}"
    else:
        checks["broker"] = "in-process"
    ready = all(value in ("ok", "in-process") for value in checks.values())
    body = {"status": "ok" if ready else "unavailable", "checks": checks}
    if handed_off():
        # Reported, not required: without the stream each recall writes its own record. The
        # count is the drain's backlog, for a monitor to alarm on when it keeps growing.
        try:
            body["recall_records_waiting"] = recall_records_waiting()
            checks["recall_record_stream"] = "ok"
        except redis.RedisError as exc:
            checks["recall_record_stream"] = f"degraded: {exc.__class__.__name__} (recalls write their records directly)"
    return JsonResponse(body, status=200 if ready else 503)
