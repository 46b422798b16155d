"""The vocabularies of SPEC §1–§4, in one place."""
from django.db import models
from django.utils.translation import gettext_lazy as _


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
    REVIEWER_APPROVED = "reviewer_approved"
    REVIEWER_EDITED = "reviewer_edited"
    REVIEWER_REJECTED = "reviewer_rejected"
    DEFERRED = "deferred"
    SUBJECT_CONFIRMED = "subject_confirmed"
    SUBJECT_REJECTED = "subject_rejected"
    NEWER_CANDIDATE = "newer_candidate"
    ERASED = "erased"
    COLLECTION_PAUSED = "collection_paused"


class FactStatus(models.TextChoices):
    ACTIVE = "active", _("active")
    DELETED = "deleted", _("deleted")
    EXPIRED = "expired", _("expired")


class ExtractionStatus(models.TextChoices):
    PENDING = "pending", _("pending")
    DONE = "done", _("done")
    FAILED = "failed", _("failed")
    SKIPPED = "skipped", _("skipped")
