"""The OpenAPI schema's hooks: the operations plain Django views answer, and the errors
every operation shares, added in one place.

An operation declares only its answers and the errors of its own (a stale version's 409);
this drf-spectacular postprocessing hook (``SPECTACULAR_SETTINGS["POSTPROCESSING_HOOKS"]``,
the documented way to change the generated schema) adds what any operation may answer
before or instead of its own work, in SPEC §7's shape.

Recall is answered by a plain Django view (reviews/api/recall.py), which drf-spectacular
does not read; ``document_plain_views`` (``SPECTACULAR_SETTINGS["PREPROCESSING_HOOKS"]``,
hooks that receive and return the list of endpoints) adds its route with the DRF view that
declares it, so the operation is documented as if that view were routed there.
"""
from django.urls import reverse

from .recall import RecallApi

# (URL name, the DRF view that declares what the plain view at that name answers).
PLAIN_VIEWS = (("api:recall", RecallApi),)


def document_plain_views(endpoints):
    """A preprocessing hook: each of PLAIN_VIEWS as drf-spectacular lists a routed DRF view,
    (path, path regex, method, callback); the methods are those DRF documents (not HEAD
    or OPTIONS)."""
    for name, view_class in PLAIN_VIEWS:
        path = reverse(name)
        callback = view_class.as_view()
        for method in view_class().allowed_methods:
            if method not in ("HEAD", "OPTIONS"):
                endpoints.append((path, path.lstrip("/"), method, callback))
    return endpoints


# A malformed request, no or an unknown key, a key without the scope, the rate limit.
COMMON_ERROR_STATUSES = (400, 401, 403, 429)
PATH_ERROR_STATUSES = (404,)  # an id in the path that names nothing of the tenant
BODY_ERROR_STATUSES = (413, 415)  # a body too large, or not JSON
BODY_METHODS = ("post", "put", "patch")

ERROR_COMPONENT = "ApiError"  # ApiErrorSerializer's component
# The component as drf-spectacular makes it from ApiErrorSerializer when an operation names
# that serializer (the 409s do); written here for a schema in which none does.
ERROR_COMPONENTS = {
    ERROR_COMPONENT: {
        "type": "object",
        "description": "SPEC §7's error shape.",
        "properties": {"error": {"$ref": "#/components/schemas/ApiErrorDetail"}},
        "required": ["error"],
    },
    "ApiErrorDetail": {
        "type": "object",
        "properties": {
            "code": {"type": "string"},
            "message": {"type": "string"},
            "details": {"type": "object", "additionalProperties": {}},
        },
        "required": ["code", "details", "message"],
    },
}
HTTP_METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")


def error_statuses(path: str, method: str) -> tuple[int, ...]:
    """The shared errors an operation may answer: every one's, a path id's, a body's."""
    statuses = COMMON_ERROR_STATUSES
    if "{" in path:
        statuses += PATH_ERROR_STATUSES
    if method in BODY_METHODS:
        statuses += BODY_ERROR_STATUSES
    return statuses


def add_common_error_responses(result, generator, request, public):
    """A postprocessing hook: each operation's shared errors, unless it documents its own."""
    error = {
        "content": {"application/json": {"schema": {"$ref": f"#/components/schemas/{ERROR_COMPONENT}"}}},
        "description": "",
    }
    added = False
    for path, operations in result.get("paths", {}).items():
        for method, operation in operations.items():
            if method not in HTTP_METHODS:
                continue  # path-level "parameters" and the like
            responses = operation.setdefault("responses", {})
            for code in map(str, error_statuses(path, method)):
                if code not in responses:
                    responses[code] = error
                    added = True
            operation["responses"] = dict(sorted(responses.items()))
    if added:
        schemas = result.setdefault("components", {}).setdefault("schemas", {})
        for name, component in ERROR_COMPONENTS.items():
            schemas.setdefault(name, component)
    return result
