"""Grounding (SPEC §3): the pure check, and the policy keeping a flagged candidate from any
automatic outcome."""
import pytest

from reviews.policy.grounding import SourceMessage, grounding_flags, value_supported
from reviews.models import CandidateFlag, CandidateStatus, Kind, Reason
from reviews.policy.pipeline import ActiveFact, FieldRule, Proposal, Thresholds, evaluate

USER = SourceMessage("user", "我负责 Flask 迁移项目，项目使用 MySQL。")


@pytest.mark.parametrize("value, evidence", [
    ("MySQL", "项目使用 MySQL"),
    ("mysql", "项目使用 ＭｙＳＱＬ"),  # width and case aside
    ("project:flask-migration", "我负责 Flask 迁移项目"),
    ("project:billing", "我参与了计费项目"),  # the project-name glossary reads 计费 as billing
    ("前端开发", "我在字节跳动做前端开发"),
    ("keep answers short", "Please keep answers short"),
    ("F#", "Our courier tracking system is powered by F#."),  # too short for a token: a word of its own
    ("F#", "智能客服项目基于 F# 开发"),
])
def test_a_value_the_evidence_states_is_supported(value, evidence):
    assert value_supported(value, evidence)


@pytest.mark.parametrize("value, evidence", [
    ("PostgreSQL", "项目使用 MySQL"),
    ("深圳", "我住在广州"),
    ("Berlin", ""),
    ("F#", "We wrote it in F."),
    ("R", "Our stack is React"),  # a letter inside a word is not the word
])
def test_a_value_the_evidence_does_not_state_is_not(value, evidence):
    assert not value_supported(value, evidence)


def test_grounded_in_the_users_own_message():
    assert grounding_flags(value="MySQL", evidence="项目使用 MySQL", source=USER) == []


@pytest.mark.parametrize("value, evidence", [
    ("MySQL", "项目使用 PostgreSQL"),  # evidence not in the message
    ("PostgreSQL", "项目使用 MySQL"),  # in the message, but it does not state the value
    ("MySQL", ""),  # no evidence at all
])
def test_unsupported(value, evidence):
    assert grounding_flags(value=value, evidence=evidence, source=USER) == [CandidateFlag.UNSUPPORTED]


@pytest.mark.parametrize("source", [
    SourceMessage("assistant", "You live in Berlin."),
    SourceMessage("tool", "You live in Berlin."),
    SourceMessage("user", "You live in Berlin.", is_subjects=False),
])
def test_not_from_user(source):
    assert grounding_flags(value="Berlin", evidence="live in Berlin", source=source) == [CandidateFlag.NOT_FROM_USER]


def test_no_stored_message_has_nothing_to_check():
    assert grounding_flags(value="Berlin", evidence="anything", source=None) == []


RULE = FieldRule("user", "name", "one", "normal", "identity", auto_approve=True)
LOCATION = FieldRule("user", "location", "one", "personal", "constraint", auto_approve=False)


def proposal(value="Alice", *, grounding=(CandidateFlag.UNSUPPORTED,), **extra):
    return Proposal(entity_type="user", field="name", value=value, value_digest=f"d:{value}", confidence=0.99,
                    source="chat", grounding=grounding, **extra)


def decide(item, rule=RULE, active=(), suppressed=()):
    return evaluate(item, rule=rule, entity_type_known=True, thresholds=Thresholds(), active_facts=list(active),
                    suppressed_digests=set(suppressed))


def test_the_same_candidate_is_auto_approved_only_when_grounded():
    assert decide(proposal(grounding=())).status == CandidateStatus.AUTO_APPROVED
    flagged = decide(proposal())
    assert (flagged.status, flagged.reason) == (CandidateStatus.PENDING_REVIEW, Reason.UNGROUNDED)


def test_a_flagged_correction_is_not_applied_automatically():
    current = ActiveFact(7, "d:Alice", "chat")
    grounded = decide(proposal("Alicia", grounding=(), supersedes=True), active=[current])
    assert grounded.status == CandidateStatus.AUTO_APPROVED and grounded.replaces == 7

    flagged = decide(proposal("Alicia", supersedes=True, grounding=(CandidateFlag.NOT_FROM_USER,)), active=[current])
    assert flagged.status == CandidateStatus.PENDING_REVIEW and flagged.conflict_with == 7 and flagged.replaces is None


@pytest.mark.parametrize("item, rule, active", [
    (proposal(kind=Kind.PLAN), RULE, ()),  # would wait for the subject
    (proposal("Alice"), RULE, (ActiveFact(3, "d:Alice", "chat"),)),  # would merge
])
def test_no_automatic_outcome_for_a_flagged_candidate(item, rule, active):
    assert decide(item, rule, active).status == CandidateStatus.PENDING_REVIEW


def test_rejections_still_reject():
    assert decide(proposal(), suppressed={"d:Alice"}, active=()).reason == Reason.SUPPRESSED
    assert decide(proposal(secret_kinds=("password",))).reason == Reason.SECRET_DETECTED
