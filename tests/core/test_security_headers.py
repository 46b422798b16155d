"""Production hardening: the Content-Security-Policy, HTTPS settings and no-store answers.

The settings module is read once per process, so what depends on the environment
(production defaults, the report-only switch, ``check --deploy``) runs in a subprocess.
"""
import json
import os
import secrets
import subprocess
import sys
from pathlib import Path

import pytest
from django.test import Client

from reviews.actors import SYSTEM
from reviews.models import Scope
from reviews.services.portal import portal_link_create

ROOT = Path(__file__).resolve().parents[2]
STRICT = {
    "default-src": ["'self'"],
    "object-src": ["'none'"],
    "base-uri": ["'self'"],
    "form-action": ["'self'"],
    "frame-ancestors": ["'none'"],
}


def policy(header: str) -> dict[str, list[str]]:
    """A policy header as {directive: sources} (django-csp orders directives freely)."""
    directives = (part.strip().split() for part in header.split(";") if part.strip())
    return {name: sources for name, *sources in directives}


# Set for the whole test process when the browser tests are collected (Playwright's sync
# API runs an event loop in the main thread); a production process never has it.
TEST_ONLY_VARIABLES = {"DJANGO_ALLOW_ASYNC_UNSAFE"}


def production_env(**extra) -> dict:
    env = {
        k: v for k, v in os.environ.items()
        if not k.startswith(("DJANGO_SECURE_", "DJANGO_CSP_")) and k not in TEST_ONLY_VARIABLES
    }
    env.update(
        DJANGO_DEBUG="0",
        DJANGO_SECRET_KEY=secrets.token_urlsafe(50),
        MEMORY_DIGEST_KEY=secrets.token_urlsafe(32),
        DJANGO_ALLOWED_HOSTS="memory.example.com",
        DJANGO_SETTINGS_MODULE="memory_portal.settings",
        **extra,
    )
    return env


def settings_in(env: dict, *names: str) -> dict:
    script = (
        "import json; from django.conf import settings; "
        f"print(json.dumps({{n: getattr(settings, n, None) for n in {list(names)!r}}}))"
    )
    probe = subprocess.run([sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True)
    assert probe.returncode == 0, probe.stderr
    return json.loads(probe.stdout)


HTTPS_SETTINGS = ("SECURE_SSL_REDIRECT", "SECURE_HSTS_SECONDS", "SECURE_HSTS_INCLUDE_SUBDOMAINS",
                  "SECURE_HSTS_PRELOAD", "SESSION_COOKIE_SECURE", "CSRF_COOKIE_SECURE")


class TestProductionConfiguration:
    def test_check_deploy_reports_nothing_but_the_documented_silenced_preload_reminder(self):
        env = production_env()
        check = subprocess.run(
            [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
            cwd=ROOT, env=env, capture_output=True, text=True,
        )
        assert check.returncode == 0, check.stdout + check.stderr
        assert "System check identified no issues (1 silenced)." in check.stdout
        assert settings_in(env, "SILENCED_SYSTEM_CHECKS") == {"SILENCED_SYSTEM_CHECKS": ["security.W021"]}

    def test_asking_for_preload_silences_nothing(self):
        env = production_env(DJANGO_SECURE_HSTS_PRELOAD="1")
        check = subprocess.run(
            [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
            cwd=ROOT, env=env, capture_output=True, text=True,
        )
        assert check.returncode == 0 and "System check identified no issues (0 silenced)." in check.stdout

    def test_production_defaults_to_https_only(self):
        assert settings_in(production_env(), *HTTPS_SETTINGS) == {
            "SECURE_SSL_REDIRECT": True, "SECURE_HSTS_SECONDS": 31536000, "SECURE_HSTS_INCLUDE_SUBDOMAINS": True,
            "SECURE_HSTS_PRELOAD": False, "SESSION_COOKIE_SECURE": True, "CSRF_COOKIE_SECURE": True,
        }

    def test_each_https_setting_can_be_turned_off(self):
        env = production_env(DJANGO_SECURE_SSL_REDIRECT="0", DJANGO_SECURE_HSTS_SECONDS="0",
                             DJANGO_SECURE_HSTS_INCLUDE_SUBDOMAINS="0", DJANGO_SECURE_COOKIES="0")
        assert settings_in(env, *HTTPS_SETTINGS) == {
            "SECURE_SSL_REDIRECT": False, "SECURE_HSTS_SECONDS": 0, "SECURE_HSTS_INCLUDE_SUBDOMAINS": False,
            "SECURE_HSTS_PRELOAD": False, "SESSION_COOKIE_SECURE": False, "CSRF_COOKIE_SECURE": False,
        }

    def test_a_developer_machine_speaks_plain_http(self):
        env = {k: v for k, v in production_env().items() if k != "DJANGO_DEBUG"}
        values = settings_in(env, "SECURE_SSL_REDIRECT", "SECURE_HSTS_SECONDS", "SESSION_COOKIE_SECURE")
        assert values == {"SECURE_SSL_REDIRECT": False, "SECURE_HSTS_SECONDS": 0, "SESSION_COOKIE_SECURE": False}

    def test_the_policy_is_enforced_unless_report_only_is_asked_for(self):
        names = ("CONTENT_SECURITY_POLICY", "CONTENT_SECURITY_POLICY_REPORT_ONLY")
        enforced = settings_in(production_env(), *names)
        assert enforced["CONTENT_SECURITY_POLICY"]["DIRECTIVES"]["default-src"] == ["'self'"]
        assert enforced["CONTENT_SECURITY_POLICY_REPORT_ONLY"] is None
        reported = settings_in(production_env(DJANGO_CSP_REPORT_ONLY="1", DJANGO_CSP_REPORT_URI="/csp-reports"), *names)
        assert reported["CONTENT_SECURITY_POLICY"] is None
        assert reported["CONTENT_SECURITY_POLICY_REPORT_ONLY"]["DIRECTIVES"]["report-uri"] == ["/csp-reports"]


class TestHttps:
    def test_plain_http_is_redirected_but_the_health_checks_answer(self, client, db, settings):
        settings.SECURE_SSL_REDIRECT = True
        response = client.get("/review/?x=1")
        assert response.status_code == 301 and response["Location"] == "https://testserver/review/?x=1"
        assert client.get("/healthz").status_code == 200 and client.get("/readyz").status_code == 200

    def test_https_answers_carry_hsts(self, client, db, settings):
        settings.SECURE_HSTS_SECONDS = 31536000
        response = client.get("/login/", secure=True)
        assert response["Strict-Transport-Security"] == "max-age=31536000; includeSubDomains"


class TestContentSecurityPolicy:
    def test_every_page_gets_the_strict_policy(self, client, reviewer):
        client.force_login(reviewer)
        for path in ("/", "/login/", "/review/", "/no-such-page/"):
            response = client.get(path)
            assert policy(response["Content-Security-Policy"]) == STRICT, path
            assert "Content-Security-Policy-Report-Only" not in response

    def test_pages_carry_no_inline_script_or_style(self, client, reviewer):
        client.force_login(reviewer)
        html = client.get("/review/").content.decode()
        assert "<script>" not in html and "<style" not in html and " style=" not in html
        assert '"includeIndicatorStyles":false' in html  # htmx injects no <style> of its own

    def test_swagger_ui_alone_gets_inline_styles_and_its_script_is_a_file(self, client, db):
        response = client.get("/api/docs/")
        assert response.status_code == 200
        assert policy(response["Content-Security-Policy"]) == {
            **STRICT, "style-src": ["'self'", "'unsafe-inline'"], "img-src": ["'self'", "data:"],
        }
        html = response.content.decode()
        assert "<script>" not in html and '<script src="/api/docs/?script="></script>' in html
        script = client.get("/api/docs/?script=")
        assert script.status_code == 200 and script["Content-Type"].startswith("application/javascript")
        assert "SwaggerUIBundle" in script.content.decode()

    def test_report_only_sends_the_same_policy_under_the_other_header(self, client, db, settings):
        settings.CONTENT_SECURITY_POLICY_REPORT_ONLY = settings.CONTENT_SECURITY_POLICY
        settings.CONTENT_SECURITY_POLICY = None
        response = client.get("/login/")
        assert "Content-Security-Policy" not in response
        assert policy(response["Content-Security-Policy-Report-Only"]) == STRICT
        docs = client.get("/api/docs/")
        assert "Content-Security-Policy" not in docs
        assert policy(docs["Content-Security-Policy-Report-Only"])["style-src"] == ["'self'", "'unsafe-inline'"]


class TestNoStore:
    """Every answer of the app is ``no-store``, written once; static files stay cacheable."""

    def test_staff_pages(self, client, reviewer, auditor, tenant_admin):
        for user, path in ((reviewer, "/review/"), (reviewer, "/review/stats/"), (auditor, "/audit/"),
                           (auditor, "/audit/log/"), (tenant_admin, "/tenant/schema/"), (tenant_admin, "/tenant/keys/")):
            client.force_login(user)
            response = client.get(path)
            assert response.status_code == 200, path
            assert response["Cache-Control"] == "no-store", path

    def test_export_downloads(self, client, auditor):
        client.force_login(auditor)
        response = client.get("/audit/export", {"format": "jsonl"})
        assert response.status_code == 200 and response["Content-Disposition"].startswith("attachment")
        assert response["Cache-Control"] == "no-store"

    def test_the_subjects_pages_and_their_export(self, tenant):
        url, _ = portal_link_create(tenant=tenant, user_id="alice", actor=SYSTEM)
        client = Client()
        path = "/" + url.split("/", 3)[3]
        assert client.get(path)["Cache-Control"] == "no-store"  # the link's own page
        assert client.post(path).status_code == 302
        for page in ("/me/", "/me/controls/", "/me/controls/export.json"):
            response = client.get(page)
            assert response.status_code == 200 and response["Cache-Control"] == "no-store", page

    def test_api_answers(self, tenant, make_client, publish):
        publish(tenant, "alice", value="Alice")
        api = make_client(tenant, [Scope.RECALL, Scope.ADMIN])
        recall = api.get("/api/v1/recall", {"user_id": "alice", "q": "name"})
        assert recall.status_code == 200 and recall.json()["facts"] and recall["Cache-Control"] == "no-store"
        created = api.post_json("/api/v1/keys", {"scopes": ["recall"]})
        assert created.status_code == 201 and created["Cache-Control"] == "no-store"
        refused = make_client(tenant, [Scope.INGEST]).get("/api/v1/recall", {"user_id": "alice"})
        assert refused.status_code == 403 and refused["Cache-Control"] == "no-store"

    def test_static_files_stay_cacheable(self, client, db):
        response = client.get("/static/css/app.css")
        assert response.status_code == 200 and "no-store" not in response.get("Cache-Control", "")


@pytest.mark.parametrize("view_header", ["no-store", "max-age=0, no-cache, no-store, must-revalidate, private", "max-age=600"])
def test_a_views_own_cache_control_becomes_exactly_no_store(rf, view_header):
    from django.http import HttpResponse

    from reviews.web.middleware import NoStoreMiddleware

    def view(request):
        response = HttpResponse("ok")
        response["Cache-Control"] = view_header
        return response

    assert NoStoreMiddleware(view)(rf.get("/"))["Cache-Control"] == "no-store"


def test_a_browser_asking_for_favicon_ico_is_sent_to_the_sites_icon(client, db):
    """The API's JSON answers name no icon: the browser's own request finds one."""
    response = client.get("/favicon.ico")
    assert response.status_code == 301 and response["Location"] == "/static/favicon.svg"
    icon = client.get(response["Location"])
    assert icon.status_code == 200 and icon["Content-Type"] == "image/svg+xml"
