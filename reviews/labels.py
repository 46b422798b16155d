"""What each stored code reads as, in the reader's language: fields, relation names,
entity types, categories and sources.

One place for every page (the subject's, the reviewer queue, the stats): a page never
shows ``relation:works_on`` or ``legal_matter``. A tenant defines its own labels with its
schema (``FieldDefinition.labels``, ``Tenant.relation_labels``, edited through
:mod:`reviews.services.governance`); a language the tenant left empty reads as the
default below (translated by the catalog), and a code with no default is humanised
("reports_to" → "reports to"), so a field added yesterday still reads as words.
"""
from __future__ import annotations

from dataclasses import dataclass, field as dataclass_field
from functools import lru_cache

from django.utils import timezone, translation
from django.utils.dateformat import format as date_format
from django.utils.translation import gettext, pgettext, pgettext_lazy

from .models import AuditAction, Category, Fact, FieldDefinition, Source, Tenant
from .policy.pipeline import RELATION_PREFIX

# The languages a label is written in, as Django names them (settings.LANGUAGES).
LABEL_LANGUAGES = ("en", "zh-hans")
MAX_LABEL_LENGTH = 80


# SPEC §2's default schema. Neutral wording: the same label serves the subject ("Location:
# Shanghai" under "Constraints") and the reviewer's queue.
DEFAULT_FIELD_LABELS = {
    ("user", "name"): pgettext_lazy("schema label", "Name"),
    ("user", "role"): pgettext_lazy("schema label", "Role"),
    ("user", "language"): pgettext_lazy("schema label", "Language"),
    ("user", "location"): pgettext_lazy("schema label", "Location"),
    ("user", "preference"): pgettext_lazy("schema label", "Preference"),
    ("user", "health"): pgettext_lazy("schema label", "Health"),
    ("user", "legal_matter"): pgettext_lazy("schema label", "Legal matter"),
    ("user", "finance"): pgettext_lazy("schema label", "Finances"),
    ("project", "name"): pgettext_lazy("schema label", "Name"),
    ("project", "database"): pgettext_lazy("schema label", "Database"),
    ("project", "status"): pgettext_lazy("schema label", "Status"),
    ("project", "tech_stack"): pgettext_lazy("schema label", "Technology"),
    ("organization", "name"): pgettext_lazy("schema label", "Name"),
    ("organization", "industry"): pgettext_lazy("schema label", "Industry"),
    ("preference", "answer_style"): pgettext_lazy("schema label", "Answer style"),
    ("preference", "code_style"): pgettext_lazy("schema label", "Code style"),
}
# The relations the extractors propose (reviews/extraction) and the usual others.
DEFAULT_RELATION_LABELS = {
    "works_on": pgettext_lazy("schema label", "works on"),
    "works_at": pgettext_lazy("schema label", "works at"),
    "pen_name": pgettext_lazy("schema label", "pen name"),
    "member_of": pgettext_lazy("schema label", "member of"),
    "manages": pgettext_lazy("schema label", "manages"),
    "reports_to": pgettext_lazy("schema label", "reports to"),
    "knows": pgettext_lazy("schema label", "knows"),
}
DEFAULT_ENTITY_TYPE_LABELS = {
    "user": pgettext_lazy("schema label", "You"),
    "project": pgettext_lazy("schema label", "Project"),
    "organization": pgettext_lazy("schema label", "Organisation"),
    "preference": pgettext_lazy("schema label", "Preferences"),
}


def humanise(code: str) -> str:
    return code.replace("_", " ").replace("-", " ").strip()


def reader_language() -> str:
    """The label language of the active translation: Chinese for any zh-*, else English."""
    return "zh-hans" if (translation.get_language() or "").lower().startswith("zh") else "en"


def category_label(code: str) -> str:
    return str(Category(code).label) if code in Category.values else humanise(code).capitalize()


def source_label(code: str) -> str:
    return str(Source(code).label) if code in Source.values else humanise(code)


def relation_name(field: str) -> str | None:
    """``relation:works_on`` → ``works_on``; None for an ordinary field."""
    return field[len(RELATION_PREFIX) :] if field.startswith(RELATION_PREFIX) else None


@dataclass
class TenantLabels:
    """A tenant's own labels, loaded once per request, with the defaults behind them."""

    fields: dict[tuple[str, str], dict] = dataclass_field(default_factory=dict)
    relations: dict[str, dict] = dataclass_field(default_factory=dict)

    @classmethod
    def load(cls, tenant: Tenant | None) -> "TenantLabels":
        if tenant is None:
            return cls()
        rows = FieldDefinition.objects.filter(tenant=tenant).exclude(labels={}).values_list(
            "entity_type", "field", "labels"
        )
        return cls(
            fields={(entity_type, field): labels for entity_type, field, labels in rows},
            relations=dict(tenant.relation_labels or {}),
        )

    def field(self, entity_type: str, field: str) -> str:
        name = relation_name(field)
        if name is not None:
            own = (self.fields.get((entity_type, field)) or {}).get(reader_language())
            return own or self.relation(name)
        own = (self.fields.get((entity_type, field)) or {}).get(reader_language())
        default = DEFAULT_FIELD_LABELS.get((entity_type, field))
        return own or (str(default) if default else humanise(field).capitalize())

    def relation(self, name: str) -> str:
        own = (self.relations.get(name) or {}).get(reader_language())
        default = DEFAULT_RELATION_LABELS.get(name)
        return own or (str(default) if default else humanise(name))

    @staticmethod
    def entity_type(entity_type: str) -> str:
        default = DEFAULT_ENTITY_TYPE_LABELS.get(entity_type)
        return str(default) if default else humanise(entity_type).capitalize()


CACHE_ATTRIBUTE = "_tenant_labels"


def labels_cached_on(holder, tenant: Tenant | None) -> TenantLabels:
    """The tenant's labels, read once per request (``holder``: the request, or the
    subject a portal request is bound to) whatever number of labels a page shows."""
    cached = getattr(holder, CACHE_ATTRIBUTE, None) if holder is not None else None
    if cached is None:
        cached = TenantLabels.load(tenant)
        if holder is not None:
            setattr(holder, CACHE_ATTRIBUTE, cached)
    return cached


def known_relation_names(tenant: Tenant) -> list[str]:
    """The relation names a tenant admin may label: those the schema allows (when it
    restricts them), else the defaults, the ones already labelled and the ones in use."""
    if tenant.allowed_relation_names is not None:
        return sorted(set(tenant.allowed_relation_names))
    in_use = Fact.objects.filter(tenant=tenant, field__startswith=RELATION_PREFIX).values_list("field", flat=True)
    names = set(DEFAULT_RELATION_LABELS) | set(tenant.relation_labels or {})
    names |= {relation_name(field) for field in in_use.distinct()}
    return sorted(name for name in names if name)


# A date as a person says it (the subject's pages and the labels they build).
def when(value) -> str:
    """"today", "yesterday" or "on 8 Nov 2026" (Chinese: 今天, 昨天, 2026年11月8日)."""
    if not value:
        return ""
    day = timezone.localdate(value) if timezone.is_aware(value) else value.date()
    days_ago = (timezone.localdate() - day).days
    if days_ago == 0:
        return gettext("today")
    if days_ago == 1:
        return gettext("yesterday")
    return gettext("on %(date)s") % {"date": date_format(day, pgettext("short date", "j M Y"))}


# A point in time a person acts on ("will be deleted at …", "figures as of …"): the date, the
# time and the time zone, so that no one guesses which day, or whose 23:02, is meant.
def moment(value) -> str:
    """"7 Dec 2026, 23:02 UTC" (Chinese: 2026年12月7日 23:02 UTC), in the site's time zone."""
    if not value:
        return ""
    local = timezone.localtime(value) if timezone.is_aware(value) else value
    # Shown to the minute, so the seconds make no other text. Aware datetimes are equal
    # when their instants are, whatever their zones: the zone's offset and name, which the
    # text shows, are part of the key, as is the language.
    minute = local.replace(second=0, microsecond=0)
    return _moment_text(minute, minute.utcoffset(), minute.tzname(), translation.get_language())


# Django's date formatting interprets the format letter by letter (some 50 µs a time), and
# the queue shows ninety times a page, mostly the same ones page after page; a text made
# once per minute, zone and language is reused.
@lru_cache(maxsize=4096)
def _moment_text(minute, offset, zone_name, language) -> str:
    return date_format(minute, pgettext("date, time and time zone", "j M Y, H:i T"))


# Who acted, for a reader: staff by username (selectors.actor_names reads those); the other
# kinds of actor (SPEC §6) by what they are.
ACTOR_KIND_LABELS = {
    "system": pgettext_lazy("actor", "System"),
    "policy": pgettext_lazy("actor", "Policy"),
}
ACTOR_WITH_ID_LABELS = {
    "api_key": pgettext_lazy("actor", "API key %(id)s"),
    "subject": pgettext_lazy("actor", "User %(id)s"),
    "reviewer": pgettext_lazy("actor", "Staff member %(id)s"),
}


def actor_label(actor: str) -> str:
    """``system`` → "System", ``api_key:ingest`` → "API key ingest"; an unknown kind as stored."""
    kind, _sep, ident = (actor or "").partition(":")
    if kind in ACTOR_KIND_LABELS and not ident:
        return str(ACTOR_KIND_LABELS[kind])
    if kind in ACTOR_WITH_ID_LABELS and ident:
        return str(ACTOR_WITH_ID_LABELS[kind]) % {"id": ident}
    return actor


# What each audit action reads as on the audit log (its badge; the code stays the badge's
# title and its filter link, so filtering by code keeps working). Every member has one:
# tests/review/test_audit_log_names.py checks, so a new action cannot arrive unnamed.
AUDIT_ACTION_LABELS = {
    AuditAction.TENANT_CREATED: pgettext_lazy("audit action", "Tenant created"),
    AuditAction.TENANT_SCHEMA_CHANGED: pgettext_lazy("audit action", "Field schema changed"),
    AuditAction.TENANT_POLICY_CHANGED: pgettext_lazy("audit action", "Policy changed"),
    AuditAction.TENANT_EXTRACTOR_CHANGED: pgettext_lazy("audit action", "Extractor changed"),
    AuditAction.API_KEY_CREATED: pgettext_lazy("audit action", "API key created"),
    AuditAction.API_KEY_REVOKED: pgettext_lazy("audit action", "API key revoked"),
    AuditAction.API_KEY_ROTATED: pgettext_lazy("audit action", "API key rotated"),
    AuditAction.STAFF_ADDED: pgettext_lazy("audit action", "Staff member added"),
    AuditAction.STAFF_ROLE_CHANGED: pgettext_lazy("audit action", "Staff role changed"),
    AuditAction.STAFF_REMOVED: pgettext_lazy("audit action", "Staff member removed"),
    AuditAction.STAFF_LOCKED_OUT: pgettext_lazy("audit action", "Staff member locked out"),
    AuditAction.MESSAGES_INGESTED: pgettext_lazy("audit action", "Messages received"),
    AuditAction.MESSAGE_EXTRACTED: pgettext_lazy("audit action", "Message extracted"),
    AuditAction.MESSAGE_EXTRACTION_FAILED: pgettext_lazy("audit action", "Extraction failed"),
    AuditAction.MESSAGE_EXTRACTION_RERUN: pgettext_lazy("audit action", "Extraction run again"),
    AuditAction.EXTRACTION_DRY_RUN: pgettext_lazy("audit action", "Extraction dry run"),
    AuditAction.MESSAGES_EXPIRED: pgettext_lazy("audit action", "Messages expired"),
    AuditAction.CANDIDATE_SUBMITTED: pgettext_lazy("audit action", "Item submitted"),
    AuditAction.POLICY_PENDING_REVIEW: pgettext_lazy("audit action", "Sent to review"),
    AuditAction.POLICY_PENDING_USER: pgettext_lazy("audit action", "Sent to the user"),
    AuditAction.POLICY_AUTO_APPROVED: pgettext_lazy("audit action", "Approved automatically"),
    AuditAction.POLICY_REJECTED: pgettext_lazy("audit action", "Rejected by the policy"),
    AuditAction.POLICY_MERGED: pgettext_lazy("audit action", "Merged by the policy"),
    AuditAction.CANDIDATE_APPROVED: pgettext_lazy("audit action", "Approved"),
    AuditAction.CANDIDATE_EDITED_APPROVED: pgettext_lazy("audit action", "Edited and approved"),
    AuditAction.CANDIDATE_REJECTED: pgettext_lazy("audit action", "Rejected"),
    AuditAction.CANDIDATE_DEFERRED: pgettext_lazy("audit action", "User asked to confirm"),
    AuditAction.CANDIDATE_SUPERSEDED: pgettext_lazy("audit action", "Superseded"),
    AuditAction.CANDIDATE_REJUDGED: pgettext_lazy("audit action", "Judged again"),
    AuditAction.CANDIDATE_WITHDRAWN: pgettext_lazy("audit action", "Withdrawn"),
    AuditAction.CANDIDATES_BULK_APPROVE: pgettext_lazy("audit action", "Bulk approval"),
    AuditAction.CANDIDATES_BULK_REJECT: pgettext_lazy("audit action", "Bulk rejection"),
    AuditAction.CANDIDATE_DECISION_UNDONE: pgettext_lazy("audit action", "Decision undone"),
    AuditAction.CANDIDATE_COMMENTED: pgettext_lazy("audit action", "Comment added"),
    AuditAction.CANDIDATE_CLEANED: pgettext_lazy("audit action", "Hidden characters removed"),
    AuditAction.CANDIDATES_CLAIMED: pgettext_lazy("audit action", "Items claimed"),
    AuditAction.CANDIDATES_RELEASED: pgettext_lazy("audit action", "Claims released"),
    AuditAction.FACT_CREATED: pgettext_lazy("audit action", "Fact published"),
    AuditAction.FACT_UPDATED: pgettext_lazy("audit action", "Fact updated"),
    AuditAction.FACT_MERGED: pgettext_lazy("audit action", "Fact merged"),
    AuditAction.FACT_EDITED: pgettext_lazy("audit action", "Fact edited"),
    AuditAction.FACT_CONTESTED: pgettext_lazy("audit action", "Fact contested"),
    AuditAction.FACT_REINSTATED: pgettext_lazy("audit action", "Fact reinstated"),
    AuditAction.FACT_DECISION_UNDONE: pgettext_lazy("audit action", "Fact restored by an undo"),
    AuditAction.FACT_DELETED: pgettext_lazy("audit action", "Fact deleted"),
    AuditAction.FACT_DELETION_SCHEDULED: pgettext_lazy("audit action", "Deletion scheduled"),
    AuditAction.FACT_DELETION_UNDONE: pgettext_lazy("audit action", "Deletion undone"),
    AuditAction.FACT_EXPIRED: pgettext_lazy("audit action", "Fact expired"),
    AuditAction.FACT_RETIRED: pgettext_lazy("audit action", "Fact retired"),
    AuditAction.FACT_CLEANED: pgettext_lazy("audit action", "Hidden characters removed from a fact"),
    AuditAction.ENTITY_MERGED: pgettext_lazy("audit action", "Entities merged"),
    AuditAction.MEMORY_DELETED: pgettext_lazy("audit action", "Memories deleted"),
    AuditAction.MEMORY_EXPIRED: pgettext_lazy("audit action", "Memories expired"),
    AuditAction.SUBJECT_ERASED: pgettext_lazy("audit action", "User erased"),
    AuditAction.SUBJECT_EXPORTED: pgettext_lazy("audit action", "User's data exported"),
    AuditAction.SUBJECT_COLLECTION_PAUSED: pgettext_lazy("audit action", "Collection paused"),
    AuditAction.SUBJECT_COLLECTION_RESUMED: pgettext_lazy("audit action", "Collection resumed"),
    AuditAction.PORTAL_LINK_CREATED: pgettext_lazy("audit action", "Portal link created"),
    AuditAction.PORTAL_LINK_REDEEMED: pgettext_lazy("audit action", "Portal link used"),
    AuditAction.PORTAL_LINK_REFUSED: pgettext_lazy("audit action", "Portal link refused"),
    AuditAction.SAVED_VIEW_SAVED: pgettext_lazy("audit action", "Saved view saved"),
    AuditAction.SAVED_VIEW_DELETED: pgettext_lazy("audit action", "Saved view deleted"),
    AuditAction.AUDIT_EXPORT_REQUESTED: pgettext_lazy("audit action", "Audit export requested"),
    AuditAction.AUDIT_EXPORTED: pgettext_lazy("audit action", "Audit trail exported"),
    AuditAction.WEBHOOK_CREATED: pgettext_lazy("audit action", "Webhook added"),
    AuditAction.WEBHOOK_DELETED: pgettext_lazy("audit action", "Webhook removed"),
    AuditAction.WEBHOOK_RESENT: pgettext_lazy("audit action", "Webhook delivery resent"),
    AuditAction.WEBHOOK_DISABLED: pgettext_lazy("audit action", "Webhook disabled"),
}


def action_label(code: str) -> str:
    """``candidates.bulk_approve`` → "Bulk approval"; a code no longer in the vocabulary (an
    old event) as stored."""
    return str(AUDIT_ACTION_LABELS[code]) if code in AuditAction.values else code
