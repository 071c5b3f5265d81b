"""Plausible ranges for numbers and dates, from the sample's own distribution.

A heavy tail is not an outlier: the fence sits well outside the bulk (on a log scale for
right-skewed positive fields such as amounts and durations), and a value beyond it counts only
when a gap separates it from the bulk. A tail heavier than log-normal (a power law: followers,
views, file sizes) has sparse extremes by nature, so no gap there proves anything: such a field
gets no statistical fence, only the hard rules. The gap is checked on the whole collection (the largest
value inside the fence against the smallest outside), so a natural tail that merely reaches past
the fence is never reported. Impossible values need no gap: negatives in a quantity, a zero
price, an age of 999, a date decades from now.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from agent.planners.heuristic.names import NameHints
from agent.tools.models import DateStats, NumericStats

__all__ = ["Fence", "RangePlan", "date_plan", "detached", "numeric_plan"]

FENCE_WIDTHS = 0.8      # fence distance beyond p01/p99, in robust widths of the bulk (about 6 sigma)
GAP_WIDTHS = 0.25       # an outlier must sit this far (in widths) from the largest normal value
SKEW_FOR_LOG = 3.0      # (p99 - p50) / (p50 - p01) above this → work on a log scale
RARE_SHARE = 0.02       # negatives or zeros above this share are part of the data, not defects
HEAVY_TAIL = 1.1        # (p99 - p90) / (p90 - p50) above this on the working scale: a power-law tail
HUGS_ZERO = 0.2         # p01 below this fraction of the median: the values have a floor at zero
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


def _width(q: dict[str, float], scale: Scale) -> float:
    """Spread of the bulk, from p10..p90 so up to 10% contamination cannot inflate it."""
    lo, hi = scale.to(q["p10"]), scale.to(q["p90"])
    return max(hi - lo, 0.0) * 1.82  # p10..p90 is 2.56 sigma; p01..p99 is 4.66


def _sample_gap(values: list[float], scale: Scale, start: float, end: float, gap: float,
                upward: bool) -> float | None:
    """The middle of the first gap of at least ``gap`` that opens between ``start`` (p90) and
    ``end`` (p99) in the sampled tail. Such a gap means over 1% of values sit far out (so p99
    itself is contaminated); a gap further out is left to the fence, since the sparse extremes of
    a normal tail open chance gaps there."""
    usable = [v for v in values if not scale.log or v > 0]
    seq = sorted(v for v in usable if (v >= start if upward else v <= start))
    if not upward:
        seq.reverse()
    # The tail lists only the most extreme distinct values; when it does not reach back to
    # ``start`` its innermost value is where the contiguous bulk is known to end.
    reaches = any((v <= start if upward else v >= start) for v in usable)
    prev = scale.to(start) if reaches and (not scale.log or start > 0) else None
    for v in seq:
        y = scale.to(v)
        if prev is not None and abs(y - prev) >= gap:
            inner = scale.back(prev)
            return scale.back((y + prev) / 2) if (inner < end if upward else inner > end) else None
        prev = y
    return None


def numeric_plan(stats: NumericStats, hints: NameHints) -> RangePlan:
    plan = RangePlan()
    q = stats.quantiles
    if not q or stats.min is None or stats.max is None:
        return plan
    n = max(stats.count - stats.nan_count - stats.inf_count, 1)
    if stats.nan_count or stats.inf_count:
        plan.conditions.append(("not a number", {"$in": [math.nan, math.inf, -math.inf]}))
    if hints.positive and stats.negative_count + stats.zero_count <= RARE_SHARE * n:
        plan.conditions.append(("zero or negative", {"$lte": 0}))
    elif not hints.signed and stats.negative_count <= RARE_SHARE * n and q["p05"] >= 0 \
            and (hints.nonnegative or 0 <= q["p01"] <= HUGS_ZERO * q["p50"]):
        plan.conditions.append(("negative", {"$lt": 0}))
    if hints.bounds is not None:
        lo, hi = hints.bounds
        if lo <= q["p01"] and q["p99"] <= hi:
            plan.conditions.append(("above the possible range", {"$gt": hi}))
            if lo > 0 or not any(r == "negative" for r, _ in plan.conditions):
                plan.conditions.append(("below the possible range", {"$lt": lo}))
    if hints.identifier:
        return plan  # the magnitude of an identifier carries no meaning
    linear = Scale(log=False)
    width = _width(q, linear)
    smallest_positive = next((v for v, _ in stats.low_tail if v > 0), None)
    zero_share = stats.zero_count / n
    if not hints.positive and zero_share <= RARE_SHARE and q["p01"] > 0 and width > 0 \
            and (smallest_positive is None or smallest_positive >= 0.1 * width) and q["p01"] >= 0.1 * width:
        plan.conditions.append(("zero placeholder far below the bulk", {"$eq": 0}))
    spread_hi, spread_lo = q["p99"] - q["p50"], q["p50"] - q["p01"]
    scale = Scale(log=q["p01"] > 0 and spread_lo > 0 and spread_hi / spread_lo > SKEW_FOR_LOG)
    width = _width(q, scale)
    if width <= 0:
        return plan
    gap = GAP_WIDTHS * width
    tail = [v for v, _ in stats.high_tail]
    upper = _sample_gap(tail, scale, q["p90"], q["p99"], gap, upward=True)
    if upper is None and not _heavy(scale.to(q["p50"]), scale.to(q["p90"]), scale.to(q["p99"])):
        upper = scale.back(scale.to(q["p99"]) + FENCE_WIDTHS * width)
    if upper is not None:
        plan.fences.append(Fence("above", upper, gap, scale))
    if not scale.log:
        low = [v for v, _ in stats.low_tail]
        lower = _sample_gap(low, scale, q["p10"], q["p01"], gap, upward=False)
        if lower is None and not _heavy(-q["p50"], -q["p10"], -q["p01"]):
            lower = q["p01"] - FENCE_WIDTHS * width
        if lower is not None and not (lower < 0 and any(r in ("negative", "zero or negative")
                                                         for r, _ in plan.conditions)):
            plan.fences.append(Fence("below", lower, gap, scale))
    return plan


def _heavy(mid: float, outer: float, extreme: float) -> bool:
    """A tail that spreads faster than a normal one (quantiles on the working scale)."""
    inner = outer - mid
    return inner > 0 and (extreme - outer) > HEAVY_TAIL * inner


def _epoch(d: datetime) -> float:
    return (d if d.tzinfo else d.replace(tzinfo=UTC)).timestamp()


def _date(seconds: float) -> datetime:
    return EPOCH + timedelta(seconds=seconds)


def date_plan(stats: DateStats, now: datetime) -> RangePlan:
    """Ranges for a date field; fence positions come back as epoch seconds in ``Fence.at``."""
    plan = RangePlan()
    q = {k: _epoch(v) for k, v in stats.quantiles.items()}
    if not q:
        return plan
    if q["p01"] > _epoch(OLDEST_PLAUSIBLE):
        plan.conditions.append(("before 1900", {"$lt": OLDEST_PLAUSIBLE}))
    if q["p01"] > _epoch(datetime(1971, 1, 1, tzinfo=UTC)):
        plan.conditions.append(("the Unix epoch placeholder", {"$eq": EPOCH}))
    scale = Scale(log=False)
    width = _width(q, scale)
    if width <= 0:
        return plan
    gap = GAP_WIDTHS * width
    upper = _sample_gap([_epoch(v) for v, _ in stats.high_tail], scale, q["p90"], q["p99"], gap, upward=True)
    if upper is None:
        upper = q["p99"] + FENCE_WIDTHS * width
    tomorrow = _epoch(now) + 86_400
    if q["p99"] <= _epoch(now):
        upper = max(upper, tomorrow)  # a field of past events: nothing may lie in the future
    plan.fences.append(Fence("above", upper, gap, scale))
    lower = _sample_gap([_epoch(v) for v, _ in stats.low_tail], scale, q["p10"], q["p01"], gap, upward=False)
    plan.fences.append(Fence("below", lower if lower is not None else q["p01"] - FENCE_WIDTHS * width, gap, scale))
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
