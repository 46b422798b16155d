"""The subject's page in Chromium, phone (390×844) and desktop (1366×900), English and
Simplified Chinese: labels instead of keys, a relation edited by choosing an entry (a new
one here), the search box swapping the list as one types, and the explanation page.
Each page passes axe-core and is photographed (artifacts/screenshots/portal-*.png)."""
import pytest
from playwright.sync_api import expect

from reviews.models import Entity, Fact
from tests.browser.axe import assert_no_axe_violations
from tests.browser.test_portal_flows import fits, subject_page  # noqa: F401  (fixture)
from tests.portal.conftest import alice, memory, say  # noqa: F401  (fixtures)

pytestmark = pytest.mark.django_db(transaction=True)

WORDS = {
    "en": {"database": "Database", "works_on": "works on", "about": "Who can see it", "matches": "1 memory matches"},
    "zh": {"database": "数据库", "works_on": "参与", "about": "谁能看到", "matches": "有 1 条记忆"},
}


@pytest.fixture
def works_on(tenant, alice, publish):
    return publish(tenant, "alice", field="relation:works_on", value="project:flask-migration", kind="relation")


def test_a_relation_reads_as_words_and_points_to_a_new_entry(subject_page, screenshot, works_on):
    page, lang, tag = subject_page
    page.goto("/me/")
    card = page.locator(f"#fact-{works_on.pk}")
    expect(card.locator(".what")).to_have_text(WORDS[lang]["works_on"])
    expect(page.locator("#category-constraint .what").first).to_contain_text(WORDS[lang]["database"])
    assert "relation:works_on" not in page.content()

    page.goto(f"/me/facts/{works_on.pk}/")
    expect(page.locator("#edit-target")).to_have_value("project:flask-migration")
    assert_no_axe_violations(page)
    fits(page)
    screenshot(page, f"portal-relation-edit-{tag}")
    page.select_option("#edit-target", "")
    page.select_option("#edit-new-type", "organization")
    page.fill("#edit-new-name", "Acme Robotics")
    page.click(f"form[action$='/facts/{works_on.pk}/correct/'] button")
    page.wait_for_url(f"**/me/#fact-{works_on.pk}")
    # The value reads as the entry ("Organisation: Acme Robotics"), never its reference.
    expect(page.locator(f"#fact-{works_on.pk} p.value")).to_contain_text("Acme Robotics")
    expect(page.locator(f"#fact-{works_on.pk} p.value")).not_to_contain_text("organization:")
    assert Fact.objects.get(pk=works_on.pk).value == "organization:acme-robotics"
    assert Entity.objects.filter(subject__user_id="alice", entity_type="organization").count() == 1


def test_the_search_swaps_the_list_as_one_types(subject_page, screenshot, alice):
    page, lang, tag = subject_page
    page.goto("/me/")
    page.fill("#memory-search", "mysql")
    expect(page.locator("[data-search-result]")).to_contain_text(WORDS[lang]["matches"])
    expect(page.locator(f"#fact-{alice.database.pk}")).to_be_visible()
    expect(page.locator(f"#fact-{alice.role.pk}")).to_have_count(0)
    page.wait_for_url("**/me/?q=mysql")
    assert_no_axe_violations(page)
    fits(page)
    screenshot(page, f"portal-search-{tag}")


def test_the_explanation_page(subject_page, screenshot):
    page, lang, tag = subject_page
    page.goto("/me/")
    page.click("a[href='/me/about/']")
    page.wait_for_url("**/me/about/")
    expect(page.locator("#about-who")).to_have_text(WORDS[lang]["about"])
    expect(page.locator("[data-field]").first).to_be_visible()
    assert_no_axe_violations(page)
    fits(page)
    screenshot(page, f"portal-about-{tag}")
