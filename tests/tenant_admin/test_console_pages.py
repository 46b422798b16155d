"""The tenant admin console (SPEC §4): each change shows what will change, then saves
through the service and shows the audit event; only tenant admins of the tenant get in."""
from datetime import datetime, timezone as dt_timezone

import pytest
import time_machine
from django.utils import translation
from django.utils.html import escape

from reviews.labels import moment
from reviews.models import ApiKey, AuditEvent, FieldDefinition, Membership, Role, Scope, Tenant
from reviews.services.tenants import api_key_authenticate, api_key_create, staff_create
from tests.conftest import PASSWORD, sign_in

SECTIONS = ["/tenant/schema/", "/tenant/policy/", "/tenant/extractor/", "/tenant/keys/", "/tenant/staff/"]


def events(tenant, action):
    return list(AuditEvent.objects.filter(tenant_id=tenant.pk, action=action).select_related("payload"))


@pytest.fixture
def admin(client, tenant_admin):
    client.force_login(tenant_admin)
    return client


def policy_data(tenant, **changes):
    data = {
        "reject_below": tenant.reject_below, "confirm_below": tenant.confirm_below, "auto_approve_at": tenant.auto_approve_at,
        "allowed_relation_names": "", "sensitive_retention_days": tenant.sensitive_retention_days,
        "message_retention_days": tenant.message_retention_days, "thread_idle_days": tenant.thread_idle_days,
        "review_target_hours": tenant.review_target_hours,
        **{f"priority_{source}": rank for source, rank in tenant.source_priority.items()},
    }
    data.update(changes)
    return data


@pytest.mark.parametrize("url", SECTIONS)
def test_every_section_opens_for_a_tenant_admin(admin, url):
    response = admin.get(url)
    assert response.status_code == 200
    page = response.content.decode()
    assert "Recent governance changes" in page and 'aria-current="page"' in page


@pytest.mark.parametrize("url", SECTIONS + ["/tenant/policy/change", "/tenant/keys/create"])
@pytest.mark.parametrize("persona", ["reviewer", "auditor"])
def test_other_roles_are_refused(client, request, url, persona):
    client.force_login(request.getfixturevalue(persona))
    response = client.post(url, {}) if not url.endswith("/") else client.get(url)
    assert response.status_code == 403


def test_strangers_are_sent_to_sign_in(client, db):
    response = client.get("/tenant/keys/")
    assert response.status_code == 302 and "/login/" in response["Location"]


def test_the_nav_links_the_console_for_tenant_admins_only(client, tenant_admin, reviewer):
    client.force_login(tenant_admin)
    assert 'href="/tenant/"' in client.get("/review/").content.decode()
    client.force_login(reviewer)
    assert 'href="/tenant/"' not in client.get("/review/").content.decode()


def test_a_threshold_change_is_shown_then_saved_then_recorded(admin, tenant):
    response = admin.post("/tenant/policy/change", policy_data(tenant, confirm_below="0.7"))
    page = response.content.decode()
    assert response.status_code == 200 and "what will change" in page
    assert "confirm_below" in page and "0.8" in page and "0.7" in page
    assert Tenant.objects.get(pk=tenant.pk).confirm_below == 0.8 and not events(tenant, "tenant.policy_changed")

    response = admin.post("/tenant/policy/change", {**policy_data(tenant, confirm_below="0.7"), "step": "save"})
    page = response.content.decode()
    assert Tenant.objects.get(pk=tenant.pk).confirm_below == 0.7
    (event,) = events(tenant, "tenant.policy_changed")
    assert (event.payload.before, event.payload.after) == ({"confirm_below": 0.8}, {"confirm_below": 0.7})
    assert "Saved and recorded in the audit trail" in page and f"#{event.seq}" in page


def test_a_refused_threshold_says_why_and_changes_nothing(admin, tenant):
    response = admin.post("/tenant/policy/change", {**policy_data(tenant, reject_below="0.9"), "step": "save"})
    assert response.status_code == 400
    assert "must not exceed confirm_below" in response.content.decode()
    assert Tenant.objects.get(pk=tenant.pk).reject_below == 0.5 and not events(tenant, "tenant.policy_changed")


def test_a_change_that_changes_nothing_says_so(admin, tenant):
    response = admin.post("/tenant/policy/change", policy_data(tenant))
    assert "Nothing would change" in response.content.decode()


def test_with_htmx_only_the_section_comes_back(admin, tenant):
    response = admin.post("/tenant/policy/change", policy_data(tenant, confirm_below="0.7"), HTTP_HX_REQUEST="true")
    page = response.content.decode()
    assert page.lstrip().startswith('<div id="section">') and "<html" not in page


def test_a_created_key_is_shown_once_and_works(admin, tenant):
    data = {"name": "crm", "scopes": ["recall", "ingest"], "source": "business_system"}
    preview = admin.post("/tenant/keys/create", data).content.decode()
    assert "what will change" in preview and "ingest, recall" in preview and not ApiKey.objects.filter(tenant=tenant).exists()
    response = admin.post("/tenant/keys/create", {**data, "step": "save"})
    assert response["Cache-Control"] == "no-store"
    key = ApiKey.objects.get(tenant=tenant, name="crm")
    page = response.content.decode()
    raw = page.split("data-secret-key>")[1].split("<")[0]
    assert raw.startswith(f"mp_{key.prefix}_") and api_key_authenticate(raw).pk == key.pk
    assert events(tenant, "api_key.created")[-1].object_id == key.prefix
    assert raw not in admin.get("/tenant/keys/").content.decode()


def test_a_key_is_revoked_after_confirmation(admin, tenant):
    key, raw = api_key_create(tenant=tenant, scopes=[Scope.RECALL], name="old bot")
    preview = admin.post(f"/tenant/keys/{key.prefix}/revoke").content.decode()
    assert "what will change" in preview and "revoked" in preview and ApiKey.objects.get(pk=key.pk).revoked_at is None
    page = admin.post(f"/tenant/keys/{key.prefix}/revoke", {"step": "save"}).content.decode()
    assert ApiKey.objects.get(pk=key.pk).revoked_at is not None and api_key_authenticate(raw) is None
    assert events(tenant, "api_key.revoked")[0].object_id == key.prefix
    assert 'data-action="api_key.revoked">API key revoked</span>' in page  # the recorded event, by its label


def test_another_tenants_key_cannot_be_revoked(admin, other_tenant):
    key, _ = api_key_create(tenant=other_tenant, scopes=[Scope.RECALL])
    response = admin.post(f"/tenant/keys/{key.prefix}/revoke", {"step": "save"})
    assert response.status_code == 400
    assert ApiKey.objects.get(pk=key.pk).revoked_at is None
    assert key.prefix not in admin.get("/tenant/keys/").content.decode()


@pytest.mark.parametrize("prefix", ["ab%00cd12", "%ED%A0%80", "x" * 10_000])
def test_a_prefix_no_key_can_have_is_not_found(admin, tenant, prefix):
    """A NUL in the path reached the key lookup, which PostgreSQL refused (a 500)."""
    key, _ = api_key_create(tenant=tenant, scopes=[Scope.RECALL])
    assert admin.post(f"/tenant/keys/{prefix}/revoke", {"step": "save"}).status_code == 404
    assert ApiKey.objects.get(pk=key.pk).revoked_at is None and not events(tenant, "api_key.revoked")


def test_key_names_are_escaped(admin, tenant):
    api_key_create(tenant=tenant, scopes=[Scope.RECALL], name="<script>alert(1)</script>")
    page = admin.get("/tenant/keys/").content.decode()
    assert "<script>alert(1)" not in page and "&lt;script&gt;alert(1)" in page


def test_staff_are_added_moved_and_removed(admin, tenant):
    data = {"username": "nina", "role": "reviewer", "password": PASSWORD}
    assert "what will change" in admin.post("/tenant/staff/add", data).content.decode()
    admin.post("/tenant/staff/add", {**data, "step": "save"})
    nina = Membership.objects.get(user__username="nina")
    assert nina.user.check_password(PASSWORD) and events(tenant, "staff.added")[-1].payload.after["username"] == "nina"
    admin.post(f"/tenant/staff/{nina.user_id}/role", {"role": "auditor", "step": "save"})
    assert Membership.objects.get(pk=nina.pk).role == Role.AUDITOR and events(tenant, "staff.role_changed")
    admin.post(f"/tenant/staff/{nina.user_id}/remove", {"step": "save"})
    assert not Membership.objects.filter(pk=nina.pk).exists() and events(tenant, "staff.removed")


def test_the_last_tenant_admin_cannot_remove_themselves(admin, tenant, tenant_admin):
    response = admin.post(f"/tenant/staff/{tenant_admin.pk}/remove", {"step": "save"})
    assert response.status_code == 400 and "last tenant admin" in response.content.decode()
    assert Membership.objects.filter(user=tenant_admin, role=Role.TENANT_ADMIN).exists()


def test_another_tenants_staff_are_not_found(admin, outsider):
    assert admin.post(f"/tenant/staff/{outsider.pk}/role", {"role": "auditor", "step": "save"}).status_code == 404
    assert admin.post(f"/tenant/staff/{outsider.pk}/remove", {"step": "save"}).status_code == 404
    assert Membership.objects.get(user=outsider).role == Role.REVIEWER
    assert "olga" not in admin.get("/tenant/staff/").content.decode()


def test_a_field_is_added_and_changed(admin, tenant):
    data = {"entity_type": "project", "field": "deadline", "cardinality": "one", "sensitivity": "normal",
            "category": "constraint", "retention_days": "30"}
    admin.post("/tenant/schema/add", {**data, "step": "save"})
    assert FieldDefinition.objects.filter(tenant=tenant, entity_type="project", field="deadline").exists()
    change = {"cardinality": "one", "sensitivity": "personal", "category": "constraint", "retention_days": "30"}
    preview = admin.post("/tenant/schema/project/deadline", change).content.decode()
    assert "what will change" in preview and "personal" in preview
    admin.post("/tenant/schema/project/deadline", {**change, "step": "save"})
    event = events(tenant, "tenant.schema_changed")[-1]
    assert (event.payload.before["sensitivity"], event.payload.after["sensitivity"]) == ("normal", "personal")


@pytest.mark.parametrize("step", ["check", "save"])
@pytest.mark.parametrize("language, says", [
    ("en", "“usr” is not an entity type. Choose one of: user, project, organization, preference."),
    ("zh-hans", "“usr”不是可用的实体类型。请从以下类型中选择：user, project, organization, preference。"),
])
def test_an_unknown_entity_type_is_refused_naming_the_types_there_are(admin, tenant, step, language, says):
    data = {"entity_type": "usr", "field": "nickname", "cardinality": "one", "sensitivity": "normal",
            "category": "identity", "step": step}
    fields_before = FieldDefinition.objects.filter(tenant=tenant).count()
    response = admin.post("/tenant/schema/add", data, HTTP_ACCEPT_LANGUAGE=language)
    page = response.content.decode().replace("&ldquo;", "“").replace("&rdquo;", "”")
    assert response.status_code == 400 and says in page and 'data-step="refused"' in page
    assert FieldDefinition.objects.filter(tenant=tenant).count() == fields_before
    assert not events(tenant, "tenant.schema_changed")


def test_the_new_field_form_offers_the_entity_types_of_the_vocabulary(admin):
    page = admin.get("/tenant/schema/").content.decode()
    select = page.split('name="entity_type"')[1].split("</select>")[0]
    assert [value for value in ("user", "project", "organization", "preference") if f'value="{value}"' in select] == [
        "user", "project", "organization", "preference"]


def test_an_outsider_adds_no_field_to_another_tenant(client, tenant, other_tenant):
    staff_create(tenant=other_tenant, username="otto", role=Role.TENANT_ADMIN, password=PASSWORD)
    sign_in(client, "otto")
    data = {"entity_type": "project", "field": "deadline", "cardinality": "one", "sensitivity": "normal",
            "category": "identity", "step": "save"}
    assert client.post("/tenant/schema/add", data).status_code == 200
    assert FieldDefinition.objects.filter(tenant=other_tenant, field="deadline").exists()
    assert not FieldDefinition.objects.filter(tenant=tenant, field="deadline").exists()
    assert not events(tenant, "tenant.schema_changed")


def test_a_sensitive_field_with_auto_approval_is_refused(admin, tenant):
    change = {"cardinality": "one", "sensitivity": "sensitive", "category": "identity", "auto_approve": "on"}
    response = admin.post("/tenant/schema/user/name", {**change, "step": "save"})
    assert response.status_code == 400 and "only on normal" in response.content.decode()
    assert FieldDefinition.objects.get(tenant=tenant, entity_type="user", field="name").sensitivity == "normal"


def test_the_extractor_is_chosen(admin, tenant):
    from reviews.extraction.rules import RULES_VERSION

    admin.post("/tenant/extractor/change", {"extractor": "rules", "prompt_version": RULES_VERSION, "step": "save"})
    assert Tenant.objects.get(pk=tenant.pk).extractor == "rules"
    after = events(tenant, "tenant.extractor_changed")[0].payload.after
    assert after == {"extractor": "rules", "prompt_version": RULES_VERSION}


@pytest.mark.parametrize("language, site_default, rules, chosen", [
    ("en", "The site's default (Rules (offline))", "Rules (offline)", "LLM (OpenAI-compatible)"),
    ("zh-hans", "站点默认（规则（离线））", "规则（离线）", "LLM（兼容 OpenAI）"),
])
def test_the_extractor_reads_by_its_name_not_its_code(admin, tenant, settings, language, site_default, rules, chosen):
    settings.MEMORY_EXTRACTOR = "rules"
    admin.cookies["django_language"] = language
    page = admin.get("/tenant/extractor/", HTTP_ACCEPT_LANGUAGE=language).content.decode()
    assert f'<option value="" selected>{escape(site_default)}</option>' in page
    assert f"<strong>{rules}</strong>" in page and "<strong>rules</strong>" not in page

    Tenant.objects.filter(pk=tenant.pk).update(extractor="llm")
    page = admin.get("/tenant/extractor/", HTTP_ACCEPT_LANGUAGE=language).content.decode()
    assert f"<strong>{chosen}</strong>" in page


def test_an_admin_sees_only_their_tenant(client, tenant, other_tenant):
    staff_create(tenant=other_tenant, username="otto", role=Role.TENANT_ADMIN, password=PASSWORD)
    api_key_create(tenant=tenant, scopes=[Scope.RECALL], name="tenant-one-bot")
    sign_in(client, "otto")
    assert "tenant-one-bot" not in client.get("/tenant/keys/").content.decode()
    client.post("/tenant/policy/change", {**policy_data(other_tenant, confirm_below="0.6"), "step": "save"})
    assert Tenant.objects.get(pk=tenant.pk).confirm_below == 0.8
    assert Tenant.objects.get(pk=other_tenant.pk).confirm_below == 0.6


def test_console_pages_have_no_inline_script_or_style(admin):
    for url in SECTIONS:
        page = admin.get(url).content.decode()
        assert "<script>" not in page and ' style="' not in page and " onclick=" not in page


def test_the_console_speaks_chinese(admin):
    page = admin.get("/tenant/keys/", HTTP_ACCEPT_LANGUAGE="zh-CN,zh;q=0.9").content.decode()
    assert "API 密钥" in page and "最近的治理变更" in page and "Recent governance changes" not in page


@pytest.mark.parametrize("path", ["user/a%00b", "user/na%01me", "a%00b/name"], ids=["nul field", "control", "nul type"])
def test_a_field_path_no_schema_field_can_have_is_not_found(admin, tenant, path):
    admin.raise_request_exception = False
    events_before = AuditEvent.objects.filter(tenant_id=tenant.pk).count()
    response = admin.post(f"/tenant/schema/{path}", {"cardinality": "one", "sensitivity": "normal",
                                                      "category": "identity", "step": "save"})
    assert response.status_code == 404, response.exc_info
    assert AuditEvent.objects.filter(tenant_id=tenant.pk).count() == events_before


@pytest.mark.parametrize("language,label,at", [
    ("en", "Policy changed", "7 Mar 2026, 23:02 UTC"),
    ("zh-hans", "策略已更改", "2026年3月7日 23:02 UTC"),
])
def test_recent_changes_name_the_action_as_the_audit_pages_do_and_keep_its_code(admin, tenant, language, label, at):
    # Back in time: the signed-in session has not expired there.
    with time_machine.travel(datetime(2026, 3, 7, 23, 2, 30, tzinfo=dt_timezone.utc), tick=False):
        saved = admin.post("/tenant/policy/change", {**policy_data(tenant, confirm_below="0.7"), "step": "save"})
    assert saved.status_code == 200
    admin.cookies["django_language"] = language

    page = admin.get("/tenant/policy/", HTTP_ACCEPT_LANGUAGE=language).content.decode()

    recent = page.split('data-table="recent"')[1].split("</ol>")[0]
    assert f'<span class="badge" title="tenant.policy_changed" data-action="tenant.policy_changed">{label}</span>' in recent
    assert f'<time datetime="2026-03-07T23:02:30+00:00">{at}</time>' in recent
    assert ">tenant.policy_changed<" not in recent  # the code is the label's title, not its text


@pytest.mark.parametrize("language,label", [("en", "Policy changed"), ("zh-hans", "策略已更改")])
def test_the_saved_step_names_the_recorded_event(admin, tenant, language, label):
    admin.cookies["django_language"] = language
    page = admin.post(
        "/tenant/policy/change", {**policy_data(tenant, confirm_below="0.7"), "step": "save"}, HTTP_ACCEPT_LANGUAGE=language,
    ).content.decode()
    (event,) = events(tenant, "tenant.policy_changed")
    recorded = page.split('data-step="recorded"')[1].split("</div>")[0]
    assert f'title="tenant.policy_changed" data-action="tenant.policy_changed">{label}</span>' in recorded
    with translation.override(language):
        assert f'<time datetime="{event.created_at.isoformat()}">{moment(event.created_at)}</time>' in recorded
