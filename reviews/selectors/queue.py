"""The review queue: filters, keyset pages, counts and the items a reviewer sees."""
from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from datetime import timezone as dt_timezone
from typing import NamedTuple

from django.contrib.auth import get_user_model
from django.db import connection
from django.db.models import (
    IntegerField,
    Q,
    QuerySet,
    Subquery,
)
from django.utils import timezone

from .. import labels
from ..actors import Actor
from ..domain import UNDO_SECONDS, review_target
from ..errors import InvalidInput
from ..models import (
    Candidate,
    CandidateFlag,
    CandidateStatus,
    DecisionUndo,
    Fact,
    FactStatus,
    FactVersion,
    FieldDefinition,
    Message,
    Sensitivity,
    Subject,
    Tenant,
)
from ..models.choices import OPEN_CANDIDATE_STATUSES
from ..policy.pipeline import RELATION_PREFIX
from ..policy.schema import TenantSchema
from ..screening import Identifier, Text
from .rows import utc_aware

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
# Waited longer than the tenant's review target (reviews.domain.review_age: "over").
AGE_OVER_TARGET = "over_target"
QUEUE_AGES = {
    # name: (at least this old, younger than this)
    "lt1d": (None, timedelta(days=1)),
    "1to7d": (timedelta(days=1), timedelta(days=7)),
    "gt7d": (timedelta(days=7), None),
    "gt30d": (timedelta(days=30), None),
    AGE_OVER_TARGET: (None, None),  # the tenant's own bound, read in queue_filtered
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
    status: Text = CandidateStatus.PENDING_REVIEW
    user_id: Identifier = ""
    entity_type: Text = ""
    field: Text = ""
    sensitivity: Text = ""
    min_confidence: float | None = None
    max_confidence: float | None = None
    conflict: bool | None = None
    new_entity: bool | None = None
    age: Text = ""
    flag: Text = ""
    q: Text = ""
    sort: Text = QueueSort.OLDEST
    claims: Text = QueueClaims.POOL

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
    if filters.age == AGE_OVER_TARGET:
        queryset = queryset.filter(created_at__lt=now - review_target(tenant.review_target_hours))
    elif filters.age:
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


class CappedCount(Subquery):
    """``(SELECT COUNT(*) FROM (<the first cap + 1 rows>))``: a count that stops one row past
    the cap (so "more than the cap" is known), as an expression, so that several of them
    are read in one query."""

    template = "(SELECT COUNT(*) FROM (%(subquery)s) capped)"
    output_field = IntegerField()
    empty_result_set_value = 0  # a filter that can match nothing (an empty list) counts 0

    def __init__(self, queryset: QuerySet):
        super().__init__(queryset.order_by().values("pk")[: QUEUE_COUNT_CAP + 1])


def read_at_once(tenant: Tenant, **expressions) -> dict:
    """Several scalar subqueries read in one round trip (on the tenant's own row)."""
    return Tenant.objects.filter(pk=tenant.pk).values(**expressions).get()


def waiting_for_review(*, tenant: Tenant) -> QuerySet:
    """What "waiting" means wherever it is counted (the queue's headline, the stats page):
    items waiting for a reviewer, colleagues' claims and contested items included. An item
    a reviewer handed to the subject (deferred) waits for the subject, not in this count."""
    return Candidate.objects.filter(tenant=tenant, status=CandidateStatus.PENDING_REVIEW)


def oldest_waiting(tenant: Tenant, column: str) -> Subquery:
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
    # A claim counts where it can lead: "claimed by you" opens the list of one's claims, which
    # shows items waiting for a reviewer (a deferred item keeps its claim columns, not a claim).
    mine = waiting.filter(claimed_by=viewer, claim_expires_at__gt=now)
    row = read_at_once(
        tenant,
        waiting=CappedCount(waiting),
        in_filter=CappedCount(
            queue_filtered(tenant=tenant, filters=filters, viewer=viewer, now=now).filter(status__in=filters.phases)
        ),
        contested=CappedCount(waiting.filter(_flag_q(CandidateFlag.CONTESTED))),
        **({"claimed_by_viewer": CappedCount(mine)} if viewer else {}),
        oldest=oldest_waiting(tenant, "created_at"),
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
    lines = [ContextMessage(*row[:6], utc_aware(row[6])) for row in rows]
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
    return {actor: usernames.get(staff_ids.get(actor)) or labels.actor_label(actor) for actor in actors}


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


