"""Migration 0013: a contest closed before the contested state existed leaves the fact empty."""
from importlib import import_module

import pytest
from django.apps import apps

from reviews.actors import Actor
from reviews.models import AuditEvent, Fact
from reviews.services.candidates import candidate_reject
from reviews.services.portal import fact_contest

emptied = import_module("reviews.migrations.0013_closed_contests_empty").closed_contests_emptied

ALICE = Actor.subject("alice")


@pytest.fixture
def legacy_rejected_contest(tenant, alice, reviewer):
    """A rejected contest as the code before 0010 left it: deleted, value and evidence kept."""
    contest = fact_contest(tenant=tenant, user_id="alice", fact_id=alice.role.pk, actor=ALICE)
    candidate_reject(tenant=tenant, candidate_id=contest.pk, version=contest.version, note="subject is right",
                     actor=Actor.reviewer(reviewer))
    Fact.objects.filter(pk=alice.role.pk).update(value="data engineer", evidence="I am a data engineer")
    return Fact.objects.get(pk=alice.role.pk)


def test_a_closed_contest_leaves_its_fact_empty_with_its_history(tenant, legacy_rejected_contest):
    events = AuditEvent.objects.filter(tenant_id=tenant.pk).count()

    emptied(apps, None)

    fact = Fact.objects.get(pk=legacy_rejected_contest.pk)
    assert (fact.status, fact.value, fact.evidence) == ("deleted", "", "")
    assert list(fact.versions.values_list("value", flat=True)) == ["data engineer"]
    assert AuditEvent.objects.filter(tenant_id=tenant.pk).count() == events  # no status changed


def test_a_value_its_history_does_not_hold_is_left_alone(legacy_rejected_contest):
    Fact.objects.filter(pk=legacy_rejected_contest.pk).update(value="something else")

    emptied(apps, None)

    assert Fact.objects.get(pk=legacy_rejected_contest.pk).value == "something else"


def test_an_open_contest_and_other_facts_keep_their_values(tenant, alice):
    contest = fact_contest(tenant=tenant, user_id="alice", fact_id=alice.role.pk, actor=ALICE)
    before = dict(Fact.objects.values_list("pk", "value"))

    emptied(apps, None)

    assert dict(Fact.objects.values_list("pk", "value")) == before
    assert Fact.objects.get(pk=contest.conflict_fact_id).status == "contested"
