"""Bearer-key authentication and scope checks for the API (SPEC §7)."""
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from rest_framework import authentication, exceptions, permissions

from ..actors import Actor
from ..services.api_keys import api_key_mark_used
from ..services.tenants import api_key_authenticate


class ApiKeyPrincipal:
    """What ``request.user`` is for an API call: the key, standing for its tenant."""

    is_authenticated = True
    is_anonymous = False

    def __init__(self, key):
        self.key = key
        self.tenant = key.tenant

    @property
    def pk(self):
        return str(Actor.api_key(self.key))


def key_in_authorization(header: str, *, keyword: str = "Bearer") -> str | None:
    """The key in an ``Authorization: <keyword> <key>`` header's value; None for anything
    else. The API's and the MCP server's one reading of it (reviews/mcp.py)."""
    scheme, _, token = header.partition(" ")
    if scheme.lower() != keyword.lower() or not token.strip():
        return None
    return token.strip()


class ApiKeyAuthentication(authentication.BaseAuthentication):
    keyword = "Bearer"

    def authenticate(self, request):
        # Read from META, not through DRF's get_authorization_header: that builds
        # request.headers, a copy of every header, for this one (a WSGI server gives it as
        # latin-1 text; a test client may give bytes).
        header = request.META.get("HTTP_AUTHORIZATION", "")
        if isinstance(header, bytes):
            header = header.decode("latin-1")
        if not header:
            return None
        raw_key = key_in_authorization(header, keyword=self.keyword)
        if raw_key is None:
            raise exceptions.AuthenticationFailed("Use 'Authorization: Bearer <key>'.")
        key = api_key_authenticate(raw_key)
        if key is None:
            raise exceptions.AuthenticationFailed("Unknown or revoked API key.")
        api_key_mark_used(key)
        return ApiKeyPrincipal(key), key

    def authenticate_header(self, request):
        return self.keyword


class ApiKeyScheme(OpenApiAuthenticationExtension):
    target_class = "reviews.api.auth.ApiKeyAuthentication"
    name = "ApiKey"

    def get_security_definition(self, auto_schema):
        return {"type": "http", "scheme": "bearer"}


def scope_refusal(key, scope: str) -> str | None:
    """Why ``key`` may not call an operation that needs ``scope``; None when it may. The
    one rule of DRF's views (HasScope) and recall's plain view (api/recall.py)."""
    if key.has_scope(scope):
        return None
    return f"This API key lacks the '{scope}' scope."


class HasScope(permissions.BasePermission):
    """The view's ``required_scope`` must be among the key's scopes."""

    message = "This API key lacks the scope this endpoint needs."

    def has_permission(self, request, view):
        key = request.auth
        scope = getattr(view, "required_scope", None)
        if key is None or scope is None:
            return False
        refusal = scope_refusal(key, scope)
        if refusal:
            self.message = refusal
            return False
        return True
