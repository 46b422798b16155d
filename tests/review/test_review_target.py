"""Age badges against a tenant's review target (issue 38.6): the setting in the policy, the
rule, the queue's lines, the headline's oldest item and the "over target" filter."""
from datetime import timedelta

import pytest
from django.utils import timezone, translation

from reviews.actors import Actor
from reviews.domain import review_age
from reviews.errors import InvalidInput
from reviews.models import AuditEvent, AuditPayload, Candidate, ReviewAge, Scope
from reviews.services.governance import tenant_policy_update
from tests.conftest import candidate
from tests.review.conftest import propose
from tests.tenant_admin.test_console_pages import policy_data


def waited(item, hours: float) -> Candidate:
    """The item as if it had arrived ``hours`` ago."""
    Candidate.objects.filter(pk=item.pk).update(created_at=timezone.now() - timedelta(hours=hours))
    return item


@pytest.fixture
def items(tenant):
    """Three waiting items against the default target of 24 hours: 2, 20 and 30 hours old."""
    fresh, late, overdue = propose(
        tenant, "alice",
        candidate(field="location", value="Berlin"),
        candidate(field="role", value="Engineer"),
        candidate(entity_id="bob", field="name", value="Bob"),
    )
    return waited(fresh, 2), waited(late, 20), waited(overdue, 30)


def age_of(html: str, item) -> str:
    """The data-age of an item's line."""
    article = html.split(f'id="item-{item.pk}"', 1)[1].split("</article>", 1)[0]
    return article.split('data-age="', 1)[1].split('"', 1)[0]


class TestTheRule:
    @pytest.mark.parametrize(
        ("hours", "expected"),
        [(0, ReviewAge.WITHIN), (17.99, ReviewAge.WITHIN), (18, ReviewAge.NEAR), (24, ReviewAge.NEAR),
         (24.001, ReviewAge.OVER), (500, ReviewAge.OVER)],
    )
    def test_within_near_and_over_a_24_hour_target(self, hours, expected):
        assert review_age(timedelta(hours=hours), 24) == expected


class TestTheSetting:
    def test_it_defaults_to_a_day(self, tenant):
        assert tenant.review_target_hours == 24

    def test_a_tenant_admin_changes_it_in_the_console_and_it_is_audited(self, client, tenant, tenant_admin):
        client.force_login(tenant_admin)
        data = policy_data(tenant, review_target_hours=8)
        preview = client.post("/tenant/policy/change", data).content.decode()
        assert "review_target_hours" in preview
        tenant.refresh_from_db()
        assert tenant.review_target_hours == 24  # the preview changes nothing
        client.post("/tenant/policy/change", {**data, "step": "save"})
        tenant.refresh_from_db()
        assert tenant.review_target_hours == 8
        event = AuditEvent.objects.filter(action="tenant.policy_changed").latest("seq")
        assert event.actor == f"reviewer:{tenant_admin.pk}"
        recorded = AuditPayload.objects.get(event=event)
        assert recorded.before == {"review_target_hours": 24} and recorded.after == {"review_target_hours": 8}

    @pytest.mark.parametrize("hours", ["0", "721", "-3", "1.5", "soon"])
    def test_the_console_refuses_a_bad_target_with_a_form_error(self, client, tenant, tenant_admin, hours):
        client.force_login(tenant_admin)
        response = client.post("/tenant/policy/change", {**policy_data(tenant, review_target_hours=hours), "step": "save"})
        assert response.status_code == 400
        assert 'id="id_review_target_hours"' in response.content.decode() and 'aria-invalid="true"' in response.content.decode()
        tenant.refresh_from_db()
        assert tenant.review_target_hours == 24
        assert not AuditEvent.objects.filter(action="tenant.policy_changed").exists()

    @pytest.mark.parametrize("hours", [0, 721, -1, 1.5, "24", True, None])
    def test_the_service_refuses_a_bad_target(self, tenant, tenant_admin, hours):
        with pytest.raises(InvalidInput) as refused:
            tenant_policy_update(tenant=tenant, changes={"review_target_hours": hours}, actor=Actor.reviewer(tenant_admin))
        assert refused.value.details == {"review_target_hours": hours}
        tenant.refresh_from_db()
        assert tenant.review_target_hours == 24

    def test_a_reviewer_cannot_change_it(self, client, tenant, reviewer):
        client.force_login(reviewer)
        response = client.post("/tenant/policy/change", {**policy_data(tenant, review_target_hours=1), "step": "save"})
        assert response.status_code == 403
        tenant.refresh_from_db()
        assert tenant.review_target_hours == 24

    def test_an_auditor_cannot_change_it(self, client, tenant, auditor):
        client.force_login(auditor)
        response = client.post("/tenant/policy/change", {**policy_data(tenant, review_target_hours=1), "step": "save"})
        assert response.status_code == 403


class TestTheBadges:
    def test_each_line_says_where_its_item_stands(self, reviewer_client, items):
        fresh, late, overdue = items
        html = reviewer_client.get("/review/").content.decode()
        assert [age_of(html, item) for item in items] == ["within", "near", "over"]
        assert "over the 24 h target" in html and "near the 24 h target" in html and "within the 24 h target" in html

    def test_they_follow_the_tenants_own_target(self, tenant, tenant_admin, other_tenant, reviewer_client, items):
        # Another tenant's strict target changes nothing here; this tenant's own does.
        tenant_policy_update(tenant=other_tenant, changes={"review_target_hours": 1}, actor=Actor("system"))
        assert age_of(reviewer_client.get("/review/").content.decode(), items[0]) == "within"
        tenant_policy_update(tenant=tenant, changes={"review_target_hours": 40}, actor=Actor.reviewer(tenant_admin))
        html = reviewer_client.get("/review/").content.decode()
        assert [age_of(html, item) for item in items] == ["within", "within", "near"]
        assert "near the 40 h target" in html and "h target" not in html.replace("near the 40 h target", "").replace("within the 40 h target", "")

    def test_the_items_page_has_the_badge_too(self, reviewer_client, items):
        html = reviewer_client.get(f"/review/candidates/{items[2].pk}/").content.decode()
        assert age_of(html, items[2]) == "over"

    def test_a_decided_item_has_none(self, reviewer_client, reviewer, tenant, items):
        from reviews.services.candidates import candidate_approve

        candidate_approve(tenant=tenant, candidate_id=items[2].pk, version=1, actor=Actor.reviewer(reviewer))
        html = reviewer_client.get(f"/review/candidates/{items[2].pk}/").content.decode()
        assert "data-age=" not in html

    def test_in_chinese(self, reviewer_client, items):
        with translation.override("zh-hans"):
            html = reviewer_client.get("/review/", HTTP_ACCEPT_LANGUAGE="zh-hans").content.decode()
        assert "超过 24 小时目标" in html and "接近 24 小时目标" in html and "在 24 小时目标内" in html

    def test_the_headlines_oldest_item_shows_it(self, reviewer_client, items):
        html = reviewer_client.get("/review/counts", HTTP_HX_REQUEST="true").content.decode()
        oldest = html.split("data-oldest-age", 1)[0].rsplit("<span", 1)[1]
        assert 'data-age="over"' in oldest


class TestTheFilter:
    def test_over_target_shows_only_the_late_ones(self, reviewer_client, items):
        html = reviewer_client.get("/review/?age=over_target").content.decode()
        assert f'id="item-{items[2].pk}"' in html
        assert f'id="item-{items[0].pk}"' not in html and f'id="item-{items[1].pk}"' not in html
        counts = reviewer_client.get("/review/counts?age=over_target", HTTP_HX_REQUEST="true").content.decode()
        assert 'data-count="in_filter">1<' in counts

    def test_the_api_takes_it(self, tenant, make_client, items):
        client = make_client(tenant, [Scope.REVIEW])
        response = client.get("/api/v1/review/candidates?age=over_target")
        assert response.status_code == 200
        assert [row["id"] for row in response.json()["results"]] == [items[2].pk]

    def test_an_unknown_age_is_a_400(self, tenant, make_client, items):
        response = make_client(tenant, [Scope.REVIEW]).get("/api/v1/review/candidates?age=overdue")
        assert response.status_code == 400 and "age" in response.json()["error"]["details"]
