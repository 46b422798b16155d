"""Auditors browse recall records; each fact's page lists the recalls that returned it."""
import pytest
from django.utils import translation

from reviews.actors import Actor
from reviews.labels import moment
from reviews.models import RecallRecord
from reviews.selectors.recall_history import RECALL_RECORDS_PAGE_SIZE
from reviews.services.facts import fact_edit

pytestmark = pytest.mark.django_db


@pytest.fixture
def traced(recall, publish, tenant):
    """Alice's name recalled once at v1, then edited and recalled again at v2."""
    name = publish(tenant, "u1", field="name", value="<b>Alice</b>")
    first, _ = recall("u1", q="who is <script>")
    fact_edit(tenant=tenant, fact_id=name.pk, value="Alicia", actor=Actor("reviewer", "r1"))
    second, _ = recall("u1")
    other, _ = recall("u2")
    return {"fact": name, "first": first, "second": second, "other": other}


def page(client, user, url, **extra):
    client.force_login(user)
    return client.get(url, **extra)


def test_the_list_shows_every_recall_newest_first(client, auditor, traced):
    response = page(client, auditor, "/audit/recalls/")

    assert response.status_code == 200
    body = response.content.decode()
    rows = [f'/audit/recalls/{traced[key].pk}/' for key in ("other", "second", "first")]
    assert all(row in body for row in rows)
    assert body.index(rows[0]) < body.index(rows[1]) < body.index(rows[2])
    assert "api_key:agent" in body
    assert "<script>" not in body and "&lt;script&gt;" in body


def test_the_list_filters_by_user_and_answers_htmx_with_the_fragment(client, auditor, traced):
    response = page(client, auditor, "/audit/recalls/?user_id=u2", HTTP_HX_REQUEST="true")

    body = response.content.decode()
    assert "<html" not in body
    assert f"/audit/recalls/{traced['other'].pk}/" in body
    assert f"/audit/recalls/{traced['first'].pk}/" not in body


def test_an_empty_list_says_whether_nothing_was_recalled_or_nothing_matches(client, auditor, recall):
    nothing_yet = page(client, auditor, "/audit/recalls/").content.decode()
    assert "No recall yet" in nothing_yet and "No recall matches." not in nothing_yet

    recall("u1")
    no_match = page(client, auditor, "/audit/recalls/", data={"user_id": "u2"}).content.decode()
    assert "No recall matches." in no_match and "No recall yet" not in no_match


def test_the_list_pages_back_in_time(client, auditor, recall):
    for _ in range(RECALL_RECORDS_PAGE_SIZE + 2):
        recall("u1")
    oldest = RecallRecord.objects.order_by("id").first()

    first = page(client, auditor, "/audit/recalls/").content.decode()
    assert f"/audit/recalls/{oldest.pk}/" not in first and "before=" in first
    before = first.split("before=")[1].split('"')[0]
    second = page(client, auditor, f"/audit/recalls/?before={before}").content.decode()
    assert f"/audit/recalls/{oldest.pk}/" in second


def test_a_record_shows_the_versions_the_caller_received(client, auditor, traced):
    first = page(client, auditor, f"/audit/recalls/{traced['first'].pk}/").content.decode()
    second = page(client, auditor, f"/audit/recalls/{traced['second'].pk}/").content.decode()

    assert "&lt;b&gt;Alice&lt;/b&gt;" in first and "changed since" in first and "v1" in first
    assert "Alicia" in second and "still current" in second and "v2" in second
    assert f"/audit/facts/{traced['fact'].pk}/" in first


def test_a_facts_page_lists_the_recalls_that_returned_it(client, auditor, traced):
    body = page(client, auditor, f"/audit/facts/{traced['fact'].pk}/").content.decode()

    assert f"/audit/recalls/{traced['first'].pk}/" in body
    assert f"/audit/recalls/{traced['second'].pk}/" in body
    assert f"/audit/recalls/{traced['other'].pk}/" not in body
    assert "Alicia" in body and "&lt;b&gt;Alice&lt;/b&gt;" in body  # both versions


def test_a_tenant_admin_may_audit(client, tenant_admin, traced):
    assert page(client, tenant_admin, "/audit/recalls/").status_code == 200


def test_a_reviewer_is_refused(client, reviewer, traced):
    for url in ("/audit/recalls/", f"/audit/recalls/{traced['first'].pk}/", f"/audit/facts/{traced['fact'].pk}/"):
        assert page(client, reviewer, url).status_code == 403


def test_another_tenants_auditor_finds_nothing(client, other_tenant, traced):
    from reviews.models import Role
    from reviews.services.tenants import staff_create

    their_auditor = staff_create(tenant=other_tenant, username="oscar", role=Role.AUDITOR, password="x" * 20)
    assert page(client, their_auditor, f"/audit/recalls/{traced['first'].pk}/").status_code == 404
    assert page(client, their_auditor, f"/audit/facts/{traced['fact'].pk}/").status_code == 404
    listing = page(client, their_auditor, "/audit/recalls/").content.decode()
    assert f"/audit/recalls/{traced['first'].pk}/" not in listing


def test_signed_out_visitors_go_to_sign_in(client, traced):
    response = client.get("/audit/recalls/")
    assert response.status_code == 302 and "/login/" in response["Location"]


def test_writes_are_not_allowed(client, auditor, traced):
    client.force_login(auditor)
    assert client.post("/audit/recalls/").status_code == 405


@pytest.mark.parametrize(
    "query",
    [{"user_id": "a\x00b"}, {"caller": "api_key:a\x00b"}, {"user_id": "my key is AKIAIOSFODNN7EXAMPLE"},
     {"user_id": "\u202egnp"}, {"before": "9" * 40}, {"before": "-1"}],
    ids=["nul in user_id", "nul in caller", "credential as user_id", "invisible characters", "huge before",
         "negative before"],
)
def test_a_filter_that_is_not_valid_is_named_beside_its_field_and_matches_nothing(client, auditor, traced, query):
    client.raise_request_exception = False
    response = page(client, auditor, "/audit/recalls/", data=query)

    assert response.status_code == 400, response.exc_info
    body = response.content.decode()
    assert "data-filter-error" in body and "No recall matches." in body
    assert f"/audit/recalls/{traced['first'].pk}/" not in body


def test_a_valid_before_still_pages(client, auditor, traced):
    body = page(client, auditor, "/audit/recalls/", data={"before": traced["second"].pk}).content.decode()
    assert f"/audit/recalls/{traced['first'].pk}/" in body and f"/audit/recalls/{traced['other'].pk}/" not in body


@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_times_are_shown_as_every_staff_page_shows_them(client, auditor, traced, language):
    record = RecallRecord.objects.get(pk=traced["first"].pk)
    version = traced["fact"].versions.order_by("version").first()
    client.cookies["django_language"] = language
    with translation.override(language):
        shown = {at: f'<time datetime="{at.isoformat()}">{moment(at)}</time>' for at in (record.created_at, version.created_at)}
    for url in ("/audit/recalls/", f"/audit/recalls/{record.pk}/", f"/audit/facts/{traced['fact'].pk}/"):
        body = page(client, auditor, url, HTTP_ACCEPT_LANGUAGE=language).content.decode()
        assert shown[record.created_at] in body, url
    assert shown[version.created_at] in body  # the fact's page also dates each version


@pytest.mark.parametrize("language,unknown_staff", [("en", "Staff member r1"), ("zh-hans", "工作人员 r1")])
def test_a_facts_versions_name_who_made_them_as_the_audit_log_does(client, auditor, tenant, traced, language,
                                                                  unknown_staff):
    fact = traced["fact"]
    fact_edit(tenant=tenant, fact_id=fact.pk, value="Ali", actor=Actor.reviewer(auditor))
    client.cookies["django_language"] = language

    body = page(client, auditor, f"/audit/facts/{fact.pk}/", HTTP_ACCEPT_LANGUAGE=language).content.decode()

    versions = body.split("</thead>")[1].split("</tbody>")[0]
    assert f'<td title="reviewer:{auditor.pk}">{auditor.username}</td>' in versions  # staff by username
    assert f'<td title="reviewer:r1">{unknown_staff}</td>' in versions  # an id no user has, by its kind
    assert ">reviewer:" not in versions  # the stored actor is the title, never the text


@pytest.mark.parametrize("language,label", [("en", "Name"), ("zh-hans", "名字")])
def test_a_facts_page_names_its_field_by_the_label_the_other_pages_show(client, auditor, traced, language, label):
    body = page(client, auditor, f"/audit/facts/{traced['fact'].pk}/", HTTP_ACCEPT_LANGUAGE=language).content.decode()
    heading = body[body.index("<h1>"):body.index("</h1>")]
    assert f'<span class="field" title="name">{label}</span>' in heading
