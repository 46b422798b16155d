"""A tenant's webhook endpoints: register, remove, send a delivery again (SPEC §7, §7b).

Each is a write service: one transaction, its audit event inside it. The secret is
returned once, by :func:`webhook_create`, and appears in no event.
"""
from __future__ import annotations

from typing import Annotated

from django.db import transaction
from django.utils import timezone

from .. import audit
from ..actors import Actor
from ..audit import EventDraft
from ..errors import InvalidInput, NotFound
from ..models import AuditAction, DeliveryStatus, Tenant, WebhookDelivery, WebhookEndpoint, WebhookEventType
from ..screening import Screen, Verbatim
from ..services.boundary import service
from .addresses import RefusedAddress, check_url
from .dispatch import send_soon
from .signing import new_secret

MAX_ENDPOINTS_PER_TENANT = 20


def endpoint_snapshot(endpoint: WebhookEndpoint) -> dict:
    """What the audit trail says about an endpoint: never its secret."""
    return {"url": endpoint.url, "events": endpoint.events, "description": endpoint.description}


def _event(endpoint: WebhookEndpoint, action: AuditAction, actor: Actor, **recorded) -> EventDraft:
    return EventDraft(actor=str(actor), action=action, object_type="webhook", object_id=endpoint.pk, **recorded)


@service
def webhook_create(
    *,
    tenant: Tenant,
    url: Annotated[str, Verbatim("a receiver's address: the address guard checks it; a path token it holds must stay intact")],
    events: Annotated[list[str], Screen.TEXT],
    description: Annotated[str, Screen.TEXT] = "",
    actor: Actor,
) -> tuple[WebhookEndpoint, str]:
    """Register an endpoint; returns it and its secret (shown this once)."""
    unknown = sorted(set(events) - set(WebhookEventType.values))
    if unknown or not events:
        raise InvalidInput(
            "Unknown or missing event types.", details={"unknown": unknown, "allowed": list(WebhookEventType.values)}
        )
    if len(url) > 2000:
        raise InvalidInput("The URL is longer than 2000 characters.", details={"url": "too_long"})
    try:
        check_url(url)
    except RefusedAddress as exc:
        raise InvalidInput(f"Refused ({exc.rule.value}): {exc}", details={"url": exc.rule.value}) from exc
    Tenant.objects.select_for_update(no_key=True).filter(pk=tenant.pk).first()  # counts one at a time
    if WebhookEndpoint.objects.filter(tenant=tenant).count() >= MAX_ENDPOINTS_PER_TENANT:
        raise InvalidInput(
            f"A tenant has at most {MAX_ENDPOINTS_PER_TENANT} webhook endpoints.", details={"url": "too_many"}
        )
    secret = new_secret()
    endpoint = WebhookEndpoint.objects.create(
        tenant=tenant,
        url=url,
        events=[t for t in WebhookEventType.values if t in set(events)],
        description=description[:200],
        secret=secret,
    )
    audit.record(tenant.pk, _event(endpoint, AuditAction.WEBHOOK_CREATED, actor, after=endpoint_snapshot(endpoint)))
    return endpoint, secret


@service
def webhook_delete(*, tenant: Tenant, endpoint_id: int, actor: Actor) -> None:
    """Remove an endpoint of this tenant (another tenant's is not found) and what it was owed."""
    endpoint = WebhookEndpoint.objects.select_for_update().filter(tenant=tenant, pk=endpoint_id).first()
    if endpoint is None:
        raise NotFound("No such webhook endpoint.", details={"id": endpoint_id})
    audit.record(tenant.pk, _event(endpoint, AuditAction.WEBHOOK_DELETED, actor, before=endpoint_snapshot(endpoint)))
    endpoint.delete()


@service
def webhook_delivery_resend(*, tenant: Tenant, delivery_id: int, actor: Actor) -> WebhookDelivery:
    """Send a delivery again now, whatever became of it; a disabled endpoint is enabled
    again (the admin who asks believes the receiver is back)."""
    delivery = (
        WebhookDelivery.objects.select_for_update()
        .select_related("endpoint", "event")
        .filter(endpoint__tenant=tenant, pk=delivery_id)
        .first()
    )
    if delivery is None:
        raise NotFound("No such webhook delivery.", details={"id": delivery_id})
    endpoint = delivery.endpoint
    enabled = endpoint.disabled_at is not None
    if enabled:
        endpoint.disabled_at = endpoint.failing_since = None
        endpoint.save(update_fields=["disabled_at", "failing_since"])
    delivery.status, delivery.next_attempt_at = DeliveryStatus.PENDING, timezone.now()
    delivery.save(update_fields=["status", "next_attempt_at", "updated_at"])
    audit.record(
        tenant.pk,
        _event(
            endpoint,
            AuditAction.WEBHOOK_RESENT,
            actor,
            after={"delivery": delivery.pk, "webhook_id": delivery.event.webhook_id, "enabled_again": enabled},
        ),
    )
    transaction.on_commit(send_soon)
    return delivery
