"""Sign-in throttling: a username and address that keep failing are locked out for a
cool-off, the right password included; the lockout is audited in the account's tenant."""
import logging
from datetime import timedelta

import pytest
import time_machine
from axes.models import AccessAttempt
from django.contrib.auth import get_user_model
from django.test import Client
from django.utils import timezone

from reviews.audit import verify_tenant
from reviews.models import AuditAction, AuditEvent
from tests.conftest import PASSWORD

LIMIT, COOL_OFF = 5, timedelta(minutes=15)


@pytest.fixture(autouse=True)
def _fast_hashes(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


def sign_in(username, password, address="203.0.113.7"):
    """One real post of the sign-in form from ``address``: (response, signed in?)."""
    client = Client(REMOTE_ADDR=address)
    response = client.post("/login/", {"username": username, "password": password})
    return response, "_auth_user_id" in client.session


def fail(username, times, address="203.0.113.7"):
    return [sign_in(username, "not-the-password", address)[0].status_code for _ in range(times)]


def lockouts(tenant):
    return AuditEvent.objects.filter(tenant_id=tenant.pk, action=AuditAction.STAFF_LOCKED_OUT)


def test_thirty_wrong_passwords_then_the_right_one_is_still_refused(reviewer, tenant, other_tenant, outsider):
    assert fail(reviewer.username, 30) == [200] * (LIMIT - 1) + [429] * (30 - LIMIT + 1)
    response, signed_in = sign_in(reviewer.username, PASSWORD)
    assert response.status_code == 429 and not signed_in
    assert "Too many failed sign-ins" in response.content.decode()
    [event] = lockouts(tenant)  # one event for the lockout, not one per refused try
    assert (event.actor, event.object_type, event.object_id, event.reason_code) == (
        "system:login_throttle", "user", str(reviewer.pk), "too_many_failures"
    )
    assert event.payload.after == {"username": "rita", "ip_address": "203.0.113.7", "failures": LIMIT,
                                   "cool_off_minutes": 15.0}
    assert verify_tenant(tenant.pk).ok
    assert not lockouts(other_tenant).exists()


def test_after_the_cool_off_the_right_password_works_again(reviewer, tenant):
    fail(reviewer.username, LIMIT)
    assert sign_in(reviewer.username, PASSWORD)[0].status_code == 429
    with time_machine.travel(timezone.now() + COOL_OFF - timedelta(minutes=1)):
        assert not sign_in(reviewer.username, PASSWORD)[1]  # and this try restarts the cool-off
    with time_machine.travel(timezone.now() + 2 * COOL_OFF):
        response, signed_in = sign_in(reviewer.username, PASSWORD)
        assert response.status_code == 302 and signed_in


def test_a_lockout_is_per_username_and_address(reviewer, second_reviewer):
    fail(reviewer.username, LIMIT)
    assert sign_in(reviewer.username, PASSWORD, address="198.51.100.2")[1]  # another address
    assert sign_in(second_reviewer.username, PASSWORD)[1]  # another account, same address


def test_a_success_forgets_earlier_failures(reviewer, tenant):
    fail(reviewer.username, LIMIT - 1)
    assert sign_in(reviewer.username, PASSWORD)[1]
    assert fail(reviewer.username, LIMIT - 1) == [200] * (LIMIT - 1)
    assert sign_in(reviewer.username, PASSWORD)[1] and not lockouts(tenant).exists()


def test_an_unknown_username_is_locked_and_logged_with_no_event_and_not_stored(tenant, caplog):
    typed = "hunter2-typed-as-username"  # people type passwords into the username field
    caplog.set_level(logging.INFO)
    assert fail(typed, LIMIT + 1)[-2:] == [429, 429]
    assert not AuditEvent.objects.filter(action=AuditAction.STAFF_LOCKED_OUT).exists()
    assert "not a tenant's staff account, no audit event" in caplog.text
    assert typed not in caplog.text
    [attempt] = AccessAttempt.objects.all()
    assert attempt.username.startswith("unknown:") and typed not in attempt.username + attempt.post_data


def test_a_superuser_has_no_tenant_so_no_event(db, caplog):
    get_user_model().objects.create_superuser("root", "root@example.com", PASSWORD)
    caplog.set_level(logging.WARNING)
    fail("root", LIMIT)
    assert not sign_in("root", PASSWORD)[1]
    assert not AuditEvent.objects.filter(action=AuditAction.STAFF_LOCKED_OUT).exists()
    assert "sign-in locked out for root from 203.0.113.7" in caplog.text


def test_what_axes_keeps_of_a_failure_holds_no_password_or_token(reviewer):
    Client(REMOTE_ADDR="203.0.113.7", enforce_csrf_checks=False).post(
        "/login/", {"username": reviewer.username, "password": "my-real-password-almost", "csrfmiddlewaretoken": "t0k3n"}
    )
    [attempt] = AccessAttempt.objects.all()
    assert attempt.username == reviewer.username
    assert "my-real-password-almost" not in attempt.post_data and "t0k3n" not in attempt.post_data


def test_what_axes_keeps_of_a_failure_holds_no_credential_sent_as_next(reviewer):
    Client(REMOTE_ADDR="203.0.113.7").post(
        "/login/", {"username": reviewer.username, "password": "wrong", "next": "my key is AKIAIOSFODNN7EXAMPLE"}
    )
    [attempt] = AccessAttempt.objects.all()
    assert "AKIAIOSFODNN7EXAMPLE" not in attempt.post_data + attempt.get_data


ADDRESS_LIMIT = 20


def test_password_spraying_from_one_address_is_refused_across_usernames(reviewer, second_reviewer):
    # One wrong password for each of 30 names: no pair comes near its own limit.
    codes = [fail(f"sprayed-{n}", 1)[0] for n in range(30)]
    assert codes == [200] * ADDRESS_LIMIT + [429] * (30 - ADDRESS_LIMIT)
    # The address is refused before the password is read, the right one included ...
    response, signed_in = sign_in(reviewer.username, PASSWORD)
    assert response.status_code == 429 and not signed_in
    assert "Too many failed sign-ins" in response.content.decode()
    # ... while another address signs in as usual,
    assert sign_in(second_reviewer.username, PASSWORD, address="198.51.100.2")[1]
    # and the address is let in again after the cool-off.
    with time_machine.travel(timezone.now() + COOL_OFF + timedelta(minutes=1)):
        assert sign_in(reviewer.username, PASSWORD)[1]


def test_the_address_limit_counts_failures_not_successes(reviewer):
    for n in range(ADDRESS_LIMIT - 1):
        fail(f"sprayed-{n}", 1)
    assert sign_in(reviewer.username, PASSWORD)[1]  # 19 failures: still below the limit
    assert sign_in(reviewer.username, PASSWORD)[1]


def test_the_sign_in_page_is_exactly_no_store(client, db):
    assert client.get("/login/")["Cache-Control"] == "no-store"
    assert client.post("/login/", {"username": "x", "password": "y"})["Cache-Control"] == "no-store"
