"""The "my decisions" page (issue 38.6): one's own decisions, newest first, with Undo where
it is still allowed; nobody else's, no other tenant's."""
from datetime import timedelta

from django.urls import reverse
from django.utils import timezone

from reviews.models import AuditEvent, Candidate, DecisionUndo
from tests.conftest import candidate
from tests.review.conftest import approve_as, propose, signed_in
from tests.review.test_decisions_pages import messages_of

PAGE = "/review/mine/"


def rows(html: str) -> list[str]:
    return [part.split('"', 1)[0] for part in html.split('data-decision="')[1:]]


def test_it_lists_only_my_decisions_newest_first(tenant, reviewer, second_reviewer, reviewer_client):
    mine_first, mine_second, theirs = propose(
        tenant, "alice", candidate(field="location", value="Berlin"), candidate(field="language", value="German"),
        candidate(field="role", value="engineer"),
    )
    approve_as(reviewer, mine_first)
    approve_as(reviewer, mine_second)
    approve_as(second_reviewer, theirs)
    html = reviewer_client.get(PAGE).content.decode()
    mine = DecisionUndo.objects.filter(actor=f"reviewer:{reviewer.pk}").order_by("-decided_at", "-pk")
    assert rows(html) == [str(row.pk) for row in mine] and len(mine) == 2
    assert "German" in html and "Berlin" in html and "engineer" not in html


def test_a_recent_decision_offers_undo_and_it_works(tenant, reviewer, reviewer_client):
    [item] = propose(tenant, "alice", candidate(field="location", value="Berlin"))
    approve_as(reviewer, item)
    html = reviewer_client.get(PAGE).content.decode()
    undo_url = reverse("reviews:candidate-undo", args=[item.pk])
    assert f'action="{undo_url}"' in html
    response = reviewer_client.post(undo_url, {"next": PAGE})
    assert response.status_code == 302 and response["Location"] == PAGE
    assert messages_of(response)[0].startswith("Undone: location")
    assert Candidate.objects.get(pk=item.pk).status == "pending_review"
    assert AuditEvent.objects.filter(action="candidate.decision_undone", object_id=str(item.pk)).exists()
    after = reviewer_client.get(PAGE).content.decode()
    assert "undone" in after and f'action="{undo_url}"' not in after


def test_an_old_or_moved_decision_offers_no_undo(tenant, reviewer, second_reviewer, reviewer_client):
    old, moved = propose(tenant, "alice", candidate(field="location", value="Berlin"), candidate(value="Dana"))
    approve_as(reviewer, old)
    DecisionUndo.objects.filter(candidate=old).update(decided_at=timezone.now() - timedelta(minutes=5))
    approve_as(reviewer, moved)
    Candidate.objects.filter(pk=moved.pk).update(version=99)  # something else changed it since
    html = reviewer_client.get(PAGE).content.decode()
    assert len(rows(html)) == 2 and "/undo" not in html


def test_an_auditor_sees_the_page_but_no_undo(tenant, reviewer, auditor_client):
    [item] = propose(tenant, "alice", candidate(field="location", value="Berlin"))
    approve_as(reviewer, item)
    response = auditor_client.get(PAGE)
    assert response.status_code == 200 and rows(response.content.decode()) == []


def test_another_tenants_reviewer_sees_none_of_it(tenant, reviewer, outsider):
    [item] = propose(tenant, "alice", candidate(field="location", value="Berlin"))
    approve_as(reviewer, item)
    client = signed_in(outsider)
    html = client.get(PAGE).content.decode()
    assert rows(html) == [] and "Berlin" not in html
    # Nor can they undo it.
    assert client.post(reverse("reviews:candidate-undo", args=[item.pk])).status_code == 404
    assert Candidate.objects.get(pk=item.pk).status == "approved"


def test_it_needs_a_sign_in(client):
    response = client.get(PAGE)
    assert response.status_code == 302 and "/login/" in response["Location"]


def test_the_page_reads_in_a_fixed_number_of_queries(tenant, reviewer, reviewer_client, django_assert_max_num_queries):
    items = propose(tenant, "alice", *[candidate(field="preference", value=f"v{i}") for i in range(6)])
    for item in items:
        approve_as(reviewer, item)
    with django_assert_max_num_queries(12):
        reviewer_client.get(PAGE)
