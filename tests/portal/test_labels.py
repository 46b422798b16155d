"""Labels, not keys (SPEC §4 subject, tenant admin): every field and relation name reads as
words in English and Chinese on the subject's page, the reviewer queue and the stats; a
tenant's own label, set with its schema and audited, wins over the default."""
import re
from datetime import datetime, timezone as dt_timezone

import pytest
from django.core.cache import cache
from django.utils import timezone, translation

from reviews.actors import Actor
from reviews.errors import InvalidInput
from reviews.labels import TenantLabels, moment
from reviews.models import AuditEvent, FieldDefinition, Tenant
from reviews.services import governance
from tests.conftest import candidate

ZH = {"HTTP_ACCEPT_LANGUAGE": "zh-CN,zh;q=0.9"}


def text(response) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", response.content.decode()))


def schema_events(tenant):
    return list(AuditEvent.objects.filter(tenant_id=tenant.pk, action="tenant.schema_changed")
                .select_related("payload").order_by("seq"))


@pytest.fixture
def admin_actor(tenant_admin):
    return Actor.reviewer(tenant_admin)


@pytest.fixture
def works_on(tenant, alice, publish):
    return publish(tenant, "alice", field="relation:works_on", value="project:flask-migration", kind="relation")


class TestDefaults:
    def test_the_subjects_page_in_chinese_shows_labels_not_keys(self, alice, works_on, alice_client):
        page = text(alice_client.get("/me/", **ZH))
        assert "名字" in page and "数据库" in page and "参与" in page
        assert "relation:works_on" not in page and "works on" not in page and "Database" not in page

    def test_the_queue_and_the_stats_in_chinese_show_labels_not_keys(self, client, reviewer, alice):
        cache.clear()
        client.force_login(reviewer)
        queue = client.get("/review/?status=pending_review", **ZH).content.decode()
        assert 'title="database">数据库<' in queue
        stats = client.get("/review/stats/", **ZH).content.decode()
        assert 'title="database">数据库<' in stats

    def test_an_unknown_relation_name_is_humanised(self):
        assert TenantLabels().field("user", "relation:mentored_by") == "mentored by"
        assert TenantLabels().field("project", "go_live_date") == "Go live date"


class TestTenantLabels:
    def test_a_field_label_is_set_with_the_schema_and_audited(self, tenant, admin_actor):
        governance.field_update(tenant=tenant, entity_type="user", field="name",
                                changes={"labels": {"en": " What we call you ", "zh-hans": "称呼"}}, actor=admin_actor)
        assert FieldDefinition.objects.get(tenant=tenant, entity_type="user", field="name").labels == {
            "en": "What we call you", "zh-hans": "称呼"}
        [event] = schema_events(tenant)
        assert event.payload.before["labels"] == {} and event.payload.after["labels"]["zh-hans"] == "称呼"
        # Saying the same again writes nothing.
        governance.field_update(tenant=tenant, entity_type="user", field="name",
                                changes={"labels": {"en": "What we call you", "zh-hans": "称呼"}}, actor=admin_actor)
        assert len(schema_events(tenant)) == 1

    def test_the_tenants_label_wins_on_every_page_in_both_languages(
        self, tenant, other_tenant, alice, memory, admin_actor, alice_client, client, reviewer
    ):
        governance.field_update(tenant=tenant, entity_type="project", field="database",
                                changes={"labels": {"en": "Data store", "zh-hans": "数据存储"}}, actor=admin_actor)
        assert "Project: flask-migration · Data store" in text(alice_client.get("/me/"))
        assert "数据存储" in text(alice_client.get("/me/", **ZH))
        cache.clear()
        client.force_login(reviewer)
        assert 'title="database">Data store<' in client.get("/review/?status=pending_review").content.decode()
        assert 'title="database">数据存储<' in client.get("/review/stats/", **ZH).content.decode()
        # Another tenant keeps the defaults.
        memory(other_tenant, "olga")
        with translation.override("en"):
            assert TenantLabels.load(other_tenant).field("project", "database") == "Database"

    def test_a_language_left_empty_reads_as_the_default(self, tenant, admin_actor):
        governance.field_update(tenant=tenant, entity_type="user", field="location",
                                changes={"labels": {"en": "Home town", "zh-hans": ""}}, actor=admin_actor)
        with translation.override("zh-hans"):
            assert TenantLabels.load(tenant).field("user", "location") == "所在地"
        with translation.override("en"):
            assert TenantLabels.load(tenant).field("user", "location") == "Home town"

    @pytest.mark.parametrize("labels,why", [
        ({"fr": "Nom"}, "English and Simplified Chinese"),
        ({"en": "x" * 81}, "at most 80"),
        ({"en": "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789ABCD"}, "credential"),
        ("Name", "maps a language"),
    ])
    def test_a_bad_label_is_refused_and_nothing_changes(self, tenant, admin_actor, labels, why):
        with pytest.raises(InvalidInput, match=why):
            governance.field_update(tenant=tenant, entity_type="user", field="name", changes={"labels": labels},
                                    actor=admin_actor)
        assert FieldDefinition.objects.get(tenant=tenant, entity_type="user", field="name").labels == {}
        assert schema_events(tenant) == []

    def test_a_relation_name_gets_its_label(self, tenant, admin_actor, alice, works_on, alice_client):
        governance.relation_labels_set(tenant=tenant, name="works_on", labels={"en": "is part of", "zh-hans": "加入了"},
                                       actor=admin_actor)
        [event] = schema_events(tenant)
        assert (event.object_id, event.payload.before, event.payload.after) == (
            "relation:works_on", {"labels": {}}, {"labels": {"en": "is part of", "zh-hans": "加入了"}})
        assert "is part of" in text(alice_client.get("/me/"))
        assert "加入了" in text(alice_client.get("/me/", **ZH))

    def test_a_relation_the_schema_does_not_allow_is_refused(self, tenant, admin_actor):
        Tenant.objects.filter(pk=tenant.pk).update(allowed_relation_names=["works_at"])
        tenant.refresh_from_db()
        with pytest.raises(InvalidInput, match="does not allow"):
            governance.relation_labels_set(tenant=tenant, name="works_on", labels={"en": "x"}, actor=admin_actor)
        assert Tenant.objects.get(pk=tenant.pk).relation_labels == {}


class TestConsole:
    def test_a_field_label_is_previewed_then_saved_from_the_schema_tab(self, client, tenant, tenant_admin):
        client.force_login(tenant_admin)
        change = {"cardinality": "one", "sensitivity": "normal", "category": "identity", "auto_approve": "on",
                  "label_en": "Full name", "label_zh": "全名"}
        preview = client.post("/tenant/schema/user/name", change).content.decode()
        assert "what will change" in preview and "全名" in preview
        assert FieldDefinition.objects.get(tenant=tenant, entity_type="user", field="name").labels == {}
        client.post("/tenant/schema/user/name", {**change, "step": "save"})
        assert FieldDefinition.objects.get(tenant=tenant, entity_type="user", field="name").labels == {
            "en": "Full name", "zh-hans": "全名"}
        page = client.get("/tenant/schema/").content.decode()
        assert '<td data-label>Full name</td>' in page

    def test_a_relation_label_is_saved_from_the_schema_tab(self, client, tenant, tenant_admin):
        client.force_login(tenant_admin)
        page = client.get("/tenant/schema/").content.decode()
        assert 'data-relation="works_on"' in page
        client.post("/tenant/schema/relation-labels",
                    {"name": "works_on", "label_en": "is part of", "label_zh": "加入了", "step": "save"})
        assert Tenant.objects.get(pk=tenant.pk).relation_labels == {"works_on": {"en": "is part of", "zh-hans": "加入了"}}
        assert schema_events(tenant)[-1].object_id == "relation:works_on"

    def test_reviewers_cannot_label(self, client, tenant, reviewer):
        client.force_login(reviewer)
        response = client.post("/tenant/schema/relation-labels", {"name": "works_on", "label_en": "x", "step": "save"})
        assert response.status_code == 403
        assert Tenant.objects.get(pk=tenant.pk).relation_labels == {}

    def test_labels_are_escaped(self, client, tenant, tenant_admin, admin_actor):
        governance.field_update(tenant=tenant, entity_type="user", field="name",
                                changes={"labels": {"en": "<b>Name</b>"}}, actor=admin_actor)
        client.force_login(tenant_admin)
        page = client.get("/tenant/schema/").content.decode()
        assert "<b>Name</b>" not in page and "&lt;b&gt;Name&lt;/b&gt;" in page


def test_a_moment_reads_in_the_active_zone_and_language_to_the_minute():
    """The texts are reused per minute, zone and language (labels._moment_text): the same
    instant in another zone or language is another text, a later second the same one."""
    instant = datetime(2026, 12, 7, 23, 2, 5, tzinfo=dt_timezone.utc)
    with translation.override("en"):
        with timezone.override("UTC"):
            assert moment(instant) == "7 Dec 2026, 23:02 UTC"
            assert moment(instant.replace(second=59)) == "7 Dec 2026, 23:02 UTC"
        with timezone.override("Asia/Shanghai"):
            assert moment(instant) == "8 Dec 2026, 07:02 CST"
    with translation.override("zh-hans"), timezone.override("UTC"):
        assert moment(instant) == "2026年12月7日 23:02 UTC"
