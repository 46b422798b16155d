"""Error pages; under /api/ (and /compat/) the same failures answer in SPEC §7's JSON shape."""
from django.shortcuts import render

from ..api.errors import is_api_path, json_error


def _is_api(request) -> bool:
    return is_api_path(request.path)


def not_found(request, exception=None):
    if _is_api(request):
        return json_error("not_found", "Not found.", 404)
    return render(request, "errors/404.html", status=404)


def permission_denied(request, exception=None):
    """A styled page with the navigation, saying why, for staff who reached a page their
    role does not open (say, a reviewer on an auditor page)."""
    if _is_api(request):
        return json_error("forbidden", "You do not have permission to do that.", 403)
    message = str(exception) if exception and str(exception) else ""
    return render(request, "errors/403.html", {"message": message}, status=403)


def server_error(request):
    if _is_api(request):
        return json_error("server_error", "Something went wrong on our side; it has been logged.", 500)
    return render(request, "errors/500.html", status=500)
