"""The stats page and the numbers behind it (candidates and audit events only)."""
from datetime import timedelta

from django.utils import timezone

from memory_portal.settings import shared_cache
from reviews.actors import Actor
from reviews.models import Candidate
from reviews.selectors.stats import (
    decisions_per_day,
    decisions_per_reviewer,
    extractor_quality,
    reviewer_agreement,
    waiting_items_series,
)
from reviews.services.candidates import candidate_defer, candidate_reject
from tests.conftest import candidate
from tests.review.conftest import XSS_VALUE, approve_as, propose
from tests.worker.brokers import unused_port


def reject_as(user, item, note="wrong"):
    return candidate_reject(tenant=item.tenant, candidate_id=item.pk, version=item.version, note=note,
                            actor=Actor.reviewer(user))


class TestNumbers:
    def test_waiting_items_follow_creation_and_decision_times(self, tenant, review_queue, reviewer):
        now = timezone.now()
        Candidate.objects.filter(pk=review_queue.evidence.pk).update(created_at=now - timedelta(days=3))
        Candidate.objects.filter(pk=review_queue.conflict.pk).update(
            created_at=now - timedelta(days=5), decided_at=now - timedelta(days=2), status="rejected",
            decided_by=str(Actor.reviewer(reviewer)),
        )
        series = waiting_items_series(tenant=tenant, days=7, now=now)
        # The item waiting for the user never waited for a reviewer: today is the queue's 2.
        assert [count for _, count in series] == [0, 1, 1, 2, 1, 1, 2]
        assert series[-1][0] == timezone.localtime(now).date()

    def test_decisions_per_day_and_per_reviewer(self, tenant, review_queue, reviewer, second_reviewer):
        approve_as(reviewer, review_queue.evidence)
        approve_as(reviewer, review_queue.conflict, value="PostgreSQL 16")
        reject_as(second_reviewer, review_queue.new_entity)
        [deferred] = propose(tenant, "alice", candidate(field="preference", value="tea"))
        candidate_defer(tenant=tenant, candidate_id=deferred.pk, version=1, actor=Actor("api_key", "k1"))
        days = decisions_per_day(tenant=tenant, days=3)
        assert len(days) == 3 and days[-1][1] == {"approved": 1, "edited": 1, "rejected": 1, "deferred": 1}
        assert decisions_per_reviewer(tenant=tenant) == {
            f"reviewer:{reviewer.pk}": {"approved": 1, "edited": 1},
            f"reviewer:{second_reviewer.pk}": {"rejected": 1},
        }

    def test_extractor_quality(self, tenant, review_queue, reviewer):
        approve_as(reviewer, review_queue.evidence, value="Berlin, DE")  # v2, edited
        reject_as(reviewer, review_queue.conflict)  # v2, rejected
        rows = {(row.extractor, row.prompt_version): row for row in extractor_quality(tenant=tenant)}
        v1, v2 = rows[("rules", "v1")], rows[("rules", "v2")]
        assert (v2.approved, v2.edited, v2.rejected, v2.waiting) == (0, 1, 1, 0)
        assert (v1.approved, v1.waiting, v1.with_user) == (1, 1, 1)  # the auto-approved database; new entity; role
        assert v2.share("edited") == 0.5

    def test_agreement_on_the_same_kind_of_item(self, tenant, reviewer, second_reviewer):
        # The same (entity type, field, normalised value) for two users, decided by both reviewers.
        a1, b1 = propose(tenant, "u1", candidate(field="preference", value="Dark mode"),
                         candidate(field="preference", value="tabs"))
        a2, b2 = propose(tenant, "u2", candidate(field="preference", value="dark mode "),
                         candidate(field="preference", value="Tabs"))
        approve_as(reviewer, a1)
        approve_as(second_reviewer, a2)  # agree
        approve_as(reviewer, b1)
        reject_as(second_reviewer, b2)  # disagree
        [pair] = reviewer_agreement(tenant=tenant)
        assert {pair.first, pair.second} == {f"reviewer:{reviewer.pk}", f"reviewer:{second_reviewer.pk}"}
        assert (pair.pairs, pair.agreed, pair.rate) == (2, 1, 0.5)


class TestPage:
    def test_it_draws_the_charts(self, tenant, review_queue, reviewer, second_reviewer, reviewer_client):
        approve_as(reviewer, review_queue.evidence)
        reject_as(second_reviewer, review_queue.new_entity)
        html = reviewer_client.get("/review/stats/").content.decode()
        assert 'data-chart="waiting"' in html and 'data-chart="decisions"' in html
        assert html.count('<rect class="c-approved"') == 1 and html.count('<rect class="c-rejected"') == 1
        assert 'data-kpi="waiting">1<' in html and 'data-kpi="with-user">1<' in html  # the conflict; the role
        assert "<td>rita</td>" in html and "<td>rob</td>" in html

    def test_share_bars_are_svg_rectangles_side_by_side_with_no_style_attribute(
        self, tenant, review_queue, reviewer, reviewer_client
    ):
        approve_as(reviewer, review_queue.evidence)
        reject_as(reviewer, review_queue.new_entity)
        html = reviewer_client.get("/review/stats/").content.decode()
        assert " style=" not in html  # the Content-Security-Policy would block it
        bar = ('<rect x="0.0" width="50.0" height="1" class="c-approved">',
               '<rect x="50.0" width="0.0" height="1" class="c-edited">',
               '<rect x="50.0" width="50.0" height="1" class="c-rejected">')
        assert all(part in html for part in bar)

    def test_labels_are_escaped(self, tenant, reviewer_client):
        propose(tenant, "alice", candidate(), extractor=XSS_VALUE, prompt_version="</script>")
        html = reviewer_client.get("/review/stats/").content.decode()
        assert "<img src=x" not in html and "&lt;img src=x onerror=alert(1)&gt;" in html
        assert "<code>&lt;/script&gt;</code>" in html

    def test_query_count_is_fixed(self, tenant, review_queue, reviewer, reviewer_client, django_assert_max_num_queries):
        approve_as(reviewer, review_queue.evidence)
        # 10, plus the waiting-by-field figure and the tenant's labels it is shown with, the
        # headline's three (waiting, with the user, the oldest), time to decision and pace.
        with django_assert_max_num_queries(17):
            assert reviewer_client.get("/review/stats/").status_code == 200


def test_figures_are_computed_at_most_once_a_minute(tenant, review_queue, reviewer, reviewer_client,
                                                     django_assert_max_num_queries):
    reviewer_client.get("/review/stats/")
    approve_as(reviewer, review_queue.evidence)
    # Session, user, membership, tenant, the field labels: the figures are cached.
    with django_assert_max_num_queries(5):
        html = reviewer_client.get("/review/stats/").content.decode()
    assert 'data-kpi="decisions">0<' in html and "Figures as of" in html


def test_with_the_cache_down_the_figures_are_computed_each_time(settings, review_queue, reviewer, reviewer_client,
                                                                 caplog):
    settings.CACHES = shared_cache(f"redis://127.0.0.1:{unused_port()}/0")  # nothing listens there
    approve_as(reviewer, review_queue.evidence)
    response = reviewer_client.get("/review/stats/")
    assert response.status_code == 200
    assert 'data-kpi="decisions">1<' in response.content.decode()
    assert "cache unavailable: review-stats:" in caplog.text


def test_an_empty_chart_has_whole_number_ticks():
    from reviews.views.stats import _y_ticks

    assert [tick.label for tick in _y_ticks(1)] == ["0", "1"]
    assert [tick.label for tick in _y_ticks(50)] == ["0", "25", "50"]
