"""Entry links: signed, expiring, single-use; a session bound to one subject (SPEC §4, §7)."""
import threading
from datetime import timedelta

import pytest
import time_machine
from django.core.management import call_command
from django.db import connection
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from reviews.actors import SYSTEM, Actor
from reviews.models import AuditEvent, AuditPayload, PortalLink, Scope, Subject
from reviews.permissions import PORTAL_SESSION_KEY
from reviews.services.portal import (
    PortalLinkRefused,
    portal_link_check,
    portal_link_create,
    portal_link_redeem,
    token_digest,
)
from tests.conftest import PASSWORD, sign_in
from tests.portal.conftest import link_path


def token_of(url: str) -> str:
    return link_path(url).rstrip("/").rsplit("/", 1)[-1]


def events(tenant, action):
    return AuditEvent.objects.filter(tenant_id=tenant.pk, action=action)


class TestCreate:
    def test_it_stores_only_a_digest_and_audits(self, tenant, settings):
        settings.MEMORY_PUBLIC_BASE_URL = "https://memory.example.org"
        url, expires_at = portal_link_create(tenant=tenant, user_id="alice", actor=SYSTEM)
        assert url.startswith("https://memory.example.org/me/link/")
        token = token_of(url)
        link = PortalLink.objects.get()
        assert link.token_digest == token_digest(token) and token not in link.token_digest
        assert link.subject == Subject.objects.get(tenant=tenant, user_id="alice")
        assert link.expires_at == expires_at
        assert abs((expires_at - timezone.now()) - timedelta(seconds=settings.MEMORY_PORTAL_LINK_MAX_AGE)) < timedelta(
            seconds=5
        )
        event = events(tenant, "portal_link.created").get()
        assert (event.actor, event.subject_user_id, event.object_id) == ("system", "alice", str(link.pk))

    def test_a_base_url_overrides_the_setting(self, tenant):
        url, _ = portal_link_create(tenant=tenant, user_id="alice", actor=SYSTEM, base_url="http://host:9000/")
        assert url.startswith("http://host:9000/me/link/")

    def test_an_id_with_a_slash_is_an_id(self, tenant):
        portal_link_create(tenant=tenant, user_id="org/7", actor=SYSTEM)
        assert PortalLink.objects.get().subject.user_id == "org/7"

    @pytest.mark.parametrize("user_id", ["", "   ", "x" * 129, "a\x00b", "a\x1bb", "AKIAIOSFODNN7EXAMPLE"])
    def test_it_refuses_a_bad_user_id(self, tenant, user_id):
        from reviews.errors import InvalidInput

        with pytest.raises(InvalidInput):
            portal_link_create(tenant=tenant, user_id=user_id, actor=SYSTEM)
        assert not PortalLink.objects.exists() and not events(tenant, "portal_link.created").exists()

    def test_each_link_is_different(self, tenant):
        first, _ = portal_link_create(tenant=tenant, user_id="alice", actor=SYSTEM)
        second, _ = portal_link_create(tenant=tenant, user_id="alice", actor=SYSTEM)
        assert first != second


class TestRedeem:
    def test_it_opens_a_session_bound_to_the_subject_and_audits(self, tenant, client):
        url, _ = portal_link_create(tenant=tenant, user_id="alice", actor=SYSTEM)
        page = client.get(link_path(url))
        assert page.status_code == 200 and b"Open my memories" in page.content
        assert page["Referrer-Policy"] == "same-origin" and "no-store" in page["Cache-Control"]
        response = client.post(link_path(url))
        assert response.status_code == 302 and response["Location"] == "/me/"
        subject = Subject.objects.get(user_id="alice")
        assert client.session[PORTAL_SESSION_KEY] == {
            "tenant_id": tenant.pk,
            "subject_id": subject.pk,
            "user_id": "alice",
        }
        assert client.get("/me/").status_code == 200
        link = PortalLink.objects.get()
        assert link.used_at is not None
        event = events(tenant, "portal_link.redeemed").get()
        assert (event.actor, event.object_id) == ("subject:alice", str(link.pk))

    def test_opening_the_page_does_not_spend_the_link(self, tenant):
        url, _ = portal_link_create(tenant=tenant, user_id="alice", actor=SYSTEM)
        for _ in range(3):  # a mail scanner, a chat preview, the person
            assert Client().get(link_path(url)).status_code == 200
        assert PortalLink.objects.get().used_at is None
        assert Client().post(link_path(url)).status_code == 302

    def test_a_used_link_is_refused_and_the_attempt_audited(self, tenant, client):
        url, _ = portal_link_create(tenant=tenant, user_id="alice", actor=SYSTEM)
        assert client.post(link_path(url)).status_code == 302
        for method in (Client().get, Client().post):
            response = method(link_path(url))
            assert response.status_code == 410
            assert b"already been used" in response.content
            assert PORTAL_SESSION_KEY not in response.wsgi_request.session
        refused = events(tenant, "portal_link.refused").get()
        assert (refused.reason_code, refused.actor) == ("used", "subject:alice")

    def test_an_expired_link_is_refused(self, tenant, settings):
        settings.MEMORY_PORTAL_LINK_MAX_AGE = 600
        url, _ = portal_link_create(tenant=tenant, user_id="alice", actor=SYSTEM)
        with time_machine.travel(timezone.now() + timedelta(seconds=601)):
            for method in ("get", "post"):
                client = Client()
                response = getattr(client, method)(link_path(url))
                assert response.status_code == 410 and b"expired" in response.content
                assert client.get("/me/").status_code == 403
        assert PortalLink.objects.get().used_at is None
        assert events(tenant, "portal_link.refused").get().reason_code == "expired"

    def test_a_stored_expiry_shorter_than_the_signature_age_still_holds(self, tenant):
        url, _ = portal_link_create(tenant=tenant, user_id="alice", actor=SYSTEM)
        PortalLink.objects.update(expires_at=timezone.now() - timedelta(seconds=1))
        with pytest.raises(PortalLinkRefused) as refused:
            portal_link_redeem(token=token_of(url))
        assert refused.value.why == "expired"

    @pytest.mark.parametrize(
        "tamper",
        [
            lambda t: t[:-1] + ("A" if t[-1] != "A" else "B"),  # signature
            lambda t: ("x" if t[0] != "x" else "y") + t[1:],  # nonce
            lambda t: t.split(":")[0],  # signature stripped
            lambda t: "nonsense",
            lambda t: t + "x" * 300,  # over-long
        ],
    )
    def test_a_tampered_link_is_refused(self, tenant, tamper):
        url, _ = portal_link_create(tenant=tenant, user_id="alice", actor=SYSTEM)
        path = link_path(url).replace(token_of(url), tamper(token_of(url)))
        for method in ("get", "post"):
            client = Client()
            response = getattr(client, method)(path)
            assert response.status_code == 400 and b"not valid" in response.content
            assert client.get("/me/").status_code == 403
        assert PortalLink.objects.get().used_at is None

    def test_a_validly_signed_token_unknown_to_the_database_is_refused(self, tenant):
        url, _ = portal_link_create(tenant=tenant, user_id="alice", actor=SYSTEM)
        PortalLink.objects.all().delete()
        with pytest.raises(PortalLinkRefused) as refused:
            portal_link_check(token=token_of(url))
        assert refused.value.why == "invalid"

    def test_a_link_signed_with_another_key_is_refused(self, tenant, settings):
        url, _ = portal_link_create(tenant=tenant, user_id="alice", actor=SYSTEM)
        settings.SECRET_KEY = "another-secret-key-" + "x" * 40
        with pytest.raises(PortalLinkRefused) as refused:
            portal_link_redeem(token=token_of(url))
        assert refused.value.why == "invalid"

    @pytest.mark.django_db(transaction=True)
    def test_two_browsers_racing_with_one_link_get_one_session(self, django_db_blocker):
        if connection.vendor != "postgresql":
            pytest.skip("needs concurrent writers")
        from reviews.services.tenants import tenant_create

        tenant = tenant_create(slug="race")
        url, _ = portal_link_create(tenant=tenant, user_id="alice", actor=SYSTEM)
        barrier, outcomes = threading.Barrier(4), []

        def redeem():
            try:
                barrier.wait()
                portal_link_redeem(token=token_of(url))
                outcomes.append("ok")
            except PortalLinkRefused as refused:
                outcomes.append(refused.why)
            finally:
                connection.close()

        threads = [threading.Thread(target=redeem) for _ in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert sorted(outcomes) == ["ok", "used", "used", "used"]
        assert events(tenant, "portal_link.redeemed").count() == 1


class TestSessionIsNotALogin:
    def test_a_staff_login_in_the_same_browser_ends(self, tenant, reviewer, client):
        assert sign_in(client, reviewer.username)
        url, _ = portal_link_create(tenant=tenant, user_id="alice", actor=SYSTEM)
        client.post(link_path(url))
        response = client.get("/me/")
        assert response.status_code == 200 and response.wsgi_request.user.is_anonymous

    def test_a_staff_login_ends_the_portal_binding(self, tenant, reviewer, client):
        url, _ = portal_link_create(tenant=tenant, user_id="alice", actor=SYSTEM)
        client.post(link_path(url))
        assert client.get("/me/").status_code == 200
        response = client.post(reverse("reviews:login"), {"username": reviewer.username, "password": PASSWORD})
        assert response.status_code == 302 and response.wsgi_request.user == reviewer
        assert client.get("/me/").status_code == 403
        assert PORTAL_SESSION_KEY not in client.session
        assert client.get(reverse("reviews:queue")).status_code == 200  # still signed in as staff

    def test_staff_pages_and_the_admin_do_not_accept_a_subject_session(self, tenant, client):
        url, _ = portal_link_create(tenant=tenant, user_id="alice", actor=SYSTEM)
        client.post(link_path(url))
        admin = client.get("/admin/")
        assert admin.status_code == 302 and "/login/" in admin["Location"]
        queue = client.get(reverse("reviews:queue"))
        assert queue.status_code == 302 and queue["Location"].startswith(reverse("reviews:login"))
        assert client.get("/api/v1/review/candidates").status_code == 401

    def test_signing_out_ends_the_session(self, tenant, client):
        url, _ = portal_link_create(tenant=tenant, user_id="alice", actor=SYSTEM)
        client.post(link_path(url))
        assert client.post("/me/sign-out/").status_code == 200
        assert client.get("/me/").status_code == 403

    def test_a_forged_session_binding_is_not_trusted(self, tenant, other_tenant, client, enter):
        enter(tenant, "alice", client=client)
        bob = Subject.objects.create(tenant=other_tenant, user_id="bob")
        session = client.session
        # tenant and subject that do not belong together: refused, not re-bound.
        session[PORTAL_SESSION_KEY] = {"tenant_id": tenant.pk, "subject_id": bob.pk, "user_id": "bob"}
        session.save()
        assert client.get("/me/").status_code == 403


class TestCommand:
    def test_it_prints_a_working_link_alone_on_the_last_line(self, tenant, capsys):
        call_command("subject_link", "tenant-1", "alice", "--base-url", "http://testserver")
        out = capsys.readouterr()
        url = out.out.strip().splitlines()[-1]
        assert url.startswith("http://testserver/me/link/") and "expires" in out.err
        assert Client().post(link_path(url)).status_code == 302
        assert events(tenant, "portal_link.created").get().actor == "system"

    def test_it_refuses_an_unknown_tenant(self, db):
        from django.core.management.base import CommandError

        with pytest.raises(CommandError, match="No tenant"):
            call_command("subject_link", "nope", "alice")


class TestApi:
    PATH = "/api/v1/users/{}/portal-link"

    def test_it_returns_a_link_and_expiry(self, tenant, admin_client_key):
        response = admin_client_key.post_json(self.PATH.format("alice"), {})
        assert response.status_code == 201, response.content
        body = response.json()
        assert set(body) == {"url", "expires_at"}
        assert Client().post(link_path(body["url"])).status_code == 302
        event = events(tenant, "portal_link.created").get()
        assert event.actor == f"api_key:{admin_client_key.key.prefix}" and event.subject_user_id == "alice"

    def test_an_empty_body_is_fine(self, admin_client_key):
        assert admin_client_key.post(self.PATH.format("alice")).status_code == 201

    def test_it_requires_the_admin_scope(self, tenant, make_client):
        client = make_client(tenant, [s for s in Scope.values if s != Scope.ADMIN])
        response = client.post_json(self.PATH.format("alice"), {})
        assert response.status_code == 403 and response.json()["error"]["code"] == "forbidden"
        assert not PortalLink.objects.exists()

    def test_it_requires_a_key(self, db):
        response = Client().post(self.PATH.format("alice"), "{}", content_type="application/json")
        assert response.status_code == 401 and response.json()["error"]["code"] == "unauthenticated"

    def test_unknown_fields_are_refused(self, admin_client_key):
        response = admin_client_key.post_json(self.PATH.format("alice"), {"user_id": "mallory"})
        assert response.status_code == 400 and "user_id" in response.json()["error"]["details"]

    def test_a_user_id_too_long_is_a_400(self, admin_client_key):
        response = admin_client_key.post_json(self.PATH.format("x" * 129), {})
        assert response.status_code == 400 and response.json()["error"]["code"] == "invalid"

    def test_another_tenants_key_gets_a_link_to_its_own_subject_only(
        self, tenant, other_tenant, outsider_client, memory
    ):
        memory(tenant, "alice")
        response = outsider_client.post_json(self.PATH.format("alice"), {})
        assert response.status_code == 201
        client = Client()
        client.post(link_path(response.json()["url"]))
        page = client.get("/me/")
        assert page.status_code == 200
        assert b"data engineer" not in page.content and b"MySQL" not in page.content
        assert PortalLink.objects.get().subject.tenant == other_tenant
        assert not events(tenant, "portal_link.created").exists()

    def test_it_is_in_the_openapi_schema(self, client, db):
        schema = client.get("/api/schema/", HTTP_ACCEPT="application/json").content.decode()
        assert "/api/v1/users/{user_id}/portal-link" in schema


def test_audit_payloads_hold_no_token(tenant, client):
    url, _ = portal_link_create(tenant=tenant, user_id="alice", actor=Actor("api_key", "k"))
    client.post(link_path(url))
    token = token_of(url)
    for payload in AuditPayload.objects.filter(tenant_id=tenant.pk):
        assert token not in str(payload.before) + str(payload.after) + payload.reason
