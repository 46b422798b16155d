"""The review API's 409 after the published value of an item's field changed (SPEC §4, §7)."""
import pytest

from reviews.models import AuditEvent, Candidate, Fact, Scope
from tests.conftest import candidate
from tests.review.conftest import propose

LIST = "/api/v1/review/candidates"


@pytest.fixture
def review_client(tenant, make_client):
    return make_client(tenant, [Scope.REVIEW])


@pytest.fixture
def two_names(tenant):
    """Two waiting names for dana, both judged when nothing was published."""
    return propose(tenant, "dana", candidate(value="Dana"), candidate(value="Daniela"))


def test_approving_one_moves_the_other_on_and_its_old_version_is_a_409(tenant, review_client, two_names):
    first, second = two_names
    assert review_client.post_json(f"{LIST}/{first.pk}/approve", {"version": 1}).status_code == 200

    response = review_client.post_json(f"{LIST}/{second.pk}/approve", {"version": 1})
    assert response.status_code == 409
    error = response.json()["error"]
    assert error["code"] == "stale_version"
    assert error["details"]["current_value"] == "Dana" and error["details"]["current_version"] == 2
    assert Fact.objects.get(subject__user_id="dana", status="active").value == "Dana"
    assert AuditEvent.objects.filter(action="candidate.rejudged", object_id=str(second.pk)).count() == 1
    assert not AuditEvent.objects.filter(action="candidate.approved", object_id=str(second.pk)).exists()

    # The queue now shows it as a conflict with the published value, at its new version.
    listed = {row["id"]: row for row in review_client.get(LIST, {"user_id": "dana"}).json()["results"]}
    assert listed[second.pk]["version"] == 2 and listed[second.pk]["conflict"]["value"] == "Dana"


@pytest.mark.parametrize("action,body", [("reject", {"reason": "no"}), ("defer", {})])
def test_every_decision_with_the_old_version_is_refused(tenant, review_client, two_names, action, body):
    first, second = two_names
    review_client.post_json(f"{LIST}/{first.pk}/approve", {"version": 1})
    response = review_client.post_json(f"{LIST}/{second.pk}/{action}", {"version": 1, **body})
    assert response.status_code == 409 and response.json()["error"]["details"]["current_value"] == "Dana"
    assert Candidate.objects.get(pk=second.pk).status == "pending_review"


def test_another_tenants_key_cannot_see_the_item(tenant, outsider_client, two_names):
    _, second = two_names
    response = outsider_client.post_json(f"{LIST}/{second.pk}/approve", {"version": 2})
    assert response.status_code == 404
    assert Candidate.objects.get(pk=second.pk).status == "pending_review"
