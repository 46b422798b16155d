"""Auditor pages: export now, export in the background with progress and a download, verify."""
import io
import json
import re
from datetime import datetime, timezone as dt_timezone

import pytest
from django.db import connection
from django.utils import translation

from reviews.actors import Actor
from reviews.audit import verify_tenant
from reviews.labels import moment
from reviews.models import AuditEvent, AuditExport, ExportStatus, Role
from reviews.services.erasure import subject_erase
from reviews.services.tenants import staff_create
from reviews.views.auditor import ExportForm
from tests.conftest import PASSWORD, sign_in
from tests.core.test_audit_chain import tamper
from tests.erasure.memory import NAME, USER

from .conftest import export_bytes

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def media(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path
    return tmp_path


@pytest.fixture
def as_user(client):
    def login(user):
        assert sign_in(client, user.username)
        return client

    return login


@pytest.fixture
def run_on_commit(django_capture_on_commit_callbacks):
    return lambda: django_capture_on_commit_callbacks(execute=True)


def start_export(client, run_on_commit, **data):
    with run_on_commit():
        response = client.post("/audit/exports/", {"format": "jsonl", **data})
    assert response.status_code == 302, response.content
    return AuditExport.objects.get(pk=int(response["Location"].rstrip("/").rsplit("/", 1)[1]))


def test_the_audit_page_shows_the_form(as_user, auditor, memory):
    response = as_user(auditor).get("/audit/")
    assert response.status_code == 200
    assert b"Export the audit trail" in response.content
    assert b'name="since"' in response.content and b"Export in the background" in response.content


def test_download_now_streams_the_export(as_user, auditor, memory, tenant):
    response = as_user(auditor).get("/audit/export", {"format": "csv", "user_id": USER})
    assert response.status_code == 200 and response.streaming
    assert response["Content-Type"].startswith("text/csv")
    body = b"".join(response.streaming_content).decode()
    assert body.startswith("tenant_id,seq,") and "#manifest" in body
    event = AuditEvent.objects.filter(tenant_id=tenant.pk).order_by("-seq").first()
    assert (event.action, event.actor) == ("audit.exported", f"reviewer:{auditor.pk}")


def test_invalid_filters_re_render_the_form(as_user, auditor, memory):
    response = as_user(auditor).get("/audit/export", {"format": "xml", "since": "soon"})
    assert response.status_code == 400
    assert b"Select a valid choice" in response.content and b"Enter a valid date/time" in response.content


def test_a_background_export_runs_and_offers_its_file(as_user, auditor, memory, tenant, media, run_on_commit):
    client = as_user(auditor)
    job = start_export(client, run_on_commit, user_id=USER)

    job.refresh_from_db()
    assert job.status == ExportStatus.READY and job.requested_by == f"reviewer:{auditor.pk}"
    assert (media / "exports" / "tenant-1").is_dir()
    page = client.get(f"/audit/exports/{job.pk}/")
    assert b"<progress" in page.content and b"Download the file" in page.content
    download = client.get(f"/audit/exports/{job.pk}/file")
    assert download.status_code == 200
    data = b"".join(download.streaming_content)
    rows = [json.loads(line) for line in data.splitlines()]
    assert rows[-1]["manifest"] == job.manifest
    assert job.manifest["rows"] == len(rows) - 1 == job.rows_done == job.rows_total
    manifest = client.get(f"/audit/exports/{job.pk}/manifest")
    assert manifest.json() == job.manifest
    actions = list(AuditEvent.objects.filter(tenant_id=tenant.pk).values_list("action", flat=True))
    assert actions[-2:] == ["audit.export_requested", "audit.exported"]


def test_htmx_polls_only_the_progress_block(as_user, auditor, memory, tenant):
    job = AuditExport.objects.create(tenant=tenant, requested_by="x", rows_total=10, rows_done=4,
                                     status=ExportStatus.RUNNING)
    response = as_user(auditor).get(f"/audit/exports/{job.pk}/", HTTP_HX_REQUEST="true")
    html = response.content.decode()
    assert html.lstrip().startswith('<div id="export-progress"')
    assert 'hx-trigger="every 1s"' in html and 'value="40"' in html
    job.status = ExportStatus.READY
    job.save()
    html = as_user(auditor).get(f"/audit/exports/{job.pk}/", HTTP_HX_REQUEST="true").content.decode()
    assert "hx-trigger" not in html


def test_an_erasure_deletes_export_files_that_carry_the_subjects_values(
    as_user, auditor, memory, tenant, media, run_on_commit
):
    client = as_user(auditor)
    with_subject = start_export(client, run_on_commit)
    others_only = start_export(client, run_on_commit, user_id="u-keep")
    path = media / "exports" / AuditExport.objects.get(pk=with_subject.pk).file_name
    assert NAME.encode() in path.read_bytes()

    with run_on_commit():
        receipt = subject_erase(tenant=tenant, user_id=USER, actor=Actor("api_key", "admin"))

    assert receipt.deleted["export_files"] == 1
    assert not path.exists()
    purged = AuditExport.objects.get(pk=with_subject.pk)
    assert (purged.status, purged.file_name) == (ExportStatus.PURGED, "")
    assert client.get(f"/audit/exports/{with_subject.pk}/file").status_code == 404
    assert AuditExport.objects.get(pk=others_only.pk).status == ExportStatus.READY
    assert verify_tenant(tenant.pk).ok


def test_verify_runs_the_chain_check(as_user, auditor, memory, tenant):
    response = as_user(auditor).post("/audit/verify/", {"check": "chain"})
    assert response.status_code == 200
    assert b'data-result="ok"' in response.content
    assert f"{AuditEvent.objects.filter(tenant_id=tenant.pk).count()} events".encode() in response.content


def test_verify_names_the_tampered_row_of_an_uploaded_file(as_user, auditor, memory, tenant):
    data = export_bytes(tenant)
    forged = data.replace(NAME.encode(), b"Mallory", 1)
    upload = io.BytesIO(forged)
    upload.name = "audit.jsonl"
    response = as_user(auditor).post("/audit/verify/", {"check": "file", "file": upload})
    html = response.content.decode()
    assert 'data-result="broken"' in html and "values do not match their digests" in html
    assert "(event #" in html

    good = io.BytesIO(data)
    good.name = "audit.jsonl"
    assert b'data-result="ok"' in as_user(auditor).post("/audit/verify/", {"check": "file", "file": good}).content


def test_verify_names_the_problems_in_the_auditors_language(as_user, auditor, memory, tenant):
    upload = io.BytesIO(export_bytes(tenant).replace(NAME.encode(), b"Mallory", 1))
    upload.name = "audit.jsonl"

    html = (
        as_user(auditor)
        .post("/audit/verify/", {"check": "file", "file": upload}, HTTP_ACCEPT_LANGUAGE="zh-CN,zh;q=0.9")
        .content.decode()
    )

    assert 'data-result="broken"' in html
    assert re.search(r"第 \d+ 行（事件 #\d+）：取值与其摘要不符", html)
    assert "values do not match" not in html


def test_a_file_of_another_tenant_is_refused(as_user, auditor, memory, other_tenant):
    upload = io.BytesIO(export_bytes(other_tenant))
    upload.name = "theirs.jsonl"
    html = as_user(auditor).post("/audit/verify/", {"check": "file", "file": upload}).content.decode()
    assert "not an export of this tenant" in html


def test_a_tenant_admin_may_audit(as_user, tenant_admin, memory):
    assert as_user(tenant_admin).get("/audit/").status_code == 200


PAGES = ["/audit/", "/audit/export", "/audit/verify/"]


@pytest.mark.parametrize("url", PAGES)
def test_a_reviewer_is_refused(as_user, reviewer, url):
    assert as_user(reviewer).get(url).status_code == 403


def test_a_reviewer_cannot_start_verify_or_download(as_user, reviewer, auditor, memory, tenant, run_on_commit):
    job = start_export(as_user(auditor), run_on_commit)
    client = as_user(reviewer)
    assert client.post("/audit/exports/", {"format": "jsonl"}).status_code == 403
    assert client.post("/audit/verify/", {"check": "chain"}).status_code == 403
    for suffix in ("", "file", "manifest"):
        assert client.get(f"/audit/exports/{job.pk}/{suffix}").status_code == 403
    assert AuditExport.objects.count() == 1


@pytest.mark.parametrize("url", PAGES)
def test_anonymous_visitors_are_sent_to_sign_in(client, url):
    response = client.get(url)
    assert response.status_code == 302 and response["Location"].startswith("/login/")


def test_another_tenants_auditor_sees_nothing_of_ours(as_user, auditor, memory, tenant, other_tenant, run_on_commit):
    job = start_export(as_user(auditor), run_on_commit)
    theirs = staff_create(tenant=other_tenant, username="oscar", role=Role.AUDITOR, password=PASSWORD)
    client = as_user(theirs)
    for suffix in ("", "file", "manifest"):
        assert client.get(f"/audit/exports/{job.pk}/{suffix}").status_code == 404
    body = b"".join(client.get("/audit/export", {"user_id": USER}).streaming_content)
    assert json.loads(body)["manifest"]["rows"] == 0
    assert f"#{job.pk}".encode() not in client.get("/audit/").content


def test_an_outsider_reviewer_finds_nothing(as_user, outsider, memory, auditor, run_on_commit):
    job = start_export(as_user(auditor), run_on_commit)
    client = as_user(outsider)
    assert client.get(f"/audit/exports/{job.pk}/file").status_code == 403


@pytest.mark.skipif(connection.vendor != "postgresql", reason="tampers behind PostgreSQL's append-only trigger")
def test_verify_names_a_tampered_stored_event(as_user, auditor, memory, tenant):
    victim = AuditEvent.objects.filter(tenant_id=tenant.pk).order_by("seq")[7]
    tamper("UPDATE reviews_auditevent SET action = %s WHERE id = %s", ["fact.forged", victim.pk])
    html = as_user(auditor).post("/audit/verify/", {"check": "chain"}).content.decode()
    assert 'data-result="broken"' in html
    assert f"broken at event #{victim.seq}:" in html and "content does not match its hash" in html


def test_a_failed_export_can_be_run_again(as_user, auditor, memory, tenant, run_on_commit, reviewer):
    failed = AuditExport.objects.create(
        tenant=tenant, requested_by="reviewer:1", format="csv", filters={"user_id": USER}, status=ExportStatus.FAILED,
        error="OSError: disk full",
    )
    client = as_user(auditor)
    page = client.get(f"/audit/exports/{failed.pk}/").content.decode()
    assert "disk full" in page and "Run it again" in page
    with run_on_commit():
        response = client.post(f"/audit/exports/{failed.pk}/again")
    again = AuditExport.objects.exclude(pk=failed.pk).get()
    assert response["Location"] == f"/audit/exports/{again.pk}/"
    assert (again.status, again.format, again.filters["user_id"]) == (ExportStatus.READY, "csv", USER)
    assert as_user(reviewer).post(f"/audit/exports/{failed.pk}/again").status_code == 403


@pytest.mark.parametrize("user_id", ["my key is AKIAIOSFODNN7EXAMPLE", "a\x00b", "\u202egnp", "x" * 129],
                         ids=["a credential", "a nul", "invisible characters", "too long"])
def test_an_export_for_a_malformed_user_id_is_refused_on_the_form(as_user, auditor, memory, tenant, user_id):
    client = as_user(auditor)
    client.raise_request_exception = False
    exports_before = AuditEvent.objects.filter(tenant_id=tenant.pk).count()

    for response in (client.get("/audit/export", {"user_id": user_id}),
                     client.post("/audit/exports/", {"format": "jsonl", "user_id": user_id})):
        assert response.status_code == 400, response.exc_info
        assert response.context["form"].errors["user_id"]
    assert AuditEvent.objects.filter(tenant_id=tenant.pk).count() == exports_before
    assert not AuditExport.objects.exists()


@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_an_exports_time_is_shown_as_every_staff_page_shows_it(as_user, auditor, memory, tenant, language):
    job = AuditExport.objects.create(tenant=tenant, requested_by="x", rows_total=10, rows_done=4,
                                     status=ExportStatus.RUNNING, filters={})
    client = as_user(auditor)
    client.cookies["django_language"] = language
    with translation.override(language):
        shown = f'<time datetime="{job.created_at.isoformat()}">{moment(job.created_at)}</time>'
    for url in ("/audit/", f"/audit/exports/{job.pk}/"):
        assert shown in client.get(url, HTTP_ACCEPT_LANGUAGE=language).content.decode(), url


@pytest.mark.parametrize("language,key_label", [("en", "API key ingest"), ("zh-hans", "API 密钥 ingest")])
def test_who_asked_for_an_export_is_named_as_the_audit_log_names_actors(as_user, auditor, memory, tenant,
                                                                      language, key_label):
    by_staff = AuditExport.objects.create(tenant=tenant, requested_by=str(Actor.reviewer(auditor)), filters={})
    AuditExport.objects.create(tenant=tenant, requested_by="api_key:ingest", filters={})
    client = as_user(auditor)
    client.cookies["django_language"] = language

    listing = client.get("/audit/", HTTP_ACCEPT_LANGUAGE=language).content.decode()
    detail = client.get(f"/audit/exports/{by_staff.pk}/", HTTP_ACCEPT_LANGUAGE=language).content.decode()

    assert f'<td title="{by_staff.requested_by}">{auditor.username}</td>' in listing
    assert f'<td title="api_key:ingest">{key_label}</td>' in listing
    assert f'<span title="{by_staff.requested_by}">{auditor.username}</span>' in detail
    assert f">{by_staff.requested_by}<" not in listing + detail  # the code is the title, never the text


@pytest.mark.parametrize(
    "language,hint", [("en", "Times are in Asia/Shanghai."), ("zh-hans", "时间均为 Asia/Shanghai 时间。")]
)
def test_the_forms_name_the_time_zone_their_times_are_read_in(as_user, auditor, memory, settings, language, hint):
    settings.TIME_ZONE = "Asia/Shanghai"  # a deployment's TIME_ZONE: the forms read their times in it
    client = as_user(auditor)
    for url in ("/audit/", "/audit/log/"):
        assert hint in client.get(url, HTTP_ACCEPT_LANGUAGE=language).content.decode(), url

    form = ExportForm(data={"since": "2026-12-07T08:00:00"})
    assert form.is_valid(), form.errors
    assert form.cleaned_data["since"] == datetime(2026, 12, 7, 0, 0, tzinfo=dt_timezone.utc)
