"""The pure policy of SPEC §3: every step, in order, with its reason code."""
import pytest

from reviews.models import CandidateStatus as S
from reviews.models import Reason as R
from reviews.policy.pipeline import ActiveFact, FieldRule, Proposal, Thresholds, evaluate, relation_rule

PRIORITY = {"business_system": 4, "self_service": 3, "reviewer": 2, "chat": 1}
THRESHOLDS = Thresholds(reject_below=0.5, confirm_below=0.8, auto_approve_at=0.95, source_priority=PRIORITY)

NAME = FieldRule("user", "name", "one", "normal", "identity", auto_approve=True)
LOCATION = FieldRule("user", "location", "one", "personal", "constraint", auto_approve=False)
HEALTH = FieldRule("user", "health", "many", "sensitive", "scenario", auto_approve=False, retention_days=90)
PREFERENCE = FieldRule("user", "preference", "many", "normal", "preference", auto_approve=True)
DATABASE = FieldRule("project", "database", "one", "normal", "constraint", auto_approve=True)


def proposal(value="Alice", confidence=0.9, source="chat", digest=None, **extra):
    return Proposal(
        entity_type="user",
        field="name",
        value=value,
        value_digest=digest or f"d:{value.lower()}",
        confidence=confidence,
        source=source,
        **extra,
    )


def decide(p, rule=NAME, active=(), suppressed=(), thresholds=THRESHOLDS, known=True):
    return evaluate(
        p,
        rule=rule,
        entity_type_known=known,
        thresholds=thresholds,
        active_facts=list(active),
        suppressed_digests=set(suppressed),
    )


class TestShape:
    def test_unknown_entity_type_is_field_not_allowed(self):
        d = decide(proposal(), rule=None, known=False)
        assert (d.status, d.reason) == (S.REJECTED, R.FIELD_NOT_ALLOWED)

    def test_unknown_field_is_field_not_allowed(self):
        d = decide(proposal(), rule=None)
        assert (d.status, d.reason) == (S.REJECTED, R.FIELD_NOT_ALLOWED)

    @pytest.mark.parametrize("value", ["", "   ", "\n\t"])
    def test_empty_value_is_invalid(self, value):
        d = decide(proposal(value=value))
        assert (d.status, d.reason) == (S.REJECTED, R.INVALID)

    def test_over_long_value_is_invalid(self):
        assert decide(proposal(value="x" * 1001)).reason == R.INVALID
        assert decide(proposal(value="x" * 1000, confidence=0.99)).status == S.AUTO_APPROVED

    def test_value_cut_short_before_evaluation_is_still_invalid(self):
        d = decide(proposal(value="x" * 1000, value_too_long=True))
        assert (d.status, d.reason) == (S.REJECTED, R.INVALID)

    def test_shape_runs_before_credentials(self):
        d = decide(proposal(secret_kinds=("api_key",)), rule=None)
        assert d.reason == R.FIELD_NOT_ALLOWED


def test_credentials_reject_before_confidence():
    d = decide(proposal(value="[redacted api_key]", confidence=0.1, secret_kinds=("api_key",)))
    assert (d.status, d.reason) == (S.REJECTED, R.SECRET_DETECTED)


class TestConfidence:
    def test_below_reject_threshold(self):
        d = decide(proposal(confidence=0.49))
        assert (d.status, d.reason) == (S.REJECTED, R.BELOW_CONFIDENCE)

    def test_between_thresholds_asks_the_subject(self):
        d = decide(proposal(confidence=0.5))
        assert (d.status, d.reason) == (S.PENDING_USER, R.NEEDS_CONFIRMATION)
        assert decide(proposal(confidence=0.79)).status == S.PENDING_USER

    def test_thresholds_are_per_tenant(self):
        strict = Thresholds(reject_below=0.7, confirm_below=0.9, auto_approve_at=None, source_priority=PRIORITY)
        assert decide(proposal(confidence=0.69), thresholds=strict).reason == R.BELOW_CONFIDENCE
        assert decide(proposal(confidence=0.85), thresholds=strict).status == S.PENDING_USER


@pytest.mark.parametrize("kind", ["plan", "inference"])
def test_plans_and_inferences_go_to_the_subject(kind):
    # "we may switch to Redis" is a plan to confirm, not "the project uses Redis".
    d = decide(proposal(value="Redis", confidence=0.99, kind=kind), rule=DATABASE)
    assert (d.status, d.reason) == (S.PENDING_USER, R.UNCONFIRMED_KIND)


def test_sensitive_fields_need_consent_even_at_full_confidence():
    d = decide(proposal(value="diabetes", confidence=1.0), rule=HEALTH)
    assert (d.status, d.reason) == (S.PENDING_USER, R.SENSITIVE_CONSENT)


class TestDuplicate:
    def test_same_value_as_active_fact_merges(self):
        d = decide(proposal(value="Alice"), active=[ActiveFact(7, "d:alice", "chat")])
        assert (d.status, d.reason, d.merge_into) == (S.MERGED, R.DUPLICATE, 7)

    def test_many_field_merges_into_the_matching_value(self):
        active = [ActiveFact(1, "d:python", "chat"), ActiveFact(2, "d:short answers", "chat")]
        d = decide(proposal(value="short answers"), rule=PREFERENCE, active=active)
        assert d.merge_into == 2

    def test_refused_value_is_suppressed(self):
        d = decide(proposal(value="Bob", confidence=0.99), suppressed={"d:bob"})
        assert (d.status, d.reason) == (S.REJECTED, R.SUPPRESSED)


class TestConflict:
    def test_different_value_on_one_field_goes_to_review_with_conflict(self):
        d = decide(proposal(value="Bob", confidence=0.99), active=[ActiveFact(3, "d:alice", "chat")])
        assert (d.status, d.reason, d.conflict_with) == (S.PENDING_REVIEW, R.CONFLICT, 3)

    def test_explicit_correction_from_equal_priority_settles_it(self):
        d = decide(
            proposal(value="PostgreSQL", confidence=0.9, supersedes=True),
            rule=DATABASE,
            active=[ActiveFact(3, "d:mysql", "chat")],
        )
        assert (d.status, d.reason, d.replaces) == (S.AUTO_APPROVED, R.CORRECTION, 3)

    @pytest.mark.parametrize(
        "new_source,old_source",
        [("chat", "reviewer"), ("chat", "business_system"), ("reviewer", "self_service"), ("self_service", "business_system")],
    )
    def test_lower_priority_source_never_overrides_automatically(self, new_source, old_source):
        d = decide(
            proposal(value="PostgreSQL", confidence=1.0, supersedes=True, source=new_source),
            rule=DATABASE,
            active=[ActiveFact(3, "d:mysql", old_source)],
        )
        assert (d.status, d.reason) == (S.PENDING_REVIEW, R.CONFLICT)

    def test_higher_priority_correction_wins(self):
        d = decide(
            proposal(value="CockroachDB", confidence=0.9, supersedes=True, source="business_system"),
            rule=DATABASE,
            active=[ActiveFact(3, "d:postgresql", "self_service")],
        )
        assert d.status == S.AUTO_APPROVED

    def test_correction_without_supersedes_is_a_conflict(self):
        d = decide(proposal(value="PostgreSQL", confidence=1.0), rule=DATABASE, active=[ActiveFact(3, "d:mysql", "chat")])
        assert d.reason == R.CONFLICT

    def test_correction_on_field_without_auto_approve_is_a_conflict(self):
        d = decide(
            proposal(value="Berlin", confidence=1.0, supersedes=True),
            rule=LOCATION,
            active=[ActiveFact(3, "d:paris", "chat")],
        )
        assert d.reason == R.CONFLICT

    def test_tenant_that_never_auto_approves_reviews_corrections_too(self):
        never = Thresholds(reject_below=0.5, confirm_below=0.8, auto_approve_at=None, source_priority=PRIORITY)
        d = decide(
            proposal(value="PostgreSQL", confidence=1.0, supersedes=True),
            rule=DATABASE,
            active=[ActiveFact(3, "d:mysql", "chat")],
            thresholds=never,
        )
        assert d.reason == R.CONFLICT

    def test_many_field_has_no_conflict(self):
        d = decide(proposal(value="Go", confidence=0.99), rule=PREFERENCE, active=[ActiveFact(1, "d:python", "chat")])
        assert (d.status, d.reason) == (S.AUTO_APPROVED, R.AUTO_APPROVE)


class TestAutoApprove:
    def test_confident_normal_field_is_auto_approved(self):
        d = decide(proposal(confidence=0.95))
        assert (d.status, d.reason) == (S.AUTO_APPROVED, R.AUTO_APPROVE)

    def test_below_auto_threshold_goes_to_review(self):
        d = decide(proposal(confidence=0.94))
        assert (d.status, d.reason) == (S.PENDING_REVIEW, R.NEEDS_REVIEW)

    def test_personal_field_is_never_auto_approved(self):
        d = decide(proposal(value="Berlin", confidence=1.0), rule=LOCATION)
        assert (d.status, d.reason) == (S.PENDING_REVIEW, R.NEEDS_REVIEW)

    def test_null_threshold_means_never(self):
        never = Thresholds(reject_below=0.5, confirm_below=0.8, auto_approve_at=None, source_priority=PRIORITY)
        assert decide(proposal(confidence=1.0), thresholds=never).status == S.PENDING_REVIEW


class TestRelations:
    def test_relation_fields_accepted_on_any_type(self):
        rule = relation_rule("user", "relation:pen_name", None)
        assert (rule.cardinality, rule.sensitivity, rule.category) == ("many", "normal", "relation")

    def test_tenant_can_restrict_relation_names(self):
        assert relation_rule("user", "relation:pen_name", ["works_on"]) is None
        assert relation_rule("user", "relation:works_on", ["works_on"]) is not None

    def test_empty_relation_name_is_not_a_field(self):
        assert relation_rule("user", "relation:", None) is None
