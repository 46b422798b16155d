"""The review statistics page: waiting items, decisions, time to decision, pace and agreement."""
from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, timedelta

from django.db import connection
from django.db.models import (
    Aggregate,
    Count,
    DurationField,
    ExpressionWrapper,
    F,
    IntegerField,
    Q,
    Sum,
    Value,
)
from django.db.models.functions import TruncDate, TruncHour
from django.utils import timezone

from ..actors import Actor
from ..models import (
    ActorKind,
    AuditEvent,
    Candidate,
    CandidateStatus,
    Message,
    Reason,
    Tenant,
)
from ..models.choices import REVIEW_DECISION_ACTIONS
from ..policy.normalize import normalize_value
from .queue import QUEUE_COUNT_CAP, CappedCount, oldest_waiting, read_at_once, waiting_for_review

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
    row = read_at_once(
        tenant,
        for_review=CappedCount(waiting_for_review(tenant=tenant)),
        with_user=CappedCount(Candidate.objects.filter(tenant=tenant, status=CandidateStatus.PENDING_USER)),
        oldest_id=oldest_waiting(tenant, "pk"),
        oldest_at=oldest_waiting(tenant, "created_at"),
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


