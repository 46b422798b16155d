"""Sending webhook events (SPEC §7b): after the commit, at least once, in order per subject.

A delivery is tried when it is due (``next_attempt_at``); whoever sends it first moves
that time forward by :data:`LEASE` with a compare-and-set, so two senders (the on-commit
send, the beat's sweep, two workers) never send one attempt twice and a sender that dies
mid-way leaves the delivery due again after the lease. A delivery waits while an earlier
event for the same subject is still pending at the same endpoint: a host app hears
``fact.published`` before the ``fact.deleted`` of the same fact.

Each try connects to the address the guard just approved (no second DNS lookup), and
takes at most ``MEMORY_WEBHOOK_TIMEOUT_SECONDS`` as a whole: the socket's own timeout
counts per operation, so a receiver that trickles its answer a byte at a time would hold
the worker for as long as it liked; a timer closes the connection at the deadline instead.
Redirects are not followed. A 2xx answer delivers it; anything else is retried after
``MEMORY_WEBHOOK_RETRY_SECONDS`` (one wait per retry), then the delivery is failed. An
endpoint that has failed for :data:`DISABLE_AFTER` without a success in between is
disabled (audited); the console shows it and "send again" enables it. Settled events
leave after :data:`KEEP_SETTLED` (:func:`settled_events_prune`, daily).
"""
from __future__ import annotations

import http.client
import json
import logging
import socket
import ssl
import threading
import time
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from .. import audit, metrics
from ..actors import SYSTEM
from ..audit import EventDraft
from ..models import (
    AttemptOutcome,
    AuditAction,
    DeliveryStatus,
    WebhookAttempt,
    WebhookDelivery,
    WebhookEndpoint,
    WebhookEvent,
)
from .addresses import RefusedAddress, Target, check_url
from .signing import signed_headers

logger = logging.getLogger(__name__)

LEASE = timedelta(seconds=60)
DISABLE_AFTER = timedelta(days=1)
# How long the delivery log keeps an event once every endpoint has settled it.
KEEP_SETTLED = timedelta(days=30)
# How much of a receiver's answer is read (and dropped): enough to free the connection.
RESPONSE_READ_LIMIT = 64 * 1024
SWEEP_BATCH = 50
USER_AGENT = "MemoryPortal-Webhooks/1"


class PinnedConnection(http.client.HTTPConnection):
    """An HTTP(S) connection to an address fixed in advance, the URL's host still sent
    as ``Host`` and, over TLS, as the name the certificate must match."""

    def __init__(self, target: Target, *, timeout: float):
        super().__init__(target.host, target.port, timeout=timeout)
        self.target = target
        self.tls = ssl.create_default_context() if target.scheme == "https" else None
        self.out_of_time = False

    def connect(self):
        sock = socket.create_connection((self.target.address, self.target.port), self.timeout)
        self.sock = self.tls.wrap_socket(sock, server_hostname=self.target.host) if self.tls else sock
        if self.out_of_time:  # the deadline passed while connecting: nothing was there to end
            raise TimeoutError

    def give_up(self):
        """The attempt's deadline passed: end whatever read or write is waiting."""
        self.out_of_time = True
        if self.sock is not None:
            try:
                self.sock.shutdown(socket.SHUT_RDWR)
            except OSError:  # already closed by the other side
                pass


def deliver_due(*, limit: int = 500) -> int:
    """Try every due delivery, oldest event first; returns how many were tried."""
    tried, seen = 0, set()
    while tried < limit:
        due = list(
            WebhookDelivery.objects.filter(
                status=DeliveryStatus.PENDING,
                next_attempt_at__lte=timezone.now(),
                endpoint__disabled_at__isnull=True,
            )
            .exclude(pk__in=seen)
            .order_by("event_id", "pk")
            .values_list("pk", flat=True)[:SWEEP_BATCH]
        )
        if not due:
            break
        for pk in due:
            seen.add(pk)
            if deliver(delivery_id=pk):
                tried += 1
    return tried


def deliver(*, delivery_id: int) -> bool:
    """One attempt of one delivery if it is due and first in line; False if not tried."""
    now = timezone.now()
    delivery = WebhookDelivery.objects.select_related("event", "endpoint").filter(pk=delivery_id).first()
    if delivery is None or delivery.status != DeliveryStatus.PENDING or delivery.endpoint.disabled_at:
        return False
    earlier = WebhookDelivery.objects.filter(
        endpoint_id=delivery.endpoint_id,
        status=DeliveryStatus.PENDING,
        event__user_id=delivery.event.user_id,
        event_id__lt=delivery.event_id,
    )
    if earlier.exists():
        return False
    claimed = WebhookDelivery.objects.filter(
        pk=delivery.pk, status=DeliveryStatus.PENDING, next_attempt_at__lte=now
    ).update(next_attempt_at=now + LEASE)
    if not claimed:
        return False
    outcome, status_code, error, started, duration_ms = _attempt(delivery)
    _record(delivery, outcome=outcome, status_code=status_code, error=error, started=started, duration_ms=duration_ms)
    return True


def _attempt(delivery: WebhookDelivery):
    started = timezone.now()
    clock = time.monotonic()
    status_code, error = None, ""
    try:
        target = check_url(delivery.endpoint.url)
        body = json.dumps(delivery.event.body, ensure_ascii=False, separators=(",", ":")).encode()
        headers = signed_headers(
            secret=delivery.endpoint.secret, webhook_id=delivery.event.webhook_id, at=started, body=body
        )
        connection = PinnedConnection(target, timeout=settings.MEMORY_WEBHOOK_TIMEOUT_SECONDS)
        deadline = threading.Timer(settings.MEMORY_WEBHOOK_TIMEOUT_SECONDS, connection.give_up)
        deadline.daemon = True
        deadline.start()
        try:
            connection.request(
                "POST",
                target.path,
                body=body,
                headers={**headers, "Content-Type": "application/json", "User-Agent": USER_AGENT},
            )
            response = connection.getresponse()
            response.read(RESPONSE_READ_LIMIT)
            status_code = response.status
        except (OSError, http.client.HTTPException):
            if connection.out_of_time:
                raise TimeoutError from None
            raise
        finally:
            deadline.cancel()
            connection.close()
        outcome = AttemptOutcome.DELIVERED if 200 <= status_code < 300 else AttemptOutcome.HTTP_ERROR
    except RefusedAddress as exc:
        outcome, error = AttemptOutcome.REFUSED, exc.rule.value
    except (TimeoutError, socket.timeout):
        outcome, error = AttemptOutcome.TIMEOUT, "timed out"
    except (OSError, http.client.HTTPException) as exc:
        outcome, error = AttemptOutcome.CONNECTION_ERROR, type(exc).__name__
    duration_ms = int((time.monotonic() - clock) * 1000)
    return outcome, status_code, error[:200], started, duration_ms


@transaction.atomic
def _record(delivery: WebhookDelivery, *, outcome, status_code, error, started, duration_ms) -> None:
    delivery = WebhookDelivery.objects.select_for_update().get(pk=delivery.pk)
    endpoint = WebhookEndpoint.objects.select_for_update().get(pk=delivery.endpoint_id)
    number = delivery.attempts + 1
    WebhookAttempt.objects.create(
        delivery=delivery,
        number=number,
        started_at=started,
        duration_ms=duration_ms,
        status_code=status_code,
        outcome=outcome,
        error=error,
    )
    delivery.attempts = number
    delivery.last_status_code = status_code
    now = timezone.now()
    if outcome == AttemptOutcome.DELIVERED:
        delivery.status, delivery.next_attempt_at = DeliveryStatus.DELIVERED, None
        if endpoint.failing_since is not None:
            endpoint.failing_since = None
            endpoint.save(update_fields=["failing_since"])
    else:
        waits = settings.MEMORY_WEBHOOK_RETRY_SECONDS
        if number > len(waits):
            delivery.status, delivery.next_attempt_at = DeliveryStatus.FAILED, None
        else:
            delivery.next_attempt_at = now + timedelta(seconds=waits[number - 1])
        _note_failure(endpoint, now)
    delivery.save(update_fields=["attempts", "last_status_code", "status", "next_attempt_at", "updated_at"])
    metrics.delivery_attempted(outcome)


def _note_failure(endpoint: WebhookEndpoint, now) -> None:
    if endpoint.failing_since is None:
        endpoint.failing_since = now
        endpoint.save(update_fields=["failing_since"])
    elif endpoint.disabled_at is None and now - endpoint.failing_since >= DISABLE_AFTER:
        endpoint.disabled_at = now
        endpoint.save(update_fields=["disabled_at"])
        audit.record(
            endpoint.tenant_id,
            EventDraft(
                actor=str(SYSTEM),
                action=AuditAction.WEBHOOK_DISABLED,
                object_type="webhook",
                object_id=endpoint.pk,
                after={"url": endpoint.url, "failing_since": endpoint.failing_since.isoformat()},
            ),
        )


def settled_events_prune(*, now=None) -> int:
    """Drop events every endpoint has settled (delivered or failed) more than
    :data:`KEEP_SETTLED` ago, with their deliveries and attempts: their bodies hold
    values, kept no longer than the delivery log is useful. Returns how many."""
    cutoff = (now or timezone.now()) - KEEP_SETTLED
    settled = WebhookEvent.objects.filter(created_at__lt=cutoff).exclude(
        deliveries__status=DeliveryStatus.PENDING
    )
    deleted, _ = WebhookEvent.objects.filter(pk__in=settled.values("pk")).delete()
    return deleted
