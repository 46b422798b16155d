"""A subject uses "my memories" in a real browser, on a phone-sized screen and a desktop one.

Everything is set up through the real pipeline (tests/portal/conftest.py) and checked in
the database, the JSON download and the recall API afterwards.
"""
import json
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import expect

from reviews.actors import SYSTEM, Actor
from reviews.models import Candidate, Fact, Message, Scope, Subject
from reviews.domain import MessageInput
from reviews.services.ingest import messages_ingest
from reviews.services.portal import portal_link_create
from tests.conftest import candidate
from tests.portal.conftest import alice, memory, say  # noqa: F401  (fixtures)

pytestmark = pytest.mark.django_db(transaction=True)

PHONE = {"width": 390, "height": 844}


@pytest.fixture
def phone(browser, live_server):
    """A page on an iPhone-sized screen, touch and all."""
    context = browser.new_context(
        base_url=live_server.url, locale="en-US", viewport=PHONE, is_mobile=True, has_touch=True, device_scale_factor=2
    )
    page = context.new_page()
    page.set_default_timeout(10_000)
    yield page
    context.close()


def open_link(page, tenant, user_id="alice"):
    url, _ = portal_link_create(tenant=tenant, user_id=user_id, actor=SYSTEM)
    page.goto(urlsplit(url).path)
    page.click("text=Open my memories")
    page.wait_for_url("**/me/")


def test_a_subject_confirms_and_corrects_on_a_phone(phone, screenshot, tenant, alice, submit):
    page = phone
    open_link(page, tenant)
    assert page.locator("h1").inner_text() == "My memories"
    assert page.locator(f"#fact-{alice.name.pk} .source").inner_text().startswith("You said this on 8 Nov 2026 in a chat.")
    expect(page.locator(f"#fact-{alice.thread_pref.pk}").get_by_text("only for one conversation")).to_be_visible()
    # Phone first: nothing spills sideways.
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    screenshot(page, "portal-phone-memories")

    # A sensitive item: keep it until I delete it (the default would be 90 days).
    page.click("nav.tabs >> text=Waiting for you")
    item = page.locator(f"#item-{alice.sensitive.pk}")
    expect(item.get_by_text("This is sensitive. May we remember it?")).to_be_visible()
    screenshot(page, "portal-phone-waiting")
    confirm = item.locator("form.confirm")
    confirm.get_by_label("Keep it until I delete it").check()
    confirm.get_by_role("button", name="Yes, remember it").click()
    page.wait_for_selector(f"#item-{alice.sensitive.pk}.done")  # htmx swapped the card in place
    health = Fact.objects.get(subject__user_id="alice", field="health", status="active")
    assert (health.value, health.expires_at, health.approved_by) == ("asthma", None, "subject:alice")

    # Correct a chat-sourced fact: the subject's word wins and says so.
    page.goto(f"/me/facts/{alice.database.pk}/")
    page.fill("#fact-value", "PostgreSQL 16")
    page.click("text=Save my correction")
    page.wait_for_url(f"**/me/#fact-{alice.database.pk}")
    corrected = page.locator(f"#fact-{alice.database.pk}")
    assert corrected.locator(".value").first.inner_text() == "PostgreSQL 16"
    assert corrected.locator(".source").get_attribute("data-source") == "self_service"
    assert "You corrected this today." in corrected.locator(".source").inner_text()
    fact = Fact.objects.get(pk=alice.database.pk)
    assert (fact.value, fact.source) == ("PostgreSQL 16", "self_service")
    [again] = submit(
        tenant, "alice",
        candidate(entity_type="project", entity_id="flask-migration", field="database", value="MySQL",
                  confidence=0.99, supersedes=True),
    )
    assert again.status == "pending_review" and Fact.objects.get(pk=fact.pk).value == "PostgreSQL 16"
    screenshot(page, "portal-phone-corrected")


def test_a_subject_deletes_a_conversation_and_downloads_everything(page, screenshot, tenant, alice):
    open_link(page, tenant)
    page.click("nav.tabs >> text=Your controls")
    screenshot(page, "portal-controls")

    with page.expect_download() as download_info:
        page.click("text=Download my data (JSON)")
    document = json.loads(open(download_info.value.path(), encoding="utf-8").read())
    assert document["user_id"] == "alice"
    assert sorted(f["id"] for f in document["facts"]) == sorted(
        Fact.objects.filter(subject__user_id="alice").values_list("pk", flat=True)
    )
    assert sorted(c["id"] for c in document["pending_items"]) == sorted(alice.candidate_ids)
    assert len(document["messages"]) == 4 and all(f["versions"] for f in document["facts"])

    page.locator(".conversations li", has_text="Hi, I'm Alice").get_by_role("link", name="Delete…").click()
    assert page.locator("[data-count=messages] strong").inner_text() == "2"
    page.get_by_role("button", name="Delete", exact=True).click()
    page.wait_for_url("**/me/controls/receipt/")
    assert page.locator("[data-count=messages] strong").inner_text() == "2"
    assert page.locator("[data-count=facts] strong").inner_text() == "3"
    screenshot(page, "portal-receipt")
    assert not Message.objects.filter(subject__user_id="alice", thread_id="alice-t1").exists()
    assert list(Fact.objects.filter(subject__user_id="alice", status="active").values_list("pk", flat=True)) == [
        alice.thread_pref.pk
    ]


def test_pause_then_forget_me(page, screenshot, tenant, alice, make_client):
    open_link(page, tenant)
    page.click("nav.tabs >> text=Your controls")
    page.click("text=Pause memory")
    page.wait_for_selector("#pause[data-paused='1']")
    assert Subject.objects.get(tenant=tenant, user_id="alice").collection_paused
    messages_before = Message.objects.filter(subject__user_id="alice").count()
    candidates_before = Candidate.objects.filter(subject__user_id="alice").count()
    result = messages_ingest(
        tenant=tenant,
        messages=[MessageInput(id="after-pause", thread_id="t-9", user_id="alice", role="user",
                               content="My name is Mallory and I live in Paris.")],
        actor=Actor("api_key", "chat-app"),
    )
    assert (result.accepted, result.paused) == (0, 1)
    assert Message.objects.filter(subject__user_id="alice").count() == messages_before
    assert not Message.objects.filter(message_id="after-pause").exists()
    assert Candidate.objects.filter(subject__user_id="alice").count() == candidates_before
    assert not Fact.objects.filter(value__icontains="Mallory").exists()
    page.reload()
    expect(page.get_by_text("Memory is paused")).to_be_visible()

    page.click("text=Forget me…")
    assert page.locator("[data-count=facts] strong").inner_text() == "4"
    assert page.locator("[data-count=messages] strong").inner_text() == "4"
    screenshot(page, "portal-forget-confirm")
    page.fill("#forget-confirm", "forget me")
    page.get_by_role("button", name="Delete everything").click()
    page.wait_for_url("**/me/controls/receipt/")
    assert page.locator("[data-count=facts] strong").inner_text() == "4"
    assert page.locator("[data-count=messages] strong").inner_text() == "4"
    assert int(page.locator("[data-count=candidates] strong").inner_text()) >= 5
    screenshot(page, "portal-forget-receipt")

    assert not Fact.objects.filter(subject__user_id="alice").exists()
    recall = make_client(tenant, [Scope.RECALL, Scope.RECALL_SENSITIVE]).get(
        "/api/v1/recall", {"user_id": "alice", "include_sensitive": "true", "q": "Alice"}
    )
    assert recall.status_code == 200 and recall.json()["facts"] == []
    page.click("text=Back to my memories")
    expect(page.get_by_text("does not remember anything about you")).to_be_visible()
