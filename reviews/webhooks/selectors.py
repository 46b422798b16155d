"""Reads of a tenant's webhooks: its endpoints and the delivery log the console shows."""
from __future__ import annotations

from django.db.models import Prefetch, QuerySet

from ..models import Tenant, WebhookAttempt, WebhookDelivery, WebhookEndpoint

DELIVERY_LOG_LIMIT = 50


def tenant_endpoints(*, tenant: Tenant) -> QuerySet[WebhookEndpoint]:
    return WebhookEndpoint.objects.filter(tenant=tenant).order_by("created_at", "pk")


def delivery_log(*, tenant: Tenant, limit: int = DELIVERY_LOG_LIMIT) -> list[WebhookDelivery]:
    """The tenant's latest deliveries, newest first, each with every attempt."""
    return list(
        WebhookDelivery.objects.filter(endpoint__tenant=tenant)
        .select_related("event", "endpoint")
        .prefetch_related(Prefetch("attempt_log", queryset=WebhookAttempt.objects.order_by("number")))
        .order_by("-event_id", "-pk")[:limit]
    )
