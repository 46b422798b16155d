"""Find and understand (SPEC §4 subject): a search across one's memories that works with
and without JavaScript, and a page explaining what is remembered, why, for how long and
who can see it, generated from the tenant's schema and retention."""
import pytest

from reviews.actors import Actor
from reviews.models import Tenant
from reviews.services import governance
from tests.portal.test_labels import ZH, text


class TestSearch:
    def test_the_search_lists_only_the_memories_that_match(self, alice, alice_client):
        page = text(alice_client.get("/me/", {"q": "mysql"}))
        assert "1 memory matches “mysql”." in page and "MySQL" in page
        assert "data engineer" not in page and "answers in German" not in page

    def test_words_match_labels_and_values_in_any_case_and_chinese(self, alice, alice_client):
        assert "Project: flask-migration · Database MySQL" in text(alice_client.get("/me/", {"q": "DATABASE flask"}))
        page = text(alice_client.get("/me/", {"q": "数据库"}, **ZH))
        assert "MySQL" in page and "data engineer" not in page

    def test_nothing_found_says_so_and_offers_everything_again(self, alice, alice_client):
        page = text(alice_client.get("/me/", {"q": "kangaroo"}))
        assert "0 memories match “kangaroo”." in page and "Show all" in page and "MySQL" not in page

    def test_with_htmx_only_the_list_comes_back(self, alice, alice_client):
        response = alice_client.get("/me/", {"q": "mysql"}, HTTP_HX_REQUEST="true")
        body = response.content.decode()
        assert body.lstrip().startswith('<div id="memories"') and "<html" not in body and "MySQL" in body

    def test_the_search_is_escaped_and_never_reaches_another_subject(self, tenant, alice, memory, alice_client):
        bob = memory(tenant, "bob", prefix="bob")
        page = alice_client.get("/me/", {"q": "<script>alert(1)</script>"}).content.decode()
        assert "<script>alert(1)</script>" not in page and "&lt;script&gt;" in page
        # bob's memories are about the same things: alice's search finds only hers.
        found = alice_client.get("/me/", {"q": "mysql"}).content.decode()
        assert f'data-fact="{alice.database.pk}"' in found and f'data-fact="{bob.database.pk}"' not in found

    def test_a_long_search_is_cut_not_refused(self, alice, alice_client):
        assert alice_client.get("/me/", {"q": "x" * 5000}).status_code == 200


class TestExplanation:
    def test_it_is_linked_from_my_memories(self, alice, alice_client):
        assert 'href="/me/about/"' in alice_client.get("/me/").content.decode()

    def test_it_follows_the_tenants_schema_and_retention(self, tenant, alice, alice_client, tenant_admin):
        page = text(alice_client.get("/me/about/"))
        assert "You · Health — can hold several values; sensitive" in page
        assert "forgotten 90 days after it is saved" in page
        assert "Your chat messages, kept so a person can check a suggestion in context: 30 days." in page
        admin = Actor.reviewer(tenant_admin)
        governance.field_add(tenant=tenant, entity_type="user", field="allergy", actor=admin,
                             attributes={"category": "scenario", "cardinality": "many", "retention_days": 7,
                                         "labels": {"en": "Allergy", "zh-hans": "过敏"}})
        governance.tenant_policy_update(tenant=tenant, changes={"message_retention_days": 14}, actor=admin)
        page = text(alice_client.get("/me/about/"))
        assert "You · Allergy — can hold several values" in page and "forgotten 7 days after it is saved" in page
        assert "in context: 14 days." in page
        assert "过敏" in text(alice_client.get("/me/about/", **ZH))

    def test_a_restricted_relation_list_is_named(self, tenant, alice, alice_client):
        Tenant.objects.filter(pk=tenant.pk).update(allowed_relation_names=["works_on"])
        assert "Only these connections: works on." in text(alice_client.get("/me/about/"))

    def test_it_reads_in_chinese(self, alice, alice_client):
        page = text(alice_client.get("/me/about/", **ZH))
        assert "我们记住什么" in page and "谁能看到" in page and "What we remember" not in page

    def test_it_needs_a_session(self, client, db):
        assert client.get("/me/about/").status_code == 403


@pytest.mark.parametrize("url", ["/me/about/", "/me/?q=mysql"])
def test_the_new_pages_hold_no_inline_script_or_style(alice, alice_client, url):
    page = alice_client.get(url).content.decode()
    assert "<script>" not in page and ' style="' not in page
