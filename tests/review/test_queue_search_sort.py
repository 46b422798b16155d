"""The queue's search, sort, flag filter and headline counts (SPEC §4), in the selectors,
the page and the API; every one stays inside its tenant."""
import re
from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from reviews.actors import Actor
from reviews.errors import InvalidInput
from reviews.models import Candidate, Scope
from reviews.selectors.queue import (
    QUEUE_COUNT_CAP,
    QueueFilters,
    QueueSort,
    review_queue_counts,
    review_queue_items,
    review_queue_page,
)
from reviews.services.portal import fact_contest
from tests.conftest import candidate
from tests.review.conftest import approve_as, page_with_counts, propose, signed_in

LIST = "/api/v1/review/candidates"


def ids(tenant, limit=200, **filters):
    return [c.pk for c in review_queue_page(tenant=tenant, filters=QueueFilters(**filters), limit=limit).candidates]


def read_all(tenant, limit, **filters):
    """Every page, following cursors."""
    seen, cursor = [], None
    while True:
        page = review_queue_page(tenant=tenant, filters=QueueFilters(**filters), cursor=cursor, limit=limit)
        seen += [c.pk for c in page.candidates]
        if page.next_cursor is None:
            return seen
        cursor = page.next_cursor


@pytest.fixture
def mixed(tenant, reviewer):
    """Items with distinct confidences and ages, one conflict, one contested fact."""
    made = []
    for index, (value, confidence) in enumerate([("Kyoto", 0.91), ("Oslo", 0.85), ("Lagos", 0.93), ("Quito", 0.88)]):
        [row] = propose(tenant, f"user-{index}", candidate(field="location", value=value, confidence=confidence,
                                                         evidence=f"I live in {value}"))
        Candidate.objects.filter(pk=row.pk).update(created_at=timezone.now() - timedelta(hours=10 - index))
        made.append(row)
    # user-0's location is published (Kyoto), then a conflicting proposal arrives
    approve_as(reviewer, made[0])
    [conflict] = propose(tenant, "user-0", candidate(field="location", value="Osaka", confidence=0.9))
    # user-1's role is approved by a reviewer, then contested by the subject
    [role] = propose(tenant, "user-1", candidate(field="role", value="chef", confidence=0.9))
    approve_as(reviewer, role)
    contested = fact_contest(tenant=tenant, user_id="user-1", fact_id=Candidate.objects.get(pk=role.pk).fact_id,
                             actor=Actor.subject("user-1"), note="I don't cook any more")
    return {"oslo": made[1], "lagos": made[2], "quito": made[3], "conflict": conflict, "contested": contested}


class TestSearch:
    @pytest.mark.parametrize("text,expected", [("oslo", ["oslo"]), ("LIVE IN Q", ["quito"]), ("user-2", ["lagos"])])
    def test_it_matches_values_evidence_and_users_case_insensitively(self, tenant, mixed, text, expected):
        assert ids(tenant, q=text) == [mixed[name].pk for name in expected]

    def test_it_never_crosses_tenants(self, tenant, other_tenant, mixed):
        propose(other_tenant, "user-2", candidate(field="location", value="Oslo"))
        assert ids(other_tenant, q="Lagos") == [] and len(ids(tenant, q="oslo")) == 1

    def test_a_search_matching_many_users_finds_the_same_items(self, tenant, other_tenant, mixed, monkeypatch):
        # The matching subjects go to the query as a list up to a bound, as a subquery beyond:
        # both must select the same items, and neither another tenant's.
        propose(other_tenant, "user-2", candidate(field="location", value="Oslo"))
        listed = ids(tenant, q="user-")
        monkeypatch.setattr("reviews.selectors.queue.SEARCH_SUBJECTS_LISTED", 1)
        assert ids(tenant, q="user-") == listed and len(listed) == 5  # every waiting item: all are user-…
        assert ids(tenant, q="user-2") == [mixed["lagos"].pk]

    def test_like_wildcards_are_plain_text(self, tenant, mixed):
        assert ids(tenant, q="%") == [] and ids(tenant, q="_") != ids(tenant)  # "_" only matches user-…


class TestSort:
    def test_oldest_first_by_default_newest_on_request(self, tenant, mixed):
        oldest = ids(tenant)
        assert oldest[:3] == [mixed["oslo"].pk, mixed["lagos"].pk, mixed["quito"].pk]
        assert ids(tenant, sort=QueueSort.NEWEST) == list(reversed(oldest))

    def test_lowest_confidence_first(self, tenant, mixed):
        rows = Candidate.objects.in_bulk(ids(tenant, sort=QueueSort.CONFIDENCE))
        confidences = [rows[pk].confidence for pk in ids(tenant, sort=QueueSort.CONFIDENCE)]
        assert confidences == sorted(confidences)

    def test_contested_then_conflicts_first(self, tenant, mixed):
        assert ids(tenant, sort=QueueSort.PRIORITY)[:2] == [mixed["contested"].pk, mixed["conflict"].pk]

    @pytest.mark.parametrize("sort", QueueSort.ALL)
    def test_every_sort_pages_through_everything_once(self, tenant, mixed, sort):
        propose(tenant, "bulk", *[candidate(field="preference", value=f"p{i}", confidence=0.9 - i / 100) for i in range(9)])
        every = read_all(tenant, 200, sort=sort)
        assert read_all(tenant, 2, sort=sort) == every and len(set(every)) == len(every) == 5 + 9


class TestFlagsAndCounts:
    def test_the_contested_filter_and_count(self, tenant, mixed, reviewer):
        assert ids(tenant, flag="contested") == [mixed["contested"].pk]
        assert ids(tenant, flag="conflict") == [mixed["conflict"].pk]
        counts = review_queue_counts(tenant=tenant, filters=QueueFilters(q="o"), viewer=str(Actor.reviewer(reviewer)))
        assert (counts.waiting, counts.contested, counts.claimed_by_viewer) == (5, 1, 0)
        assert counts.in_filter == len(ids(tenant, q="o"))
        assert counts.oldest == Candidate.objects.get(pk=mixed["oslo"].pk).created_at

    def test_counts_stop_at_the_cap_and_say_so(self, tenant, reviewer, reviewer_client):
        """Past QUEUE_COUNT_CAP the headline says "1,000+" (page and stats alike); a filter
        that can match nothing (anyone's claims, asked by nobody) counts 0 in the same query."""
        [first] = propose(tenant, "user-0", candidate(field="location", value="Kyoto"))
        rows = Candidate.objects.filter(pk=first.pk).values()[0]
        rows.pop("id")
        Candidate.objects.bulk_create(
            [Candidate(**dict(rows, value=f"place {index}")) for index in range(QUEUE_COUNT_CAP)]
        )
        viewer = str(Actor.reviewer(reviewer))
        counts = review_queue_counts(tenant=tenant, filters=QueueFilters(), viewer=viewer)
        assert counts.waiting == counts.in_filter == QUEUE_COUNT_CAP + 1 and counts.capped("waiting")
        assert review_queue_counts(tenant=tenant, filters=QueueFilters(q="Kyoto"), viewer=viewer).in_filter == 1
        assert review_queue_counts(tenant=tenant, filters=QueueFilters(claims="mine")).in_filter == 0
        html = page_with_counts(reviewer_client, "/review/")
        assert f'data-count="waiting">{QUEUE_COUNT_CAP:,}+<' in html and f'data-count="in_filter">{QUEUE_COUNT_CAP:,}+<' in html
        assert f'data-kpi="waiting">{QUEUE_COUNT_CAP:,}+<' in reviewer_client.get("/review/stats/").content.decode()

    def test_unknown_values_are_refused(self):
        for bad in ({"flag": "nope"}, {"sort": "random"}, {"q": "x" * 201}, {"claims": "theirs"}):
            with pytest.raises(InvalidInput):
                QueueFilters(**bad)


class TestPage:
    def test_it_shows_counts_and_the_contested_note_on_its_line(self, tenant, mixed, reviewer):
        html = page_with_counts(signed_in(reviewer), "/review/", {"sort": "priority"})
        assert "data-counts" in html and 'data-count="contested">1<' in html
        contested = mixed["contested"]
        line = html.split(f'id="item-{contested.pk}"')[1].split("</article>")[0]
        assert re.search(r'data-subject-note-line>user-1 says: “<span class="text">I don(’|&#x27;)t cook any more</span>”', line)
        # The history is the body's, fetched when the item is opened (or ahead of the focus).
        assert "data-history" not in html
        assert f'hx-get="{reverse("reviews:candidate-body", args=[contested.pk])}?version=' in line

    def test_the_contested_items_body_has_the_note_and_the_facts_history(self, tenant, mixed, reviewer):
        contested = mixed["contested"]
        body = signed_in(reviewer).get(reverse("reviews:candidate-body", args=[contested.pk]),
                                       headers={"HX-Request": "true"}).content.decode()
        assert "data-subject-note" in body and "data-history" in body and "chef" in body

    def test_a_list_with_lazy_bodies_reads_neither_current_facts_nor_history(self, tenant, mixed, reviewer):
        """The queue page shows no body at once (each is fetched when opened): what only a
        body shows, the current facts and a contested fact's history, is not read for it."""
        [language] = propose(tenant, "user-1", candidate(field="language", value="Norwegian", confidence=0.9))
        approve_as(reviewer, language)
        rows = [mixed["contested"], mixed["conflict"]]
        full = review_queue_items(tenant=tenant, candidates=rows)
        lazy = review_queue_items(tenant=tenant, candidates=rows, lazy_bodies=True)
        assert [f.value for f in full[1].current_facts] == ["Kyoto"]
        assert [f.value for f in full[0].current_facts] == ["Norwegian"] and [v.value for v in full[0].history][-1] == "chef"
        assert lazy[0].current_facts == lazy[1].current_facts == [] and lazy[0].history == []
        assert lazy[0].is_contested and lazy[1].conflict == full[1].conflict  # the line's badges still have theirs

    def test_search_in_the_page(self, tenant, mixed, reviewer):
        html = signed_in(reviewer).get("/review/", {"q": "lagos"}).content.decode()
        assert f'id="item-{mixed["lagos"].pk}"' in html and f'id="item-{mixed["oslo"].pk}"' not in html


class TestApi:
    @pytest.fixture
    def client(self, tenant, make_client):
        return make_client(tenant, [Scope.REVIEW])

    def test_q_sort_and_flag(self, client, mixed):
        body = client.get(LIST, {"q": "oslo"}).json()
        assert [row["id"] for row in body["results"]] == [mixed["oslo"].pk]
        body = client.get(LIST, {"sort": "priority", "limit": 2}).json()
        assert [row["id"] for row in body["results"]] == [mixed["contested"].pk, mixed["conflict"].pk]
        assert client.get(LIST, {"flag": "contested"}).json()["results"][0]["claimed_by"] is None

    @pytest.mark.parametrize("params", [{"sort": "random"}, {"flag": "nope"}, {"q": "x" * 201}])
    def test_bad_params_are_400_in_the_error_shape(self, client, params):
        response = client.get(LIST, params)
        assert response.status_code == 400 and "error" in response.json()

    def test_the_params_are_in_the_openapi_schema(self, client):
        from drf_spectacular.generators import SchemaGenerator

        schema = SchemaGenerator().get_schema(request=None, public=True)
        names = {p["name"] for p in schema["paths"][LIST]["get"]["parameters"]}
        assert {"q", "sort", "flag", "claims"} <= names
