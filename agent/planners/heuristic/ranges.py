"""Plausible ranges for numbers and dates: rules a growing defect cannot move.

Two kinds of bound. Semantic rules come from the field's name and hold at any share: a negative
amount, a zero price, an age of 999, a birth date after the audit's ``now``. Statistical fences
come from the bulk only (median and quartiles, on a log scale for right-skewed positive fields),
so a defect that adds a second mode, even one holding 30% of the values, neither moves nor
widens them; the extremes of the sample are never used. A value beyond a fence counts only when
a gap separates it from the bulk, checked on the whole collection (the largest value inside the
fence against the smallest outside), so a natural heavy tail that reaches past the fence is
never reported while a detached cluster is, however large.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from agent.planners.heuristic.names import NameHints
from agent.tools.models import DateStats, NumericStats

__all__ = ["CLOCK_SKEW", "Fence", "RangePlan", "date_plan", "detached", "numeric_plan"]

FENCE_IQRS = 4.0        # fence distance beyond the quartiles, in interquartile ranges (about 6 sigma)
GAP_IQRS = 0.85         # an outlier must sit this far (in IQRs) from the largest normal value
SKEW_FOR_LOG = 1.2      # (p75 - p50) / (p50 - p25) above this → work on a log scale
RARE_SHARE = 0.02       # unnamed fields: negatives or zeros above this share are part of the data
HUGS_ZERO = 0.2         # p01 below this fraction of the median: the values have a floor at zero
CLOCK_SKEW = timedelta(days=1)  # a past event may be stamped this far ahead of the audit's clock
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
OLDEST_PLAUSIBLE = datetime(1900, 1, 1, tzinfo=UTC)


@dataclass(frozen=True)
class Scale:
    log: bool

    def to(self, x: float) -> float:
        return math.log10(x) if self.log else x

    def back(self, y: float) -> float:
        return 10 ** y if self.log else y


@dataclass(frozen=True)
class Fence:
    """A statistical bound that needs a gap check: values beyond ``at`` are outliers only if
    the nearest value inside is at least ``gap`` (in scale units) away."""

    side: str          # "above" or "below"
    at: float
    gap: float
    scale: Scale


@dataclass
class RangePlan:
    conditions: list[tuple[str, dict[str, Any]]] = field(default_factory=list)  # (reason, condition on the field)
    fences: list[Fence] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.conditions or self.fences)


def _fences(q: dict[str, float], scale: Scale, *, lower: bool) -> list[Fence]:
    """Fences from the quartiles: the middle half of the values, which a minority cannot move far."""
    p25, p75 = scale.to(q["p25"]), scale.to(q["p75"])
    iqr = p75 - p25
    if iqr <= 0:
        return []
    gap = GAP_IQRS * iqr
    fences = [Fence("above", scale.back(p75 + FENCE_IQRS * iqr), gap, scale)]
    if lower:
        fences.append(Fence("below", scale.back(p25 - FENCE_IQRS * iqr), gap, scale))
    return fences


def _log_scale(q: dict[str, float]) -> bool:
    """Right-skewed and positive in its bulk (amounts, durations): spread is multiplicative."""
    lo, mid, hi = q["p25"], q["p50"], q["p75"]
    return lo > 0 and mid > lo and (hi - mid) > SKEW_FOR_LOG * (mid - lo)


def numeric_plan(stats: NumericStats, hints: NameHints) -> RangePlan:
    plan = RangePlan()
    q = stats.quantiles
    if not q or stats.min is None or stats.max is None:
        return plan
    n = max(stats.count - stats.nan_count - stats.inf_count, 1)
    plan.conditions.append(("not a number", {"$in": [math.nan, math.inf, -math.inf]}))
    unnamed_floor = not hints.signed and stats.negative_count <= RARE_SHARE * n and q["p05"] >= 0 \
        and 0 <= q["p01"] <= HUGS_ZERO * q["p50"]
    if hints.positive and stats.zero_count <= RARE_SHARE * n:
        plan.conditions.append(("zero or negative", {"$lte": 0}))
    elif hints.nonnegative or hints.positive or unnamed_floor:
        plan.conditions.append(("negative", {"$lt": 0}))
    if hints.bounds is not None:
        lo, hi = hints.bounds
        if lo <= q["p25"] and q["p75"] <= hi:
            plan.conditions.append(("above the possible range", {"$gt": hi}))
            if lo > 0 or not any(r == "negative" for r, _ in plan.conditions):
                plan.conditions.append(("below the possible range", {"$lt": lo}))
    if hints.identifier:
        return plan  # the magnitude of an identifier carries no meaning
    iqr = q["p75"] - q["p25"]
    smallest_positive = next((v for v, _ in stats.low_tail if v > 0), None)
    if not hints.positive and stats.zero_count <= RARE_SHARE * n and q["p25"] > 0 and iqr > 0 \
            and (smallest_positive is None or smallest_positive >= 0.25 * iqr) and q["p01"] >= 0.25 * iqr:
        plan.conditions.append(("zero placeholder far below the bulk", {"$eq": 0}))
    scale = Scale(log=_log_scale(q))
    signed_rule = any(r in ("negative", "zero or negative") for r, _ in plan.conditions)
    for fence in _fences(q, scale, lower=not scale.log):
        if fence.side == "below" and fence.at < 0 and signed_rule:
            continue  # the sign rule already covers everything below zero
        plan.fences.append(fence)
    return plan


def _epoch(d: datetime) -> float:
    return (d if d.tzinfo else d.replace(tzinfo=UTC)).timestamp()


def _date(seconds: float) -> datetime:
    return EPOCH + timedelta(seconds=seconds)


def date_plan(stats: DateStats, now: datetime, hints: NameHints | None = None) -> RangePlan:
    """Ranges for a date field; fence positions come back as epoch seconds in ``Fence.at``.

    A field of past events (by its name: ``created_at``, ``birth_date``, ``shipped``) gets a hard
    rule: nothing after ``now`` plus a day of clock skew, at any share. Fields of future events
    (``due_date``, ``expires_at``) and unnamed ones get the statistical fences only.
    """
    plan = RangePlan()
    q = {k: _epoch(v) for k, v in stats.quantiles.items()}
    if not q:
        return plan
    if q["p25"] > _epoch(OLDEST_PLAUSIBLE):
        plan.conditions.append(("before 1900", {"$lt": OLDEST_PLAUSIBLE}))
    if q["p25"] > _epoch(datetime(1971, 1, 1, tzinfo=UTC)):
        plan.conditions.append(("the Unix epoch placeholder", {"$eq": EPOCH}))
    past = hints is not None and hints.past_event
    if past:
        plan.conditions.append(("in the future", {"$gt": (now + CLOCK_SKEW).astimezone(UTC)}))
    for fence in _fences(q, Scale(log=False), lower=True):
        if fence.side == "above":
            if past:
                continue
            if q["p75"] <= _epoch(now):  # mostly past: a fence inside the next day would flag today's writes
                fence = Fence("above", max(fence.at, _epoch(now + CLOCK_SKEW)), fence.gap, fence.scale)
        plan.fences.append(fence)
    return plan


def detached(fence: Fence, inside: float | None, outside: float | None) -> bool:
    """True when the values beyond the fence are separated from the bulk by the fence's gap."""
    if inside is None or outside is None:
        return outside is not None
    if fence.scale.log and (inside <= 0 or outside <= 0):
        return False
    return abs(fence.scale.to(outside) - fence.scale.to(inside)) >= fence.gap


def as_date(seconds: float) -> datetime:
    return _date(seconds)
