"""Who reaches the dashboard: staff of the tenant only; auditors look but do not decide;
another tenant's items do not exist; a subject's portal session is not a staff login; CSRF."""
import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse

from reviews.models import Candidate, Entity
from reviews.permissions import PORTAL_SESSION_KEY, portal_binding
from tests.conftest import PASSWORD, sign_in
from tests.conftest import candidate
from tests.review.conftest import propose

PAGES = ["queue", "queue-counts", "stats", "candidate", "candidate-body", "entity"]
ACTIONS = ["candidate-approve", "candidate-reject", "candidate-defer", "candidate-settle", "bulk-decide", "entity-merge"]


def page_url(name, queue):
    if name in ("candidate", "candidate-body"):
        return reverse(f"reviews:{name}", args=[queue.evidence.pk])
    if name == "entity":
        return reverse("reviews:entity", args=[queue.conflict.entity_id])
    return reverse(f"reviews:{name}")


def action_request(name, queue):
    """(url, form) of a valid decision on tenant-1's items."""
    item = queue.evidence
    if name == "bulk-decide":
        return reverse("reviews:bulk-decide"), {"selected": [f"{item.pk}:1"], "decision": "approve"}
    if name == "entity-merge":
        other = Entity.objects.filter(subject=queue.new_entity.subject, entity_type="organization").first()
        return reverse("reviews:entity-merge", args=[queue.new_entity.entity_id]), {"target": other.pk if other else 0}
    return reverse(f"reviews:{name}", args=[item.pk]), {"version": 1, "note": "n", "resolution": "take_new"}


def unchanged(queue):
    return Candidate.objects.get(pk=queue.evidence.pk).status == "pending_review"


class TestAnonymousAndPortalSessions:
    @pytest.mark.parametrize("name", PAGES)
    def test_pages_send_anonymous_visitors_to_sign_in(self, review_queue, client, name):
        response = client.get(page_url(name, review_queue))
        assert response.status_code == 302 and response["Location"].startswith(reverse("reviews:login"))

    @pytest.mark.parametrize("name", ACTIONS)
    def test_actions_refuse_anonymous_visitors(self, review_queue, client, name):
        path, form = action_request(name, review_queue)
        response = client.post(path, form)
        assert response.status_code == 302 and response["Location"].startswith(reverse("reviews:login"))
        assert unchanged(review_queue)

    @pytest.mark.parametrize("name", PAGES)
    def test_a_subject_portal_session_is_not_a_staff_login(self, tenant, review_queue, name):
        subject = review_queue.evidence.subject
        portal = Client()
        session = portal.session
        session[PORTAL_SESSION_KEY] = portal_binding(tenant_id=tenant.pk, subject_id=subject.pk, user_id="alice")
        session.save()
        response = portal.get(page_url(name, review_queue))
        assert response.status_code == 302 and response["Location"].startswith(reverse("reviews:login"))
        path, form = action_request("candidate-approve", review_queue)
        assert portal.post(path, form).status_code == 302 and unchanged(review_queue)

    def test_a_django_user_without_a_tenant_finds_nothing(self, review_queue):
        get_user_model().objects.create_user(username="stray", password=PASSWORD)
        stray = Client()
        sign_in(stray, "stray")
        assert stray.get(reverse("reviews:queue")).status_code == 404


class TestOtherTenant:
    @pytest.mark.parametrize("name", ["candidate", "candidate-body", "entity"])
    def test_another_tenants_item_pages_are_404(self, review_queue, outsider_web_client, name):
        assert outsider_web_client.get(page_url(name, review_queue)).status_code == 404

    @pytest.mark.parametrize("name", ["candidate-approve", "candidate-reject", "candidate-defer", "candidate-settle",
                                      "entity-merge"])
    def test_another_tenants_items_cannot_be_decided(self, review_queue, outsider_web_client, name):
        path, form = action_request(name, review_queue)
        assert outsider_web_client.post(path, form).status_code == 404
        assert unchanged(review_queue)

    def test_bulk_on_another_tenants_items_decides_nothing(self, review_queue, outsider_web_client):
        path, form = action_request("bulk-decide", review_queue)
        outsider_web_client.post(path, form)
        assert unchanged(review_queue)

    def test_queue_and_stats_show_nothing_of_another_tenant(self, review_queue, outsider_web_client):
        queue = outsider_web_client.get(reverse("reviews:queue"), {"status": "all"}).content.decode()
        assert 'id="item-' not in queue and "Berlin" not in queue
        stats = outsider_web_client.get(reverse("reviews:stats")).content.decode()
        assert 'data-kpi="waiting">0<' in stats and "rules" not in stats
        counts = outsider_web_client.get(reverse("reviews:queue-counts"), {"status": "all"}).content.decode()
        assert 'data-count="waiting">0<' in counts and 'data-count="in_filter">0<' in counts

    def test_merging_into_another_tenants_entity_is_404(self, other_tenant, review_queue, reviewer_client):
        [theirs] = propose(other_tenant, "zed", candidate(entity_type="organization", entity_id="x", field="industry",
                                                          value="y"))
        response = reviewer_client.post(
            reverse("reviews:entity-merge", args=[review_queue.new_entity.entity_id]), {"target": theirs.entity_id}
        )
        assert response.status_code == 404
        assert Entity.objects.filter(pk=review_queue.new_entity.entity_id).exists()


class TestAuditor:
    @pytest.mark.parametrize("name", PAGES)
    def test_auditor_may_look(self, review_queue, auditor_client, name):
        headers = {"HTTP_HX_REQUEST": "true"} if name == "candidate-body" else {}  # htmx asks for a body
        assert auditor_client.get(page_url(name, review_queue), **headers).status_code == 200

    @pytest.mark.parametrize("name", ACTIONS)
    def test_auditor_cannot_decide(self, review_queue, auditor_client, name):
        path, form = action_request(name, review_queue)
        assert auditor_client.post(path, form).status_code == 403
        assert unchanged(review_queue)


class TestCsrf:
    @pytest.mark.parametrize("name", ACTIONS)
    def test_every_post_needs_the_token(self, review_queue, reviewer, name):
        strict = Client(enforce_csrf_checks=True)
        sign_in(strict, reviewer.username)
        path, form = action_request(name, review_queue)
        assert strict.post(path, form).status_code == 403
        assert unchanged(review_queue)

    def test_with_the_token_it_works(self, review_queue, reviewer):
        strict = Client(enforce_csrf_checks=True)
        sign_in(strict, reviewer.username)
        strict.get(reverse("reviews:queue"))
        token = strict.cookies["csrftoken"].value
        path, form = action_request("candidate-approve", review_queue)
        assert strict.post(path, {**form, "csrfmiddlewaretoken": token}).status_code == 302
        assert not unchanged(review_queue)

    def test_get_cannot_decide(self, review_queue, reviewer_client):
        path, _ = action_request("candidate-approve", review_queue)
        assert reviewer_client.get(path).status_code == 405


class TestMembershipLookup:
    """permissions.membership_of: the membership and its tenant in one query, kept on the user."""

    def test_membership_and_tenant_are_one_query_then_none(self, reviewer, tenant, django_assert_num_queries):
        from reviews.permissions import membership_of, role_of, staff_tenant

        user = get_user_model().objects.get(pk=reviewer.pk)
        with django_assert_num_queries(1):
            assert staff_tenant(user) == tenant
            assert role_of(user) == "reviewer"
            assert membership_of(user).tenant.slug == tenant.slug

    def test_a_user_without_a_membership_has_none_and_gets_a_404(self, db, django_assert_num_queries):
        from django.http import Http404

        from reviews.permissions import membership_of, staff_tenant

        user = get_user_model().objects.create_user("no-tenant", password=PASSWORD)
        with django_assert_num_queries(1):
            assert membership_of(user) is None
            with pytest.raises(Http404):
                staff_tenant(user)
