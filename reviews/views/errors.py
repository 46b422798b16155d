"""Error pages; under /api/ (and /compat/) the same failures answer in SPEC §7's JSON shape."""
from django.shortcuts import render

from ..api.errors import json_error


def _is_api(request) -> bool:
    return request.path.startswith(("/api/", "/compat/"))


def not_found(request, exception=None):
    if _is_api(request):
        return json_error("not_found", "Not found.", 404)
    return render(request, "errors/404.html", status=404)


def server_error(request):
    if _is_api(request):
        return json_error("server_error", "Something went wrong on our side; it has been logged.", 500)
    return render(request, "errors/500.html", status=500)
