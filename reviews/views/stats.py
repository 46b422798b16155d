"""The reviewer dashboard's stats page (SPEC §4 "quality is measured, not guessed").

Charts are inline SVG drawn by the template from the geometry computed here: numbers only,
every label a user could have written (extractor names, usernames) is printed escaped.
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.shortcuts import render
from django.utils import formats, timezone
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET

from ..selectors.stats import (
    PACE_DAYS,
    TIME_TO_DECISION_DAYS,
    DecisionTimes,
    ReviewerPace,
    WaitingNow,
    decisions_per_day,
    decisions_per_reviewer,
    extractor_quality,
    reviewer_agreement,
    reviewer_pace,
    time_to_decision_per_day,
    waiting_by_field,
    waiting_items_series,
    waiting_now,
)
from ..selectors.queue import actor_names
from ..sharedcache import cached
from .reviewer import staff_view

DECISION_KINDS = ("approved", "edited", "rejected", "deferred")
WIDTH, HEIGHT = 640, 220
LEFT, RIGHT, TOP, BOTTOM = 44, 12, 12, 26
PLOT_W, PLOT_H = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM


def plain_number(value: float) -> str:
    """SVG numbers as plain strings: templates would localise a float (1,5 in some languages)."""
    return f"{value:.1f}"


@dataclass
class Tick:
    x: str
    y: str
    label: str


def _nice_max(value: int) -> int:
    """A round axis maximum at or above value (1, 2, 5 × 10^n)."""
    if value <= 0:
        return 1
    step = 1
    while True:
        for factor in (1, 2, 5):
            if step * factor >= value:
                return step * factor
        step *= 10


def _y_ticks(top: int) -> list[Tick]:
    # Counts are whole numbers: a half-way tick only where it is one (not "0, 0, 1").
    return [
        Tick(plain_number(LEFT - 6), plain_number(TOP + PLOT_H - PLOT_H * fraction), str(int(top * fraction)))
        for fraction in (0, 0.5, 1)
        if float(top * fraction).is_integer()
    ]


def _x_ticks(labels: list[str]) -> list[Tick]:
    count = len(labels)
    step = max(1, count // 6)
    return [
        Tick(plain_number(LEFT + PLOT_W * (index + 0.5) / count), plain_number(HEIGHT - 8), label)
        for index, label in enumerate(labels)
        if index % step == 0 or index == count - 1
    ]


def area_chart(series: list[tuple]) -> dict:
    """Geometry of an area chart over (datetime, count) points."""
    top = _nice_max(max((count for _, count in series), default=0))
    count = len(series)
    points = [
        (LEFT + PLOT_W * (index + 0.5) / count, TOP + PLOT_H - PLOT_H * value / top)
        for index, (_, value) in enumerate(series)
    ]
    base = TOP + PLOT_H
    outline = " ".join(f"{x:.1f},{y:.1f}" for x, y in points)
    return {
        "width": WIDTH,
        "height": HEIGHT,
        "area": f"{points[0][0]:.1f},{base:.1f} {outline} {points[-1][0]:.1f},{base:.1f}",
        "line": outline,
        "dots": [{"x": plain_number(x), "y": plain_number(y), "value": value, "label": formats.date_format(at, "SHORT_DATE_FORMAT")}
                 for (x, y), (at, value) in zip(points, series)],
        "y_ticks": _y_ticks(top),
        "x_ticks": _x_ticks([formats.date_format(at, "m-d") for at, _ in series]),
        "grid": [tick.y for tick in _y_ticks(top)],
        "left": plain_number(LEFT),
        "right": plain_number(WIDTH - RIGHT),
    }


def stacked_bar_chart(days: list[tuple]) -> dict:
    """Geometry of one stacked bar per day, one segment per decision kind."""
    totals = [sum(kinds.values()) for _, kinds in days]
    top = _nice_max(max(totals, default=0))
    slot = PLOT_W / max(1, len(days))
    bars = []
    for index, (day, kinds) in enumerate(days):
        y = TOP + PLOT_H
        for kind in DECISION_KINDS:
            value = kinds.get(kind, 0)
            if not value:
                continue
            height = PLOT_H * value / top
            y -= height
            bars.append(
                {
                    "x": plain_number(LEFT + slot * index + slot * 0.15),
                    "y": plain_number(y),
                    "width": plain_number(slot * 0.7),
                    "height": plain_number(height),
                    "kind": kind,
                    "value": value,
                    "label": formats.date_format(day, "SHORT_DATE_FORMAT"),
                }
            )
    return {
        "width": WIDTH,
        "height": HEIGHT,
        "bars": bars,
        "y_ticks": _y_ticks(top),
        "x_ticks": _x_ticks([formats.date_format(day, "m-d") for day, _ in days]),
        "grid": [tick.y for tick in _y_ticks(top)],
        "left": plain_number(LEFT),
        "right": plain_number(WIDTH - RIGHT),
        "total": sum(totals),
    }


def _shares(counts: dict[str, int], kinds=DECISION_KINDS) -> list[dict]:
    """Each kind's count and percent, and where its bar starts (``offset``, percent): the bar
    is drawn as SVG rectangles, since the Content-Security-Policy allows no style="width"."""
    total = sum(counts.get(kind, 0) for kind in kinds)
    shares, offset = [], 0.0
    for kind in kinds:
        percent = 100 * counts.get(kind, 0) / total if total else 0
        shares.append({"kind": kind, "count": counts.get(kind, 0), "percent": plain_number(percent),
                       "offset": plain_number(offset)})
        offset += percent
    return shares


def duration_text(value: timedelta | None) -> str:
    """A wait as a person reads it: "45 s", "12 min", "3 h 20 min", "2 d 4 h"."""
    if value is None:
        return "—"
    seconds = round(value.total_seconds())
    if seconds < 60:
        return _("%(seconds)d s") % {"seconds": seconds}
    minutes = seconds // 60
    if minutes < 60:
        return _("%(minutes)d min") % {"minutes": minutes}
    hours, minutes = divmod(minutes, 60)
    if hours < 24:
        return _("%(hours)d h %(minutes)d min") % {"hours": hours, "minutes": minutes}
    days, hours = divmod(hours, 24)
    return _("%(days)d d %(hours)d h") % {"days": days, "hours": hours}


def _seconds(value: timedelta | None) -> str:
    return "" if value is None else str(round(value.total_seconds()))


# Each figure reads a whole tenant's candidates or audit events (about a second at a million
# candidates): computed at most once a minute per tenant, not on every visit.
STATS_CACHE_SECONDS = 60


@dataclass
class StatsNumbers:
    waiting: list
    now: WaitingNow
    waiting_by_field: list
    per_day: list
    quality: list
    per_reviewer: dict
    agreement: list
    time_to_decision: list[DecisionTimes]
    pace: list[ReviewerPace]
    names: dict
    computed_at: datetime


def stats_numbers(tenant) -> StatsNumbers:
    per_reviewer = decisions_per_reviewer(tenant=tenant)
    agreement = reviewer_agreement(tenant=tenant)
    pace = reviewer_pace(tenant=tenant)
    return StatsNumbers(
        waiting=waiting_items_series(tenant=tenant),
        now=waiting_now(tenant=tenant),
        waiting_by_field=waiting_by_field(tenant=tenant),
        time_to_decision=time_to_decision_per_day(tenant=tenant),
        pace=pace,
        per_day=decisions_per_day(tenant=tenant),
        quality=extractor_quality(tenant=tenant),
        per_reviewer=per_reviewer,
        agreement=agreement,
        names=actor_names(
            set(per_reviewer) | {a.first for a in agreement} | {a.second for a in agreement} | {p.actor for p in pace}
        ),
        computed_at=timezone.now(),
    )


@require_GET
@staff_view
def stats(request):
    tenant = request.tenant
    numbers = cached(f"review-stats:3:{tenant.pk}", lambda: stats_numbers(tenant), STATS_CACHE_SECONDS)
    names = numbers.names
    reviewers = sorted(
        (
            {"name": names.get(actor, actor), "total": sum(kinds.values()), "shares": _shares(kinds)}
            for actor, kinds in numbers.per_reviewer.items()
        ),
        key=lambda row: (-row["total"], row["name"]),
    )
    agreement = numbers.agreement
    pairs = sum(a.pairs for a in agreement)
    return render(
        request,
        "reviews/stats.html",
        {
            "computed_at": numbers.computed_at,
            "waiting_now": numbers.now,
            "oldest": {"id": numbers.now.oldest[0], "created_at": numbers.now.oldest[1]} if numbers.now.oldest else None,
            "time_to_decision": [
                {"day": row.day, "decided": row.decided, "p50": duration_text(row.p50), "p90": duration_text(row.p90),
                 "p50_seconds": _seconds(row.p50), "p90_seconds": _seconds(row.p90)}
                for row in reversed(numbers.time_to_decision)  # today first
            ],
            "time_to_decision_days": TIME_TO_DECISION_DAYS,
            "pace": [
                {"name": names.get(row.actor, row.actor), "decisions": row.decisions, "hours": row.active_hours,
                 "per_hour": plain_number(row.per_hour)}
                for row in numbers.pace
            ],
            "pace_days": PACE_DAYS,
            "waiting_by_field": numbers.waiting_by_field,
            "waiting_chart": area_chart(numbers.waiting),
            "decisions_chart": stacked_bar_chart(numbers.per_day),
            "quality": [
                {"row": row, "shares": _shares({"approved": row.approved, "edited": row.edited, "rejected": row.rejected},
                                               kinds=("approved", "edited", "rejected"))}
                for row in numbers.quality
            ],
            "reviewers": reviewers,
            "agreement": [
                {"first": names.get(a.first, a.first), "second": names.get(a.second, a.second), "pairs": a.pairs,
                 "agreed": a.agreed, "percent": plain_number(100 * a.rate)}
                for a in agreement
            ],
            "agreement_overall": plain_number(100 * sum(a.agreed for a in agreement) / pairs) if pairs else None,
            "agreement_pairs": pairs,
            "kinds": DECISION_KINDS,
        },
    )
