"""Shared pieces of the API views: scope checks, strict serializers, the tenant."""
import logging
from collections.abc import Mapping
from types import SimpleNamespace

from django.utils.datastructures import MultiValueDict
from django.utils.http import urlencode
from drf_spectacular.openapi import AutoSchema
from rest_framework import exceptions, serializers
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.throttling import SimpleRateThrottle
from rest_framework.views import APIView

from ..actors import Actor
from ..policy.identifiers import validate_identifier
from ..sharedcache import CACHE_ERRORS
from .auth import ApiKeyAuthentication, HasScope, scope_refusal


logger = logging.getLogger(__name__)

# Path parameters that are SPEC §1 identifiers (routed by converters.IdentifierConverter).
PATH_IDENTIFIERS = {"user_id"}


class ApiKeyRateThrottle(SimpleRateThrottle):
    """``MEMORY_API_RATE`` calls per API key, counted in fixed windows: one integer per key
    and window (the minute, for ``N/min``), incremented in the cache.

    DRF's own SimpleRateThrottle keeps a timestamp per call and reads and rewrites the
    whole list on every call: at 6,000/min a busy key's list holds thousands of floats,
    pickled twice per call and, with Redis, sent there and back. A counter costs the same
    at any rate. The price of fixed windows: across a window's boundary a key can make up
    to twice its rate in a short time.
    """

    scope = "api_key"
    retry_after: float | None = None  # seconds left in the window, once refused

    def allow_request(self, request, view):
        if request.auth is None:
            return True
        return self.allow_key(request.auth)

    def allow_key(self, api_key) -> bool:
        """Count a call of ``api_key``; False once it is over the rate (then ``wait()`` says
        for how long). DRF's views call it through ``allow_request``, recall's plain view
        directly (reviews/api/recall.py)."""
        if self.rate is None:
            return True
        now = self.timer()
        window = int(now // self.duration)
        key = self.cache_format % {"scope": self.scope, "ident": f"{api_key.prefix}:{window}"}
        try:
            calls = self._count_call(key)
        except CACHE_ERRORS:
            # The counts live in the cache; if it is down, serve uncounted rather than fail.
            logger.warning("API rate limit not applied: the cache is unavailable", exc_info=True)
            return True
        self.retry_after = (window + 1) * self.duration - now
        return calls <= self.num_requests

    def _count_call(self, key: str) -> int:
        try:
            return self.cache.incr(key)
        except ValueError:  # the window's first call
            # Kept a second past the window, so an increment late in the window never
            # finds it gone (Redis would then recreate it without an expiry).
            if self.cache.add(key, 1, timeout=self.duration + 1):
                return 1
            return self.cache.incr(key)  # another process counted the first call

    def wait(self):
        return self.retry_after


class PlainJsonNegotiation(DefaultContentNegotiation):
    """Agents send no Accept header, or */*, or application/json: answer those with the
    first renderer at once instead of parsing and ranking media types on every request.
    A real Accept list is negotiated as DRF always does (406 if nothing fits).

    ``?format=`` picks nothing: the API answers JSON only, so ``format`` is a parameter
    like any other, which a strict serializer refuses as unknown (400). DRF's override
    would answer ``?format=json`` that way too, but ``?format=xml`` with a 404 for an
    operation that exists. DRF reads the override's name from ``self.settings`` alone.
    """

    settings = SimpleNamespace(URL_FORMAT_OVERRIDE=None)

    def select_renderer(self, request, renderers, format_suffix=None):
        first = renderers[0]
        if format_suffix is None and asks_for_plain(request, first.media_type):
            return first, first.media_type
        return super().select_renderer(request, renderers, format_suffix)


def asks_for_plain(request, media_type: str) -> bool:
    """No Accept header, */* or exactly ``media_type`` (a Django or DRF request)."""
    return request.META.get("HTTP_ACCEPT", "") in ("", "*/*", media_type)


class ApiErrorDetailSerializer(serializers.Serializer):
    code = serializers.CharField()
    message = serializers.CharField()
    details = serializers.DictField()


class ApiErrorSerializer(serializers.Serializer):
    """SPEC §7's error shape."""

    error = ApiErrorDetailSerializer()


class ApiAutoSchema(AutoSchema):
    """Names a serializer nested in a view after the view (``RecallApi.OutputSerializer`` →
    ``RecallOutput``): every view has its own ``InputSerializer``/``OutputSerializer``, and
    without this their OpenAPI components would collide under one name. The errors every
    operation shares are added by a postprocessing hook (reviews/api/schema.py)."""

    def get_serializer_name(self, serializer, direction):
        name = super().get_serializer_name(serializer, direction)
        owner, _, _ = serializer.__class__.__qualname__.rpartition(".")
        return f"{owner.removesuffix('Api')}{name}" if owner else name


def api_key_gate(request, scope: str):
    """The key of a request to a plain Django view, checked as DRF checks it for an
    ApiView, in the same order and with the same classes: the key (401, naming the scheme
    in ``WWW-Authenticate`` as DRF's handle_exception does), its scope (403), its rate
    (429). Recall's view (reviews/api/recall.py) is the one that needs it."""
    authentication = ApiKeyAuthentication()
    try:
        found = authentication.authenticate(request)
        if found is None:
            raise exceptions.NotAuthenticated()
    except (exceptions.NotAuthenticated, exceptions.AuthenticationFailed) as refused:
        refused.auth_header = authentication.authenticate_header(request)
        raise
    key = found[1]
    refusal = scope_refusal(key, scope)
    if refusal:
        raise exceptions.PermissionDenied(refusal)
    throttle = ApiKeyRateThrottle()
    if not throttle.allow_key(key):
        raise exceptions.Throttled(throttle.wait())
    return key


class ApiView(APIView):
    """One operation of SPEC §7. Subclasses set ``required_scope``."""

    schema = ApiAutoSchema()

    required_scope: str = ""
    permission_classes = [HasScope]
    throttle_classes = [ApiKeyRateThrottle]
    content_negotiation_class = PlainJsonNegotiation

    def initial(self, request, *args, **kwargs):
        super().initial(request, *args, **kwargs)
        # After the key and scope checks: a stranger learns nothing, not even a 400.
        for name in PATH_IDENTIFIERS & kwargs.keys():
            validate_identifier(kwargs[name], name=name)

    @property
    def tenant(self):
        return self.request.auth.tenant

    @property
    def actor(self) -> Actor:
        return Actor.api_key(self.request.auth)


def _never(name: str) -> bool:
    return False


def refuse_repeated_parameters(query: MultiValueDict, *, repeatable=_never) -> None:
    """Refuse a query parameter given more than once, unless ``repeatable(name)``.

    Django's QueryDict hands over a repeated parameter's last value without a word, other
    servers its first: a gateway that checked ``?user_id=alice&user_id=bob`` one way and
    this API acting on it the other would disagree on whose memory is read or deleted (HTTP
    parameter pollution).
    """
    repeated = {
        name: [f"Given {len(values)} times; give it once."]
        for name, values in query.lists()
        if len(values) > 1 and not repeatable(name)
    }
    if repeated:
        raise serializers.ValidationError(repeated)


def single_valued(query: MultiValueDict) -> dict:
    """``query`` as a plain dict, for a serializer whose parameters all take one value
    (plain, so that DRF reads an absent boolean as absent rather than as an unticked box);
    a parameter given twice is refused."""
    refuse_repeated_parameters(query)
    return query.dict()


class OnceEachParameter:
    """For a serializer that reads a QueryDict: a parameter given twice is refused
    (refuse_repeated_parameters), but for the serializer's list fields (recall's ``entity``
    and ``field``) and the parameters it does not read (StrictSerializer refuses them, the
    mem0 surface ignores them)."""

    def to_internal_value(self, data):
        if isinstance(data, MultiValueDict):
            refuse_repeated_query_parameters(data, self.fields)
        return super().to_internal_value(data)


def refuse_repeated_query_parameters(query: MultiValueDict, fields: Mapping) -> None:
    """OnceEachParameter's rule: repeatable are the list fields and what ``fields`` lacks."""
    refuse_repeated_parameters(
        query, repeatable=lambda name: name not in fields or isinstance(fields[name], serializers.ListField)
    )


def unknown_fields(data: Mapping, fields: Mapping) -> list[str]:
    """The keys of ``data`` that name none of ``fields``, sorted: StrictSerializer refuses them."""
    return sorted(key for key in data if key not in fields)


def refuse_unknown_fields(data: Mapping, fields: Mapping) -> None:
    """StrictSerializer's rule, also recall's plain view's: a key none of ``fields`` names
    is a 400 naming it, so a typo is an error rather than silently ignored."""
    unknown = unknown_fields(data, fields)
    if unknown:
        raise serializers.ValidationError({key: ["Unknown field."] for key in unknown})


class StrictSerializer(OnceEachParameter, serializers.Serializer):
    """Refuses keys it does not know (refuse_unknown_fields) and a query parameter given
    twice (OnceEachParameter)."""

    def to_internal_value(self, data):
        if isinstance(data, dict):
            refuse_unknown_fields(data, self.fields)
        return super().to_internal_value(data)


def next_page_url(request, cursor: str) -> str:
    """The same request with ``cursor`` set: the ``next`` link of a keyset-paged list."""
    query = {key: value for key, value in request.query_params.items() if key != "cursor"}
    return request.build_absolute_uri(f"{request.path}?{urlencode({**query, 'cursor': cursor})}")
