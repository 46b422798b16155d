"""Property-based: any stream of candidates ends well-defined and replays identically."""
import uuid

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reviews.actors import Actor
from reviews.models import Candidate, CandidateStatus, Fact
from reviews.domain import CandidateInput
from reviews.services.candidates import candidates_submit
from reviews.services.tenants import tenant_create

FIELDS = [
    ("user", "me", "name"),
    ("user", "me", "location"),
    ("user", "me", "preference"),
    ("user", "me", "health"),
    ("project", "flask", "database"),
    ("project", "flask", "tech_stack"),
    ("user", "me", "relation:pen_name"),
    ("user", "me", "shoe_size"),  # not in the schema
    ("robot", "r2", "name"),  # unknown entity type
]
VALUES = ["MySQL", "mysql ", "PostgreSQL", "Alice", "ALICE", "莫尔索", "", "sk-proj-4fQ9xT2mLr8vKp0aZ7wYc3Hn"]

candidate_inputs = st.builds(
    lambda slot, value, confidence, kind, scope, supersedes, source: (
        CandidateInput(
            entity_type=slot[0],
            entity_id=slot[1],
            field=slot[2],
            value=value,
            confidence=confidence,
            kind=kind,
            scope=scope,
            thread_id="t-1" if scope == "thread" else "",
            supersedes=supersedes,
        ),
        source,
    ),
    st.sampled_from(FIELDS),
    st.sampled_from(VALUES),
    st.sampled_from([0.2, 0.55, 0.85, 0.9, 0.96, 1.0]),
    st.sampled_from(["fact", "fact", "fact", "plan", "inference", "relation"]),
    st.sampled_from(["long_term", "long_term", "thread"]),
    st.booleans(),
    st.sampled_from(["chat", "chat", "business_system"]),
)
streams = st.lists(st.lists(candidate_inputs, min_size=1, max_size=4), min_size=1, max_size=6)


def run_stream(batches) -> tuple[list, list]:
    tenant = tenant_create(slug=f"prop-{uuid.uuid4().hex[:10]}")
    statuses = []
    for batch in batches:
        # One submission per source, in stream order: the key decides the source.
        for source in dict.fromkeys(source for _, source in batch):
            items = [item for item, item_source in batch if item_source == source]
            results = candidates_submit(
                tenant=tenant, user_id="u-1", candidates=items, source=source, actor=Actor("api_key", "prop")
            )
            statuses.extend(r.status for r in results)
    facts = sorted(
        Fact.objects.filter(tenant=tenant).values_list(
            "entity__entity_type", "entity__entity_id", "field", "thread_id", "value", "version", "status", "source"
        )
    )
    return statuses, facts, tenant


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(batches=streams)
def test_every_candidate_ends_in_one_status_and_replay_is_deterministic(db, batches):
    statuses, facts, tenant = run_stream(batches)
    submitted = sum(len(batch) for batch in batches)

    # Exactly one status per candidate, from the SPEC's list.
    stored = list(Candidate.objects.filter(tenant=tenant).values_list("status", flat=True))
    assert len(stored) == len(statuses) == submitted
    assert set(stored) <= set(CandidateStatus.values)

    # Invariants: one active value per `one` slot; every fact came from a published candidate.
    active_one = [f for f in facts if f[6] == "active" and f[2] in ("name", "location", "database")]
    slots = [(f[0], f[1], f[2], f[3]) for f in active_one]
    assert len(slots) == len(set(slots))
    assert all("sk-proj" not in f[4] for f in facts)

    # Replaying the same stream yields the same facts.
    _, replayed, _ = run_stream(batches)
    assert replayed == facts
