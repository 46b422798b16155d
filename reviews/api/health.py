"""Liveness and readiness (SPEC §7): no auth, no tenant data."""
from django.conf import settings
from django.db import connection
from django.http import JsonResponse


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
        from memory_portal.celery import app

        try:
            with app.connection_for_write() as conn:
                conn.ensure_connection(max_retries=1, timeout=2)
            checks["broker"] = "ok"
        except Exception as exc:  # noqa: BLE001
            checks["broker"] = f"error: {exc.__class__.__name__}"
    else:
        checks["broker"] = "in-process"
    ready = all(value in ("ok", "in-process") for value in checks.values())
    return JsonResponse({"status": "ok" if ready else "unavailable", "checks": checks}, status=200 if ready else 503)
