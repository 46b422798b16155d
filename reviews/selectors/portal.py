"""Reads behind the subject's self-service pages: what they see, in their words.

Every function takes the subject the portal session is bound to and queries through it,
so nothing here can reach another subject's rows. Wording is plain language (SPEC §4):
the page says "you said this on 8 Nov in a chat", not ``source=chat``.
"""
from __future__ import annotations

from dataclasses import dataclass, field as dataclass_field
from datetime import datetime

from datetime import timedelta

from django.db import models
from django.db.models import Count, Max, Min, OuterRef, Q, Subquery
from django.utils import timezone
from django.utils.text import get_text_list
from django.utils.translation import gettext, ngettext
from django.utils.translation import gettext_lazy as _
from django.utils.translation import ngettext_lazy

from ..actors import Actor
from ..errors import NotFound
from ..policy.normalize import normalize_text
from ..models import (
    OPEN_CANDIDATE_STATUSES,
    ActorKind,
    Candidate,
    CandidateFlag,
    CandidateStatus,
    Cardinality,
    Category,
    DeletionStatus,
    Entity,
    EntityType,
    Fact,
    FactDeletion,
    FactStatus,
    FactVersion,
    Kind,
    MemoryScope,
    Message,
    Reason,
    Sensitivity,
    Source,
    Subject,
)
from ..policy.pipeline import RELATION_PREFIX
from ..labels import TenantLabels, labels_cached_on, when
from ..policy.schema import TenantSchema
from .erasure import deletion_scope

# SPEC §2's categories, in the order a person reads about themselves.
SECTIONS = [
    (Category.IDENTITY, _("Identity"), _("Who you are: your name, your role, the language you use.")),
    (Category.PREFERENCE, _("Preferences"), _("How you like things done.")),
    (Category.CONSTRAINT, _("Constraints"), _("Where you are and what your work has to fit.")),
    (Category.SCENARIO, _("Scenario records"), _("Things going on for you and your projects.")),
    (Category.RELATION, _("Relations"), _("People, projects and organisations you are connected to.")),
]

# Counts on a receipt or a confirmation page, in the order they are listed: the words
# follow the number (singular or plural), e.g. "3 chat messages".
COUNT_LABELS = {
    "facts": ngettext_lazy("memory", "memories", "n"),
    "fact_versions": ngettext_lazy("earlier version of a memory", "earlier versions of memories", "n"),
    "candidates": ngettext_lazy("suggestion or question", "suggestions and questions", "n"),
    "messages": ngettext_lazy("chat message", "chat messages", "n"),
    "recall_records": ngettext_lazy("note of what the assistant looked up", "notes of what the assistant looked up", "n"),
    "store_items": ngettext_lazy("entry in the assistant's memory store", "entries in the assistant's memory store", "n"),
    "embeddings": ngettext_lazy(
        "search index entry the assistant finds memories by", "search index entries the assistant finds memories by", "n"
    ),
    "audit_values": ngettext_lazy(
        "readable entry in our activity log (the log keeps only a fingerprint)",
        "readable entries in our activity log (the log keeps only fingerprints)",
        "n",
    ),
    "export_files": ngettext_lazy("copy of our activity log made for an auditor", "copies of our activity log made for auditors", "n"),
    "dry_run_examples": ngettext_lazy(
        "example quoted in a test report of our suggestion software",
        "examples quoted in test reports of our suggestion software",
        "n",
    ),
}


def entity_label(entity: Entity | None, entity_type: str = "", entity_id: str = "") -> str:
    """"You" for the subject's own entity, else "Project: Flask migration"."""
    entity_type = entity.entity_type if entity else entity_type
    kind = TenantLabels.entity_type(entity_type)
    if entity_type == EntityType.USER:
        return kind
    name = (entity.display_name or entity.entity_id) if entity else entity_id
    return f"{kind}: {name}"


class DecidedBy(models.TextChoices):
    """Who made a decision, as the subject reads it (the portal's pages word each)."""

    YOU = "you"
    TEAM = "team"
    AUTOMATIC = "automatic"
    SYSTEM = "system"


def decided_by(actor: str, user_id: str) -> DecidedBy:
    """Who made a decision, as the subject should read it: you, our team, automatic."""
    who = Actor.parse(actor)
    if who == Actor.subject(user_id):
        return DecidedBy.YOU
    return {ActorKind.REVIEWER: DecidedBy.TEAM, ActorKind.POLICY: DecidedBy.AUTOMATIC}.get(
        who.kind if who else None, DecidedBy.SYSTEM
    )


@dataclass
class HistoryEntry:
    version: int
    value: str
    source: str
    by: DecidedBy
    at: datetime


@dataclass
class MemoryItem:
    fact: Fact
    entity_label: str
    field_label: str
    said_on: datetime | None  # when the current value was said (chat) or set (anything else)
    set_by: DecidedBy  # who set the current value
    confirmed_by: DecidedBy
    history: list[HistoryEntry] = dataclass_field(default_factory=list)
    value_label: str = ""  # a relation's target as words ("Project: Flask migration"); else the value

    @property
    def is_relation(self) -> bool:
        return self.fact.field.startswith(RELATION_PREFIX)

    @property
    def is_many(self) -> bool:
        return self.fact.cardinality == Cardinality.MANY

    @property
    def corrected(self) -> bool:
        """The subject replaced an earlier value (not wrote the first one)."""
        return self.set_by == DecidedBy.YOU and self.fact.version > 1

    @property
    def is_thread(self) -> bool:
        return self.fact.scope == MemoryScope.THREAD

    @property
    def is_sensitive(self) -> bool:
        return self.fact.sensitivity == Sensitivity.SENSITIVE

    @property
    def can_contest(self) -> bool:
        approver = Actor.parse(self.fact.approved_by)
        return approver is not None and approver.is_reviewer

    @property
    def source(self) -> str:
        return self.fact.source


@dataclass
class Section:
    category: str
    heading: str
    blurb: str
    items: list[MemoryItem]


def _message_dates(subject: Subject, message_ids) -> dict[str, datetime]:
    ids = {m for m in message_ids if m}
    if not ids:
        return {}
    return dict(Message.objects.filter(subject=subject, message_id__in=ids).values_list("message_id", "created_at"))


def _memory_items(subject: Subject, facts: list[Fact], *, with_history: bool) -> list[MemoryItem]:
    versions = (
        list(FactVersion.objects.filter(fact__in=[f.pk for f in facts]).order_by("fact_id", "-version"))
        if facts
        else []
    )
    dates = _message_dates(subject, [f.source_message_id for f in facts] + [v.source_message_id for v in versions])
    # A relation's values, current and earlier, read as the entries they point to.
    relations = {f.pk for f in facts if f.field.startswith(RELATION_PREFIX)}
    targets = _relation_targets(
        subject, [f.value for f in facts if f.pk in relations] + [v.value for v in versions if v.fact_id in relations]
    )
    history: dict[int, list[HistoryEntry]] = {}
    for v in versions:
        # A value from a chat dates from the message that said it; any other from when it was set.
        at = (dates.get(v.source_message_id) or v.created_at) if v.source == Source.CHAT else v.created_at
        value = targets.get(v.value, v.value) if v.fact_id in relations else v.value
        history.setdefault(v.fact_id, []).append(
            HistoryEntry(v.version, value, v.source, decided_by(v.actor, subject.user_id), at)
        )
    labels = labels_cached_on(subject, subject.tenant)
    items = []
    for fact in facts:
        entries = history.get(fact.pk, [])
        current = next((e for e in entries if e.version == fact.version), None)
        set_on = current.at if current else fact.updated_at
        # A chat-sourced value dates from when it was said; any other from when it was set
        # (a correction keeps the old message id, so its date would be the chat's).
        said_on = (dates.get(fact.source_message_id) or set_on) if fact.source == Source.CHAT else set_on
        items.append(
            MemoryItem(
                fact=fact,
                entity_label=entity_label(fact.entity),
                field_label=labels.field(fact.entity.entity_type, fact.field),
                said_on=said_on,
                set_by=current.by if current else decided_by(fact.approved_by, subject.user_id),
                confirmed_by=decided_by(fact.approved_by, subject.user_id),
                history=entries if with_history else [],
                value_label=targets.get(fact.value, fact.value) if fact.pk in relations else fact.value,
            )
        )
    return items


def _relation_targets(subject: Subject, values) -> dict[str, str]:
    """{"project:flask-migration": "Project: Flask migration"} for the relation values given."""
    refs = {tuple(v.partition(":")[::2]) for v in values if ":" in v}
    if not refs:
        return {}
    match = Q()
    for entity_type, entity_id in refs:
        match |= Q(entity_type=entity_type, entity_id=entity_id)
    return {e.ref: entity_label(e) for e in Entity.objects.filter(match, subject=subject)}


def _active_facts(subject: Subject):
    return Fact.objects.filter(subject=subject, status=FactStatus.ACTIVE).select_related("entity")


MAX_SEARCH_LENGTH = 200


def _matches(item: MemoryItem, words: list[str]) -> bool:
    """Every word of the search is in what the subject reads on the card (value, labels,
    evidence), case- and width-insensitive; Chinese is matched as a substring too."""
    haystack = normalize_text(" ".join(
        (item.fact.value, item.value_label, item.field_label, item.entity_label, item.fact.evidence)
    ))
    return all(word in haystack for word in words)


def subject_memories(subject: Subject, *, hide=frozenset(), q: str = "") -> list[Section]:
    """Every published fact of the subject, grouped by SPEC §2 category, with history.

    ``hide``: fact ids not to list (those whose deletion is scheduled show apart, with Undo).
    ``q``: only the memories matching all its words (the search box on "my memories").
    """
    facts = [
        fact
        for fact in _active_facts(subject).order_by("entity__entity_type", "entity__entity_id", "field", "pk")
        if fact.pk not in hide
    ]
    items = _memory_items(subject, facts, with_history=True)
    words = normalize_text(q[:MAX_SEARCH_LENGTH]).split()
    if words:
        items = [item for item in items if _matches(item, words)]
    by_category: dict[str, list[MemoryItem]] = {}
    for item in items:
        by_category.setdefault(item.fact.category, []).append(item)
    known = {category for category, _, _ in SECTIONS}
    sections = [Section(c, h, b, by_category.get(c, [])) for c, h, b in SECTIONS]
    # A category added to the schema later still shows up rather than vanishing.
    for category in sorted(set(by_category) - known):
        sections.append(Section(category, category.capitalize(), "", by_category[category]))
    return sections


def subject_fact(subject: Subject, fact_id: int) -> MemoryItem:
    fact = _active_facts(subject).filter(pk=fact_id).first()
    if fact is None:
        raise NotFound("Fact not found.")
    return _memory_items(subject, [fact], with_history=True)[0]


@dataclass
class FactEditor:
    """What the fact page offers to edit a value with, by the field's kind (SPEC §4)."""

    targets: list[tuple[str, str]]  # a relation: the subject's entries it may point to (ref, label)
    new_target_types: list[tuple[str, str]]  # a relation: kinds of entry one may create (type, label)
    siblings: list[MemoryItem]  # a many field: the field's other values


def subject_fact_editor(subject: Subject, item: MemoryItem) -> FactEditor:
    fact = item.fact
    targets, types = [], []
    if item.is_relation:
        entities = Entity.objects.filter(subject=subject).exclude(pk=fact.entity_id).exclude(entity_type=EntityType.USER)
        targets = sorted(((e.ref, entity_label(e)) for e in entities), key=lambda pair: pair[1])
        types = [(t, TenantLabels.entity_type(t)) for t in sorted(TenantSchema.load(subject.tenant).entity_types)
                 if t != EntityType.USER]
    siblings = []
    if item.is_many:
        others = list(
            _active_facts(subject).filter(entity_id=fact.entity_id, field=fact.field, thread_id=fact.thread_id)
            .exclude(pk=fact.pk).order_by("pk")
        )
        siblings = _memory_items(subject, others, with_history=False)
    return FactEditor(targets, types, siblings)


# --- Waiting for you ------------------------------------------------------------------------

QUESTIONS = {
    Reason.NEEDS_CONFIRMATION: _("We are not sure we understood you. Is this right?"),
    Reason.SENSITIVE_CONSENT: _("This is sensitive. May we remember it?"),
    Reason.DEFERRED: _("Our team was not sure about this. Is it right?"),
}
PLAN_QUESTION = _("You mentioned this as a plan. Should we remember it as a fact?")
INFERENCE_QUESTION = _("We guessed this from what you said. Is it true?")
CONFLICT_QUESTION = _("This does not match what we remember. Which one is right?")
DEFAULT_QUESTION = _("Should we remember this?")


@dataclass
class WaitingItem:
    candidate: Candidate
    question: str
    entity_label: str
    field_label: str
    said_on: datetime | None
    is_sensitive: bool = False
    retention_days: int | None = None
    current: Fact | None = None  # for a conflict: the value we remember now


def _question_for(candidate: Candidate):
    if candidate.has_conflict:
        return CONFLICT_QUESTION
    if candidate.reason == Reason.UNCONFIRMED_KIND:
        return PLAN_QUESTION if candidate.kind == Kind.PLAN else INFERENCE_QUESTION
    return QUESTIONS.get(candidate.reason, DEFAULT_QUESTION)


def _waiting_item(candidate: Candidate, schema: TenantSchema, labels: TenantLabels, dates: dict, tenant) -> WaitingItem:
    rule = schema.rule_for(candidate.entity_type, candidate.field)
    sensitive = rule is not None and rule.sensitivity == Sensitivity.SENSITIVE
    retention = None
    if sensitive:
        retention = rule.retention_days or tenant.sensitive_retention_days
    return WaitingItem(
        candidate=candidate,
        question=_question_for(candidate),
        entity_label=entity_label(candidate.entity, candidate.entity_type, candidate.entity_ref_id),
        field_label=labels.field(candidate.entity_type, candidate.field),
        said_on=dates.get(candidate.source_message_id) or candidate.created_at,
        is_sensitive=sensitive,
        retention_days=retention,
        current=candidate.conflict_fact if _is_conflict(candidate) else None,
    )


@dataclass
class Waiting:
    questions: list[WaitingItem]  # pending_user: theirs to confirm, correct or reject
    # pending_review conflicts with their own facts: a reviewer's to decide (SPEC §4), shown
    # so the subject can contest the published fact if it is the wrong one.
    conflicts: list[WaitingItem]
    in_review: list[WaitingItem]  # what they contested, now with our team

    @property
    def count(self) -> int:
        return len(self.questions)


def _open_candidates(subject: Subject):
    return (
        Candidate.objects.filter(subject=subject)
        .select_related("entity", "conflict_fact", "conflict_fact__entity")
        .order_by("created_at", "pk")
    )


def subject_waiting(subject: Subject) -> Waiting:
    """The subject's open items: questions for them, their conflicts, their contests.

    One subject has few open items, so they are read once and sorted here (JSON
    containment on ``flags`` would not work on SQLite anyway).
    """
    rows = [
        c
        for c in _open_candidates(subject).filter(
            status__in=OPEN_CANDIDATE_STATUSES
        )
        if c.status == CandidateStatus.PENDING_USER or _is_conflict(c) or _is_contest(c)
    ]
    schema = TenantSchema.load(subject.tenant)
    dates = _message_dates(subject, (c.source_message_id for c in rows))
    labels = labels_cached_on(subject, subject.tenant)
    items = [_waiting_item(c, schema, labels, dates, subject.tenant) for c in rows]
    return Waiting(
        questions=[i for i in items if i.candidate.status == CandidateStatus.PENDING_USER],
        conflicts=[i for i in items if i.candidate.status == CandidateStatus.PENDING_REVIEW and _is_conflict(i.candidate)],
        in_review=[i for i in items if i.candidate.status == CandidateStatus.PENDING_REVIEW and _is_contest(i.candidate)],
    )


def _is_conflict(candidate: Candidate) -> bool:
    fact = candidate.conflict_fact
    return candidate.has_conflict and fact is not None and fact.status == FactStatus.ACTIVE


def _is_contest(candidate: Candidate) -> bool:
    return CandidateFlag.CONTESTED in (candidate.flags or [])


def subject_waiting_count(subject: Subject) -> int:
    """How many items await the subject (the badge on every page), in one query."""
    return Candidate.objects.filter(status=CandidateStatus.PENDING_USER, subject=subject).count()


def subject_waiting_item(subject: Subject, candidate_id: int) -> WaitingItem:
    """One open item of the subject (for re-rendering a card after an action)."""
    waiting = subject_waiting(subject)
    for item in waiting.questions:
        if item.candidate.pk == candidate_id:
            return item
    raise NotFound("Nothing waiting here.")


# --- Deletion scopes ------------------------------------------------------------------------


@dataclass
class Conversation:
    thread_id: str
    messages: int
    first_at: datetime | None
    last_at: datetime | None
    facts: int
    opening: str = ""  # the conversation's first words, how a person recognises it


OPENING_WORDS, OPENING_CHARS = 8, 40


def opening_words(text: str) -> str:
    """The first few words of a message ("Hi, I'm Alice and I work as a…"); CJK by characters."""
    words = (text or "").split()
    short = " ".join(words[:OPENING_WORDS])
    if len(short) > OPENING_CHARS:
        short = short[:OPENING_CHARS].rstrip()
    return short + ("…" if short != " ".join(words) else "")


def _first_message(subject: Subject):
    return Subquery(
        Message.objects.filter(subject=subject, thread_id=OuterRef("thread_id"))
        .order_by("created_at", "pk")
        .values("content")[:1]
    )


def conversation_label(subject: Subject, thread_id: str) -> str:
    """A conversation as the subject knows it: its first words and date, never its id."""
    first = Message.objects.filter(subject=subject, thread_id=thread_id).order_by("created_at", "pk").first()
    if first is None:
        return str(_("the conversation you chose"))
    return gettext("“%(opening)s”, %(when)s") % {"opening": opening_words(first.content), "when": when(first.created_at)}


@dataclass
class Scopes:
    conversations: list[Conversation]
    entities: list[tuple[str, str]]  # (entity ref "type:id", label)
    fields: list[tuple[str, str]]  # (field, label)


def subject_scopes(subject: Subject) -> Scopes:
    """What the subject can delete by: their conversations, entities and fields."""
    threads: dict[str, Conversation] = {}
    for row in (
        Message.objects.filter(subject=subject)
        .values("thread_id")
        .annotate(n=Count("pk"), first=Min("created_at"), last=Max("created_at"), opening=_first_message(subject))
        .order_by("-last")
    ):
        threads[row["thread_id"]] = Conversation(
            row["thread_id"], row["n"], row["first"], row["last"], 0, opening_words(row["opening"])
        )
    active = _active_facts(subject)
    message_threads = dict(
        Message.objects.filter(subject=subject, message_id__in=active.values("source_message_id")).values_list(
            "message_id", "thread_id"
        )
    )
    labels = labels_cached_on(subject, subject.tenant)
    entities: dict[str, str] = {}
    fields: dict[str, str] = {}
    for fact in active:
        thread = fact.thread_id or message_threads.get(fact.source_message_id)
        if thread:
            threads.setdefault(thread, Conversation(thread, 0, None, None, 0)).facts += 1
        entities.setdefault(fact.entity.ref, str(entity_label(fact.entity)))
        fields.setdefault(fact.field, labels.field(fact.entity.entity_type, fact.field))
    return Scopes(
        conversations=list(threads.values()),
        entities=sorted(entities.items(), key=lambda item: item[1]),
        fields=sorted(fields.items(), key=lambda item: item[1]),
    )


def erasure_preview(
    subject: Subject, *, thread_id: str | None = None, entity: str | None = None, field: str | None = None
) -> dict[str, int]:
    """About how much a deletion in this scope removes, for the confirmation page.

    The scope is :func:`reviews.selectors.erasure.deletion_scope`, the one the deletion
    itself uses; no filter is everything about the subject. The receipt afterwards has
    exact counts (it also counts copies of the values found elsewhere).
    """
    scoped = bool(thread_id or entity or field)
    scope = deletion_scope(subject, thread_id=thread_id, entity=entity, field=field)
    facts = Fact.objects.filter(scope.facts)
    if scoped:
        # Tombstones of earlier deletions hold nothing more to delete.
        facts = facts.filter(Q(status=FactStatus.ACTIVE) | ~Q(value=""))
    if scope.messages is not None:
        messages = scope.messages.count()
    else:
        # Deleting by entity or field keeps the conversations themselves.
        messages = 0 if scoped else Message.objects.filter(subject=subject).count()
    return {
        "facts": facts.count(),
        "fact_versions": FactVersion.objects.filter(fact__in=facts).count(),
        "candidates": Candidate.objects.filter(scope.candidates).count(),
        "messages": messages,
    }


def describe_counts(counts: dict) -> list[tuple[str, str, int]]:
    """(key, words, n) for a receipt or a preview: known counts in a stable order, then any other."""
    known = [
        (key, COUNT_LABELS[key] % {"n": n}, n)
        for key, n in ((key, int(counts.get(key) or 0)) for key in COUNT_LABELS if key in counts)
    ]
    other = [(key, key.replace("_", " "), int(n or 0)) for key, n in sorted(counts.items()) if key not in COUNT_LABELS]
    return known + other


def describe_erasure(receipt: dict) -> list[str]:
    """Where a deletion of one memory reaches, in plain words ("from 3 messages"), in order."""
    deleted, redacted = receipt.get("deleted") or {}, receipt.get("redacted") or {}
    places = []
    if deleted.get("facts"):
        places.append(gettext("from your memories"))
    messages = int(deleted.get("messages") or 0) + int(redacted.get("messages") or 0)
    if messages:
        places.append(ngettext("from %(n)s chat message", "from %(n)s chat messages", messages) % {"n": messages})
    if deleted.get("store_items"):
        places.append(gettext("from the assistant's memory store"))
    exports = int(deleted.get("export_files") or 0)
    if exports:
        places.append(
            ngettext("from %(n)s copy of our activity log made for an auditor",
                     "from %(n)s copies of our activity log made for auditors", exports) % {"n": exports}
        )
    return places


def erasure_sentence(places: list[str]) -> str:
    """"deleted from your memories, from 3 chat messages and from the assistant's memory store"."""
    if not places:
        return gettext("nothing was left to delete")
    return gettext("deleted %(places)s") % {"places": get_text_list(places, gettext("and"))}


# --- Scheduled deletions (undo) --------------------------------------------------------------

# How long a carried-out deletion stays on the page, as its receipt.
DONE_SHOWN_FOR = timedelta(hours=1)


@dataclass
class DeletionItem:
    deletion: FactDeletion
    label: str  # "Your city" or "Project: flask-migration · Database"
    value: str  # while scheduled; a carried-out deletion has none left to show
    sentence: str = ""  # for a carried-out one: where it was deleted from


@dataclass
class Deletions:
    scheduled: list[DeletionItem]
    done: list[DeletionItem]

    @property
    def scheduled_fact_ids(self) -> set[int]:
        return {item.deletion.fact_id for item in self.scheduled}


def subject_deletions(subject: Subject) -> Deletions:
    """The subject's deletions waiting for their undo window, and those done in the last hour."""
    rows = FactDeletion.objects.filter(
        Q(status=DeletionStatus.SCHEDULED)
        | Q(status=DeletionStatus.DONE, settled_at__gte=timezone.now() - DONE_SHOWN_FOR),
        subject=subject,
    ).select_related("fact__entity").order_by("-requested_at")
    labels = labels_cached_on(subject, subject.tenant)
    scheduled, done = [], []
    for row in rows:
        fact = row.fact
        label = labels.field(fact.entity.entity_type, fact.field)
        if fact.entity.entity_type != EntityType.USER:
            label = f"{entity_label(fact.entity)} · {label}"
        if row.status == DeletionStatus.SCHEDULED:
            scheduled.append(DeletionItem(row, str(label), fact.value))
        else:
            done.append(DeletionItem(row, str(label), "", erasure_sentence(describe_erasure(row.receipt))))
    return Deletions(scheduled, done)



# --- What we remember, why, for how long, who can see it -----------------------------------


@dataclass
class ExplainedField:
    label: str
    about: str  # "You", "Project", …
    several: bool  # a many field
    sensitivity: str
    retention_days: int | None  # None: kept until you delete it
    automatic: bool  # saved without a person checking, when we are sure


@dataclass
class ExplainedCategory:
    heading: str
    blurb: str
    fields: list[ExplainedField]


@dataclass
class Explanation:
    categories: list[ExplainedCategory]
    relations: list[str]  # relation labels, or empty when any relation is accepted
    any_relation: bool
    message_retention_days: int
    thread_idle_days: int
    sensitive_retention_days: int


def subject_explanation(subject: Subject) -> Explanation:
    """The tenant's schema and retention in the subject's words, for the explanation page.

    Generated, not written: a field the tenant adds, a retention it changes, a label it
    gives shows here at once.
    """
    tenant = subject.tenant
    labels = labels_cached_on(subject, tenant)
    schema = TenantSchema.load(tenant)
    by_category: dict[str, list[ExplainedField]] = {}
    for (entity_type, field), rule in sorted(schema.rules.items()):
        sensitive = rule.sensitivity == Sensitivity.SENSITIVE
        by_category.setdefault(rule.category, []).append(ExplainedField(
            label=labels.field(entity_type, field),
            about=TenantLabels.entity_type(entity_type),
            several=rule.cardinality == Cardinality.MANY,
            sensitivity=rule.sensitivity,
            retention_days=rule.retention_days or (tenant.sensitive_retention_days if sensitive else None),
            automatic=rule.auto_approve,
        ))
    categories = [ExplainedCategory(str(h), str(b), by_category.get(c, [])) for c, h, b in SECTIONS]
    allowed = tenant.allowed_relation_names
    return Explanation(
        categories=[c for c in categories if c.fields or c is categories[-1]],
        relations=[labels.relation(name) for name in (allowed or [])],
        any_relation=allowed is None,
        message_retention_days=tenant.message_retention_days,
        thread_idle_days=tenant.thread_idle_days,
        sensitive_retention_days=tenant.sensitive_retention_days,
    )
