"""The vocabularies of SPEC §1–§4, in one place."""
from django.db import models
from django.utils.translation import gettext_lazy as _
from django.utils.translation import pgettext_lazy


class Role(models.TextChoices):
    REVIEWER = "reviewer", _("Reviewer")
    AUDITOR = "auditor", _("Auditor")
    TENANT_ADMIN = "tenant_admin", _("Tenant admin")


class Scope(models.TextChoices):
    INGEST = "ingest", "ingest"
    RECALL = "recall", "recall"
    RECALL_SENSITIVE = "recall:sensitive", "recall:sensitive"
    REVIEW = "review", "review"
    ADMIN = "admin", "admin"
    SUBJECT = "subject", "subject"  # a host app acting for its signed-in user on their pending items


class EntityType(models.TextChoices):
    """The entity types a tenant's schema may give fields to (SPEC §2): a new field is for one
    of these, so a typo ("usr") cannot start a type no extractor or page knows. Labels as
    staff read them (the subject reads their own entity as "You", labels.py)."""

    USER = "user", pgettext_lazy("entity type", "User")
    PROJECT = "project", pgettext_lazy("entity type", "Project")
    ORGANIZATION = "organization", pgettext_lazy("entity type", "Organisation")
    PREFERENCE = "preference", pgettext_lazy("entity type", "Preferences")


class Cardinality(models.TextChoices):
    ONE = "one", _("one")
    MANY = "many", _("many")


class Sensitivity(models.TextChoices):
    NORMAL = "normal", _("normal")
    PERSONAL = "personal", _("personal")
    SENSITIVE = "sensitive", _("sensitive")


class Category(models.TextChoices):
    IDENTITY = "identity", _("Identity")
    PREFERENCE = "preference", _("Preferences")
    CONSTRAINT = "constraint", _("Constraints")
    SCENARIO = "scenario", _("Scenario records")
    RELATION = "relation", _("Relations")


class Kind(models.TextChoices):
    FACT = "fact", _("fact")
    RELATION = "relation", _("relation")
    INFERENCE = "inference", _("inference")
    PLAN = "plan", _("plan")


class MemoryScope(models.TextChoices):
    LONG_TERM = "long_term", _("long term")
    THREAD = "thread", _("this conversation")


class Source(models.TextChoices):
    CHAT = "chat", _("chat")
    BUSINESS_SYSTEM = "business_system", _("business system")
    SELF_SERVICE = "self_service", _("self service")
    REVIEWER = "reviewer", _("reviewer")


# SPEC §3 step 7: business_system > self_service > reviewer > chat.
DEFAULT_SOURCE_PRIORITY = {
    Source.BUSINESS_SYSTEM: 4,
    Source.SELF_SERVICE: 3,
    Source.REVIEWER: 2,
    Source.CHAT: 1,
}


class CandidateStatus(models.TextChoices):
    PENDING_REVIEW = "pending_review", _("pending review")
    PENDING_USER = "pending_user", _("waiting for the user")
    APPROVED = "approved", _("approved")
    AUTO_APPROVED = "auto_approved", _("auto-approved")
    REJECTED = "rejected", _("rejected")
    MERGED = "merged", _("merged")
    SUPERSEDED = "superseded", _("superseded")
    WITHDRAWN = "withdrawn", _("withdrawn")


OPEN_CANDIDATE_STATUSES = (CandidateStatus.PENDING_REVIEW, CandidateStatus.PENDING_USER)


class CandidateFlag:
    """Marks a candidate carries in ``Candidate.flags`` for the people who decide it."""

    NEW_ENTITY = "new_entity"  # its entity was created by extraction and nobody has seen it
    CONTESTED = "contested"  # the subject sent a reviewer-approved fact back to review
    SECRET_MASKED = "secret_masked"  # a credential was cut out of its value or evidence
    # Grounding (SPEC §3): never auto-approved or auto-corrected while it carries one of these.
    UNSUPPORTED = "unsupported"  # its evidence is not in the source message, or does not state the value
    NOT_FROM_USER = "not_from_user"  # its source message is the assistant's, a tool's or the system's
    # Poisoning (SPEC §3, reviews/poisoning): never auto-approved or auto-corrected either;
    # ``Candidate.flag_details`` says why (the escaped original, the words, the cues).
    HIDDEN_CHARACTERS = "hidden_characters"  # invisible or reordering characters were removed
    CONFUSABLE = "confusable"  # a word mixes scripts into a look-alike (TR39)
    INSTRUCTION_LIKE = "instruction_like"  # it addresses the agent rather than describing the subject

    ALL = (NEW_ENTITY, CONTESTED, SECRET_MASKED, UNSUPPORTED, NOT_FROM_USER, HIDDEN_CHARACTERS, CONFUSABLE,
           INSTRUCTION_LIKE)
    GROUNDING = (UNSUPPORTED, NOT_FROM_USER)
    POISONING = (HIDDEN_CHARACTERS, CONFUSABLE, INSTRUCTION_LIKE)
    # What a person must have looked at: no automatic decision, no unconfirmed bulk approval.
    NEEDS_A_PERSON = GROUNDING + POISONING


class Reason(models.TextChoices):
    """Reason codes stored on candidates and returned by the API."""

    FIELD_NOT_ALLOWED = "field_not_allowed"
    INVALID = "invalid"
    SECRET_DETECTED = "secret_detected"
    BELOW_CONFIDENCE = "below_confidence"
    NEEDS_CONFIRMATION = "needs_confirmation"
    UNCONFIRMED_KIND = "unconfirmed_kind"
    SENSITIVE_CONSENT = "sensitive_consent"
    DUPLICATE = "duplicate"
    SUPPRESSED = "suppressed"
    CONFLICT = "conflict"
    CORRECTION = "correction"
    AUTO_APPROVE = "auto_approve"
    NEEDS_REVIEW = "needs_review"
    UNGROUNDED = "ungrounded"  # flagged unsupported or not from the user: a person decides
    POISONING = "poisoning"  # hidden characters, a look-alike word or an instruction: a person decides
    REVIEWER_APPROVED = "reviewer_approved"
    REVIEWER_EDITED = "reviewer_edited"
    REVIEWER_REJECTED = "reviewer_rejected"
    DEFERRED = "deferred"
    SUBJECT_CONFIRMED = "subject_confirmed"
    SUBJECT_REJECTED = "subject_rejected"
    NEWER_CANDIDATE = "newer_candidate"
    SAME_AS_PUBLISHED = "same_as_published"  # judged again: its value is the one published now
    ERASED = "erased"
    COLLECTION_PAUSED = "collection_paused"
    ENTITY_MERGED = "entity_merged"


class FactStatus(models.TextChoices):
    """SPEC §1; changed only by ``reviews.policy.transitions``."""

    ACTIVE = "active", _("active")
    CONTESTED = "contested", _("contested")
    DELETED = "deleted", _("deleted")
    EXPIRED = "expired", _("expired")


class DeletionStatus(models.TextChoices):
    """A subject's deletion of one fact: undoable while scheduled, then carried out (SPEC §4)."""

    SCHEDULED = "scheduled", _("scheduled")
    UNDONE = "undone", _("undone")
    DONE = "done", _("done")


class ReviewDecision(models.TextChoices):
    """What a person decides on one candidate in the queue (SPEC §4): approve (with a changed
    value, an edit), reject, ask the subject (defer) or settle a conflict. A decision's undo
    row (DecisionUndo.action) records the transition it made: approve, reject or defer (an
    edit and a settlement are approvals or rejections there)."""

    APPROVE = "approve", _("Approve")
    EDIT = "edit", _("Edit")
    REJECT = "reject", _("Reject")
    DEFER = "defer", _("Ask the user")
    SETTLE = "settle", _("Settle")


class Notice(models.TextChoices):
    """How the answer to a reviewer's action reads: the class of its notice and toast with
    htmx, the level of the message that carries it without."""

    SUCCESS = "success"
    STALE = "stale"  # something moved first (a colleague's decision, an empty filter): nothing applied
    ERROR = "error"


class ReviewAge(models.TextChoices):
    """How long an item has waited against its tenant's review target (the queue's age
    badge; ``reviews.domain.review_age`` is the rule)."""

    WITHIN = "within", _("within target")
    NEAR = "near", _("near target")
    OVER = "over", _("over target")


class BulkDecision(models.TextChoices):
    """What a bulk decision does to every item of a selection (the queue's bulk bar)."""

    APPROVE = "approve"
    REJECT = "reject"


class ActorKind(models.TextChoices):
    """Who acted (SPEC §6); an actor is a kind and, for most kinds, an id (``reviews.actors.Actor``)."""

    REVIEWER = "reviewer"  # a member of the tenant's staff, by user id (any role)
    SUBJECT = "subject"  # the end user, by their user_id
    POLICY = "policy"  # the deterministic pipeline of SPEC §3
    SYSTEM = "system"  # background work and commands
    API_KEY = "api_key"  # a caller of the HTTP API, by key prefix


class AuditAction(models.TextChoices):
    """Every action an audit event can record (SPEC §6): one closed vocabulary.

    Writers pass a member, stats and erasure match on members; docs/concepts.md lists them all.
    """

    TENANT_CREATED = "tenant.created"
    TENANT_SCHEMA_CHANGED = "tenant.schema_changed"
    TENANT_POLICY_CHANGED = "tenant.policy_changed"
    TENANT_EXTRACTOR_CHANGED = "tenant.extractor_changed"
    API_KEY_CREATED = "api_key.created"
    API_KEY_REVOKED = "api_key.revoked"
    API_KEY_ROTATED = "api_key.rotated"  # replaced by a new key; the old one ends after a grace period
    STAFF_ADDED = "staff.added"
    STAFF_ROLE_CHANGED = "staff.role_changed"
    STAFF_REMOVED = "staff.removed"
    STAFF_LOCKED_OUT = "staff.locked_out"
    MESSAGES_INGESTED = "messages.ingested"
    MESSAGE_EXTRACTED = "message.extracted"
    MESSAGE_EXTRACTION_FAILED = "message.extraction_failed"
    MESSAGE_EXTRACTION_RERUN = "message.extraction_rerun"
    EXTRACTION_DRY_RUN = "extraction.dry_run"
    MESSAGES_EXPIRED = "messages.expired"
    CANDIDATE_SUBMITTED = "candidate.submitted"
    POLICY_PENDING_REVIEW = "policy.pending_review"
    POLICY_PENDING_USER = "policy.pending_user"
    POLICY_AUTO_APPROVED = "policy.auto_approved"
    POLICY_REJECTED = "policy.rejected"
    POLICY_MERGED = "policy.merged"
    CANDIDATE_APPROVED = "candidate.approved"
    CANDIDATE_EDITED_APPROVED = "candidate.edited_approved"
    CANDIDATE_REJECTED = "candidate.rejected"
    CANDIDATE_DEFERRED = "candidate.deferred"
    CANDIDATE_SUPERSEDED = "candidate.superseded"
    # A waiting item judged again because the published value of its field changed (SPEC §4).
    CANDIDATE_REJUDGED = "candidate.rejudged"
    CANDIDATE_WITHDRAWN = "candidate.withdrawn"
    # Hidden characters stored before the poisoning checks removed, the original kept escaped
    # (migration 0024): what new rows get at the boundary.
    CANDIDATE_CLEANED = "candidate.cleaned"
    CANDIDATES_BULK_APPROVE = "candidates.bulk_approve"
    CANDIDATES_BULK_REJECT = "candidates.bulk_reject"
    CANDIDATE_DECISION_UNDONE = "candidate.decision_undone"  # a person took their decision back (SPEC §4)
    CANDIDATE_COMMENTED = "candidate.commented"  # a reviewer wrote to colleagues on the item's page
    CANDIDATES_CLAIMED = "candidates.claimed"
    CANDIDATES_RELEASED = "candidates.released"
    FACT_CREATED = "fact.created"
    FACT_UPDATED = "fact.updated"
    FACT_MERGED = "fact.merged"
    FACT_EDITED = "fact.edited"
    FACT_CONTESTED = "fact.contested"
    FACT_REINSTATED = "fact.reinstated"
    FACT_DECISION_UNDONE = "fact.decision_undone"  # the fact went back to its state before an undone decision
    FACT_DELETED = "fact.deleted"
    FACT_DELETION_SCHEDULED = "fact.deletion_scheduled"
    FACT_DELETION_UNDONE = "fact.deletion_undone"
    FACT_EXPIRED = "fact.expired"
    FACT_RETIRED = "fact.retired"
    FACT_CLEANED = "fact.cleaned"  # as CANDIDATE_CLEANED, for a published fact
    ENTITY_MERGED = "entity.merged"
    MEMORY_DELETED = "memory.deleted"
    MEMORY_EXPIRED = "memory.expired"
    SUBJECT_ERASED = "subject.erased"
    SUBJECT_EXPORTED = "subject.exported"
    SUBJECT_COLLECTION_PAUSED = "subject.collection_paused"
    SUBJECT_COLLECTION_RESUMED = "subject.collection_resumed"
    PORTAL_LINK_CREATED = "portal_link.created"
    PORTAL_LINK_REDEEMED = "portal_link.redeemed"
    PORTAL_LINK_REFUSED = "portal_link.refused"
    SAVED_VIEW_SAVED = "saved_view.saved"  # a reviewer saved (or replaced) a named queue filter of their own
    SAVED_VIEW_DELETED = "saved_view.deleted"
    AUDIT_EXPORT_REQUESTED = "audit.export_requested"
    AUDIT_EXPORTED = "audit.exported"
    WEBHOOK_CREATED = "webhook.created"
    WEBHOOK_DELETED = "webhook.deleted"
    WEBHOOK_RESENT = "webhook.resent"  # a tenant admin sent a delivery again
    WEBHOOK_DISABLED = "webhook.disabled"  # an endpoint failing for a day

    @classmethod
    def policy_outcome(cls, status: str) -> "AuditAction":
        """The event for the status the policy gave a candidate on arrival (SPEC §3)."""
        return cls(f"policy.{status}")

    @classmethod
    def bulk_decision(cls, decision: "BulkDecision") -> "AuditAction":
        """The summary event of a bulk decision (``approve`` or ``reject``)."""
        return cls(f"candidates.bulk_{decision}")


# Reviewers' decisions in the queue, by the kind the stats count them as.
REVIEW_DECISION_ACTIONS = {
    AuditAction.CANDIDATE_APPROVED: "approved",
    AuditAction.CANDIDATE_EDITED_APPROVED: "edited",
    AuditAction.CANDIDATE_REJECTED: "rejected",
    AuditAction.CANDIDATE_DEFERRED: "deferred",
}

# Events that are receipts: they hold counts and identifiers, never values, and outlive
# a later erasure of the same subject.
RECEIPT_ACTIONS = (AuditAction.MEMORY_DELETED, AuditAction.SUBJECT_ERASED, AuditAction.MEMORY_EXPIRED)


class ExtractionStatus(models.TextChoices):
    PENDING = "pending", _("pending")
    DONE = "done", _("done")
    FAILED = "failed", _("failed")
    SKIPPED = "skipped", _("skipped")


class ExtractorName(models.TextChoices):
    """The extractors a tenant can make active (SPEC §8 ``MEMORY_EXTRACTOR``)."""

    LLM = "llm", _("LLM (OpenAI-compatible)")
    RULES = "rules", _("Rules (offline)")
