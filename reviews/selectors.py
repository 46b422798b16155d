"""Reads that page or filter. Each group below serves one screen or endpoint."""
from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta, timezone as dt_timezone
from typing import NamedTuple

from django.contrib.auth import get_user_model
from django.db import DEFAULT_DB_ALIAS, connection
from django.db.models import (
    Aggregate,
    Count,
    DurationField,
    ExpressionWrapper,
    F,
    IntegerField,
    Q,
    QuerySet,
    Subquery,
    Sum,
    Value,
)
from django.db.models.functions import TruncDate, TruncHour
from django.utils import timezone

from .actors import Actor
from .errors import InvalidInput
from .hotpath import prepared_cursor
from .models import (
    ActorKind,
    AuditAction,
    AuditEvent,
    Candidate,
    CandidateFlag,
    CandidateStatus,
    DeletionStatus,
    Fact,
    FactDeletion,
    FactStatus,
    FieldDefinition,
    Message,
    Reason,
    Sensitivity,
    Tenant,
)
from .models.choices import OPEN_CANDIDATE_STATUSES, REVIEW_DECISION_ACTIONS
from .normalize import normalize_value
from .policy import RELATION_PREFIX
from .schema import TenantSchema
from .models import Category, DecisionUndo, Entity, EntityAlias, FactVersion, MemoryScope, RecallRecord, Subject
from .normalize import normalize_text, slugify_entity_id
from .textmatch import QueryTerms, fallback_score, query_terms

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
    QUEUE_STATUS_OPEN: OPEN_CANDIDATE_STATUSES,
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


# The field filter's value for every `relation:<name>` field (SPEC §2 accepts any name).
ANY_RELATION = f"{RELATION_PREFIX}*"


class QueueSort:
    """The orders the queue can be read in (SPEC §4): oldest first unless asked."""

    OLDEST = "oldest"
    NEWEST = "newest"
    CONFIDENCE = "confidence"  # lowest confidence first
    PRIORITY = "priority"  # contested, then conflicts, then the rest; oldest first in each
    ALL = (OLDEST, NEWEST, CONFIDENCE, PRIORITY)


class QueueClaims:
    """Whose claimed items the queue shows (SPEC §4 claims)."""

    POOL = ""  # unclaimed items and the viewer's own: what colleagues' claims leave
    MINE = "mine"  # only what the viewer holds
    ALL = "all"  # everything, colleagues' claims included: "unless they ask"
    CHOICES = (POOL, MINE, ALL)


# Flags a reviewer can filter on: the candidate's marks, and "conflict".
QUEUE_FLAGS = (*CandidateFlag.ALL, "conflict")
MAX_QUERY_LENGTH = 200


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
    flag: str = ""
    q: str = ""
    sort: str = QueueSort.OLDEST
    claims: str = QueueClaims.POOL

    def __post_init__(self):
        if self.status not in QUEUE_PHASES:
            raise InvalidInput("Unknown status.", details={"status": sorted(QUEUE_PHASES)})
        if self.sensitivity and self.sensitivity not in Sensitivity.values:
            raise InvalidInput("Unknown sensitivity.", details={"sensitivity": list(Sensitivity.values)})
        if self.age and self.age not in QUEUE_AGES:
            raise InvalidInput("Unknown age.", details={"age": list(QUEUE_AGES)})
        if self.flag and self.flag not in QUEUE_FLAGS:
            raise InvalidInput("Unknown flag.", details={"flag": list(QUEUE_FLAGS)})
        if self.sort not in QueueSort.ALL:
            raise InvalidInput("Unknown sort.", details={"sort": list(QueueSort.ALL)})
        if self.claims not in QueueClaims.CHOICES:
            raise InvalidInput("Unknown claims filter.", details={"claims": [c for c in QueueClaims.CHOICES if c]})
        if len(self.q) > MAX_QUERY_LENGTH:
            raise InvalidInput("The search is too long.", details={"q": "too_long"})
        for name in ("min_confidence", "max_confidence"):
            bound = getattr(self, name)
            if bound is not None and not 0.0 <= bound <= 1.0:
                raise InvalidInput("A confidence lies between 0 and 1.", details={name: bound})

    @property
    def phases(self) -> tuple[str, ...]:
        return QUEUE_PHASES[self.status]


@dataclass(frozen=True)
class QueueCursor:
    """Where the previous page stopped: a phase, the last (created_at, id) read in it and,
    when sorting by confidence, its confidence."""

    phase: int
    created_at: datetime
    id: int
    confidence: float | None = None

    def encode(self) -> str:
        micros = int(self.created_at.timestamp() * 1_000_000)
        raw = f"{self.phase}.{micros}.{self.id}"
        if self.confidence is not None:
            raw += f"~{self.confidence!r}"
        return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")

    @classmethod
    def decode(cls, token: str) -> "QueueCursor":
        try:
            raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)).decode()
            raw, _, confidence_text = raw.partition("~")
            phase, micros, pk = (int(part) for part in raw.split("."))
            created_at = datetime.fromtimestamp(0, tz=dt_timezone.utc) + timedelta(microseconds=micros)
            confidence = float(confidence_text) if confidence_text else None
        except (ValueError, UnicodeDecodeError, binascii.Error, OverflowError):
            raise InvalidInput("The cursor is not valid.", details={"cursor": "invalid"}) from None
        if phase < 0 or pk < 0 or (confidence is not None and not 0.0 <= confidence <= 1.0):
            raise InvalidInput("The cursor is not valid.", details={"cursor": "invalid"})
        return cls(phase, created_at, pk, confidence)


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


def _flag_q(flag: str) -> Q:
    if connection.features.supports_json_field_contains:
        return Q(flags__contains=[flag])
    return Q(flags__icontains=f'"{flag}"')  # SQLite: the flags are a short JSON list of plain words


def _new_entity_q() -> Q:
    return _flag_q(CandidateFlag.NEW_ENTITY) | Q(entity__is_new=True)


# Up to this many subjects whose user id matches a search are passed to the queue's query
# as a list; beyond it (a search as broad as "user") the match stays a subquery.
SEARCH_SUBJECTS_LISTED = 500


def queue_search_q(tenant: Tenant, text: str) -> Q:
    """Free text over values, evidence and users (SPEC §4): a case-insensitive substring.

    On PostgreSQL trigram indexes on these expressions answer it (migration 0010). The
    subjects whose user id matches are looked up first (their own trigram index) and given
    as a list: a subquery inside the OR hides its few rows from the planner, which then
    guessed a quarter of the queue matched and walked all of it in order (0.9 s on the
    million of bench/review_queue.py) instead of combining the three index reads.
    """
    text = text.strip()
    users = Subject.objects.filter(tenant=tenant, user_id__icontains=text).values_list("pk", flat=True)
    subjects = list(users[: SEARCH_SUBJECTS_LISTED + 1])
    return (
        Q(value__icontains=text)
        | Q(evidence__icontains=text)
        | Q(subject_id__in=subjects if len(subjects) <= SEARCH_SUBJECTS_LISTED else users)
    )


def claims_q(claims: str, viewer: str, now: datetime) -> Q:
    """Which items a viewer sees given colleagues' claims; an expired claim is no claim."""
    if claims == QueueClaims.ALL:
        return Q()
    if claims == QueueClaims.MINE:
        return Q(claimed_by=viewer, claim_expires_at__gt=now) if viewer else Q(pk__in=[])
    free = Q(claim_expires_at__isnull=True) | Q(claim_expires_at__lte=now)
    return free | Q(claimed_by=viewer) if viewer else free


def queue_filtered(
    *, tenant: Tenant, filters: QueueFilters, now: datetime | None = None, viewer: str = ""
) -> QuerySet:
    """Every filter except status (a phase decides that), for one tenant.

    ``viewer`` is the actor string of who reads the queue: colleagues' live claims are
    left out for them unless the filters ask for every claim.
    """
    now = now or timezone.now()
    queryset = Candidate.objects.filter(tenant=tenant)
    queryset = queryset.filter(claims_q(filters.claims, viewer, now))
    if filters.q.strip():
        queryset = queryset.filter(queue_search_q(tenant, filters.q))
    if filters.flag == "conflict":
        queryset = queryset.filter(has_conflict=True)
    elif filters.flag:
        queryset = queryset.filter(_flag_q(filters.flag))
    if filters.user_id:
        queryset = queryset.filter(subject__tenant=tenant, subject__user_id=filters.user_id)
    if filters.entity_type:
        queryset = queryset.filter(entity_type=filters.entity_type)
    if filters.field == ANY_RELATION:
        queryset = queryset.filter(field__startswith=RELATION_PREFIX)
    elif filters.field:
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
        at_least, younger_than = QUEUE_AGES[filters.age]
        if at_least is not None:
            queryset = queryset.filter(created_at__lte=now - at_least)
        if younger_than is not None:
            queryset = queryset.filter(created_at__gt=now - younger_than)
    return queryset


def _phase_plan(filters: QueueFilters) -> list[tuple[str, Q]]:
    """The phases a page is read in: one per status, and for "contested and conflicts
    first" three per status (contested, other conflicts, the rest)."""
    if filters.sort != QueueSort.PRIORITY:
        return [(status, Q()) for status in filters.phases]
    contested = _flag_q(CandidateFlag.CONTESTED)
    plan = []
    for status in filters.phases:
        plan += [(status, contested), (status, Q(has_conflict=True) & ~contested), (status, ~contested & Q(has_conflict=False))]
    return plan


def _after(cursor: QueueCursor, sort: str) -> Q:
    """Rows after the cursor in the sort's order; the first term bounds the index range."""
    if sort == QueueSort.NEWEST:
        return Q(created_at__lte=cursor.created_at) & (Q(created_at__lt=cursor.created_at) | Q(id__lt=cursor.id))
    if sort == QueueSort.CONFIDENCE:
        confidence = cursor.confidence if cursor.confidence is not None else 0.0
        return Q(confidence__gte=confidence) & (
            Q(confidence__gt=confidence)
            | Q(created_at__gt=cursor.created_at)
            | Q(created_at=cursor.created_at, id__gt=cursor.id)
        )
    return Q(created_at__gte=cursor.created_at) & (Q(created_at__gt=cursor.created_at) | Q(id__gt=cursor.id))


QUEUE_ORDER = {
    QueueSort.OLDEST: ("created_at", "id"),
    QueueSort.PRIORITY: ("created_at", "id"),
    QueueSort.NEWEST: ("-created_at", "-id"),
    QueueSort.CONFIDENCE: ("confidence", "created_at", "id"),
}


def review_queue_page(
    *,
    tenant: Tenant,
    filters: QueueFilters,
    cursor: QueueCursor | None = None,
    limit: int = QUEUE_PAGE_SIZE,
    related: tuple[str, ...] = ("subject", "entity", "conflict_fact"),
    viewer: str = "",
) -> QueuePage:
    """One page of the queue, pending_review first, in the filters' sort within a status."""
    limit = max(1, min(limit, QUEUE_MAX_PAGE_SIZE))
    base = queue_filtered(tenant=tenant, filters=filters, viewer=viewer).select_related(*related)
    plan = _phase_plan(filters)
    order = QUEUE_ORDER[filters.sort]
    rows: list[Candidate] = []
    row_phase: list[int] = []
    start = cursor.phase if cursor else 0
    for phase in range(start, len(plan)):
        status, condition = plan[phase]
        queryset = base.filter(status=status).filter(condition)
        if cursor is not None and phase == cursor.phase:
            queryset = queryset.filter(_after(cursor, filters.sort))
        # One extra row tells whether anything follows, without a count.
        wanted = limit + 1 - len(rows)
        found = list(queryset.order_by(*order)[:wanted])
        rows.extend(found)
        row_phase.extend([phase] * len(found))
        if len(rows) > limit:
            break
    if len(rows) <= limit:
        return QueuePage(rows, None)
    last = rows[limit - 1]
    confidence = last.confidence if filters.sort == QueueSort.CONFIDENCE else None
    return QueuePage(rows[:limit], QueueCursor(row_phase[limit - 1], last.created_at, last.pk, confidence))


# Counting stops here: "1,000+" says enough and keeps the counts off the page's time budget.
# A capped count reads up to this many rows of its filter; a sparse filter (one waiting item
# in twenty matches) walks twenty times as many, so at 10,000 the headline walked some
# 200,000 rows of a million-item queue (60-100 ms) where 1,000 walks a tenth of that.
QUEUE_COUNT_CAP = 1_000


@dataclass
class QueueCounts:
    waiting: int  # pending_review in the tenant (colleagues' claims included)
    in_filter: int  # what these filters show this viewer
    contested: int  # waiting items the subject sent back
    claimed_by_viewer: int
    oldest: datetime | None  # the oldest item waiting for a reviewer
    cap: int = QUEUE_COUNT_CAP

    def capped(self, name: str) -> bool:
        return getattr(self, name) > self.cap


class _CappedCount(Subquery):
    """``(SELECT COUNT(*) FROM (<the first cap + 1 rows>))``: a count that stops one row past
    the cap (so "more than the cap" is known), as an expression, so that several of them
    are read in one query."""

    template = "(SELECT COUNT(*) FROM (%(subquery)s) capped)"
    output_field = IntegerField()
    empty_result_set_value = 0  # a filter that can match nothing (an empty list) counts 0

    def __init__(self, queryset: QuerySet):
        super().__init__(queryset.order_by().values("pk")[: QUEUE_COUNT_CAP + 1])


def _read_at_once(tenant: Tenant, **expressions) -> dict:
    """Several scalar subqueries read in one round trip (on the tenant's own row)."""
    return Tenant.objects.filter(pk=tenant.pk).values(**expressions).get()


def waiting_for_review(*, tenant: Tenant) -> QuerySet:
    """What "waiting" means wherever it is counted (the queue's headline, the stats page):
    items waiting for a reviewer, colleagues' claims and contested items included. An item
    a reviewer handed to the subject (deferred) waits for the subject, not in this count."""
    return Candidate.objects.filter(tenant=tenant, status=CandidateStatus.PENDING_REVIEW)


def _oldest_waiting(tenant: Tenant, column: str) -> Subquery:
    """The item that has waited longest for a reviewer (the first of the queue in its
    default order, oldest first): its ``column``."""
    return Subquery(waiting_for_review(tenant=tenant).order_by("created_at", "id").values(column)[:1])


def review_queue_counts(*, tenant: Tenant, filters: QueueFilters, viewer: str = "", now: datetime | None = None) -> QueueCounts:
    """The queue's headline: waiting, in this filter, contested, mine, and the oldest item.

    Each count stops at :data:`QUEUE_COUNT_CAP` (a LIMIT in a subquery); the five are one
    query (scalar subqueries), each a small index read whatever the queue's size.
    """
    now = now or timezone.now()
    waiting = waiting_for_review(tenant=tenant)
    mine = Candidate.objects.filter(
        tenant=tenant, status__in=OPEN_CANDIDATE_STATUSES, claimed_by=viewer, claim_expires_at__gt=now
    )
    row = _read_at_once(
        tenant,
        waiting=_CappedCount(waiting),
        in_filter=_CappedCount(
            queue_filtered(tenant=tenant, filters=filters, viewer=viewer, now=now).filter(status__in=filters.phases)
        ),
        contested=_CappedCount(waiting.filter(_flag_q(CandidateFlag.CONTESTED))),
        **({"claimed_by_viewer": _CappedCount(mine)} if viewer else {}),
        oldest=_oldest_waiting(tenant, "created_at"),
    )
    return QueueCounts(**{"claimed_by_viewer": 0, **row})


def queue_selection(*, tenant: Tenant, filters: QueueFilters, limit: int, viewer: str = "") -> list[tuple[int, int]]:
    """"Select all in this filter": the (id, version) of every open item these filters show
    this viewer, oldest first, at most ``limit``. The versions are the ones of this moment,
    so a bulk decision on them still refuses an item that changed since (stale)."""
    open_phases = [status for status in filters.phases if status in OPEN_CANDIDATE_STATUSES]
    return list(
        queue_filtered(tenant=tenant, filters=filters, viewer=viewer)
        .filter(status__in=open_phases)
        .order_by("created_at", "id")
        .values_list("pk", "version")[:limit]
    )

class ContextMessage(NamedTuple):
    """A message of a source's thread as the queue shows it. Read as plain rows: a queue page
    shows some 90 of them, and making each a Message model cost more than reading them."""

    pk: int
    subject_id: int
    thread_id: str
    message_id: str
    role: str
    content: str
    created_at: datetime


@dataclass
class ConversationLine:
    message: ContextMessage
    is_source: bool
    # The content cut around the evidence: [(text, is_evidence), ...]; the template escapes each.
    segments: list[tuple[str, bool]]

    @property
    def at(self) -> str:
        """When it was said, in the active time zone (a plain format: cheaper than |date per line)."""
        return timezone.localtime(self.message.created_at).strftime("%Y-%m-%d %H:%M")


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
    # Contested items: the versions of the fact the subject sent back, newest first.
    history: list[FactVersion] = field(default_factory=list)
    claimed_by: str = ""  # who holds a live claim on it ("" when nobody)
    claimed_by_viewer: bool = False
    claim_expires_at: datetime | None = None
    undo_until: datetime | None = None  # the viewer may undo their decision until then

    @property
    def can_keep_both(self) -> bool:
        return self.cardinality == "many"

    @property
    def evidence_found(self) -> bool:
        """The candidate's evidence is highlighted in its source message."""
        return any(hit for line in self.conversation for _, hit in line.segments)

    @property
    def is_contested(self) -> bool:
        return CandidateFlag.CONTESTED in (self.candidate.flags or [])

    @property
    def waits_for_subject(self) -> bool:
        return self.candidate.status == CandidateStatus.PENDING_USER


@dataclass
class QueueGroup:
    """Consecutive items of one subject's thread: the conversation is shown once for them."""

    subject_id: int
    user_id: str
    thread_id: str
    items: list[QueueItem]
    conversation: list[ConversationLine] = field(default_factory=list)


def _line_weight(line: ConversationLine) -> tuple[bool, bool]:
    """A source line with its evidence highlighted beats one without, which beats context."""
    return line.is_source, any(hit for _, hit in line.segments)


def queue_groups(items: list[QueueItem]) -> list[QueueGroup]:
    """Group a page's items by subject and thread, keeping the page's order.

    The group's conversation is the union of its items' context lines, in thread order,
    each source line highlighted with the evidence of the first item it supports.
    """
    groups: list[QueueGroup] = []
    for item in items:
        thread_id = item.conversation[0].message.thread_id if item.conversation else ""
        candidate = item.candidate
        if groups and (groups[-1].subject_id, groups[-1].thread_id) == (candidate.subject_id, thread_id):
            groups[-1].items.append(item)
        else:
            groups.append(QueueGroup(candidate.subject_id, candidate.subject.user_id, thread_id, [item]))
    for group in groups:
        lines: dict[int, ConversationLine] = {}
        for item in group.items:
            for line in item.conversation:
                known = lines.get(line.message.pk)
                if known is None or _line_weight(line) > _line_weight(known):
                    lines[line.message.pk] = line
        group.conversation = sorted(lines.values(), key=lambda line: (line.message.created_at, line.message.pk))
    return groups


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


# A source message's neighbours in its thread, in one statement: the threads of the asked
# message ids, each message with the ids CONTEXT_MESSAGES places before and after it, kept
# when it is a source or has one that near. Written as SQL rather than through the ORM: a
# queue page reads it once, and compiling the ORM's six window expressions cost it about
# four times what the database spends on the query. The message table is Django's, named
# by its model; the %(ids)s placeholders are filled with one %s per id. Runs on PostgreSQL
# and SQLite (window functions, row values).
_CONTEXT_OFFSETS = range(1, CONTEXT_MESSAGES + 1)
_CONTEXT_SQL = """
    WITH sources AS (
        SELECT subject_id, thread_id, message_id FROM {table}
        WHERE tenant_id = %s AND message_id IN (%(ids)s)
    ), near AS (
        SELECT m.id, m.subject_id, m.thread_id, m.message_id, m.role, m.content, m.created_at, {neighbours}
        FROM {table} m
        WHERE m.tenant_id = %s AND (m.subject_id, m.thread_id) IN (SELECT subject_id, thread_id FROM sources)
        WINDOW thread AS (PARTITION BY m.subject_id, m.thread_id ORDER BY m.created_at, m.id)
    )
    SELECT id, subject_id, thread_id, message_id, role, content, created_at FROM near
    WHERE {near}
    ORDER BY subject_id, thread_id, created_at, id
""".format(
    table=Message._meta.db_table,
    neighbours=", ".join(
        f"LEAD(m.message_id, {offset}) OVER thread AS before_{offset}, "
        f"LAG(m.message_id, {offset}) OVER thread AS after_{offset}"
        for offset in _CONTEXT_OFFSETS
    ),
    near=" OR ".join(
        ["message_id IN (SELECT message_id FROM sources)"]
        + [f"{side}_{offset} IN (SELECT message_id FROM sources)" for offset in _CONTEXT_OFFSETS for side in ("before", "after")]
    ),
).replace("%s", "%%s")


def _conversations(tenant: Tenant, candidates: list[Candidate]) -> dict[tuple[int, str], list[ContextMessage]]:
    """The source message of each candidate and its neighbours in the thread, in one query
    (_CONTEXT_SQL); a source must belong to its candidate's subject."""
    wanted = {(c.subject_id, c.source_message_id) for c in candidates if c.source_message_id}
    if not wanted:
        return {}
    source_ids = sorted({message_id for _, message_id in wanted})
    sql = _CONTEXT_SQL % {"ids": ", ".join(["%s"] * len(source_ids))}
    with connection.cursor() as cursor:
        cursor.execute(sql, [tenant.pk, *source_ids, tenant.pk])
        rows = cursor.fetchall()
    lines = [ContextMessage(*row[:6], _aware(row[6])) for row in rows]
    by_thread: dict[tuple[int, str], list[ContextMessage]] = {}
    for line in lines:
        by_thread.setdefault((line.subject_id, line.thread_id), []).append(line)
    context = {}
    for line in lines:
        if (line.subject_id, line.message_id) in wanted:
            thread = by_thread[(line.subject_id, line.thread_id)]
            index = thread.index(line)
            context[(line.subject_id, line.message_id)] = thread[
                max(0, index - CONTEXT_MESSAGES) : index + CONTEXT_MESSAGES + 1
            ]
    return context


def actor_names(actors) -> dict[str, str]:
    """Readable names for actor strings; reviewers by username (one query for all)."""
    staff_ids = {actor: who.staff_id for actor in actors if (who := Actor.parse(actor)) and who.staff_id}
    usernames = dict(get_user_model().objects.filter(pk__in=staff_ids.values()).values_list("pk", "username"))
    return {actor: usernames.get(staff_ids.get(actor), actor) for actor in actors}


def review_queue_items(
    *, tenant: Tenant, candidates: list[Candidate], viewer: str = "", now=None, lazy_bodies: bool = False,
    schema: TenantSchema | None = None,
) -> list[QueueItem]:
    """Everything a reviewer needs beside each candidate, in a fixed number of queries:
    the field's schema, the source message in its thread, the subject's current facts for
    the same entity, the active value in conflict, who decided and who holds a claim, the
    history of a contested fact, and whether the viewer may still undo their decision.

    ``lazy_bodies``: for a list whose items fetch their body when opened (the queue page's
    ``lazy_bodies``, views.reviewer.candidate_body): what only a body shows, the current
    facts and a contested fact's history, is not read. ``schema``: the tenant's, when the
    caller has it already (the queue page's filter form reads it for its choices)."""
    if not candidates:
        return []
    now = now or timezone.now()
    contested_facts = set() if lazy_bodies else {
        c.conflict_fact_id for c in candidates if CandidateFlag.CONTESTED in (c.flags or []) and c.conflict_fact_id
    }
    history: dict[int, list[FactVersion]] = {}
    if contested_facts:
        for version in FactVersion.objects.filter(fact_id__in=contested_facts).order_by("fact_id", "-version"):
            history.setdefault(version.fact_id, []).append(version)
    undo_until: dict[int, datetime] = {}
    decided = [c.pk for c in candidates if not c.is_open or c.status == CandidateStatus.PENDING_USER]
    if viewer and decided:
        from .services.candidates import UNDO_SECONDS  # the rule lives with the transition

        window = timedelta(seconds=UNDO_SECONDS)
        for candidate_id, version, decided_at in DecisionUndo.objects.filter(
            candidate_id__in=decided, actor=viewer, undone_at__isnull=True, decided_at__gt=now - window
        ).values_list("candidate_id", "candidate_version", "decided_at"):
            undo_until[(candidate_id, version)] = decided_at + window
    schema = schema or TenantSchema.load(tenant)
    conversations = _conversations(tenant, candidates)
    facts_by_entity: dict[int, list[Fact]] = {}
    entity_ids = set() if lazy_bodies else {c.entity_id for c in candidates if c.entity_id}
    if entity_ids:
        for fact in Fact.objects.filter(tenant=tenant, entity_id__in=entity_ids, status=FactStatus.ACTIVE).order_by(
            "field", "-updated_at"
        ):
            facts_by_entity.setdefault(fact.entity_id, []).append(fact)
    live_claims = {c.pk for c in candidates if c.claimed_by and c.claim_expires_at and c.claim_expires_at > now}
    names = actor_names({c.decided_by for c in candidates} | {c.claimed_by for c in candidates if c.pk in live_claims})
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
                is_new_entity=CandidateFlag.NEW_ENTITY in (candidate.flags or []) or bool(entity and entity.is_new),
                conversation=conversation,
                source_found=bool(conversation),
                current_facts=facts_by_entity.get(candidate.entity_id, []),
                conflict=candidate.conflict_fact if candidate.has_conflict else None,
                decider=names.get(candidate.decided_by, ""),
                history=history.get(candidate.conflict_fact_id, []) if CandidateFlag.CONTESTED in (candidate.flags or []) else [],
                claimed_by=names.get(candidate.claimed_by, "") if candidate.pk in live_claims else "",
                claimed_by_viewer=candidate.pk in live_claims and candidate.claimed_by == viewer,
                claim_expires_at=candidate.claim_expires_at if candidate.pk in live_claims else None,
                undo_until=undo_until.get((candidate.pk, candidate.version)),
            )
        )
    return items


# --- Review stats -----------------------------------------------------------------------------
#
# Numbers for the stats page, derived from the candidates and the audit trail only.

# People deciding in the queue: reviewers on the dashboard, and callers of the review API.
_REVIEW_ACTORS = Actor.of_kind(ActorKind.REVIEWER) | Actor.of_kind(ActorKind.API_KEY)


def _last_days(days: int, now: datetime) -> list[tuple[date, datetime]]:
    """The last ``days`` days (today last), each with the moment it ends (today: now)."""
    midnight = timezone.localtime(now).replace(hour=0, minute=0, second=0, microsecond=0)
    past = [(midnight - timedelta(days=back), midnight - timedelta(days=back - 1)) for back in range(days - 1, 0, -1)]
    return [(start.date(), end) for start, end in past] + [(midnight.date(), now)]


# Decisions taken in the queue: the candidate's ``decided_by`` is a reviewer or a review-API key.
_DECIDED_IN_REVIEW = Actor.of_kind(ActorKind.REVIEWER, field="decided_by") | Actor.of_kind(
    ActorKind.API_KEY, field="decided_by"
)


def _waited_for_review_at(end: datetime) -> Q:
    """Items that were waiting for a reviewer at ``end``: arrived by then, and either still
    waiting or decided in the queue after it."""
    return Q(created_at__lte=end) & (
        Q(status=CandidateStatus.PENDING_REVIEW) | (_DECIDED_IN_REVIEW & Q(decided_at__gt=end))
    )


def waiting_items_series(*, tenant: Tenant, days: int = 30, now: datetime | None = None) -> list[tuple[date, int]]:
    """How many items waited for a reviewer at the end of each day; today's point is now,
    and equals the queue's "waiting" (:func:`waiting_for_review`).

    An item waits from its creation until a reviewer (or a review-API key) decided it. Items
    the policy handed to the subject never waited for a reviewer; one a reviewer deferred
    stops waiting when deferred. Past days leave out the few items that left review some
    other way (a newer value superseded them, the subject settled their conflict): the
    candidate keeps only its latest decision. One aggregate query.
    """
    now = now or timezone.now()
    ends = _last_days(days, now)
    # Only rows that waited at some point of the window are read.
    window = Q(created_at__lte=now) & (
        Q(status=CandidateStatus.PENDING_REVIEW) | (_DECIDED_IN_REVIEW & Q(decided_at__gt=ends[0][1]))
    )
    counts = Candidate.objects.filter(window, tenant=tenant).aggregate(
        **{f"d{index}": Count("pk", filter=_waited_for_review_at(end)) for index, (_, end) in enumerate(ends)}
    )
    return [(day, counts[f"d{index}"] or 0) for index, (day, _) in enumerate(ends)]


def decisions_per_day(*, tenant: Tenant, days: int = 30, now: datetime | None = None) -> list[tuple[date, dict[str, int]]]:
    """Review decisions per day and kind (approved, edited, rejected, deferred), from the audit trail."""
    now = now or timezone.now()
    last_days = _last_days(days, now)
    since = last_days[0][1] - timedelta(days=1)
    rows = (
        AuditEvent.objects.filter(tenant_id=tenant.pk, created_at__gte=since, action__in=REVIEW_DECISION_ACTIONS)
        .filter(_REVIEW_ACTORS)
        .annotate(day=TruncDate("created_at"))
        .values("day", "action")
        .annotate(n=Count("pk"))
    )
    per_day: dict[date, dict[str, int]] = {day: {} for day, _ in last_days}
    for row in rows:
        kinds = per_day.get(row["day"])
        if kinds is not None:
            kind = REVIEW_DECISION_ACTIONS[row["action"]]
            kinds[kind] = kinds.get(kind, 0) + row["n"]
    return sorted(per_day.items())


WAITING_BY_FIELD_ROWS = 10


@dataclass(frozen=True)
class WaitingNow:
    """The stats page's headline, counted as the queue counts it (and capped alike)."""

    for_review: int  # the queue's "N waiting"
    with_user: int  # handed to the subject, by the policy or a reviewer
    oldest: tuple[int, datetime] | None  # (id, created_at) of the longest-waiting item
    cap: int = QUEUE_COUNT_CAP


def waiting_now(*, tenant: Tenant) -> WaitingNow:
    row = _read_at_once(
        tenant,
        for_review=_CappedCount(waiting_for_review(tenant=tenant)),
        with_user=_CappedCount(Candidate.objects.filter(tenant=tenant, status=CandidateStatus.PENDING_USER)),
        oldest_id=_oldest_waiting(tenant, "pk"),
        oldest_at=_oldest_waiting(tenant, "created_at"),
    )
    oldest = (row["oldest_id"], row["oldest_at"]) if row["oldest_id"] is not None else None
    return WaitingNow(for_review=row["for_review"], with_user=row["with_user"], oldest=oldest)


def waiting_by_field(*, tenant: Tenant) -> list[tuple[str, str, int]]:
    """The fields with the most items waiting for a reviewer, most first: (entity type, field, n)."""
    rows = (
        waiting_for_review(tenant=tenant)
        .values_list("entity_type", "field")
        .annotate(n=Count("pk"))
        .order_by("-n", "entity_type", "field")[:WAITING_BY_FIELD_ROWS]
    )
    return [(entity_type, field, n) for entity_type, field, n in rows]


@dataclass
class ExtractorQuality:
    extractor: str
    prompt_version: str
    approved: int
    edited: int
    rejected: int
    waiting: int  # for a reviewer: the column adds up to the queue's "waiting"
    with_user: int = 0  # waiting for the subject to confirm
    # Items the validator dropped before they became candidates (LLM evidence not in the message…).
    dropped: int = 0

    @property
    def decided(self) -> int:
        return self.approved + self.edited + self.rejected

    def share(self, part: str) -> float:
        return getattr(self, part) / self.decided if self.decided else 0.0


def extractor_quality(*, tenant: Tenant) -> list[ExtractorQuality]:
    """Per extractor and prompt version: how many candidates ended approved as proposed,
    approved after an edit, or rejected (by the policy or by people), and how many proposed
    items the validator dropped on the way (counted on the messages). One query."""
    kept = Q(status__in=(CandidateStatus.APPROVED, CandidateStatus.AUTO_APPROVED, CandidateStatus.MERGED))
    edited = Q(reason=Reason.REVIEWER_EDITED)
    none = Value(0, output_field=IntegerField())
    outcomes = (
        Candidate.objects.filter(tenant=tenant)
        .values("extractor", "prompt_version")
        .annotate(
            approved=Count("pk", filter=kept & ~edited),
            edited=Count("pk", filter=kept & edited),
            rejected=Count("pk", filter=Q(status=CandidateStatus.REJECTED)),
            waiting=Count("pk", filter=Q(status=CandidateStatus.PENDING_REVIEW)),
            with_user=Count("pk", filter=Q(status=CandidateStatus.PENDING_USER)),
            dropped=none,
        )
    )
    drops = (
        Message.objects.filter(tenant=tenant, extraction_dropped__gt=0)
        .values("extractor", "prompt_version")
        .annotate(approved=none, edited=none, rejected=none, waiting=none, with_user=none,
                  dropped=Sum("extraction_dropped"))
    )
    quality: dict[tuple[str, str], ExtractorQuality] = {}
    for row in outcomes.union(drops, all=True):
        key = (row["extractor"], row["prompt_version"])
        entry = quality.setdefault(key, ExtractorQuality(*key, approved=0, edited=0, rejected=0, waiting=0))
        for part in ("approved", "edited", "rejected", "waiting", "with_user", "dropped"):
            setattr(entry, part, getattr(entry, part) + row[part])
    return [quality[key] for key in sorted(quality)]


def decisions_per_reviewer(*, tenant: Tenant, days: int = 30, now: datetime | None = None) -> dict[str, dict[str, int]]:
    """Each reviewer's decisions of the last ``days`` days by kind, keyed by actor string."""
    since = (now or timezone.now()) - timedelta(days=days)
    rows = (
        AuditEvent.objects.filter(
            Actor.of_kind(ActorKind.REVIEWER), tenant_id=tenant.pk, created_at__gte=since, action__in=REVIEW_DECISION_ACTIONS
        )
        .values("actor", "action")
        .annotate(n=Count("pk"))
    )
    per_reviewer: dict[str, dict[str, int]] = {}
    for row in rows:
        kinds = per_reviewer.setdefault(row["actor"], {})
        kind = REVIEW_DECISION_ACTIONS[row["action"]]
        kinds[kind] = kinds.get(kind, 0) + row["n"]
    return per_reviewer


# --- Time to decision ---
#
# How long items waited for the reviewer who decided them: decided_at - created_at of the
# candidates decided in the queue (reviewers, review-API keys) each day, as the median (p50)
# and the 90th percentile (p90), interpolated as PostgreSQL's percentile_cont does. Policy
# outcomes (no wait) and the subjects' own answers (their time, not the team's) are left out;
# a contested item counts from the contest, since that is when it came back to review.

TIME_TO_DECISION_DAYS = 14
# SQLite (the demo) has no percentile_cont: the newest decisions of the window, at most this
# many, are read and ranked in Python. Past it the oldest days of the window are partial.
TIME_TO_DECISION_PYTHON_ROWS = 50_000


@dataclass(frozen=True)
class DecisionTimes:
    day: date
    decided: int
    p50: timedelta | None  # None: nothing was decided that day
    p90: timedelta | None


class PercentileCont(Aggregate):
    """PostgreSQL's ordered-set aggregate ``percentile_cont(fraction) WITHIN GROUP (ORDER BY …)``."""

    function = "percentile_cont"
    template = "%(function)s(%(fraction)s) WITHIN GROUP (ORDER BY %(expressions)s)"
    allow_distinct = False

    def __init__(self, expression, fraction: float, **extra):
        super().__init__(expression, fraction=float(fraction), **extra)


def percentile_cont(ordered: list[float], fraction: float) -> float:
    """percentile_cont over sorted numbers: the value at ``fraction`` of the way from the
    first to the last, interpolated linearly between the two neighbours."""
    position = fraction * (len(ordered) - 1)
    below = int(position)
    above = min(below + 1, len(ordered) - 1)
    return ordered[below] + (ordered[above] - ordered[below]) * (position - below)


def _window_start(days: int, now: datetime) -> tuple[list[date], datetime]:
    day_list = [day for day, _ in _last_days(days, now)]
    return day_list, timezone.make_aware(datetime.combine(day_list[0], datetime.min.time()))


def time_to_decision_per_day(
    *, tenant: Tenant, days: int = TIME_TO_DECISION_DAYS, now: datetime | None = None, in_database: bool | None = None
) -> list[DecisionTimes]:
    """p50 and p90 of the time to decision for each of the last ``days`` days (today last).

    ``in_database``: percentile_cont in the database (PostgreSQL, the default there) or the
    same figure in Python over the window's decisions (SQLite)."""
    now = now or timezone.now()
    day_list, since = _window_start(days, now)
    decided = Candidate.objects.filter(_DECIDED_IN_REVIEW, tenant=tenant, decided_at__gte=since, decided_at__lte=now)
    if in_database is None:
        in_database = connection.vendor == "postgresql"
    found: dict[date, DecisionTimes] = {}
    if in_database:
        waited = ExpressionWrapper(F("decided_at") - F("created_at"), output_field=DurationField())
        rows = (
            decided.annotate(day=TruncDate("decided_at"))
            .values("day")
            .annotate(
                n=Count("pk"),
                p50=PercentileCont(waited, 0.5, output_field=DurationField()),
                p90=PercentileCont(waited, 0.9, output_field=DurationField()),
            )
            .order_by()
        )
        found = {row["day"]: DecisionTimes(row["day"], row["n"], row["p50"], row["p90"]) for row in rows}
    else:
        seconds: dict[date, list[float]] = {}
        for decided_at, created_at in decided.order_by("-decided_at").values_list("decided_at", "created_at")[
            :TIME_TO_DECISION_PYTHON_ROWS
        ]:
            seconds.setdefault(timezone.localtime(decided_at).date(), []).append((decided_at - created_at).total_seconds())
        for day, values in seconds.items():
            values.sort()
            found[day] = DecisionTimes(
                day, len(values), timedelta(seconds=percentile_cont(values, 0.5)), timedelta(seconds=percentile_cont(values, 0.9))
            )
    return [found.get(day) or DecisionTimes(day, 0, None, None) for day in day_list]


# --- Pace ---
#
# Decisions per hour for each reviewer, over the hours in which they decided something:
# what a team lead compares is how fast each person works while reviewing, not how many
# hours they were rostered or present. Dividing by calendar hours would rank part-timers
# and people on other duties last; an hour-of-day table answers a staffing question
# instead. An hour with a single decision counts as a whole hour, so the figure is a little
# low for people who review in short bursts; it is the same rule for everyone.

PACE_DAYS = 7


@dataclass(frozen=True)
class ReviewerPace:
    actor: str
    decisions: int
    active_hours: int  # clock hours (e.g. 14:00–15:00) with at least one decision

    @property
    def per_hour(self) -> float:
        return self.decisions / self.active_hours if self.active_hours else 0.0


def reviewer_pace(*, tenant: Tenant, days: int = PACE_DAYS, now: datetime | None = None) -> list[ReviewerPace]:
    """Each reviewer's decisions (approve, edit, reject, defer) of the last ``days`` days, the
    clock hours they were spread over, fastest first. One query over the audit trail."""
    now = now or timezone.now()
    rows = (
        AuditEvent.objects.filter(
            Actor.of_kind(ActorKind.REVIEWER),
            tenant_id=tenant.pk,
            created_at__gte=now - timedelta(days=days),
            created_at__lte=now,
            action__in=REVIEW_DECISION_ACTIONS,
        )
        .annotate(hour=TruncHour("created_at"))
        .values("actor")
        .annotate(decisions=Count("pk"), hours=Count("hour", distinct=True))
        .order_by()
    )
    pace = [ReviewerPace(row["actor"], row["decisions"], row["hours"]) for row in rows]
    return sorted(pace, key=lambda row: (-row.per_hour, row.actor))


@dataclass
class ReviewerAgreement:
    """How often two reviewers reached the same outcome on the same kind of item.

    The same kind of item: the same entity type, field and normalised value, decided by
    both (each reviewer's latest decision on it counts). The outcome is "kept" (approved,
    with or without an edit) or "rejected". ``pairs`` counts items both decided.
    """

    first: str
    second: str
    pairs: int
    agreed: int

    @property
    def rate(self) -> float:
        return self.agreed / self.pairs if self.pairs else 0.0


AGREEMENT_SAMPLE = 50_000


def reviewer_agreement(*, tenant: Tenant, days: int = 90, now: datetime | None = None) -> list[ReviewerAgreement]:
    since = (now or timezone.now()) - timedelta(days=days)
    rows = (
        Candidate.objects.filter(
            Actor.of_kind(ActorKind.REVIEWER, field="decided_by"),
            tenant=tenant,
            decided_at__gte=since,
            status__in=(CandidateStatus.APPROVED, CandidateStatus.REJECTED),
        )
        .order_by("decided_at")
        .values_list("entity_type", "field", "value", "decided_by", "status")[:AGREEMENT_SAMPLE]
    )
    outcomes: dict[tuple[str, str, str], dict[str, str]] = {}
    for entity_type, field_name, value, reviewer, status in rows:
        outcomes.setdefault((entity_type, field_name, normalize_value(value)), {})[reviewer] = status
    tally: dict[tuple[str, str], list[int]] = {}
    for decided in outcomes.values():
        reviewers = sorted(decided)
        for index, first in enumerate(reviewers):
            for second in reviewers[index + 1 :]:
                counts = tally.setdefault((first, second), [0, 0])
                counts[0] += 1
                counts[1] += decided[first] == decided[second]
    return [ReviewerAgreement(first, second, pairs, agreed) for (first, second), (pairs, agreed) in sorted(tally.items())]


# --- Recall ---------------------------------------------------------------------------------
#
# SPEC §5's policy over one subject's facts, in one query. The subject's active facts (and,
# when explaining, expired ones) are few and come from one index range, so every rule is
# applied in Python over that one result: the number of queries never depends on the data,
# and `q` only ranks and widens within what the filters allow.

RECALL_DEFAULT_LIMIT = 50
RECALL_MAX_LIMIT = 200
RECALL_MAX_ENTITIES = 20
RECALL_MAX_FIELDS = 50
RECALL_USER_ENTITY_TYPE = "user"


class Exclusion:
    """Why ``explain=true`` says a fact was left out (SPEC §5), checked in this order."""

    EXPIRED = "expired"
    SENSITIVE = "sensitive"
    OTHER_THREAD = "other_thread"
    NOT_REQUESTED = "not_requested"
    # Beyond SPEC §5's four: allowed, but past the request's ``limit``.
    LIMIT = "limit"


@dataclass(frozen=True)
class RecallQuery:
    user_id: str
    entities: tuple[tuple[str, str], ...] = ()
    fields: tuple[str, ...] = ()
    q: str = ""
    thread_id: str = ""
    include_sensitive: bool = False
    explain: bool = False
    limit: int = RECALL_DEFAULT_LIMIT
    # The compatibility surfaces (SPEC §7a) read by id and list a subject's whole memory:
    # ``fact_ids`` asks for those facts only, ``every_entity`` treats every entity as
    # named. Neither bypasses a filter: sensitivity, thread and expiry still apply.
    fact_ids: tuple[int, ...] = ()
    every_entity: bool = False
    # The surface the agent came through when it is not the recall API (``mcp``, ``mem0``):
    # kept in the record beside the caller (the key), so auditors see which door it used.
    channel: str = ""

    def as_record(self) -> dict:
        """What the recall record keeps of the request."""
        extra = {}
        if self.fact_ids:
            extra["fact_ids"] = list(self.fact_ids)
        if self.every_entity:
            extra["every_entity"] = True
        if self.channel:
            extra["channel"] = self.channel
        return {
            **extra,
            "entity": [f"{t}:{i}" for t, i in self.entities],
            "field": list(self.fields),
            "q": self.q,
            "thread_id": self.thread_id,
            "include_sensitive": self.include_sensitive,
            "explain": self.explain,
            "limit": self.limit,
        }


@dataclass
class RecallResult:
    facts: list[dict]
    excluded: list[dict] = field(default_factory=list)
    scores: list[float] = field(default_factory=list)  # each fact's relevance to `q`, in order


# Order without `q`: the user first, then categories as SPEC §1 lists them.
_RECALL_CATEGORY_ORDER = {c: i for i, c in enumerate(Category.values)}


class _RecallRow(NamedTuple):
    """One row of the recall statement. A named tuple rather than a frozen dataclass: a
    recall makes one per fact of the subject, and the dataclass's field-by-field
    ``object.__setattr__`` cost 5 µs a row (50-60 µs of a recall's CPU)."""

    id: int
    entity_type: str
    entity_id: str
    display_name: str
    field: str
    value: str
    confidence: float
    category: str
    sensitivity: str
    scope: str
    thread_id: str
    source: str
    source_message_id: str
    version: int
    updated_at: datetime
    expires_at: datetime | None
    status: str
    named: bool
    rank: float


def _recall_sql(*, tenant_id: int, query: RecallQuery, terms: QueryTerms) -> tuple[str, list]:
    """The one statement of a recall, written out: this is the hot path, and building it
    with the ORM cost more CPU than running it.

    The named-entity test and, on PostgreSQL, ts_rank over the value, field and entity
    ('simple' configuration, any of the query's words) are computed per row in the same
    statement; everything else is decided in Python over the subject's few rows.
    """
    fact, subject, entity, alias, deletion = (
        Fact._meta.db_table,
        Subject._meta.db_table,
        Entity._meta.db_table,
        EntityAlias._meta.db_table,
        FactDeletion._meta.db_table,
    )
    params: list = []
    named = []
    for entity_type, entity_id in query.entities:
        ids = sorted({entity_id, slugify_entity_id(entity_id)})
        named.append(
            "(e.entity_type = %s AND (e.entity_id IN (" + ", ".join(["%s"] * len(ids)) + ") OR EXISTS "
            f"(SELECT 1 FROM {alias} a WHERE a.entity_id = e.id AND a.normalized = %s)))"
        )
        params += [entity_type, *ids, normalize_text(entity_id)]
    named_sql = "(" + " OR ".join(named) + ")" if named else "FALSE"
    if connection.vendor == "postgresql" and terms.words:
        tsquery = " || ".join(["plainto_tsquery('simple', %s)"] * len(terms.words))
        rank_sql = (
            "ts_rank(to_tsvector('simple', f.value || ' ' || f.field || ' ' || e.entity_id || ' ' || e.display_name), "
            f"{tsquery})"
        )
        params += list(terms.words)
    else:
        # Typed as ts_rank's result, so every row arrives as the named tuple wants it (a
        # bare 0.0 is numeric, which psycopg hands over as a Decimal).
        rank_sql = "CAST(0 AS REAL)"
    statuses = [FactStatus.ACTIVE, FactStatus.EXPIRED] if query.explain else [FactStatus.ACTIVE]
    sql = (
        "SELECT f.id, e.entity_type, e.entity_id, e.display_name, f.field, f.value, f.confidence, f.category, "
        "f.sensitivity, f.scope, f.thread_id, f.source, f.source_message_id, f.version, f.updated_at, f.expires_at, "
        f"f.status, {named_sql}, {rank_sql} "
        f"FROM {fact} f JOIN {entity} e ON e.id = f.entity_id "
        f"WHERE f.tenant_id = %s AND f.subject_id = (SELECT id FROM {subject} WHERE tenant_id = %s AND user_id = %s) "
        "AND f.status IN ("
        + ", ".join(["%s"] * len(statuses))
        + ") "
        # A fact the subject deleted leaves recall at once, not when its undo window
        # closes (the partial unique index on scheduled deletions answers this).
        f"AND NOT EXISTS (SELECT 1 FROM {deletion} d WHERE d.fact_id = f.id AND d.status = %s)"
    )
    return sql, [*params, tenant_id, tenant_id, query.user_id, *statuses, DeletionStatus.SCHEDULED]


def _aware(value):
    """SQLite hands raw cursors naive UTC datetimes (the ORM would have converted them)."""
    if isinstance(value, str):
        value = datetime.fromisoformat(value)
    if value is not None and timezone.is_naive(value):
        value = value.replace(tzinfo=dt_timezone.utc)
    return value


def _recall_rows(*, tenant: Tenant, query: RecallQuery, terms: QueryTerms, using: str) -> list[_RecallRow]:
    sql, params = _recall_sql(tenant_id=tenant.pk, query=query, terms=terms)
    with prepared_cursor(using) as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    if connection.vendor == "postgresql":  # every column already of its field's type
        return [_RecallRow._make(row) for row in rows]
    # SQLite hands over naive datetimes, and integers for booleans.
    return [_RecallRow(*row[:14], _aware(row[14]), _aware(row[15]), row[16], bool(row[17]), float(row[18]))
            for row in rows]


def recall_select(
    *,
    tenant: Tenant,
    query: RecallQuery,
    may_see_sensitive: bool,
    now: datetime | None = None,
    using: str = DEFAULT_DB_ALIAS,
) -> RecallResult:
    """The facts a caller may receive for ``query``, best first, and what was left out.

    Default: the subject's `user` entity and `preference`-category facts; other entities
    only when named or matched by `q`; thread-scoped facts only in their thread; sensitive
    ones only when allowed and asked for; never an expired one. On PostgreSQL `q` is
    ranked with ts_rank in the same query, plus the CJK-aware fallback of textmatch.
    ``using``: the database read (a replica's alias, see reviews/replicas.py).
    """
    now = now or timezone.now()
    terms = query_terms(query.q)
    sensitive_allowed = query.include_sensitive and may_see_sensitive
    fields = set(query.fields)
    chosen, excluded = [], []
    for row in _recall_rows(tenant=tenant, query=query, terms=terms, using=using):
        relevance = 0.0
        if terms:
            haystack = " ".join((row.value, row.field, row.entity_id, row.display_name))
            relevance = row.rank + fallback_score(haystack, terms)
        if row.status == FactStatus.EXPIRED or (row.expires_at is not None and row.expires_at <= now):
            reason = Exclusion.EXPIRED
        elif row.sensitivity == Sensitivity.SENSITIVE and not sensitive_allowed:
            reason = Exclusion.SENSITIVE
        elif row.scope == MemoryScope.THREAD and row.thread_id != query.thread_id:
            reason = Exclusion.OTHER_THREAD
        elif fields and row.field not in fields:
            reason = Exclusion.NOT_REQUESTED
        elif query.fact_ids and row.id not in query.fact_ids:
            reason = Exclusion.NOT_REQUESTED
        elif (
            row.entity_type == RECALL_USER_ENTITY_TYPE
            or row.category == Category.PREFERENCE
            or row.named
            or relevance > 0
            or query.every_entity
            or query.fact_ids
        ):
            reason = None
        else:
            reason = Exclusion.NOT_REQUESTED
        if reason is None:
            chosen.append((relevance, row))
        elif query.explain:
            excluded.append({"id": row.id, "reason": reason})

    chosen.sort(
        key=lambda item: (
            -item[0],
            item[1].entity_type != RECALL_USER_ENTITY_TYPE,
            _RECALL_CATEGORY_ORDER.get(item[1].category, len(_RECALL_CATEGORY_ORDER)),
            item[1].entity_type,
            item[1].entity_id,
            item[1].field,
            -item[1].updated_at.timestamp(),
            item[1].id,
        )
    )
    if query.explain:
        excluded.extend({"id": row.id, "reason": Exclusion.LIMIT} for _, row in chosen[query.limit :])
        excluded.sort(key=lambda item: item["id"])
    chosen = chosen[: query.limit]
    return RecallResult(
        facts=[_recalled_fact(row) for _, row in chosen],
        excluded=excluded,
        scores=[relevance for relevance, _ in chosen],
    )


def _recalled_fact(row: _RecallRow) -> dict:
    return {
        "id": row.id,
        "entity_type": row.entity_type,
        "entity_id": row.entity_id,
        "field": row.field,
        "value": row.value,
        "confidence": row.confidence,
        "category": row.category,
        "sensitivity": row.sensitivity,
        "scope": row.scope,
        "source": row.source,
        "source_message_id": row.source_message_id,
        "version": row.version,
        "updated_at": row.updated_at.isoformat(),
    }


# Recall records, for auditors: newest first, keyset-paged on id.

RECALL_RECORDS_PAGE_SIZE = 50
RECALLS_OF_FACT_SQLITE_SCAN = 5000


@dataclass
class RecallRecordsPage:
    records: list[RecallRecord]
    next_before: int | None


def recall_records_page(
    *, tenant: Tenant, user_id: str = "", caller: str = "", before: int | None = None
) -> RecallRecordsPage:
    rows = RecallRecord.objects.filter(tenant=tenant).order_by("-id")
    if user_id:
        rows = rows.filter(user_id=user_id)
    if caller:
        rows = rows.filter(caller=caller)
    if before:
        rows = rows.filter(id__lt=before)
    page = list(rows[: RECALL_RECORDS_PAGE_SIZE + 1])
    more = len(page) > RECALL_RECORDS_PAGE_SIZE
    page = page[:RECALL_RECORDS_PAGE_SIZE]
    return RecallRecordsPage(page, page[-1].pk if more else None)


@dataclass
class RecalledVersion:
    """One fact of a recall record, at the version the caller received."""

    fact_id: int
    version: int
    fact: Fact | None
    value: str | None

    @property
    def still_current(self) -> bool:
        return self.fact is not None and self.fact.status == FactStatus.ACTIVE and self.fact.version == self.version


def recall_record_facts(record: RecallRecord) -> list[RecalledVersion]:
    """The value shown is the one of that version (from the fact's history); a fact
    erased since has neither fact nor value, and is listed by id and version only."""
    ids = {item["id"] for item in record.facts}
    facts = Fact.objects.filter(tenant_id=record.tenant_id, pk__in=ids).select_related("entity").in_bulk()
    versions = {
        (v.fact_id, v.version): v.value
        for v in FactVersion.objects.filter(fact_id__in=list(facts)).only("fact_id", "version", "value")
        if any(item["id"] == v.fact_id and item["version"] == v.version for item in record.facts)
    }
    return [
        RecalledVersion(item["id"], item["version"], facts.get(item["id"]), versions.get((item["id"], item["version"])))
        for item in record.facts
    ]


def recalls_of_fact(fact: Fact, *, limit: int = 100) -> list[RecallRecord]:
    """The latest recalls that returned ``fact``, newest first.

    PostgreSQL tests JSON containment in the database; SQLite has no such lookup, so a
    bounded number of the subject's latest records is scanned instead.
    """
    rows = RecallRecord.objects.filter(tenant_id=fact.tenant_id, user_id=fact.subject.user_id).order_by("-id")
    if connection.vendor == "postgresql":
        return list(rows.filter(facts__contains=[{"id": fact.pk}])[:limit])
    found = []
    for record in rows[:RECALLS_OF_FACT_SQLITE_SCAN].iterator():
        if any(item.get("id") == fact.pk for item in record.facts):
            found.append(record)
            if len(found) == limit:
                break
    return found
