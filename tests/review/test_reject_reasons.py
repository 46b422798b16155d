"""Reject reasons from a tenant-managed list, plus free text (issue 38.6): the policy that
holds them, the service, the API and the reject form."""
import pytest

from reviews.actors import Actor
from reviews.errors import InvalidInput
from reviews.models import AuditEvent, AuditPayload, Candidate, Scope, SuppressedValue
from reviews.services.candidates import candidate_reject
from reviews.services.governance import tenant_policy_update
from tests.conftest import candidate
from tests.review.conftest import propose
from tests.review.test_decisions_pages import messages_of, url
from tests.tenant_admin.test_console_pages import policy_data

REASONS = ["Not stated by the user", "Outdated"]


@pytest.fixture
def reasons(tenant, tenant_admin):
    return tenant_policy_update(tenant=tenant, changes={"reject_reasons": REASONS}, actor=Actor.reviewer(tenant_admin))


@pytest.fixture
def item(tenant):
    [item] = propose(tenant, "alice", candidate(field="location", value="Berlin"))
    return item


def rejected_event(item):
    return AuditEvent.objects.get(action="candidate.rejected", object_id=str(item.pk))


class TestTheList:
    def test_a_tenant_admin_edits_it_in_the_policy_and_it_is_audited(self, client, tenant, tenant_admin):
        client.force_login(tenant_admin)
        data = policy_data(tenant, reject_reasons="Outdated\n  Not stated by the user \n\n")
        preview = client.post("/tenant/policy/change", data).content.decode()
        assert "what will change" in preview and "reject_reasons" in preview
        client.post("/tenant/policy/change", {**data, "step": "save"})
        tenant.refresh_from_db()
        assert tenant.reject_reasons == ["Outdated", "Not stated by the user"]
        event = AuditEvent.objects.filter(action="tenant.policy_changed").latest("seq")
        recorded = AuditPayload.objects.get(event=event)
        assert recorded.before == {"reject_reasons": []} and recorded.after == {"reject_reasons": tenant.reject_reasons}

    @pytest.mark.parametrize("reasons", [["a", "a"], ["x" * 121], [""], "Outdated", [1], ["a"] * 31])
    def test_a_bad_list_is_refused(self, tenant, tenant_admin, reasons):
        with pytest.raises(InvalidInput):
            tenant_policy_update(tenant=tenant, changes={"reject_reasons": reasons}, actor=Actor.reviewer(tenant_admin))
        tenant.refresh_from_db()
        assert tenant.reject_reasons == []

    def test_a_reviewer_cannot_edit_it(self, client, tenant, reviewer):
        client.force_login(reviewer)
        response = client.post("/tenant/policy/change", {**policy_data(tenant, reject_reasons="Mine"), "step": "save"})
        assert response.status_code == 403
        tenant.refresh_from_db()
        assert tenant.reject_reasons == []


class TestRejecting:
    def test_a_listed_reason_with_free_text(self, tenant, reasons, reviewer, item):
        decided = candidate_reject(
            tenant=tenant, candidate_id=item.pk, version=1, actor=Actor.reviewer(reviewer),
            reason_label="Outdated", note="moved in 2024",
        )
        assert (decided.status, decided.note) == ("rejected", "Outdated: moved in 2024")
        recorded = AuditPayload.objects.get(event=rejected_event(item))
        assert recorded.after["reject_reason"] == "Outdated"
        assert SuppressedValue.objects.filter(subject=item.subject).exists()

    def test_a_listed_reason_alone_is_reason_enough(self, tenant, reasons, reviewer, item):
        decided = candidate_reject(
            tenant=tenant, candidate_id=item.pk, version=1, actor=Actor.reviewer(reviewer), reason_label="Outdated"
        )
        assert decided.note == "Outdated"

    def test_a_reason_not_on_the_list_is_refused(self, tenant, reasons, other_tenant, reviewer, item):
        tenant_policy_update(tenant=other_tenant, changes={"reject_reasons": ["Theirs"]}, actor=Actor("system"))
        with pytest.raises(InvalidInput) as refused:
            candidate_reject(
                tenant=tenant, candidate_id=item.pk, version=1, actor=Actor.reviewer(reviewer), reason_label="Theirs"
            )
        assert refused.value.details == {"reason_label": "unknown"}
        assert Candidate.objects.get(pk=item.pk).status == "pending_review"
        assert not AuditEvent.objects.filter(action="candidate.rejected").exists()

    def test_the_api_takes_a_label(self, tenant, reasons, make_client, item):
        client = make_client(tenant, [Scope.REVIEW])
        path = f"/api/v1/review/candidates/{item.pk}/reject"
        assert client.post_json(path, {"version": 1}).status_code == 400  # neither a label nor a reason
        refused = client.post_json(path, {"version": 1, "reason_label": "Nope"})
        assert refused.status_code == 400 and refused.json()["error"]["details"] == {"reason_label": "unknown"}
        response = client.post_json(path, {"version": 1, "reason_label": "Outdated", "reason": "old"})
        assert response.status_code == 200 and response.json()["status"] == "rejected"
        assert AuditPayload.objects.get(event=rejected_event(item)).after["reject_reason"] == "Outdated"

    def test_another_tenants_key_cannot_reject(self, tenant, reasons, outsider_client, item):
        response = outsider_client.post_json(
            f"/api/v1/review/candidates/{item.pk}/reject", {"version": 1, "reason_label": "Outdated"}
        )
        assert response.status_code == 404
        assert Candidate.objects.get(pk=item.pk).status == "pending_review"


class TestTheRejectForm:
    def test_it_offers_the_tenants_reasons(self, reasons, reviewer_client, item):
        html = reviewer_client.get(f"/review/candidates/{item.pk}/").content.decode()
        assert 'name="reason_label"' in html
        assert all(f'<option value="{label}">{label}</option>' in html for label in REASONS)

    def test_without_a_list_it_asks_for_free_text_only(self, reviewer_client, item):
        html = reviewer_client.get(f"/review/candidates/{item.pk}/").content.decode()
        assert 'name="reason_label"' not in html and 'name="note" required' in html

    def test_the_page_rejects_with_a_picked_reason(self, reasons, reviewer_client, item):
        response = reviewer_client.post(url("reject", item), {"version": 1, "reason_label": "Not stated by the user"})
        assert messages_of(response) == ["Rejected: location = “Berlin”."]
        assert Candidate.objects.get(pk=item.pk).note == "Not stated by the user"

    def test_the_page_refuses_a_reason_not_on_the_list(self, reasons, reviewer_client, item):
        response = reviewer_client.post(url("reject", item), {"version": 1, "reason_label": "Made up"}, HTTP_HX_REQUEST="true")
        assert response.status_code == 400 and "Pick one of the tenant" in response.content.decode()
        assert Candidate.objects.get(pk=item.pk).status == "pending_review"
