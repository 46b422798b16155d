"""Webhooks (SPEC §7b): a tenant's endpoints, the events owed to them, every attempt.

:class:`WebhookEvent` is the outbox: written in the transaction of the change it reports
(so a rolled-back change leaves none), one row per change, its ``webhook_id`` the same on
every retry. A :class:`WebhookDelivery` is that event owed to one endpoint; each try is a
:class:`WebhookAttempt`, kept so the tenant console can show what happened and when.
"""
from django.db import models
from django.utils.translation import gettext_lazy as _

from .tenancy import Tenant


class WebhookEventType(models.TextChoices):
    """What a host app can subscribe to (SPEC §7b)."""

    CANDIDATE_PENDING_USER = "candidate.pending_user"
    FACT_PUBLISHED = "fact.published"
    FACT_UPDATED = "fact.updated"
    FACT_DELETED = "fact.deleted"
    SUBJECT_ERASED = "subject.erased"


class DeliveryStatus(models.TextChoices):
    PENDING = "pending", _("pending")
    DELIVERED = "delivered", _("delivered")
    FAILED = "failed", _("failed")


class AttemptOutcome(models.TextChoices):
    """How one try ended; the metrics count deliveries by these."""

    DELIVERED = "delivered", _("delivered")
    HTTP_ERROR = "http_error", _("error status")
    TIMEOUT = "timeout", _("timed out")
    CONNECTION_ERROR = "connection_error", _("connection failed")
    REFUSED = "refused", _("address refused")


class WebhookEndpoint(models.Model):
    """Where a tenant wants events sent. The secret signs them; it is shown once, at registration."""

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="webhook_endpoints")
    url = models.URLField(max_length=2000)
    events = models.JSONField(default=list)
    description = models.CharField(max_length=200, blank=True)
    # Stored as given to the tenant: signing needs the key itself, not a hash of it.
    secret = models.CharField(max_length=80)
    created_at = models.DateTimeField(auto_now_add=True)
    # Set by the first failed try after a success; an endpoint failing for a day is disabled.
    failing_since = models.DateTimeField(null=True, blank=True)
    disabled_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["created_at", "pk"]

    def __str__(self) -> str:
        return self.url


class WebhookEvent(models.Model):
    """One change reported to host apps; its body is fixed when the change commits."""

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    webhook_id = models.CharField(max_length=40, unique=True)
    event_type = models.CharField(max_length=32, choices=WebhookEventType.choices)
    user_id = models.CharField(max_length=128)
    body = models.JSONField()
    created_at = models.DateTimeField()

    class Meta:
        indexes = [models.Index(fields=["tenant", "user_id"], name="webhook_event_subject")]


class WebhookDelivery(models.Model):
    event = models.ForeignKey(WebhookEvent, on_delete=models.CASCADE, related_name="deliveries")
    endpoint = models.ForeignKey(WebhookEndpoint, on_delete=models.CASCADE, related_name="deliveries")
    status = models.CharField(max_length=10, choices=DeliveryStatus.choices, default=DeliveryStatus.PENDING)
    attempts = models.PositiveSmallIntegerField(default=0)
    # When the sweep may try it next; moved forward while a sender holds it.
    next_attempt_at = models.DateTimeField(null=True, blank=True)
    last_status_code = models.PositiveSmallIntegerField(null=True, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["event", "endpoint"], name="webhook_delivery_once")]
        indexes = [
            models.Index(
                fields=["next_attempt_at"], name="webhook_delivery_due", condition=models.Q(status="pending")
            )
        ]


class WebhookAttempt(models.Model):
    delivery = models.ForeignKey(WebhookDelivery, on_delete=models.CASCADE, related_name="attempt_log")
    number = models.PositiveSmallIntegerField()
    started_at = models.DateTimeField()
    duration_ms = models.PositiveIntegerField()
    status_code = models.PositiveSmallIntegerField(null=True, blank=True)
    outcome = models.CharField(max_length=20, choices=AttemptOutcome.choices)
    error = models.CharField(max_length=200, blank=True)

    class Meta:
        ordering = ["delivery", "number"]
