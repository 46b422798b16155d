"""reviews.policy.transitions: each transition starts only from its source states (SPEC §1, §3).

Every forbidden source state is refused with InvalidTransition (409 at the API) before
anything is written: the row keeps its status and no event is produced.
"""
import ast
from pathlib import Path

import pytest
from django.db import transaction
from django.utils import timezone

from reviews.policy import transitions
from reviews.actors import SYSTEM, Actor
from reviews.errors import Forbidden, InvalidTransition
from reviews.models import AuditAction, Candidate, CandidateStatus, Fact, FactStatus
from tests.conftest import candidate

NOW = timezone.now()
FACT_TRANSITIONS = [
    transitions.FACT_CONTEST,
    transitions.FACT_REINSTATE,
    transitions.FACT_DELETE,
    transitions.FACT_EXPIRE,
    transitions.FACT_RETIRE,
]
CANDIDATE_TRANSITIONS = [
    transitions.CANDIDATE_APPROVE,
    transitions.CANDIDATE_REJECT,
    transitions.CANDIDATE_DEFER,
    transitions.CANDIDATE_SUPERSEDE,
    transitions.CANDIDATE_WITHDRAW,
]


def _forbidden(transition, statuses):
    return [(transition, status) for status in statuses if status not in transition.sources]


@pytest.fixture
def fact(tenant, submit):
    [result] = submit(tenant, "alice", candidate(value="Alice", confidence=0.99))
    return Fact.objects.select_related("entity", "subject").get(pk=result.fact_id)


@pytest.fixture
def pending(tenant, submit):
    [result] = submit(tenant, "alice", candidate(field="role", value="engineer", confidence=0.9))
    return Candidate.objects.select_related("subject", "conflict_fact").get(pk=result.candidate_id)


def _apply_fact(transition, fact):
    if transition is transitions.FACT_CONTEST:
        return transitions.fact_contest(fact, subject=fact.subject, actor=SYSTEM, candidate_id=0, note="", now=NOW)
    if transition is transitions.FACT_REINSTATE:
        return transitions.fact_reinstate(fact)
    return transitions.facts_end([fact], transition, subject=fact.subject, actor=SYSTEM, at=NOW)


def _apply_candidate(transition, item):
    if transition in (transitions.CANDIDATE_SUPERSEDE, transitions.CANDIDATE_WITHDRAW):
        rows = [(item.pk, item.status, item.version)]
        return transitions.candidates_close(rows, transition, subject=item.subject, actor=SYSTEM, reason="", now=NOW)
    return transitions.candidate_decide(item, transition, subject=item.subject, actor=SYSTEM, reason="", now=NOW)


@pytest.mark.parametrize(
    "transition,status",
    [pair for t in FACT_TRANSITIONS for pair in _forbidden(t, FactStatus.values)],
    ids=lambda value: getattr(value, "name", value),
)
def test_a_fact_transition_refuses_every_other_source_state(fact, transition, status):
    Fact.objects.filter(pk=fact.pk).update(status=status)
    fact.refresh_from_db()
    with pytest.raises(InvalidTransition) as refused, transaction.atomic():
        _apply_fact(transition, fact)
    assert refused.value.http_status == 409 and refused.value.details["status"] == status
    assert Fact.objects.get(pk=fact.pk).status == status


@pytest.mark.parametrize(
    "transition,status",
    [pair for t in CANDIDATE_TRANSITIONS for pair in _forbidden(t, CandidateStatus.values)],
    ids=lambda value: getattr(value, "name", value),
)
def test_a_candidate_transition_refuses_every_other_source_state(pending, transition, status):
    Candidate.objects.filter(pk=pending.pk).update(status=status)
    pending.refresh_from_db()
    with pytest.raises(InvalidTransition), transaction.atomic():
        _apply_candidate(transition, pending)
    row = Candidate.objects.get(pk=pending.pk)
    assert (row.status, row.version) == (status, pending.version)


@pytest.mark.parametrize("transition", FACT_TRANSITIONS, ids=lambda t: t.name)
def test_each_fact_transition_from_its_source_ends_in_its_target_and_names_its_action(fact, transition):
    Fact.objects.filter(pk=fact.pk).update(status=transition.sources[0])
    fact.refresh_from_db()
    with transaction.atomic():
        produced = _apply_fact(transition, fact)
    if transition is transitions.FACT_REINSTATE:
        assert produced is AuditAction.FACT_REINSTATED and fact.status == FactStatus.ACTIVE  # the publisher saves
        return
    [event] = produced if isinstance(produced, list) else [produced]
    assert event.action is transition.action and event.object_id == fact.pk
    assert Fact.objects.get(pk=fact.pk).status == transition.target


@pytest.mark.parametrize("transition", CANDIDATE_TRANSITIONS, ids=lambda t: t.name)
def test_each_candidate_transition_bumps_the_version_and_names_its_action(pending, transition):
    Candidate.objects.filter(pk=pending.pk).update(status=transition.sources[0])
    pending.refresh_from_db()
    version = pending.version
    with transaction.atomic():
        produced = _apply_candidate(transition, pending)
    [event] = produced if isinstance(produced, list) else [produced]
    assert event.action is transition.action
    row = Candidate.objects.get(pk=pending.pk)
    assert (row.status, row.version, row.decided_by) == (transition.target, version + 1, "system")


@pytest.mark.parametrize("conflict", [False, True], ids=["plain", "conflict"])
@pytest.mark.parametrize("transition", [transitions.CANDIDATE_APPROVE, transitions.CANDIDATE_REJECT])
def test_the_subject_cannot_decide_an_item_waiting_for_a_reviewer(pending, transition, conflict):
    """SPEC §4: never an item waiting for a reviewer, a conflict included (the subject may
    contest the published fact instead)."""
    pending.has_conflict = conflict
    assert pending.status == CandidateStatus.PENDING_REVIEW
    with pytest.raises(Forbidden), transaction.atomic():
        transitions.candidate_decide(
            pending, transition, subject=pending.subject, actor=Actor.subject("alice"), reason="", now=NOW
        )
    row = Candidate.objects.get(pk=pending.pk)
    assert (row.status, row.version) == (CandidateStatus.PENDING_REVIEW, pending.version)


def test_no_module_but_transitions_changes_a_status():
    """Nothing else assigns ``.status`` or UPDATEs ``status=`` of a fact or a candidate
    (creating a row in its initial state is the creating service's business; exports and
    extractions and webhook deliveries have their own, simpler lifecycles)."""
    other_lifecycles = {"ExportStatus", "ExtractionStatus", "DeletionStatus", "DeliveryStatus"}
    root = Path(__file__).resolve().parents[2] / "reviews"
    offenders = []
    for path in root.rglob("*.py"):
        if path.name == "transitions.py" or "migrations" in path.parts:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            assigns = isinstance(node, ast.Assign) and any(
                isinstance(target, ast.Attribute) and target.attr == "status" and not _names_one_of(value, other_lifecycles)
                for target, value in _pairs(node)
            )
            updates = (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in ("update", "bulk_update")
                and any(
                    keyword.arg == "status" and not _names_one_of(keyword.value, other_lifecycles)
                    for keyword in node.keywords
                )
            )
            if assigns or updates:
                offenders.append(f"{path.relative_to(root)}:{node.lineno}")
    assert offenders == [], offenders


def _names_one_of(value: ast.AST, enumerations: set[str]) -> bool:
    return isinstance(value, ast.Attribute) and isinstance(value.value, ast.Name) and value.value.id in enumerations


def _pairs(node: ast.Assign):
    """(target, value) of an assignment, element by element for ``a.x, b.y = 1, 2``."""
    for target in node.targets:
        if isinstance(target, ast.Tuple) and isinstance(node.value, ast.Tuple):
            yield from zip(target.elts, node.value.elts)
        else:
            yield target, node.value
