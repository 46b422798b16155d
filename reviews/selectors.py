"""Reads that page or filter. Each group below serves one screen or endpoint."""
from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone as dt_timezone

from django.contrib.auth import get_user_model
from django.db import connection
from django.db.models import F, Q, QuerySet, Window
from django.db.models.functions import Lag, Lead
from django.utils import timezone

from .errors import InvalidInput
from .models import Candidate, CandidateStatus, Fact, FactStatus, FieldDefinition, Message, Sensitivity, Tenant
from .policy import RELATION_PREFIX
from .schema import TenantSchema

# --- Review queue ---------------------------------------------------------------------------
#
# The queue is read oldest first, with `pending_review` before anything else. Each status is
# one *phase*, read with keyset pagination on (created_at, id) along the index
# (tenant, status, created_at, id); when a phase runs out the page continues with the next.
# Every page therefore costs at most one query per phase, however deep it is.

QUEUE_STATUS_OPEN = "open"
QUEUE_STATUS_ALL = "all"
QUEUE_PHASES = {
    **{status: (status,) for status in CandidateStatus.values},
    QUEUE_STATUS_OPEN: (CandidateStatus.PENDING_REVIEW, CandidateStatus.PENDING_USER),
    # pending_review first, then what waits for the subject, then every decided status.
    QUEUE_STATUS_ALL: tuple(CandidateStatus.values),
}
QUEUE_AGES = {
    # name: (at least this old, younger than this)
    "lt1d": (None, timedelta(days=1)),
    "1to7d": (timedelta(days=1), timedelta(days=7)),
    "gt7d": (timedelta(days=7), None),
    "gt30d": (timedelta(days=30), None),
}
QUEUE_PAGE_SIZE = 50
QUEUE_MAX_PAGE_SIZE = 200
# Messages shown on each side of the one that states the fact.
CONTEXT_MESSAGES = 2


@dataclass(frozen=True)
class QueueFilters:
    status: str = CandidateStatus.PENDING_REVIEW
    user_id: str = ""
    entity_type: str = ""
    field: str = ""
    sensitivity: str = ""
    min_confidence: float | None = None
    max_confidence: float | None = None
    conflict: bool | None = None
    new_entity: bool | None = None
    age: str = ""

    def __post_init__(self):
        if self.status not in QUEUE_PHASES:
            raise InvalidInput("Unknown status.", details={"status": sorted(QUEUE_PHASES)})
        if self.sensitivity and self.sensitivity not in Sensitivity.values:
            raise InvalidInput("Unknown sensitivity.", details={"sensitivity": list(Sensitivity.values)})
        if self.age and self.age not in QUEUE_AGES:
            raise InvalidInput("Unknown age.", details={"age": list(QUEUE_AGES)})
        for name in ("min_confidence", "max_confidence"):
            bound = getattr(self, name)
            if bound is not None and not 0.0 <= bound <= 1.0:
                raise InvalidInput("A confidence lies between 0 and 1.", details={name: bound})

    @property
    def phases(self) -> tuple[str, ...]:
        return QUEUE_PHASES[self.status]


@dataclass(frozen=True)
class QueueCursor:
    """Where the previous page stopped: a phase and the last (created_at, id) read in it."""

    phase: int
    created_at: datetime
    id: int

    def encode(self) -> str:
        micros = int(self.created_at.timestamp() * 1_000_000)
        raw = f"{self.phase}.{micros}.{self.id}".encode()
        return base64.urlsafe_b64encode(raw).decode().rstrip("=")

    @classmethod
    def decode(cls, token: str) -> "QueueCursor":
        try:
            raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)).decode()
            phase, micros, pk = (int(part) for part in raw.split("."))
            created_at = datetime.fromtimestamp(0, tz=dt_timezone.utc) + timedelta(microseconds=micros)
        except (ValueError, UnicodeDecodeError, binascii.Error, OverflowError):
            raise InvalidInput("The cursor is not valid.", details={"cursor": "invalid"}) from None
        if phase < 0 or pk < 0:
            raise InvalidInput("The cursor is not valid.", details={"cursor": "invalid"})
        return cls(phase, created_at, pk)


@dataclass
class QueuePage:
    candidates: list[Candidate]
    next_cursor: QueueCursor | None


def _sensitivity_q(tenant: Tenant, sensitivity: str) -> Q:
    pairs = FieldDefinition.objects.filter(tenant=tenant, sensitivity=sensitivity).values_list("entity_type", "field")
    match = Q(pk__in=[])
    for entity_type, field_name in pairs:
        match |= Q(entity_type=entity_type, field=field_name)
    if sensitivity == Sensitivity.NORMAL:
        # relation:<name> fields are normal wherever the schema accepts them (SPEC §2).
        match |= Q(field__startswith=RELATION_PREFIX)
    return match


def _new_entity_q() -> Q:
    if connection.features.supports_json_field_contains:
        flagged = Q(flags__contains=["new_entity"])
    else:  # SQLite: the flags are a short JSON list of plain words
        flagged = Q(flags__icontains='"new_entity"')
    return flagged | Q(entity__is_new=True)


def queue_filtered(*, tenant: Tenant, filters: QueueFilters, now: datetime | None = None) -> QuerySet:
    """Every filter except status (a phase decides that), for one tenant."""
    queryset = Candidate.objects.filter(tenant=tenant)
    if filters.user_id:
        queryset = queryset.filter(subject__tenant=tenant, subject__user_id=filters.user_id)
    if filters.entity_type:
        queryset = queryset.filter(entity_type=filters.entity_type)
    if filters.field:
        queryset = queryset.filter(field=filters.field)
    if filters.sensitivity:
        queryset = queryset.filter(_sensitivity_q(tenant, filters.sensitivity))
    if filters.min_confidence is not None:
        queryset = queryset.filter(confidence__gte=filters.min_confidence)
    if filters.max_confidence is not None:
        queryset = queryset.filter(confidence__lte=filters.max_confidence)
    if filters.conflict is not None:
        queryset = queryset.filter(has_conflict=filters.conflict)
    if filters.new_entity is not None:
        queryset = queryset.filter(_new_entity_q()) if filters.new_entity else queryset.exclude(_new_entity_q())
    if filters.age:
        now = now or timezone.now()
        at_least, younger_than = QUEUE_AGES[filters.age]
        if at_least is not None:
            queryset = queryset.filter(created_at__lte=now - at_least)
        if younger_than is not None:
            queryset = queryset.filter(created_at__gt=now - younger_than)
    return queryset


def review_queue_page(
    *,
    tenant: Tenant,
    filters: QueueFilters,
    cursor: QueueCursor | None = None,
    limit: int = QUEUE_PAGE_SIZE,
    related: tuple[str, ...] = ("subject", "entity", "conflict_fact"),
) -> QueuePage:
    """One page of the queue, pending_review first, oldest first within a status."""
    limit = max(1, min(limit, QUEUE_MAX_PAGE_SIZE))
    base = queue_filtered(tenant=tenant, filters=filters).select_related(*related)
    phases = filters.phases
    rows: list[Candidate] = []
    row_phase: list[int] = []
    start = cursor.phase if cursor else 0
    for phase in range(start, len(phases)):
        queryset = base.filter(status=phases[phase])
        if cursor is not None and phase == cursor.phase:
            # created_at >= c bounds the index range; the OR settles ties on id.
            queryset = queryset.filter(created_at__gte=cursor.created_at).filter(
                Q(created_at__gt=cursor.created_at) | Q(id__gt=cursor.id)
            )
        # One extra row tells whether anything follows, without a count.
        wanted = limit + 1 - len(rows)
        found = list(queryset.order_by("created_at", "id")[:wanted])
        rows.extend(found)
        row_phase.extend([phase] * len(found))
        if len(rows) > limit:
            break
    if len(rows) <= limit:
        return QueuePage(rows, None)
    last = rows[limit - 1]
    return QueuePage(rows[:limit], QueueCursor(row_phase[limit - 1], last.created_at, last.pk))


@dataclass
class ConversationLine:
    message: Message
    is_source: bool
    # The content cut around the evidence: [(text, is_evidence), ...]; the template escapes each.
    segments: list[tuple[str, bool]]


@dataclass
class QueueItem:
    candidate: Candidate
    sensitivity: str = ""
    cardinality: str = ""
    is_new_entity: bool = False
    conversation: list[ConversationLine] = field(default_factory=list)
    source_found: bool = False
    current_facts: list[Fact] = field(default_factory=list)
    conflict: Fact | None = None
    decider: str = ""

    @property
    def can_keep_both(self) -> bool:
        return self.cardinality == "many"


def evidence_segments(content: str, evidence: str) -> list[tuple[str, bool]]:
    """Split text around the first occurrence of the evidence span.

    Plain strings only: the template escapes every piece, so no markup is ever built
    from what a user wrote.
    """
    span = (evidence or "").strip()
    if not span:
        return [(content, False)]
    start = content.find(span)
    if start < 0 and len(content.lower()) == len(content):
        start = content.lower().find(span.lower())
    if start < 0:
        return [(content, False)]
    end = start + len(span)
    return [piece for piece in ((content[:start], False), (content[start:end], True), (content[end:], False)) if piece[0]]


def _conversations(tenant: Tenant, candidates: list[Candidate]) -> dict[tuple[int, str], list[Message]]:
    """The source message of each candidate and its neighbours in the thread, in two queries."""
    wanted = {(c.subject_id, c.source_message_id) for c in candidates if c.source_message_id}
    if not wanted:
        return {}
    sources = list(
        Message.objects.filter(tenant=tenant, message_id__in={message_id for _, message_id in wanted}).only(
            "pk", "subject_id", "thread_id", "message_id"
        )
    )
    sources = [m for m in sources if (m.subject_id, m.message_id) in wanted]
    if not sources:
        return {}
    threads = Q(pk__in=[])
    for message in sources:
        threads |= Q(subject_id=message.subject_id, thread_id=message.thread_id)
    source_ids = [m.message_id for m in sources]
    partition = {"partition_by": [F("subject_id"), F("thread_id")], "order_by": [F("created_at").asc(), F("id").asc()]}
    near = Q(message_id__in=source_ids)
    neighbours = {}
    for offset in range(1, CONTEXT_MESSAGES + 1):
        neighbours[f"before_{offset}"] = Window(Lead("message_id", offset), **partition)
        neighbours[f"after_{offset}"] = Window(Lag("message_id", offset), **partition)
        near |= Q(**{f"before_{offset}__in": source_ids}) | Q(**{f"after_{offset}__in": source_ids})
    lines = list(
        Message.objects.filter(tenant=tenant)
        .filter(threads)
        .annotate(**neighbours)
        .filter(near)
        .order_by("subject_id", "thread_id", "created_at", "id")
    )
    by_thread: dict[tuple[int, str], list[Message]] = {}
    for line in lines:
        by_thread.setdefault((line.subject_id, line.thread_id), []).append(line)
    context = {}
    for source in sources:
        thread = by_thread.get((source.subject_id, source.thread_id), [])
        index = next((i for i, line in enumerate(thread) if line.pk == source.pk), None)
        if index is not None:
            context[(source.subject_id, source.message_id)] = thread[
                max(0, index - CONTEXT_MESSAGES) : index + CONTEXT_MESSAGES + 1
            ]
    return context


def actor_names(actors) -> dict[str, str]:
    """Readable names for actor strings; reviewers by username (one query for all)."""
    reviewer_ids = {a.split(":", 1)[1] for a in actors if a and a.startswith("reviewer:")}
    usernames = dict(
        get_user_model().objects.filter(pk__in=[i for i in reviewer_ids if i.isdigit()]).values_list("pk", "username")
    )
    names = {}
    for actor in actors:
        kind, _, ident = (actor or "").partition(":")
        names[actor] = usernames.get(int(ident), actor) if kind == "reviewer" and ident.isdigit() else actor
    return names


def review_queue_items(*, tenant: Tenant, candidates: list[Candidate]) -> list[QueueItem]:
    """Everything a reviewer needs beside each candidate, in a fixed number of queries:
    the field's schema, the source message in its thread, the subject's current facts for
    the same entity, the active value in conflict, and who decided."""
    if not candidates:
        return []
    schema = TenantSchema.load(tenant)
    conversations = _conversations(tenant, candidates)
    facts_by_entity: dict[int, list[Fact]] = {}
    entity_ids = {c.entity_id for c in candidates if c.entity_id}
    for fact in Fact.objects.filter(tenant=tenant, entity_id__in=entity_ids, status=FactStatus.ACTIVE).order_by(
        "field", "-updated_at"
    ):
        facts_by_entity.setdefault(fact.entity_id, []).append(fact)
    names = actor_names({c.decided_by for c in candidates})
    items = []
    for candidate in candidates:
        rule = schema.rule_for(candidate.entity_type, candidate.field)
        thread = conversations.get((candidate.subject_id, candidate.source_message_id), [])
        conversation = [
            ConversationLine(
                message=message,
                is_source=message.message_id == candidate.source_message_id,
                segments=evidence_segments(message.content, candidate.evidence)
                if message.message_id == candidate.source_message_id
                else [(message.content, False)],
            )
            for message in thread
        ]
        entity = candidate.entity if candidate.entity_id else None
        items.append(
            QueueItem(
                candidate=candidate,
                sensitivity=rule.sensitivity if rule else "",
                cardinality=rule.cardinality if rule else "",
                is_new_entity="new_entity" in (candidate.flags or []) or bool(entity and entity.is_new),
                conversation=conversation,
                source_found=bool(conversation),
                current_facts=facts_by_entity.get(candidate.entity_id, []),
                conflict=candidate.conflict_fact if candidate.has_conflict else None,
                decider=names.get(candidate.decided_by, ""),
            )
        )
    return items
