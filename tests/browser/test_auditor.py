"""An auditor exports the audit trail in the background, watches it finish, downloads the
file and has it verified, in a real browser."""
import pytest
from playwright.sync_api import expect

from reviews.actors import Actor
from reviews.models import AuditExport, ExportStatus
from reviews.services.audit_export import audit_export_run
from reviews.services.candidates import candidates_bulk_decide
from tests.browser.axe import assert_no_axe_violations
from tests.browser.page_checks import assert_within_window
from tests.browser.test_reviewer import signed_in_context
from tests.review.conftest import review_queue  # noqa: F401 (fixture)

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def media(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"


def test_a_background_export_shows_progress_then_a_download(page, login, screenshot, tenant, auditor, publish, tmp_path):
    publish(tenant, "user-42", field="name", value="Alice")
    job = AuditExport.objects.create(tenant=tenant, requested_by=f"reviewer:{auditor.pk}", rows_total=10, rows_done=3,
                                     status=ExportStatus.QUEUED)

    login("audrey")
    page.goto(f"/audit/exports/{job.pk}/")
    assert page.locator("#export-progress progress").get_attribute("value") == "30"
    screenshot(page, "audit-export-running")
    AuditExport.objects.filter(pk=job.pk).update(rows_done=0)
    audit_export_run(export_id=job.pk)  # the worker finishes; the page polls its way there
    page.wait_for_selector("text=Download the file", timeout=5000)
    assert page.locator("#export-progress progress").get_attribute("value") == "100"
    screenshot(page, "audit-export-ready")

    with page.expect_download() as download:
        page.click("text=Download the file")
    saved = tmp_path / "export.jsonl"
    download.value.save_as(saved)
    assert saved.read_bytes().splitlines()[-1].startswith(b'{"manifest":')

    page.click("nav.tabs >> text=Verify")
    page.set_input_files("input[name=file]", str(saved))
    page.click("text=Verify the file")
    expect(page.locator("[data-result=ok]")).to_be_visible()
    page.click("text=Verify the stored chain")
    page.wait_for_selector("[data-result=ok] >> text=The chain is intact")
    screenshot(page, "audit-verify")


def test_the_form_starts_an_export_in_the_background(page, login, screenshot, tenant, auditor, publish):
    publish(tenant, "user-42", field="name", value="Alice")
    login("audrey")
    page.goto("/audit/")
    screenshot(page, "audit-export-form")
    page.fill("input[name=user_id]", "user-42")
    page.select_option("select[name=format]", "csv")
    page.click("text=Export in the background")
    # Without a broker the task runs in-process: the job is done when its page opens.
    page.wait_for_selector("text=Download the file")
    job = AuditExport.objects.get()
    assert (job.status, job.format, job.filters["user_id"]) == ("ready", "csv", "user-42")
    page.goto("/audit/")
    expect(page.locator(f"a[href='/audit/exports/{job.pk}/']")).to_be_visible()


@pytest.mark.parametrize("locale, name", [("en-US", "Bulk approval"), ("zh-CN", "批量批准")])
@pytest.mark.parametrize("width, height", [(1366, 900), (390, 844)])
def test_the_log_names_actions_and_filters_by_their_code(browser, live_server, screenshot, tenant, review_queue,
                                                         reviewer, auditor, locale, name, width, height):
    item = review_queue.evidence
    candidates_bulk_decide(tenant=tenant, items=[(item.pk, item.version)], decision="approve",
                           actor=Actor.reviewer(reviewer))
    context, page = signed_in_context(browser, live_server, "audrey", locale=locale,
                                      viewport={"width": width, "height": height})
    try:
        page.goto("/audit/log/")
        badge = page.locator("[data-action='candidates.bulk_approve']")
        assert badge.inner_text() == name and badge.get_attribute("title") == "candidates.bulk_approve"
        screenshot(page, f"audit-log-actions-{locale}-{width}")
        assert_no_axe_violations(page)
        badge.click()  # its link filters by the code
        page.wait_for_url("**/audit/log/?action=candidates.bulk_approve")
        assert page.locator("[data-event]").count() == 1
    finally:
        context.close()


@pytest.mark.parametrize("width, height", [(1366, 900), (390, 844)])
@pytest.mark.parametrize("locale, queued, ready, download", [
    ("en-US", "queued", "ready", "Download the file"),
    ("zh-CN", "排队中", "已完成", "下载文件"),
])
def test_an_exports_state_reads_in_the_auditors_language(browser, live_server, screenshot, tenant, auditor, publish,
                                                         width, height, locale, queued, ready, download):
    publish(tenant, "user-42", field="name", value="Alice")
    job = AuditExport.objects.create(tenant=tenant, requested_by=f"reviewer:{auditor.pk}", rows_total=10, rows_done=3,
                                     status=ExportStatus.QUEUED)
    language = "zh" if locale.startswith("zh") else "en"
    context, page = signed_in_context(browser, live_server, "audrey", locale=locale,
                                      viewport={"width": width, "height": height})
    try:
        page.goto(f"/audit/exports/{job.pk}/")
        expect(page.locator("#export-progress .status-queued")).to_have_text(queued)
        expect(page.locator("dl.meta dd").nth(2)).not_to_be_empty()  # no filter given: it says so
        assert_within_window(page)
        assert_no_axe_violations(page)
        screenshot(page, f"audit-export-queued-{language}-{width}")
        AuditExport.objects.filter(pk=job.pk).update(rows_done=0)
        audit_export_run(export_id=job.pk)  # the page polls its way to the result
        expect(page.locator("#export-progress .status-ready")).to_have_text(ready, timeout=5000)
        expect(page.locator("#export-progress a.button")).to_have_text(download)
        screenshot(page, f"audit-export-ready-{language}-{width}")
        assert_within_window(page)
        assert_no_axe_violations(page)
    finally:
        context.close()
