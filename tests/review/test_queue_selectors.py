"""The queue selectors: phases, keyset pages, filters, and the context beside each item."""
from datetime import timedelta

import pytest
from django.utils import timezone

from reviews.errors import InvalidInput
from reviews.models import Candidate, Entity
from reviews.selectors.queue import (
    QueueCursor,
    QueueFilters,
    evidence_segments,
    review_queue_items,
    review_queue_page,
)
from tests.conftest import candidate
from tests.review.conftest import propose, store_thread


def many_pending(tenant, count, user_id="bob", **extra):
    items = [candidate(field="preference", value=f"likes topic {index}", **extra) for index in range(count)]
    return propose(tenant, user_id, *items)


def read_all(tenant, filters, limit):
    seen, cursor, pages = [], None, 0
    while True:
        page = review_queue_page(tenant=tenant, filters=filters, cursor=cursor, limit=limit)
        seen.extend(c.pk for c in page.candidates)
        pages += 1
        if page.next_cursor is None:
            return seen, pages
        cursor = QueueCursor.decode(page.next_cursor.encode())


class TestKeysetPages:
    def test_pages_cover_every_item_once_oldest_first(self, tenant):
        created = many_pending(tenant, 23)
        seen, pages = read_all(tenant, QueueFilters(), limit=5)
        assert seen == [c.pk for c in sorted(created, key=lambda c: (c.created_at, c.pk))]
        assert pages == 5

    def test_ties_on_created_at_are_broken_by_id(self, tenant):
        created = many_pending(tenant, 6)
        Candidate.objects.filter(pk__in=[c.pk for c in created]).update(created_at=timezone.now())
        seen, _ = read_all(tenant, QueueFilters(), limit=4)
        assert seen == sorted(c.pk for c in created)

    def test_pending_review_comes_before_pending_user_in_the_open_queue(self, tenant, review_queue):
        seen, _ = read_all(tenant, QueueFilters(status="open"), limit=2)
        assert seen[-1] == review_queue.waiting_for_user.pk
        assert set(seen[:-1]) == {review_queue.evidence.pk, review_queue.conflict.pk, review_queue.new_entity.pk}

    def test_all_statuses_start_with_pending_review(self, tenant, review_queue):
        page = review_queue_page(tenant=tenant, filters=QueueFilters(status="all"), limit=10)
        statuses = [c.status for c in page.candidates]
        assert statuses[:3] == ["pending_review"] * 3 and statuses[3] == "pending_user"
        assert "auto_approved" in statuses

    def test_another_tenant_sees_nothing(self, tenant, other_tenant, review_queue):
        page = review_queue_page(tenant=other_tenant, filters=QueueFilters(status="all"))
        assert page.candidates == [] and page.next_cursor is None

    @pytest.mark.parametrize("token", ["", "nonsense", "MS4y", "LTEuMS4x", "!!!"])
    def test_a_broken_cursor_is_invalid_input(self, token):
        with pytest.raises(InvalidInput):
            QueueCursor.decode(token or "x")


class TestFilters:
    def ids(self, tenant, **filters):
        return {c.pk for c in review_queue_page(tenant=tenant, filters=QueueFilters(**filters)).candidates}

    def test_entity_type_field_and_user(self, tenant, review_queue):
        many_pending(tenant, 2, user_id="bob")
        assert self.ids(tenant, entity_type="project") == {review_queue.conflict.pk}
        assert self.ids(tenant, field="location") == {review_queue.evidence.pk}
        assert self.ids(tenant, user_id="alice") == {
            review_queue.evidence.pk, review_queue.conflict.pk, review_queue.new_entity.pk
        }
        assert len(self.ids(tenant, user_id="bob")) == 2
        assert self.ids(tenant, user_id="nobody") == set()

    def test_any_relation(self, tenant, review_queue):
        relations = propose(
            tenant, "alice",
            candidate(field="relation:works_at", value="Acme", kind="relation"),
            candidate(field="relation:manages", value="flask-migration", kind="relation"),
        )
        assert self.ids(tenant, field="relation:*") == {c.pk for c in relations}
        assert self.ids(tenant, field="relation:works_at") == {relations[0].pk}

    def test_sensitivity(self, tenant, review_queue):
        assert self.ids(tenant, sensitivity="personal") == {review_queue.evidence.pk}
        assert self.ids(tenant, sensitivity="normal") == {review_queue.conflict.pk, review_queue.new_entity.pk}
        assert self.ids(tenant, sensitivity="sensitive") == set()

    def test_confidence_range(self, tenant, review_queue):
        [low] = propose(tenant, "alice", candidate(field="preference", value="tea", confidence=0.82))
        assert self.ids(tenant, max_confidence=0.85) == {low.pk}
        assert self.ids(tenant, min_confidence=0.85, max_confidence=0.95) == {
            review_queue.evidence.pk, review_queue.conflict.pk, review_queue.new_entity.pk
        }

    def test_conflict_and_new_entity(self, tenant, review_queue):
        assert self.ids(tenant, conflict=True) == {review_queue.conflict.pk}
        assert review_queue.conflict.pk not in self.ids(tenant, conflict=False)
        assert self.ids(tenant, new_entity=True) == {review_queue.conflict.pk, review_queue.new_entity.pk}
        assert self.ids(tenant, new_entity=False) == {review_queue.evidence.pk}

    def test_new_entity_also_follows_the_entity_flag(self, tenant, review_queue):
        Candidate.objects.filter(pk=review_queue.new_entity.pk).update(flags=[])
        assert review_queue.new_entity.pk in self.ids(tenant, new_entity=True)
        Entity.objects.filter(pk=review_queue.new_entity.entity_id).update(is_new=False)
        assert review_queue.new_entity.pk not in self.ids(tenant, new_entity=True)

    def test_age(self, tenant, review_queue):
        Candidate.objects.filter(pk=review_queue.evidence.pk).update(created_at=timezone.now() - timedelta(days=3))
        Candidate.objects.filter(pk=review_queue.conflict.pk).update(created_at=timezone.now() - timedelta(days=40))
        assert self.ids(tenant, age="lt1d") == {review_queue.new_entity.pk}
        assert self.ids(tenant, age="1to7d") == {review_queue.evidence.pk}
        assert self.ids(tenant, age="gt7d") == {review_queue.conflict.pk}
        assert self.ids(tenant, age="gt30d") == {review_queue.conflict.pk}

    @pytest.mark.parametrize(
        "bad", [{"status": "done"}, {"sensitivity": "secret"}, {"age": "old"}, {"min_confidence": 1.5}]
    )
    def test_unknown_values_are_invalid_input(self, bad):
        with pytest.raises(InvalidInput):
            QueueFilters(**bad)


class TestItemContext:
    def test_source_message_with_neighbours_and_highlighted_evidence(self, tenant, review_queue):
        [item] = review_queue_items(tenant=tenant, candidates=[review_queue.evidence])
        assert [line.message.message_id for line in item.conversation] == ["m-1", "m-2", "m-3", "m-4", "m-5"]
        source = next(line for line in item.conversation if line.is_source)
        assert source.segments == [("By the way, ", False), ("I live in Berlin", True), (" these days.", False)]
        assert item.sensitivity == "personal" and item.cardinality == "one"

    def test_neighbours_stay_inside_the_subjects_thread(self, tenant, review_queue):
        store_thread(tenant, "bob", "t-1", [("b-1", "user", "Bob's own words"), ("b-2", "user", "I like tea")])
        [bob] = propose(tenant, "bob", candidate(field="preference", value="tea", source_message_id="b-2",
                                                 evidence="like tea"))
        [item] = review_queue_items(tenant=tenant, candidates=[bob])
        assert [line.message.message_id for line in item.conversation] == ["b-1", "b-2"]

    def test_several_sources_in_one_thread_read_together_each_get_their_own_window(self, tenant, review_queue):
        ids = [f"d-{n}" for n in range(1, 13)]
        store_thread(tenant, "dana", "t-long", [(message_id, "user", f"line {message_id}") for message_id in ids])
        early, late, last = propose(
            tenant,
            "dana",
            *[candidate(field="preference", value=f"v {source}", source_message_id=source) for source in ("d-2", "d-9", "d-12")],
        )
        # Another subject's candidate naming dana's message: a source belongs to its own subject.
        [stranger] = propose(tenant, "erin", candidate(field="preference", value="x", source_message_id="d-5"))
        items = review_queue_items(tenant=tenant, candidates=[early, late, last, stranger])
        windows = [[line.message.message_id for line in item.conversation] for item in items]
        assert windows == [
            ["d-1", "d-2", "d-3", "d-4"],
            ["d-7", "d-8", "d-9", "d-10", "d-11"],
            ["d-10", "d-11", "d-12"],
            [],
        ]
        assert [[line.is_source for line in item.conversation] for item in items[:3]] == [
            [False, True, False, False],
            [False, False, True, False, False],
            [False, False, True],
        ]

    def test_another_tenants_message_with_the_same_id_is_not_shown(self, tenant, other_tenant, review_queue):
        store_thread(other_tenant, "alice", "t-9", [("m-77", "user", "other tenant's secret")])
        [item] = propose(tenant, "alice", candidate(field="preference", value="x", source_message_id="m-77"))
        [context] = review_queue_items(tenant=tenant, candidates=[item])
        assert context.conversation == [] and not context.source_found

    def test_current_facts_and_the_conflicting_value(self, tenant, review_queue):
        [item] = review_queue_items(tenant=tenant, candidates=[review_queue.conflict])
        assert [(f.field, f.value) for f in item.current_facts] == [("database", "MySQL")]
        assert item.conflict.pk == review_queue.database_fact.pk
        assert item.is_new_entity

    def test_decider_is_named(self, tenant, review_queue, reviewer):
        from tests.review.conftest import approve_as

        decided = approve_as(reviewer, review_queue.evidence)
        [item] = review_queue_items(tenant=tenant, candidates=[Candidate.objects.get(pk=decided.pk)])
        assert item.decider == "rita"


class TestEvidenceSegments:
    def test_no_evidence_or_no_match_leaves_the_text_whole(self):
        assert evidence_segments("hello", "") == [("hello", False)]
        assert evidence_segments("hello", "bye") == [("hello", False)]

    def test_case_insensitive_fallback(self):
        assert evidence_segments("I use MySQL daily", "mysql") == [("I use ", False), ("MySQL", True), (" daily", False)]

    def test_markup_stays_plain_text(self):
        text = "x <img src=x onerror=alert(1)> y"
        assert evidence_segments(text, "<img src=x onerror=alert(1)>")[1] == ("<img src=x onerror=alert(1)>", True)
