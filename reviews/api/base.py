"""Shared pieces of the API views: scope checks, strict serializers, the tenant."""
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from types import SimpleNamespace

from django.core.exceptions import ValidationError as DjangoValidationError
from django.utils.datastructures import MultiValueDict
from django.utils.http import urlencode
from drf_spectacular.openapi import AutoSchema
from rest_framework import serializers
from rest_framework.fields import SkipField, empty
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.throttling import SimpleRateThrottle
from rest_framework.utils.html import is_html_input
from rest_framework.views import APIView

from ..actors import Actor
from ..policy.identifiers import validate_identifier
from ..sharedcache import CACHE_ERRORS
from .auth import HasScope


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
        if self.rate is None or request.auth is None:
            return True
        now = self.timer()
        window = int(now // self.duration)
        key = self.cache_format % {"scope": self.scope, "ident": f"{request.auth.prefix}:{window}"}
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


# What any operation may answer before or instead of its own work: a malformed request,
# no or an unknown key, a key without the scope, the rate limit.
COMMON_ERROR_STATUSES = (400, 401, 403, 429)
PATH_ERROR_STATUSES = (404,)  # an id in the path that names nothing of the tenant
BODY_ERROR_STATUSES = (413, 415)  # a body too large, or not JSON


class ApiAutoSchema(AutoSchema):
    """Names a serializer nested in a view after the view (``RecallApi.OutputSerializer`` →
    ``RecallOutput``): every view has its own ``InputSerializer``/``OutputSerializer``, and
    without this their OpenAPI components would collide under one name.

    Documents the errors every operation shares, in one place: an operation declares only
    its answers and the errors of its own (a stale version's 409)."""

    def get_serializer_name(self, serializer, direction):
        name = super().get_serializer_name(serializer, direction)
        owner, _, _ = serializer.__class__.__qualname__.rpartition(".")
        return f"{owner.removesuffix('Api')}{name}" if owner else name

    def _get_response_bodies(self, direction="response"):
        responses = super()._get_response_bodies(direction)
        statuses = list(COMMON_ERROR_STATUSES)
        if "{" in self.path:
            statuses += PATH_ERROR_STATUSES
        if self.method in ("POST", "PUT", "PATCH"):
            statuses += BODY_ERROR_STATUSES
        for code in map(str, statuses):
            if code not in responses:
                responses[code] = self._get_response_for_code(ApiErrorSerializer, code, direction=direction)
        return dict(sorted(responses.items()))


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


class StrictSerializer(OnceEachParameter, serializers.Serializer):
    """Refuses keys it does not know, so a typo is an error rather than silently ignored,
    and a query parameter given twice (OnceEachParameter)."""

    def to_internal_value(self, data):
        if isinstance(data, dict):
            unknown = unknown_fields(data, self.fields)
            if unknown:
                raise serializers.ValidationError({key: ["Unknown field."] for key in unknown})
        return super().to_internal_value(data)


class FlatQuerySerializer(StrictSerializer):
    """For hot read endpoints whose query parameters are flat, stateless fields.

    DRF deep-copies every declared field for every request and binds each copy to the
    new serializer: for a recall that cost more than its database work (then, with
    shallow copies, still 55–80 µs of a recall's CPU, a third of its validation). Flat
    fields carry no per-request state: validating reads a field's settings and writes
    nothing to it, so every instance of a class shares one set of fields, bound once
    (to an instance made for that; nothing these fields do reads their parent or its context).
    Validation, its errors and their order are DRF's own. Not for nested serializers,
    nor for fields that read the context (a CurrentUserDefault), nor for partial
    validation (DRF reads ``partial`` from the serializer a field is bound to: here, not
    the one validating), which is refused.
    """

    reads_query_text = True  # every value is text: "5" is read as 5 (api/fields.py)

    def __init__(self, *args, **kwargs):
        if kwargs.get("partial"):
            raise TypeError(f"{type(self).__name__} validates whole queries, never partial ones.")
        super().__init__(*args, **kwargs)

    @property
    def fields(self):
        return self._binding().fields

    @classmethod
    def _binding(cls) -> "_Binding":
        binding = cls.__dict__.get("_bound")
        if binding is None:
            # DRF's own binding, once per class; concurrent first requests may each bind
            # a set, and the last one stays: they are alike.
            fields = super(FlatQuerySerializer, cls()).fields
            writable = tuple(field for field in fields.values() if not field.read_only)
            binding = _Binding(
                fields=fields,
                writable=writable,
                defaultable={
                    name: (field.default, callable(field.default), _form_gives_default(field))
                    for name, field in fields.items()
                    if not field.read_only and not field.required and field.default is not empty
                    and not hasattr(cls, f"validate_{name}")
                    and not getattr(field.default, "requires_context", False)
                },
                plain=_validates_plainly(cls, writable),
            )
            cls._bound = binding
        return binding

    # The fields this request leaves out that were given their default at once (set by
    # to_internal_value, read by _writable_fields).
    _defaulted: Mapping = {}

    def to_internal_value(self, data):
        """A recall names one or two of its eight parameters. DRF walks every field the
        request leaves out as well (its value looked up, found empty, found not required,
        the default fetched: a third of a recall's validation, 15 of 45 µs). A field left
        out that has a default, is not required and has no ``validate_<field>`` method is
        given what DRF would give it, its default, at once (as ``Field.get_default`` makes
        it: a callable's result, fresh each time, or the value itself). The rest, what the
        request sent included, go through DRF as ever, and so does everything when the
        data is not a mapping.
        """
        if not isinstance(data, Mapping):
            return super().to_internal_value(data)
        self._defaulted = defaults = self._early_defaults(data)
        validated = super().to_internal_value(data)
        validated.update(defaults)
        return validated

    @classmethod
    def _early_defaults(cls, data: Mapping) -> dict:
        """The defaults of the fields ``data`` leaves out that may be given them at once."""
        html = is_html_input(data)
        return {
            name: default() if makes_default else default
            for name, (default, makes_default, form_gives_default) in cls._binding().defaultable.items()
            if name not in data and (form_gives_default or not html)
        }

    def run_validators(self, value):
        """DRF walks every field for the read-only ones' defaults, which only the
        serializer's own validators (``Meta.validators``) read: with none, as a query's
        serializer has, there is nothing to run."""
        if self.validators:
            super().run_validators(value)

    @classmethod
    def valid_data(cls, data) -> dict | None:
        """``data`` validated as ``cls(data=data)`` validates it, or None where that finds
        errors (an instance then says which).

        For the hot path (recall's lean path): a class whose validation is only its fields'
        (no ``validate_<field>`` method, no validators of its own, no ``validate()``, as
        a query's serializer has) runs the same bound fields and the same early defaults
        without an instance and without DRF's bookkeeping around them (the instance, the
        error collection, the empty-value and validator walks): that bookkeeping was three
        quarters of a recall's validation, 27 of 37 µs. Any other class is validated by an
        instance.
        """
        binding = cls._binding()
        if not binding.plain or not isinstance(data, Mapping):
            serializer = cls(data=data)
            return dict(serializer.validated_data) if serializer.is_valid() else None
        fields, validated = binding.fields, {}
        try:
            if isinstance(data, MultiValueDict):
                refuse_repeated_query_parameters(data, fields)
            if isinstance(data, dict) and unknown_fields(data, fields):
                return None  # StrictSerializer's refusal
            defaults = cls._early_defaults(data)
            for field in binding.writable:
                if field.field_name in defaults:
                    continue
                try:
                    validated[field.field_name] = field.run_validation(field.get_value(data))
                except SkipField:
                    pass
        except (serializers.ValidationError, DjangoValidationError):
            return None
        validated.update(defaults)
        return validated

    @property
    def _writable_fields(self):
        defaulted = self._defaulted
        return (field for field in self._binding().writable if field.field_name not in defaulted)


@dataclass(frozen=True)
class _Binding:
    """A FlatQuerySerializer class's fields, bound once, and what its validation reads of them."""

    fields: dict
    writable: tuple  # DRF's _writable_fields
    # name: (default, whether it is called, _form_gives_default(field)), for the fields that
    # may be defaulted at once
    defaultable: dict
    plain: bool  # validated by its fields alone (FlatQuerySerializer.valid_data)


def _validates_plainly(cls, writable: tuple) -> bool:
    """Is validating ``cls`` nothing but running its fields (and the early defaults)?"""
    base = FlatQuerySerializer
    return (
        not getattr(getattr(cls, "Meta", None), "validators", None)
        and cls.validate is serializers.Serializer.validate
        and cls.run_validation is serializers.Serializer.run_validation
        and cls.to_internal_value is base.to_internal_value
        and cls.run_validators is base.run_validators
        and cls._writable_fields is base._writable_fields
        and all(not hasattr(cls, f"validate_{field.field_name}") and field.source_attrs == [field.field_name]
                for field in writable)
    )


def _form_gives_default(field) -> bool:
    """Does DRF give a field that a form (a QueryDict) leaves out its default, unchanged?

    DRF reads a form's absent field as ``default_empty_html``: ``empty`` for most fields,
    which then take their default; for a BooleanField an unticked box, which DRF sets to the
    field's default and then validates (a bool comes out as it went in, unless a validator
    of the field's own refuses it).
    """
    if field.default_empty_html is empty:
        return True
    return (
        isinstance(field, serializers.BooleanField)
        and field.default_empty_html is field.default
        and isinstance(field.default, bool)
        and not field.validators
    )


def next_page_url(request, cursor: str) -> str:
    """The same request with ``cursor`` set: the ``next`` link of a keyset-paged list."""
    query = {key: value for key, value in request.query_params.items() if key != "cursor"}
    return request.build_absolute_uri(f"{request.path}?{urlencode({**query, 'cursor': cursor})}")
