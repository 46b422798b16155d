"""One place that turns every API failure into SPEC §7's error shape."""
import logging

from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.core.exceptions import RequestDataTooBig
from django.http import Http404, JsonResponse
from rest_framework import exceptions, status
from rest_framework.response import Response

from ..errors import DomainError

logger = logging.getLogger(__name__)


class PayloadTooLarge(exceptions.APIException):
    status_code = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE
    default_code = "payload_too_large"
    default_detail = "The request body is too large."


_CODES = {
    exceptions.ParseError: "malformed_request",
    exceptions.ValidationError: "invalid",
    exceptions.NotAuthenticated: "unauthenticated",
    exceptions.AuthenticationFailed: "unauthenticated",
    exceptions.PermissionDenied: "forbidden",
    exceptions.NotFound: "not_found",
    exceptions.MethodNotAllowed: "method_not_allowed",
    exceptions.NotAcceptable: "not_acceptable",
    exceptions.UnsupportedMediaType: "unsupported_media_type",
    exceptions.Throttled: "rate_limited",
    PayloadTooLarge: "payload_too_large",
}


def error_body(code: str, message: str, details=None) -> dict:
    return {"error": {"code": code, "message": message, "details": details or {}}}


def api_exception_handler(exc, context):
    """DRF's EXCEPTION_HANDLER: every DRF view's failures in SPEC §7's shape."""
    answer = error_answer(exc)
    if answer is None:
        return None  # a real bug: let Django log it and answer 500
    status_code, body, headers = answer
    return Response(body, status=status_code, headers=headers)


def error_answer(exc) -> tuple[int, dict, dict] | None:
    """The status, SPEC §7 body and headers that answer ``exc``; None for an exception that
    is a bug (a 500). Shared by DRF's views (api_exception_handler) and recall's plain view."""
    if isinstance(exc, DomainError):
        return exc.http_status, error_body(exc.code, exc.message, exc.details), {}
    if isinstance(exc, RequestDataTooBig):
        exc = PayloadTooLarge()
    elif isinstance(exc, Http404):
        exc = exceptions.NotFound()
    elif isinstance(exc, DjangoPermissionDenied):
        exc = exceptions.PermissionDenied()
    if not isinstance(exc, exceptions.APIException):
        return None
    code = next((c for cls, c in _CODES.items() if isinstance(exc, cls)), "error")
    if isinstance(exc, exceptions.ValidationError):
        message, details = "The request is not valid.", exc.detail
    else:
        message, details = str(exc.detail), {}
    headers = {}
    if isinstance(exc, exceptions.Throttled) and exc.wait:
        headers["Retry-After"] = str(int(exc.wait))
        details = {"retry_after": int(exc.wait)}
    if getattr(exc, "auth_header", None):
        headers["WWW-Authenticate"] = exc.auth_header
    return exc.status_code, error_body(code, message, details), headers


API_PATH_PREFIXES = ("/api/", "/compat/")


def is_api_path(path: str) -> bool:
    """Under these prefixes every failure answers in SPEC §7's JSON shape, not a page."""
    return path.startswith(API_PATH_PREFIXES)


def json_error(code: str, message: str, status_code: int) -> JsonResponse:
    """The same shape for failures outside DRF (404/500 handlers under /api/)."""
    return JsonResponse(error_body(code, message), status=status_code)
