"""The dry run pages: tenant admins run one and open the kept reports; nobody else does."""
import pytest
from django.utils import translation

from reviews.actors import Actor
from reviews.labels import moment
from reviews.models import Candidate, ExtractionDryRun, Fact, Message
from tests.ingest.helpers import ingest, message
from tests.review.conftest import signed_in

pytestmark = pytest.mark.django_db

LIST = "/review/dry-runs/"
XSS = "<script>alert(1)</script>"


@pytest.fixture
def stored(tenant, settings, django_capture_on_commit_callbacks):
    settings.MEMORY_EXTRACTOR = "rules"
    ingest(tenant, message("m-1", "我叫 Alice。"), message("m-2", f"I work at {XSS} Acme."),
           capture=django_capture_on_commit_callbacks)
    return tenant


@pytest.fixture
def admin_client(tenant_admin):
    return signed_in(tenant_admin)


def test_a_tenant_admin_runs_one_and_opens_the_report(stored, admin_client):
    before = (Candidate.objects.count(), Fact.objects.count(), Message.objects.count())

    response = admin_client.post(LIST, {"extractor": "rules", "prompt_version": "", "days": 30, "limit": 100})

    report = ExtractionDryRun.objects.get(tenant=stored)
    assert response.status_code == 302 and response["Location"] == f"/review/dry-runs/{report.pk}/"
    assert (Candidate.objects.count(), Fact.objects.count(), Message.objects.count()) == before
    page = admin_client.get(response["Location"]).content.decode()
    assert report.figures["messages"] == 2 and report.figures["re_proposed"] == report.figures["proposed"]
    assert f'data-figure="re_proposed">{report.figures["re_proposed"]}<' in page
    assert "Alice" in page
    listing = admin_client.get(LIST).content.decode()
    assert f'href="/review/dry-runs/{report.pk}/"' in listing and "Extraction dry run" in listing


def test_bad_input_is_shown_not_run(stored, admin_client):
    response = admin_client.post(LIST, {"extractor": "rules", "prompt_version": "entity-facts-v2", "days": 30,
                                        "limit": 100})

    assert response.status_code == 400
    assert "no such prompt version" in response.content.decode()
    assert admin_client.post(LIST, {"extractor": "rules", "days": 0, "limit": 1}).status_code == 400
    assert not ExtractionDryRun.objects.exists()


def test_what_users_wrote_is_escaped(stored, admin_client, tenant):
    report = ExtractionDryRun.objects.create(
        tenant=tenant, requested_by="system", extractor="rules", prompt_version="rules-1", days=30,
        figures={"messages": 1, "re_proposed": 0, "missed": 0, "new": 1, "refused": 0, "failures": 0},
        examples={"new": [{"user_id": XSS, "message_id": "m-2", "entity": "user:x", "field": "name", "value": XSS}]},
    )

    page = admin_client.get(f"/review/dry-runs/{report.pk}/").content.decode()

    assert XSS not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page


def test_a_reviewer_is_refused(stored, reviewer):
    client = signed_in(reviewer)

    assert client.get(LIST).status_code == 403
    assert client.post(LIST, {"extractor": "rules", "days": 30, "limit": 10}).status_code == 403
    assert not ExtractionDryRun.objects.exists()
    assert "/review/dry-runs/" not in client.get("/review/").content.decode()  # no link either


def test_another_tenants_report_is_not_found(stored, admin_client, other_tenant):
    theirs = ExtractionDryRun.objects.create(tenant=other_tenant, requested_by="system", extractor="rules",
                                             prompt_version="rules-1", days=30)
    assert admin_client.get(f"/review/dry-runs/{theirs.pk}/").status_code == 404
    assert f"/review/dry-runs/{theirs.pk}/" not in admin_client.get(LIST).content.decode()


def test_anonymous_is_sent_to_sign_in(client, db):
    response = client.get(LIST)

    assert response.status_code == 302 and "/login/" in response["Location"]


@pytest.mark.parametrize("language,system", [("en", "System"), ("zh-hans", "系统")])
def test_a_reports_time_and_who_ran_it_read_as_on_every_staff_page(stored, admin_client, tenant, tenant_admin,
                                                                   language, system):
    by_admin = ExtractionDryRun.objects.create(tenant=tenant, requested_by=str(Actor.reviewer(tenant_admin)),
                                               extractor="rules", prompt_version="rules-1", days=30)
    by_system = ExtractionDryRun.objects.create(tenant=tenant, requested_by="system", extractor="rules",
                                                prompt_version="rules-1", days=30)
    admin_client.cookies["django_language"] = language
    with translation.override(language):
        shown = {report.pk: f'<time datetime="{report.created_at.isoformat()}">{moment(report.created_at)}</time>'
                 for report in (by_admin, by_system)}

    listing = admin_client.get(LIST, HTTP_ACCEPT_LANGUAGE=language).content.decode()
    pages = {report.pk: admin_client.get(f"/review/dry-runs/{report.pk}/", HTTP_ACCEPT_LANGUAGE=language).content.decode()
             for report in (by_admin, by_system)}

    assert shown[by_admin.pk] in listing and shown[by_system.pk] in listing
    assert shown[by_admin.pk] in pages[by_admin.pk]
    assert tenant_admin.username in pages[by_admin.pk].split('<p class="muted">')[1].split("</p>")[0]
    ran = pages[by_system.pk].split('<p class="muted">')[1].split("</p>")[0]
    assert system in ran and "system" not in ran.replace(system, "")


@pytest.mark.parametrize("language,extractor,column,headline", [
    ("en", "Rules (offline)", "Re-proposed", "Would re-propose approved values"),
    ("zh-hans", "规则（离线）", "再次提出", "会再次提出已批准的值"),
])
def test_groups_and_the_extractor_read_in_the_admins_language(stored, admin_client, tenant, language, extractor,
                                                              column, headline):
    report = ExtractionDryRun.objects.create(
        tenant=tenant, requested_by="system", extractor="rules", prompt_version="rules-1", days=30,
        figures={"messages": 4, "re_proposed": 3, "missed": 2, "new": 1, "refused": 0},
        examples={"missed": [{"user_id": "u1", "message_id": "m-9", "entity": "user", "field": "name",
                              "value": "Alice"}]},
    )
    admin_client.cookies["django_language"] = language

    listing = admin_client.get(LIST, HTTP_ACCEPT_LANGUAGE=language).content.decode()
    page = admin_client.get(f"/review/dry-runs/{report.pk}/", HTTP_ACCEPT_LANGUAGE=language).content.decode()

    row = listing.split(f'href="/review/dry-runs/{report.pk}/"')[1].split("</tr>")[0]
    assert f'<td title="rules">{extractor}</td>' in row
    # The figures in the groups' order, under the groups' column headings.
    assert [cell.split("<")[0] for cell in row.split('<td class="num">')[1:]] == ["4", "3", "2", "1", "0"]
    assert f'<th class="num">{column}</th>' in listing
    assert extractor in page.split("<h1>")[1].split("</h1>")[0]
    assert f'<span class="muted">{headline}</span><b data-figure="re_proposed">3</b>' in page
    # Only a group with examples has its section.
    assert 'data-examples="missed"' in page and 'data-examples="new"' not in page
