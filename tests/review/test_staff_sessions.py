"""A staff session ends: after DJANGO_SESSION_HOURS (12 by default) and when the password changes."""
from datetime import timedelta

import pytest
import time_machine
from django.test import Client
from django.utils import timezone

from tests.conftest import PASSWORD


@pytest.fixture(autouse=True)
def _fast_hashes(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


def signed_in_client(user, address="203.0.113.9"):
    client = Client(REMOTE_ADDR=address)
    assert client.post("/login/", {"username": user.username, "password": PASSWORD}).status_code == 302
    return client


def test_a_staff_session_lasts_twelve_hours_by_default(reviewer):
    client = signed_in_client(reviewer)
    assert client.session.get_expiry_age() == 12 * 3600
    with time_machine.travel(timezone.now() + timedelta(hours=11, minutes=50)):
        assert client.get("/review/").status_code == 200
    with time_machine.travel(timezone.now() + timedelta(hours=12, minutes=10)):
        response = client.get("/review/")
        assert response.status_code == 302 and response["Location"].startswith("/login/")


def test_the_session_length_comes_from_the_setting(reviewer, settings):
    settings.SESSION_COOKIE_AGE = 2 * 3600  # DJANGO_SESSION_HOURS=2
    client = signed_in_client(reviewer)
    with time_machine.travel(timezone.now() + timedelta(hours=2, minutes=5)):
        assert client.get("/review/").status_code == 302


def test_a_password_change_ends_the_accounts_other_sessions(reviewer, second_reviewer):
    laptop, phone, colleague = signed_in_client(reviewer), signed_in_client(reviewer), signed_in_client(second_reviewer)
    reviewer.set_password("a-new-and-long-passphrase")
    reviewer.save()
    for client in (laptop, phone):
        response = client.get("/review/")
        assert response.status_code == 302 and response["Location"].startswith("/login/")
    assert colleague.get("/review/").status_code == 200  # another account's session is untouched
