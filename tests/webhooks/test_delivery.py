"""Webhook delivery to a real receiver on loopback (SPEC §7b): signed, retried, in order,
nothing for a rolled-back change, sensitive values withheld, erased values cut out."""
import importlib
import json
from datetime import datetime, timedelta
from datetime import timezone as dt_timezone

import pytest
from django.apps import apps
from django.db import transaction
from django.utils import timezone
from standardwebhooks.webhooks import Webhook

from reviews.actors import Actor
from reviews.errors import NotFound
from reviews.models import (
    AttemptOutcome,
    AuditAction,
    AuditEvent,
    Candidate,
    CandidateStatus,
    DeliveryStatus,
    Fact,
    WebhookDelivery,
    WebhookEvent,
)
from reviews.services.candidates import candidate_approve
from reviews.services.deletions import fact_deletion_carry_out, fact_deletion_schedule, fact_deletion_undo
from reviews.services.erasure import fact_erase, subject_erase
from reviews.services.portal import fact_contest
from reviews.webhooks.delivery import KEEP_SETTLED, deliver_due, settled_events_prune
from reviews.webhooks.endpoints import webhook_create, webhook_delivery_resend
from reviews.webhooks.signing import signed_headers
from tests.conftest import candidate

ADMIN = Actor("api_key", "admin0")


def bodies(receiver):
    return [json.loads(r.body) for r in receiver.requests]


def test_an_event_is_signed_as_standard_webhooks_says(tenant, endpoint, receiver, publish):
    _, secret = endpoint
    fact = publish(tenant, "u1", field="name", value="Alice")
    assert deliver_due() == 1
    (request,) = receiver.requests
    # The receiver's own check: the package's verifier, with the secret shown at registration.
    payload = Webhook(secret).verify(request.body, request.headers)
    assert payload["type"] == "fact.published"
    assert payload["data"] == {
        "tenant": tenant.slug, "user_id": "u1", "id": fact.pk, "entity_type": "user", "entity_id": "u1",
        "field": "name", "value": "Alice", "version": 1,
    }
    assert request.headers["webhook-id"].startswith("msg_") and request.path == "/hooks"
    # Another secret does not verify it.
    with pytest.raises(Exception, match="signature"):
        Webhook("whsec_" + "QUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUE=").verify(request.body, request.headers)
    delivery = WebhookDelivery.objects.get()
    assert (delivery.status, delivery.attempts, delivery.last_status_code) == (DeliveryStatus.DELIVERED, 1, 200)


def test_a_500_is_retried_with_the_same_webhook_id(tenant, endpoint, receiver, publish):
    receiver.answer_with((500, 0))
    publish(tenant, "u1", field="name", value="Alice")
    deliver_due()
    delivery = WebhookDelivery.objects.get()
    assert (delivery.status, delivery.attempts, delivery.last_status_code) == (DeliveryStatus.PENDING, 1, 500)
    deliver_due()
    first, second = receiver.requests
    assert first.headers["webhook-id"] == second.headers["webhook-id"]
    assert first.body == second.body
    delivery.refresh_from_db()
    assert delivery.status == DeliveryStatus.DELIVERED
    attempts = list(delivery.attempt_log.values_list("number", "status_code", "outcome"))
    assert attempts == [(1, 500, AttemptOutcome.HTTP_ERROR), (2, 200, AttemptOutcome.DELIVERED)]


def test_a_timeout_is_retried(tenant, endpoint, receiver, publish, settings):
    settings.MEMORY_WEBHOOK_TIMEOUT_SECONDS = 0.2
    receiver.answer_with((200, 0.6))
    publish(tenant, "u1", field="name", value="Alice")
    deliver_due()
    delivery = WebhookDelivery.objects.get()
    (attempt,) = delivery.attempt_log.all()
    assert (attempt.outcome, attempt.status_code) == (AttemptOutcome.TIMEOUT, None)
    assert 150 <= attempt.duration_ms < 600
    deliver_due()
    delivery.refresh_from_db()
    assert delivery.status == DeliveryStatus.DELIVERED and delivery.attempts == 2


def test_the_timeout_bounds_the_whole_attempt_not_each_read(tenant, endpoint, receiver, publish, settings):
    # Each byte of the answer comes well within the timeout, the whole answer (38 bytes) well
    # after it: per-read timeouts alone would wait for all of it and call it delivered.
    settings.MEMORY_WEBHOOK_TIMEOUT_SECONDS = 0.5
    receiver.trickle = 0.1
    publish(tenant, "u1", field="name", value="Alice")
    deliver_due()
    delivery = WebhookDelivery.objects.get()
    (attempt,) = delivery.attempt_log.all()
    assert (attempt.outcome, attempt.status_code, attempt.error) == (AttemptOutcome.TIMEOUT, None, "timed out")
    assert delivery.status == DeliveryStatus.PENDING
    receiver.trickle = 0
    deliver_due()
    delivery.refresh_from_db()
    assert delivery.status == DeliveryStatus.DELIVERED and delivery.attempts == 2


def test_the_backoff_waits_and_the_last_failure_is_final(tenant, endpoint, receiver, publish, settings):
    settings.MEMORY_WEBHOOK_RETRY_SECONDS = [30]
    receiver.answer_with((500, 0), (503, 0))
    publish(tenant, "u1", field="name", value="Alice")
    before = timezone.now()
    deliver_due()
    delivery = WebhookDelivery.objects.get()
    assert delivery.next_attempt_at >= before + timedelta(seconds=30)
    assert deliver_due() == 0  # not due yet
    WebhookDelivery.objects.filter(pk=delivery.pk).update(next_attempt_at=timezone.now())
    deliver_due()
    delivery.refresh_from_db()
    assert (delivery.status, delivery.attempts, delivery.next_attempt_at) == (DeliveryStatus.FAILED, 2, None)
    assert deliver_due() == 0 and len(receiver.requests) == 2


def test_a_rolled_back_change_sends_nothing(tenant, endpoint, receiver, publish):
    with pytest.raises(RuntimeError), transaction.atomic():
        publish(tenant, "u1", field="name", value="Alice")
        assert WebhookEvent.objects.count() == 1  # written with the change...
        raise RuntimeError("the change fails after the fact was written")
    assert WebhookEvent.objects.count() == 0  # ...and gone with it
    assert deliver_due() == 0 and receiver.requests == []


def test_published_arrives_before_deleted_even_when_the_first_send_fails(tenant, endpoint, receiver, publish):
    receiver.answer_with((500, 0))
    fact = publish(tenant, "u1", field="name", value="Alice")
    fact_erase(tenant=tenant, fact_id=fact.pk, user_id="u1", actor=ADMIN)
    deliver_due()
    assert receiver.types == ["fact.published"]  # failed; the deletion waits behind it
    deliver_due()
    assert receiver.types == ["fact.published", "fact.published", "fact.deleted"]
    published, deleted = bodies(receiver)[1:]
    assert published["data"]["id"] == deleted["data"]["id"] == fact.pk
    # The deletion took the value out of the event still owed: it never leaves after it.
    assert "value" not in published["data"] and "value" not in deleted["data"]


def test_a_sensitive_value_never_leaves(tenant, endpoint, receiver, submit):
    (result,) = submit(tenant, "u1", candidate(field="health", value="asthma", confidence=0.97))
    pending = Candidate.objects.get(pk=result.candidate_id)
    assert pending.status == CandidateStatus.PENDING_USER
    candidate_approve(tenant=tenant, candidate_id=pending.pk, version=pending.version, actor=Actor.subject("u1"))
    deliver_due()
    assert receiver.types == ["candidate.pending_user", "fact.published"]
    assert all("value" not in body["data"] for body in bodies(receiver))
    assert b"asthma" not in b"".join(r.body for r in receiver.requests)
    assert "asthma" not in json.dumps(list(WebhookEvent.objects.values_list("body", flat=True)))


def test_a_pending_user_item_is_announced_with_its_version(tenant, endpoint, receiver, submit):
    (result,) = submit(tenant, "u1", candidate(field="location", value="Berlin", confidence=0.6))
    deliver_due()
    (body,) = bodies(receiver)
    assert body["type"] == "candidate.pending_user"
    assert body["data"]["id"] == result.candidate_id and body["data"]["value"] == "Berlin"
    assert body["data"]["version"] == Candidate.objects.get(pk=result.candidate_id).version


def test_erasure_is_announced_and_cuts_the_subjects_values_out(tenant, endpoint, receiver, publish):
    publish(tenant, "u1", field="name", value="Alice")
    subject_erase(tenant=tenant, user_id="u1", actor=ADMIN)
    deliver_due()
    assert receiver.types[-1] == "subject.erased"
    assert b"Alice" not in b"".join(r.body for r in receiver.requests)


def test_only_subscribed_events_of_the_own_tenant_are_sent(tenant, other_tenant, receiver, private_allowed, publish):
    webhook_create(tenant=tenant, url=receiver.url, events=["fact.deleted"], actor=ADMIN)
    webhook_create(tenant=other_tenant, url=receiver.url + "/other", events=["fact.published"], actor=ADMIN)
    publish(tenant, "u1", field="name", value="Alice")
    assert WebhookEvent.objects.count() == 0  # nobody of tenant-1 listens to fact.published
    publish(other_tenant, "u1", field="name", value="Olga")
    deliver_due()
    (request,) = receiver.requests
    assert request.path == "/hooks/other" and json.loads(request.body)["data"]["tenant"] == other_tenant.slug


def test_delivery_checks_the_address_again(tenant, endpoint, receiver, publish, settings):
    # Registered while private receivers were allowed; now they are not (as if the name
    # had been rebound to a loopback address after registration).
    settings.MEMORY_WEBHOOK_ALLOW_PRIVATE = False
    publish(tenant, "u1", field="name", value="Alice")
    deliver_due()
    assert receiver.requests == []
    (attempt,) = WebhookDelivery.objects.get().attempt_log.all()
    assert (attempt.outcome, attempt.error) == (AttemptOutcome.REFUSED, "https_required")


def test_an_endpoint_failing_for_a_day_is_disabled_and_send_again_enables_it(tenant, endpoint, receiver, publish):
    hook, _ = endpoint
    receiver.answer_with((500, 0), (500, 0))
    publish(tenant, "u1", field="name", value="Alice")
    deliver_due()
    hook.refresh_from_db()
    assert hook.failing_since is not None and hook.disabled_at is None
    type(hook).objects.filter(pk=hook.pk).update(failing_since=timezone.now() - timedelta(days=1, minutes=1))
    deliver_due()
    hook.refresh_from_db()
    assert hook.disabled_at is not None
    (event,) = AuditEvent.objects.filter(tenant_id=tenant.pk, action=AuditAction.WEBHOOK_DISABLED)
    assert (event.object_id, event.actor) == (str(hook.pk), "system")
    publish(tenant, "u1", field="role", value="engineer")
    assert deliver_due() == 0 and len(receiver.requests) == 2  # nothing goes to a disabled endpoint

    delivery = WebhookDelivery.objects.filter(endpoint=hook).order_by("pk").first()
    webhook_delivery_resend(tenant=tenant, delivery_id=delivery.pk, actor=ADMIN)
    hook.refresh_from_db()
    assert hook.disabled_at is None
    (resent,) = AuditEvent.objects.filter(tenant_id=tenant.pk, action=AuditAction.WEBHOOK_RESENT)
    assert resent.actor == str(ADMIN)
    deliver_due()
    delivery.refresh_from_db()
    assert delivery.status == DeliveryStatus.DELIVERED and len(receiver.requests) == 3
    # What changed while it was disabled was never owed to it.
    assert WebhookDelivery.objects.filter(endpoint=hook).count() == 1


def test_send_again_is_refused_for_another_tenants_delivery(tenant, other_tenant, endpoint, receiver, publish):
    publish(tenant, "u1", field="name", value="Alice")
    delivery = WebhookDelivery.objects.get()
    with pytest.raises(NotFound):
        webhook_delivery_resend(tenant=other_tenant, delivery_id=delivery.pk, actor=ADMIN)
    assert not AuditEvent.objects.filter(action=AuditAction.WEBHOOK_RESENT).exists()


def test_standard_webhooks_published_test_vector():
    # From the Standard Webhooks specification's reference libraries.
    headers = signed_headers(
        secret="whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
        webhook_id="msg_p5jXN8AQM9LWM0D4loKWxJek",
        at=datetime.fromtimestamp(1614265330, tz=dt_timezone.utc),
        body=b'{"test": 2432232314}',
    )
    assert headers == {
        "webhook-id": "msg_p5jXN8AQM9LWM0D4loKWxJek",
        "webhook-timestamp": "1614265330",
        "webhook-signature": "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=",
    }


def test_a_new_version_is_announced_as_updated(tenant, endpoint, receiver, publish):
    first = publish(tenant, "u1", field="role", value="engineer")
    second = publish(tenant, "u1", field="role", value="manager")  # a conflict a reviewer settles
    assert second.pk == first.pk and second.version == 2
    deliver_due()
    assert receiver.types == ["fact.published", "fact.updated"]
    updated = bodies(receiver)[1]["data"]
    assert (updated["id"], updated["value"], updated["version"]) == (first.pk, "manager", 2)
    # Each event has its own id; a retry of one keeps it.
    assert len({r.headers["webhook-id"] for r in receiver.requests}) == 2


def test_a_contested_fact_leaves_and_an_upheld_one_returns(tenant, endpoint, receiver, publish):
    fact = publish(tenant, "u1", field="role", value="engineer", confidence=0.9)  # a reviewer approves it
    contest = fact_contest(tenant=tenant, user_id="u1", fact_id=fact.pk, actor=Actor.subject("u1"))
    candidate_approve(tenant=tenant, candidate_id=contest.pk, version=contest.version, actor=Actor("reviewer", "1"))
    deliver_due()
    assert receiver.types == ["fact.published", "fact.deleted", "fact.published"]
    assert {body["data"]["id"] for body in bodies(receiver)} == {fact.pk}


def test_a_scheduled_deletion_is_announced_once(tenant, endpoint, receiver, publish):
    # It leaves recall when the subject asks; carried out after the undo window it has nothing
    # new to say. An undone one comes back, and its later deletion is news again.
    fact = publish(tenant, "u1", field="role", value="engineer")
    subject = Actor.subject("u1")
    deletion = fact_deletion_schedule(tenant=tenant, user_id="u1", fact_id=fact.pk, actor=subject)
    fact_deletion_carry_out(deletion_id=deletion.pk, now=deletion.due_at + timedelta(seconds=1))
    kept = publish(tenant, "u1", field="location", value="Lisbon")
    again = fact_deletion_schedule(tenant=tenant, user_id="u1", fact_id=kept.pk, actor=subject)
    fact_deletion_undo(tenant=tenant, user_id="u1", deletion_id=again.pk, actor=subject)
    fact_erase(tenant=tenant, fact_id=kept.pk, user_id="u1", actor=ADMIN)
    deliver_due()
    assert [(body["type"], body["data"]["id"]) for body in bodies(receiver)] == [
        ("fact.published", fact.pk),
        ("fact.deleted", fact.pk),
        ("fact.published", kept.pk),
        ("fact.deleted", kept.pk),
        ("fact.published", kept.pk),
        ("fact.deleted", kept.pk),
    ]


def test_settled_events_leave_the_log_after_a_while(tenant, endpoint, receiver, publish):
    receiver.answer_with((500, 0))
    publish(tenant, "u1", field="name", value="Alice")
    publish(tenant, "u1", field="role", value="engineer")
    deliver_due()  # the first fails (pending, retried), the second waits behind it
    later = timezone.now() + KEEP_SETTLED + timedelta(minutes=1)
    assert settled_events_prune(now=later) == 0  # nothing settled yet
    deliver_due()
    assert settled_events_prune(now=timezone.now()) == 0  # settled, but recent
    assert settled_events_prune(now=later) > 0
    assert not WebhookEvent.objects.exists() and not WebhookDelivery.objects.exists()


def test_a_fact_cleaned_of_hidden_characters_is_announced_as_updated_with_its_clean_value(
    tenant, endpoint, receiver, publish
):
    cleanup = importlib.import_module("reviews.migrations.0026_clean_stored_hidden_characters")
    fact = publish(tenant, "u1", field="name", value="Bob")
    Fact.objects.filter(pk=fact.pk).update(value="B\u200bob")  # as stored before the poisoning checks
    cleanup.clean_stored_hidden_characters(apps)
    deliver_due()
    assert receiver.types == ["fact.published", "fact.updated"]
    assert bodies(receiver)[1]["data"]["value"] == "Bob"
