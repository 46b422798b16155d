"""Per-request context (a request id that the audit trail records with every event), the
API's body limit and the one rule that keeps what the app answers out of every cache.

The content security policy, messages and locale are the libraries' own middlewares
(settings.MIDDLEWARE): nothing here reaches into their internals."""
import re
import uuid

from django.conf import settings

from ..api.errors import is_api_path, json_error
from ..context import current_request_id

_SAFE_ID = re.compile(r"^[A-Za-z0-9._-]{1,64}$")


class RequestIdMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        incoming = request.META.get("HTTP_X_REQUEST_ID", "")  # not request.headers: it copies every header
        request_id = incoming if _SAFE_ID.match(incoming) else uuid.uuid4().hex
        request.request_id = request_id
        token = current_request_id.set(request_id)
        try:
            response = self.get_response(request)
        finally:
            current_request_id.reset(token)
        response["X-Request-ID"] = request_id
        return response


# Bodies up to this size are read and thrown away before a 413 is sent: a client still
# uploading when the server closes the connection gets a reset and never sees the answer.
# Past it the server answers at once (the client may then see only the reset).
_DRAIN_FLOOR = 16 * 1024 * 1024
_DRAIN_CHUNK = 64 * 1024


def drain_bound(limit: int) -> int:
    """How much of a body over ``limit`` is read and thrown away before the 413 (here and
    in the MCP server, reviews/mcp.py)."""
    return max(_DRAIN_FLOOR, 4 * limit)


def _declared_length(request) -> int:
    try:
        return max(0, int(request.META.get("CONTENT_LENGTH") or 0))
    except ValueError:
        return 0


class BodyLimitMiddleware:
    """An API body over ``MEMORY_MAX_BODY_BYTES`` is a 413 in SPEC §7's shape that the
    client can read: the body is read and discarded (up to a bound) before answering.

    Pages are left to Django's own limit (a form over it is a 400; uploaded files do not
    count, so the auditor's verify page takes exports larger than an API body).
    """

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        declared = _declared_length(request)
        if limit is None or declared <= limit or not is_api_path(request.path):
            return self.get_response(request)
        if declared <= drain_bound(limit):
            while request.read(_DRAIN_CHUNK):
                pass
        response = json_error("payload_too_large", f"The request body is larger than {limit} bytes.", 413)
        response["Content-Length"] = str(len(response.content))  # answered before CommonMiddleware sets it
        return response


class NoStoreMiddleware:
    """``Cache-Control: no-store`` on everything the app itself answers.

    Staff pages, the subject's pages, export downloads and API answers carry personal data;
    none may stay in a browser's or a proxy's cache (a shared computer, the back button after
    signing out). Static files are answered before this (WhiteNoise) and stay cacheable.
    The header is exactly ``no-store``, replacing what a view set (``never_cache`` on the
    sign-in page adds ``max-age=0, no-cache, must-revalidate, private``): ``no-store``
    alone already forbids every cache, and one documented value is what operators check.
    """

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        response["Cache-Control"] = "no-store"
        return response
