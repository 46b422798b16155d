"""Claims (SPEC §4): a lease on the next items; colleagues do not see them; expired claims
return to the pool; two reviewers claiming never share an item."""
from datetime import timedelta

import pytest
import time_machine
from django.db import connection, transaction
from django.utils import timezone

from reviews.actors import Actor
from reviews.errors import InvalidInput
from reviews.models import AuditEvent, AuditPayload, Candidate, CandidateStatus
from reviews.selectors.queue import QueueClaims, QueueFilters, queue_filtered, review_queue_page
from reviews.services.claims import _live, candidates_claim, candidates_claims_renew, candidates_release, claim_lease
from tests.conftest import candidate
from tests.review.conftest import propose


def seed(tenant, count, user_id="bob"):
    return propose(tenant, user_id, *[candidate(field="preference", value=f"topic {i}") for i in range(count)])


def visible(tenant, user, claims=QueueClaims.POOL):
    page = review_queue_page(
        tenant=tenant, filters=QueueFilters(claims=claims), limit=200, viewer=str(Actor.reviewer(user))
    )
    return [c.pk for c in page.candidates]


def test_a_claim_takes_the_next_items_and_hides_them_from_colleagues(tenant, reviewer, second_reviewer):
    items = seed(tenant, 6)
    claimed = candidates_claim(tenant=tenant, actor=Actor.reviewer(reviewer), count=4)
    assert claimed == [c.pk for c in items[:4]]  # oldest first, like the queue
    assert visible(tenant, reviewer) == [c.pk for c in items]  # one's own claims stay in view
    assert visible(tenant, second_reviewer) == [c.pk for c in items[4:]]
    assert visible(tenant, second_reviewer, QueueClaims.ALL) == [c.pk for c in items]  # "unless they ask"
    assert visible(tenant, reviewer, QueueClaims.MINE) == claimed
    [event] = AuditEvent.objects.filter(tenant_id=tenant.pk, action="candidates.claimed")
    assert event.actor == f"reviewer:{reviewer.pk}" and AuditPayload.objects.get(event=event).after["ids"] == claimed


def test_the_next_claim_never_takes_a_colleagues_items(tenant, reviewer, second_reviewer):
    seed(tenant, 5)
    first = candidates_claim(tenant=tenant, actor=Actor.reviewer(reviewer), count=3)
    second = candidates_claim(tenant=tenant, actor=Actor.reviewer(second_reviewer), count=3)
    assert len(second) == 2 and not set(first) & set(second)


def test_an_expired_claim_returns_to_the_pool_and_activity_renews_it(tenant, reviewer, second_reviewer):
    seed(tenant, 2)
    claimed = candidates_claim(tenant=tenant, actor=Actor.reviewer(reviewer), count=2)
    with time_machine.travel(timezone.now() + timedelta(minutes=10)):
        assert candidates_claims_renew(tenant=tenant, actor=Actor.reviewer(reviewer)) == 2
    with time_machine.travel(timezone.now() + timedelta(minutes=20)):
        assert visible(tenant, second_reviewer) == []  # renewed at minute 10: good until 25
    with time_machine.travel(timezone.now() + timedelta(minutes=26)):
        assert visible(tenant, second_reviewer) == claimed
        assert candidates_claim(tenant=tenant, actor=Actor.reviewer(second_reviewer), count=5) == claimed


def test_a_renewal_within_a_minute_of_the_last_writes_nothing(tenant, reviewer):
    seed(tenant, 2)
    actor = Actor.reviewer(reviewer)
    claimed = candidates_claim(tenant=tenant, actor=actor, count=2)

    def expiries():
        return set(Candidate.objects.filter(pk__in=claimed).values_list("claim_expires_at", flat=True))

    claimed_until = expiries()
    with time_machine.travel(timezone.now() + timedelta(seconds=30), tick=False):
        assert candidates_claims_renew(tenant=tenant, actor=actor) == 0
        assert expiries() == claimed_until
    with time_machine.travel(timezone.now() + timedelta(seconds=90), tick=False):
        assert candidates_claims_renew(tenant=tenant, actor=actor) == 2
        assert expiries() == {timezone.now() + claim_lease()}


def test_release_gives_everything_back_audited(tenant, reviewer, second_reviewer):
    seed(tenant, 3)
    claimed = candidates_claim(tenant=tenant, actor=Actor.reviewer(reviewer), count=3)
    assert candidates_release(tenant=tenant, actor=Actor.reviewer(reviewer)) == claimed
    assert len(visible(tenant, second_reviewer)) == 3
    assert AuditEvent.objects.filter(tenant_id=tenant.pk, action="candidates.released").count() == 1


def test_a_claim_is_no_decision(tenant, reviewer):
    [item] = seed(tenant, 1)
    candidates_claim(tenant=tenant, actor=Actor.reviewer(reviewer), count=1)
    fresh = Candidate.objects.get(pk=item.pk)
    assert (fresh.status, fresh.version) == ("pending_review", item.version)


@pytest.mark.parametrize("count", [0, -1, 101])
def test_a_claim_size_out_of_bounds_is_refused(tenant, reviewer, count):
    with pytest.raises(InvalidInput):
        candidates_claim(tenant=tenant, actor=Actor.reviewer(reviewer), count=count)


def test_claims_stay_in_their_tenant(tenant, other_tenant, reviewer, outsider):
    seed(tenant, 2)
    assert candidates_claim(tenant=other_tenant, actor=Actor.reviewer(outsider), count=5) == []
    assert len(candidates_claim(tenant=tenant, actor=Actor.reviewer(reviewer), count=5)) == 2


@pytest.mark.django_db(transaction=True)
def test_two_reviewers_claiming_at_the_same_moment_never_share_an_item(tenant, reviewer, second_reviewer):
    """Two sessions on PostgreSQL, each in its own connection and transaction, released together."""
    import threading

    from django.db import connection as main_connection, connections

    seed(tenant, 30)
    barrier = threading.Barrier(2)
    results, errors = {}, []

    def work(user):
        try:
            barrier.wait(timeout=10)
            for _ in range(3):
                results.setdefault(user.pk, []).extend(
                    candidates_claim(tenant=tenant, actor=Actor.reviewer(user), count=6)
                )
        except Exception as error:  # noqa: BLE001 - reported below
            errors.append(error)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=work, args=(user,)) for user in (reviewer, second_reviewer)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert not errors
    first, second = results[reviewer.pk], results[second_reviewer.pk]
    assert not set(first) & set(second)
    assert len(first) + len(second) == 30  # 36 asked for, 30 exist: every item went to exactly one
    assert main_connection.vendor == "postgresql"


@pytest.mark.skipif(connection.vendor != "postgresql", reason="index choice is PostgreSQL's")
def test_a_reviewers_own_claims_are_found_through_their_index(tenant, reviewer, second_reviewer):
    """Each queue page renews the viewer's claims and counts them, and "claimed by you" lists
    them: without the partial index on (tenant, claimed_by, expiry) each of these walks every
    open item (a million in bench/review_queue.py), with it they are a probe of a few rows."""
    seed(tenant, 40)
    me = Actor.reviewer(reviewer)
    candidates_claim(tenant=tenant, actor=me, count=3)
    candidates_claim(tenant=tenant, actor=Actor.reviewer(second_reviewer), count=5)
    now = timezone.now()
    mine = QueueFilters(claims=QueueClaims.MINE)
    reads = {
        "renewal": _live(me, now).filter(tenant=tenant),
        "claimed by you": queue_filtered(tenant=tenant, filters=mine, viewer=str(me), now=now).filter(
            status=CandidateStatus.PENDING_REVIEW
        ),
    }
    with transaction.atomic(), connection.cursor() as cursor:
        # A table this small is read whole whatever the indexes; forbid that to see the choice.
        cursor.execute("SET LOCAL enable_seqscan = off")
        plans = {name: queryset.explain() for name, queryset in reads.items()}
    for name, plan in plans.items():
        assert "candidate_open_claims" in plan, f"{name}: {plan}"
