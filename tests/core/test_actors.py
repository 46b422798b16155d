"""The actor value (SPEC §6): one format, written by str() and read by Actor.parse."""
import pytest

from reviews.actors import POLICY, SYSTEM, Actor
from reviews.models import ActorKind, AuditAction, Source


@pytest.mark.parametrize(
    "actor, stored",
    [
        (Actor(ActorKind.REVIEWER, "3"), "reviewer:3"),
        (Actor.subject("user:42"), "subject:user:42"),
        (POLICY, "policy"),
        (SYSTEM, "system"),
        (Actor(ActorKind.SYSTEM, "legacy-entity-store"), "system:legacy-entity-store"),
        (Actor(ActorKind.API_KEY, "mp_ab12"), "api_key:mp_ab12"),
    ],
)
def test_an_actor_round_trips_through_its_stored_string(actor, stored):
    assert str(actor) == stored
    assert Actor.parse(stored) == actor


@pytest.mark.parametrize("stored", ["", None, "robot:1", "reviewer"])
def test_parse_refuses_what_no_writer_stores_as_a_person(stored):
    parsed = Actor.parse(stored)
    assert parsed is None or parsed.staff_id is None


def test_only_a_staff_actor_with_a_numeric_id_has_a_staff_id():
    assert Actor.parse("reviewer:17").staff_id == 17
    assert Actor.parse("reviewer:r1").staff_id is None
    assert Actor.parse("subject:17").staff_id is None


def test_an_unknown_kind_is_refused_at_construction():
    with pytest.raises(ValueError):
        Actor("robot", "1")


def test_the_source_of_a_hand_written_value_follows_the_kind():
    assert Actor.subject("alice").source == Source.SELF_SERVICE
    assert Actor(ActorKind.REVIEWER, "1").source == Source.REVIEWER


def test_dynamic_actions_name_members_of_the_vocabulary():
    assert AuditAction.policy_outcome("pending_user") is AuditAction.POLICY_PENDING_USER
    assert AuditAction.bulk_decision("reject") is AuditAction.CANDIDATES_BULK_REJECT
    with pytest.raises(ValueError):
        AuditAction.policy_outcome("approved")
