"""The entity page: what an entity holds, and merging two entities of the same subject."""
from django.contrib.messages import get_messages
from django.urls import reverse

from reviews.models import AuditEvent, Candidate, Entity, EntityAlias
from tests.conftest import candidate
from tests.review.conftest import XSS_VALUE, propose


def two_acme_entities(tenant):
    first, second = propose(
        tenant,
        "alice",
        candidate(entity_type="organization", entity_id="acme", entity_name="ACME", field="industry", value="Retail"),
        candidate(entity_type="organization", entity_id="acme-corp", entity_name=XSS_VALUE, field="name",
                  value="Acme Corp"),
    )
    return first, second


class TestEntityPage:
    def test_it_shows_aliases_facts_candidates_and_merge_targets(self, tenant, reviewer_client):
        first, second = two_acme_entities(tenant)
        html = reviewer_client.get(reverse("reviews:entity", args=[first.entity_id])).content.decode()
        assert "organization:acme" in html and "ACME" in html
        assert f'href="/review/candidates/{first.pk}/"' in html
        assert f'<option value="{second.entity_id}">organization:acme-corp' in html
        assert "&lt;img src=x onerror=alert(1)&gt;" in html and "<img src=x" not in html

    def test_merge_moves_everything_and_is_audited(self, tenant, reviewer, reviewer_client):
        first, second = two_acme_entities(tenant)
        response = reviewer_client.post(reverse("reviews:entity-merge", args=[second.entity_id]),
                                        {"target": first.entity_id})
        assert response.status_code == 302 and response["Location"] == reverse("reviews:entity", args=[first.entity_id])
        assert not Entity.objects.filter(pk=second.entity_id).exists()
        assert Candidate.objects.get(pk=second.pk).entity_id == first.entity_id
        assert EntityAlias.objects.filter(entity_id=first.entity_id, alias="acme-corp").exists()
        event = AuditEvent.objects.get(action="entity.merged")
        assert event.actor == f"reviewer:{reviewer.pk}"
        assert [str(m) for m in get_messages(response.wsgi_request)] == [
            "Merged organization:acme-corp into organization:acme."
        ]

    def test_merging_different_types_is_refused(self, tenant, review_queue, reviewer_client):
        response = reviewer_client.post(reverse("reviews:entity-merge", args=[review_queue.new_entity.entity_id]),
                                        {"target": review_queue.conflict.entity_id})
        assert response.status_code == 302
        assert Entity.objects.filter(pk=review_queue.new_entity.entity_id).exists()
        assert [str(m) for m in get_messages(response.wsgi_request)] == [
            "Only two different entities of the same user and type can be merged."
        ]

    def test_a_missing_target_is_an_error_message(self, tenant, reviewer_client):
        first, _ = two_acme_entities(tenant)
        response = reviewer_client.post(reverse("reviews:entity-merge", args=[first.entity_id]), {"target": "x"})
        assert [str(m) for m in get_messages(response.wsgi_request)] == ["Choose the entity to merge into."]
