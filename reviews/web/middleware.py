"""Per-request context (a request id that the audit trail records with every event), the
API's body limit, the one rule that keeps what the app answers out of every cache, and
leaner forms of three library middlewares that every request passes through."""
import functools
import re
import uuid

from csp.constants import HEADER, HEADER_REPORT_ONLY
from csp.middleware import CheckableLazyObject, CSPMiddleware
from csp.utils import build_policy
from django.conf import settings
from django.conf.urls.i18n import is_language_prefix_patterns_used
from django.contrib.messages.middleware import MessageMiddleware
from django.contrib.messages.storage import default_storage
from django.core.signals import setting_changed
from django.dispatch import receiver
from django.middleware.locale import LocaleMiddleware
from django.utils import translation
from django.utils.cache import patch_vary_headers
from django.utils.functional import SimpleLazyObject, empty

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


# What a view sets on its response to change the policy for that response alone
# (csp.decorators: csp_update, csp_replace, csp_override, each in both modes).
_RESPONSE_POLICY_ATTRIBUTES = (
    "_csp_config", "_csp_update", "_csp_replace", "_csp_config_ro", "_csp_update_ro", "_csp_replace_ro",
)
# The site's policies as django-csp reads them: (setting, header, the response attribute
# that exempts a response from it: csp.decorators.csp_exempt).
_SITE_POLICIES = (
    ("CONTENT_SECURITY_POLICY", HEADER, "_csp_exempt"),
    ("CONTENT_SECURITY_POLICY_REPORT_ONLY", HEADER_REPORT_ONLY, "_csp_exempt_ro"),
)


@functools.cache
def site_policies() -> tuple[tuple[str, str, str, tuple[str, ...]], ...]:
    """Each header of the site's own policy: (header, its text or "" when the setting is
    off, the exempting attribute, the excluded path prefixes), as django-csp builds them."""
    return tuple(
        (header, build_policy(report_only=header == HEADER_REPORT_ONLY), exempt,
         tuple((getattr(settings, name, None) or {}).get("EXCLUDE_URL_PREFIXES") or ()))
        for name, header, exempt in _SITE_POLICIES
    )


@receiver(setting_changed)
def _forget_site_policies(*, setting, **kwargs):
    if any(setting == name for name, _, _ in _SITE_POLICIES):
        site_policies.cache_clear()


class SitePolicyCSPMiddleware(CSPMiddleware):
    """django-csp's middleware, with the site's own policy built once instead of per response.

    django-csp builds both headers' text from the settings on every response (two policy
    builds, with copies of every part): 12% of the instructions of the lightest request
    the app serves, the floor of bench/recall_instructions.py. That text depends on the
    settings alone unless the page used a nonce or its view changed the policy for its
    response (csp.decorators); those responses go through django-csp's own code.
    """

    def process_response(self, request, response):
        if getattr(request, "_csp_nonce", None) is not None or any(
            getattr(response, attribute, None) is not None for attribute in _RESPONSE_POLICY_ATTRIBUTES
        ):
            return super().process_response(request, response)
        if response.status_code in (404, 500) and settings.DEBUG:
            return response  # as django-csp: Django's debug pages carry inline script and style
        for header, text, exempt, excluded_prefixes in site_policies():
            if (text and header not in response and getattr(response, exempt, False) is False
                    and not request.path_info.startswith(excluded_prefixes)):
                response[header] = text
        # As django-csp: a nonce asked for after the header is written is an error, not a
        # nonce the policy does not carry.
        request.csp_nonce = CheckableLazyObject(self._csp_nonce_post_response)
        return response


class LazyMessageMiddleware(MessageMiddleware):
    """Django's messages, their storage made when a request first uses it.

    Django's middleware builds the storage for every request (a cookie signer, the session
    lookup), though an API call or a page that neither adds nor shows a message never
    touches it; and a storage never touched writes nothing to the response.
    """

    def process_request(self, request):
        request._messages = SimpleLazyObject(functools.partial(default_storage, request))

    def process_response(self, request, response):
        messages = getattr(request, "_messages", None)
        if isinstance(messages, SimpleLazyObject) and messages._wrapped is empty:
            return response
        return super().process_response(request, response)


class PrefixFreeLocaleMiddleware(LocaleMiddleware):
    """Django's LocaleMiddleware, without its path lookups where no URL carries a language.

    Django looks for a language prefix in the path twice per request (once each way) even
    when the URLconf has no ``i18n_patterns``, where the answer is not used; each lookup
    ends in a LookupError that ``get_supported_language_variant``'s cache does not keep
    ("api" is no language): 3% of the instructions of the lightest request. Without
    prefixed patterns this does what Django's does with the answer it throws away; with
    them, Django's own code runs.
    """

    @staticmethod
    def _prefixes_used(request) -> bool:
        return is_language_prefix_patterns_used(getattr(request, "urlconf", settings.ROOT_URLCONF))[0]

    def process_request(self, request):
        if self._prefixes_used(request):
            return super().process_request(request)
        translation.activate(translation.get_language_from_request(request, check_path=False))
        request.LANGUAGE_CODE = translation.get_language()

    def process_response(self, request, response):
        if self._prefixes_used(request):
            return super().process_response(request, response)
        patch_vary_headers(response, ("Accept-Language",))
        response.headers.setdefault("Content-Language", translation.get_language())
        return response
