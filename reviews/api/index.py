"""GET /api/v1/: what this API offers, for a person or an agent finding their way."""
from django.http import JsonResponse
from django.urls import reverse

# (method and path under /api/v1/, scope, what) — the operations of urls.py, in its order.
OPERATIONS = [
    ("POST messages", "ingest", "send conversation messages; candidates are extracted in the background"),
    ("POST candidates", "ingest", "submit candidate facts through the policy"),
    ("GET recall", "recall", "the subject's published facts an agent may receive"),
    ("GET review/candidates", "review", "the review queue"),
    ("POST review/candidates/{id}/approve", "review", "approve (or edit, then approve) a candidate"),
    ("POST review/candidates/{id}/reject", "review", "reject a candidate with a reason"),
    ("POST review/candidates/{id}/defer", "review", "ask the subject"),
    ("GET review/candidates/{id}/comments", "review", "the comments between reviewers on a candidate"),
    ("POST review/candidates/{id}/comments", "review", "add a comment to a candidate"),
    ("POST users/{user_id}/portal-link", "admin", "a signed, single-use link to the subject's own page"),
    ("GET users/{user_id}/facts", "admin", "every fact of a subject, with history"),
    ("DELETE users/{user_id}/facts", "admin", "delete by thread, entity or field; without filters erase the subject"),
    ("DELETE users/{user_id}/facts/{id}", "admin", "delete one fact"),
    ("GET users/{user_id}/pending", "subject", "the subject's items waiting for their answer, with a question to show"),
    ("POST users/{user_id}/pending/{id}/confirm", "subject", "the subject confirms (or corrects) an item"),
    ("POST users/{user_id}/pending/{id}/reject", "subject", "the subject rejects an item"),
    ("GET audit/export", "admin", "the audit trail as JSON Lines or CSV, streamed"),
    ("GET audit/events", "admin", "audit events, newest first, paged"),
    ("POST keys", "admin", "create an API key (shown once)"),
    ("DELETE keys/{prefix}", "admin", "revoke an API key"),
    ("POST keys/{prefix}/rotate", "admin", "a new key with the same scopes; the old one ends after a grace period"),
    ("GET webhooks", "admin", "the tenant's webhook endpoints"),
    ("POST webhooks", "admin", "register a webhook endpoint (its secret shown once)"),
    ("DELETE webhooks/{id}", "admin", "remove a webhook endpoint"),
]


def api_index(request):
    base = request.build_absolute_uri(reverse("api:index"))
    operations = []
    for operation, scope, what in OPERATIONS:
        method, _, path = operation.partition(" ")
        operations.append({"method": method, "path": f"{base}{path}", "scope": scope, "what": what})
    return JsonResponse(
        {
            "name": "Memory Portal API",
            "version": "v1",
            "authentication": "Authorization: Bearer <API key>",
            "schema": request.build_absolute_uri(reverse("schema")),
            "docs": request.build_absolute_uri(reverse("api-docs")),
            "operations": operations,
            "compatibility": {
                "mem0": request.build_absolute_uri("/compat/mem0"),
                "mcp": "manage.py mcp_server serves streamable HTTP at /mcp",
            },
            "health": {
                "liveness": request.build_absolute_uri(reverse("healthz")),
                "readiness": request.build_absolute_uri(reverse("readyz")),
            },
        }
    )
