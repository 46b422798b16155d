"""The stats page's time figures and its agreement with the queue (issue 13, item 9):
time to decision per day (p50, p90), the oldest waiting item, decisions per reviewer per
hour, and "waiting" counted as the queue counts it; each figure for one tenant only, and
the page for staff only."""
import re
from dataclasses import asdict
from datetime import datetime, timedelta, timezone as dt_timezone

import pytest
import time_machine
from django.contrib.auth import get_user_model
from django.db import connection
from django.test import Client
from django.urls import reverse

from reviews.actors import Actor
from reviews.models import Candidate
from reviews.permissions import PORTAL_SESSION_KEY, portal_binding
from reviews.selectors.queue import QueueFilters
from reviews.selectors.stats import (
    percentile_cont,
    reviewer_pace,
    time_to_decision_per_day,
    waiting_now,
)
from reviews.services.candidates import candidate_approve, candidate_defer, candidate_reject
from reviews.services.claims import candidates_claim
from reviews.services.portal import fact_contest
from reviews.views.stats import stats_numbers
from tests.conftest import PASSWORD, candidate, sign_in
from tests.review.conftest import approve_as, page_with_counts, propose, signed_in

# Mid-afternoon UTC (the tests' TIME_ZONE), so a few hours back stay on the same day.
NOW = datetime(2026, 11, 20, 15, 0, tzinfo=dt_timezone.utc)
YESTERDAY = NOW - timedelta(days=1)
STATS = reverse("reviews:stats")
QUEUE = reverse("reviews:queue")


def arrive(tenant, user_id, at, *, field="location", value="Berlin", confidence=0.9):
    with time_machine.travel(at, tick=False):
        [item] = propose(tenant, user_id, candidate(field=field, value=value, confidence=confidence))
    return item


def decided_after(tenant, reviewer, arrived_at, waited_seconds, *, user_id, decide=approve_as):
    """An item arriving at ``arrived_at`` and decided by ``reviewer`` ``waited_seconds`` later."""
    item = arrive(tenant, user_id, arrived_at)
    assert item.status == "pending_review"
    with time_machine.travel(arrived_at + timedelta(seconds=waited_seconds), tick=False):
        decide(reviewer, item)
    return item


def seconds(value):
    return None if value is None else round(value.total_seconds(), 3)


@pytest.fixture
def decision_times(tenant, reviewer, second_reviewer):
    """Yesterday four items waited 60, 120, 180 and 600 s; today one waited an hour.

    By hand (percentile_cont: linear between neighbours, position = fraction × (n − 1)):
    yesterday p50 at 1.5 → 120 + 0.5 × 60 = 150 s; p90 at 2.7 → 180 + 0.7 × 420 = 474 s.
    Today one value: p50 = p90 = 3600 s.
    """
    morning = YESTERDAY.replace(hour=9)
    for index, waited in enumerate((600, 60, 180, 120)):
        decider = reviewer if index % 2 else second_reviewer
        decided_after(tenant, decider, morning + timedelta(minutes=20 * index), waited, user_id=f"y{index}")
    decided_after(tenant, reviewer, NOW - timedelta(hours=2), 3600, user_id="t0")
    # Not a reviewer's wait: what the policy decided on arrival, and the subject's own answer.
    arrive(tenant, "auto", NOW - timedelta(hours=3), field="name", value="Ann", confidence=0.99)
    asked = arrive(tenant, "subj", NOW - timedelta(hours=3), field="role", value="engineer", confidence=0.7)
    assert asked.status == "pending_user"
    with time_machine.travel(NOW - timedelta(hours=1), tick=False):
        candidate_approve(tenant=tenant, candidate_id=asked.pk, version=asked.version, actor=Actor.subject("subj"))


EXPECTED = [
    (YESTERDAY.date() - timedelta(days=1), 0, None, None),
    (YESTERDAY.date(), 4, 150.0, 474.0),
    (NOW.date(), 1, 3600.0, 3600.0),
]


class TestTimeToDecision:
    @pytest.mark.skipif(connection.vendor != "postgresql", reason="percentile_cont is PostgreSQL's")
    def test_p50_and_p90_per_day_in_the_database_match_the_hand_computed_figures(self, tenant, decision_times):
        rows = time_to_decision_per_day(tenant=tenant, days=3, now=NOW, in_database=True)
        assert [(row.day, row.decided, seconds(row.p50), seconds(row.p90)) for row in rows] == EXPECTED

    def test_the_python_path_gives_the_same_figures(self, tenant, decision_times):
        """SQLite's path (percentile_cont in Python over the window's decisions), run here."""
        rows = time_to_decision_per_day(tenant=tenant, days=3, now=NOW, in_database=False)
        assert [(row.day, row.decided, seconds(row.p50), seconds(row.p90)) for row in rows] == EXPECTED

    def test_percentile_cont_interpolates_between_neighbours(self):
        assert percentile_cont([60, 120, 180, 600], 0.5) == 150
        assert percentile_cont([60, 120, 180, 600], 0.9) == pytest.approx(474)
        assert percentile_cont([42], 0.9) == 42

    def test_a_contested_item_counts_from_the_contest(self, tenant, reviewer):
        item = decided_after(tenant, reviewer, YESTERDAY, 60, user_id="alice")  # published by a reviewer
        with time_machine.travel(NOW - timedelta(hours=2), tick=False):
            contest = fact_contest(tenant=tenant, user_id="alice", fact_id=Candidate.objects.get(pk=item.pk).fact_id,
                                   actor=Actor.subject("alice"))
        with time_machine.travel(NOW - timedelta(minutes=30), tick=False):
            approve_as(reviewer, contest)
        [today] = time_to_decision_per_day(tenant=tenant, days=1, now=NOW)
        assert (today.decided, seconds(today.p50)) == (1, 90 * 60.0)

    def test_the_page_shows_each_day_today_first(self, tenant, decision_times, reviewer_client):
        with time_machine.travel(NOW, tick=False):
            html = reviewer_client.get(STATS).content.decode()
        rows = re.findall(r'<tr data-day="([\d-]+)">.*?data-p50="(\d*)">([^<]*)<.*?data-p90="(\d*)">([^<]*)<', html)
        assert rows[0] == (NOW.date().isoformat(), "3600", "1 h 0 min", "3600", "1 h 0 min")
        assert rows[1] == (YESTERDAY.date().isoformat(), "150", "2 min", "474", "7 min")
        assert rows[2][1:] == ("", "—", "", "—") and len(rows) == 14


class TestPace:
    def test_decisions_per_hour_in_which_the_reviewer_decided(self, tenant, reviewer, second_reviewer):
        ten = NOW.replace(hour=10)
        for index, minute in enumerate((5, 25, 55)):  # three in the 10 o'clock hour
            decided_after(tenant, reviewer, ten, minute * 60, user_id=f"a{index}")
        decided_after(tenant, reviewer, ten, 4 * 3600 + 60, user_id="a3")  # one at 14:01
        decided_after(tenant, second_reviewer, ten, 600, user_id="b0", decide=reject)
        # Older than the window, and a review-API key (not a reviewer): neither counts.
        decided_after(tenant, reviewer, NOW - timedelta(days=8), 60, user_id="old")
        item = arrive(tenant, "k", ten)
        with time_machine.travel(ten + timedelta(minutes=1), tick=False):
            candidate_defer(tenant=tenant, candidate_id=item.pk, version=item.version, actor=Actor("api_key", "k1"))
        pace = reviewer_pace(tenant=tenant, now=NOW)
        assert [(row.actor, row.decisions, row.active_hours, row.per_hour) for row in pace] == [
            (f"reviewer:{reviewer.pk}", 4, 2, 2.0),
            (f"reviewer:{second_reviewer.pk}", 1, 1, 1.0),
        ]

    def test_the_page_names_the_reviewers(self, tenant, reviewer, reviewer_client):
        decided_after(tenant, reviewer, NOW - timedelta(hours=1), 60, user_id="a")
        with time_machine.travel(NOW, tick=False):
            html = reviewer_client.get(STATS).content.decode()
        assert re.search(r'data-table="pace">.*?<td>rita</td><td class="num">1</td><td class="num">1</td>'
                         r'<td class="num" data-per-hour>1.0</td>', html, flags=re.S)


def reject(user, item):
    return candidate_reject(tenant=item.tenant, candidate_id=item.pk, version=item.version, note="wrong",
                            actor=Actor.reviewer(user))


@pytest.fixture
def busy_queue(tenant, other_tenant, reviewer, second_reviewer, outsider):
    """Items waiting for review in every state the queue knows, beside items that are not:
    5 plain, 2 of them claimed by a colleague, 1 contested, 1 deferred (waits for the user),
    1 the policy asked the user about, 1 decided, and 3 waiting in another tenant."""
    plain = [arrive(tenant, f"u{index}", NOW - timedelta(hours=index + 1), value=f"City {index}") for index in range(5)]
    candidates_claim(tenant=tenant, actor=Actor.reviewer(second_reviewer), count=2, filters=QueueFilters())
    published = decided_after(tenant, reviewer, NOW - timedelta(days=2), 60, user_id="alice")
    fact_contest(tenant=tenant, user_id="alice", fact_id=Candidate.objects.get(pk=published.pk).fact_id,
                 actor=Actor.subject("alice"))
    deferred = arrive(tenant, "d", NOW - timedelta(hours=1), value="Oslo")
    candidate_defer(tenant=tenant, candidate_id=deferred.pk, version=deferred.version, actor=Actor.reviewer(reviewer))
    assert arrive(tenant, "p", NOW - timedelta(hours=1), field="role", value="engineer", confidence=0.7).status == (
        "pending_user"
    )
    for index in range(3):
        arrive(other_tenant, f"o{index}", NOW - timedelta(days=9), value=f"Elsewhere {index}")
    return plain


class TestWaitingAgreesWithTheQueue:
    def test_the_stats_count_is_the_queues_headline(self, tenant, busy_queue, reviewer_client):
        queue = page_with_counts(reviewer_client, QUEUE)
        stats = reviewer_client.get(STATS).content.decode()
        [in_queue] = re.findall(r'data-count="waiting">([^<]+)<', queue)
        [on_stats] = re.findall(r'data-kpi="waiting">([^<]+)<', stats)
        assert in_queue == on_stats == "6"  # 5 plain (2 of them claimed by rob) and the contest
        assert re.findall(r'data-kpi="with-user">([^<]+)<', stats) == ["2"]  # deferred, asked by the policy
        # The columns add up to the same figure, and so does today's point of the series.
        assert sum(int(n) for n in re.findall(r"<td class=\"num\" data-waiting>(\d+)</td>", stats)) == 6
        numbers = stats_numbers(tenant)
        assert numbers.waiting[-1][1] == 6 == numbers.now.for_review

    def test_the_oldest_waiting_item_links_into_the_queue(self, tenant, busy_queue, reviewer_client):
        oldest = busy_queue[-1]  # five hours old; the other tenant's nine-day-old items do not count
        with time_machine.travel(NOW, tick=False):
            html = reviewer_client.get(STATS).content.decode()
            assert waiting_now(tenant=tenant).oldest == (oldest.pk, oldest.created_at)
        link = f'href="{QUEUE}?claims=all#item-{oldest.pk}" data-kpi="oldest"><time datetime="{oldest.created_at.isoformat()}">5'
        assert link in html and f'href="{reverse("reviews:candidate", args=[oldest.pk])}"' in html
        # The queue, oldest first with colleagues' claims shown, starts with it.
        queue = reviewer_client.get(QUEUE, {"claims": "all"}).content.decode()
        assert queue.index(f'id="item-{oldest.pk}"') == min(m.start() for m in re.finditer(r'id="item-\d+"', queue))


class TestTenantIsolation:
    def test_another_tenants_activity_changes_no_figure(self, tenant, other_tenant, reviewer, outsider,
                                                        decision_times):
        def figures():
            with time_machine.travel(NOW, tick=False):
                numbers = asdict(stats_numbers(tenant))
            numbers.pop("computed_at")
            return numbers

        before = figures()
        assert before["pace"] and any(row["decided"] for row in before["time_to_decision"])
        # The other tenant: waiting items (older than any here), decisions today and yesterday.
        for index in range(3):
            arrive(other_tenant, f"o{index}", NOW - timedelta(days=20), value=f"Elsewhere {index}")
        for index, waited in enumerate((5, 5000, 50000)):
            decided_after(other_tenant, outsider, YESTERDAY.replace(hour=1), waited, user_id=f"x{index}")
        decided_after(other_tenant, outsider, NOW - timedelta(hours=1), 7, user_id="x9", decide=reject)
        assert figures() == before

    def test_the_other_tenants_reviewer_sees_only_their_own(self, tenant, decision_times, outsider_web_client):
        with time_machine.travel(NOW, tick=False):
            html = outsider_web_client.get(STATS).content.decode()
        assert 'data-kpi="waiting">0<' in html and 'data-kpi="oldest">—<' in html
        assert "data-per-hour" not in html and "rita" not in html
        assert not re.findall(r'data-p50="\d+"', html)


class TestWhoMaySeeIt:
    @pytest.mark.parametrize("persona", ["reviewer", "auditor", "tenant_admin"])
    def test_staff_of_the_tenant(self, request, tenant, persona):
        assert signed_in(request.getfixturevalue(persona)).get(STATS).status_code == 200

    def test_anonymous_visitors_are_sent_to_sign_in(self, client):
        response = client.get(STATS)
        assert response.status_code == 302 and response["Location"].startswith(reverse("reviews:login"))

    def test_a_subjects_portal_session_is_not_staff(self, tenant, enter_portal):
        response = enter_portal.get(STATS)
        assert response.status_code == 302 and response["Location"].startswith(reverse("reviews:login"))

    def test_a_user_of_no_tenant_finds_nothing(self, db):
        get_user_model().objects.create_user(username="stray", password=PASSWORD)
        stray = Client()
        assert sign_in(stray, "stray")
        assert stray.get(STATS).status_code == 404


@pytest.fixture
def enter_portal(tenant):
    """A browser holding alice's "my memories" session (a portal binding, no Django login)."""
    [item] = propose(tenant, "alice", candidate(field="location", value="Berlin"))
    portal = Client()
    session = portal.session
    session[PORTAL_SESSION_KEY] = portal_binding(tenant_id=tenant.pk, subject_id=item.subject_id, user_id="alice")
    session.save()
    assert portal.get(reverse("reviews:portal_home")).status_code == 200
    return portal
