"""Plausible ranges for numbers and dates: rules a growing defect cannot move.

Two kinds of bound. Semantic rules come from the field's name and hold at any share: a negative
amount, a zero price or duration, an age of 999, a birth date after the audit's ``now``.
Statistical fences come from the bulk only: the median and the median absolute deviation (on a
log scale for right-skewed positive fields) of the values the rules leave, so a defect that adds a
second mode, even one holding 30% of the values, neither moves nor widens them; the extremes of
the sample are never used. A value beyond a fence counts only when a gap separates it from the
bulk, checked on the whole collection (the largest value inside the fence against the smallest
outside), and the gap must be wider than the bulk's own tail reaches past its edge: a natural
heavy tail, whose largest values thin out gradually, is never reported, while a detached
cluster is, however large.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from typing import Any

from agent.clock import epoch_seconds
from agent.planners.heuristic.names import NameHints
from agent.tools.models import DateStats, NumericStats, Spread

__all__ = ["CLOCK_SKEW", "Fence", "RangePlan", "date_plan", "detached", "numeric_plan"]

# Fences from the median, in median absolute deviations (5 is about 3.4 sigma). A gap is looked
# for beyond each: a near fence finds a cluster just past a short tail, a far one a cluster past a
# long tail that reaches beyond the near fence.
FENCE_MADS = (5.0, 8.0, 12.0)
GAP_MADS = 1.7          # an outlier must sit this far (in MADs) from the largest normal value
TAIL_GAP = 1.5          # ... and this many times as far as the bulk's own tail reaches past its edge
SKEW_FOR_LOG = 1.2      # (p75 - p50) / (p50 - p25) above this → work on a log scale
RARE_SHARE = 0.02       # unnamed fields: negatives or zeros above this share are part of the data
HUGS_ZERO = 0.2         # p01 below this fraction of the median: the values have a floor at zero
MINORITY = 0.5          # a rule's violations are reported while they are fewer than this share
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
    edge: float = 0.0  # the bulk's edge on this side (median ± one MAD), in scale units


@dataclass
class RangePlan:
    conditions: list[tuple[str, dict[str, Any]]] = field(default_factory=list)  # (reason, condition on the field)
    fences: list[Fence] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.conditions or self.fences)


def _fences(spread: Spread, scale: Scale, *, lower: bool) -> list[Fence]:
    """Fences around the median, at ``FENCE_MADS`` deviations: a minority cannot move them."""
    center, mad = (spread.log_median, spread.log_mad) if scale.log else (spread.median, spread.mad)
    if center is None or mad is None or mad <= 0:
        return []
    gap = GAP_MADS * mad
    sides = [("above", 1.0)] + ([("below", -1.0)] if lower else [])
    fences = []
    for side, sign in sides:
        for distance in FENCE_MADS:
            try:
                at = scale.back(center + sign * distance * mad)
            except OverflowError:
                break  # beyond the largest float: nothing can lie there
            fences.append(Fence(side, at, gap, scale, edge=center + sign * mad))
    return fences


def _log_scale(q: dict[str, float]) -> bool:
    """Right-skewed and positive in its bulk (amounts, durations, counts of items): spread is
    multiplicative. Judged on the quartiles, and on the deciles too: in small counts (1, 2, 3,
    then a few 8s and 20s) the quartiles sit one step apart and hide the skew."""
    quartiles = q["p25"] > 0 and q["p50"] > q["p25"] \
        and (q["p75"] - q["p50"]) > SKEW_FOR_LOG * (q["p50"] - q["p25"])
    deciles = q["p10"] > 0 and q["p50"] > q["p10"] and (q["p90"] - q["p50"]) > SKEW_FOR_LOG * (q["p50"] - q["p10"])
    return quartiles or deciles


def numeric_plan(stats: NumericStats, hints: NameHints) -> RangePlan:
    plan = RangePlan()
    q = stats.quantiles
    if not q or stats.min is None or stats.max is None:
        return plan
    n = max(stats.count - stats.nan_count - stats.inf_count, 1)
    plan.conditions.append(("not a number", {"$in": [math.nan, math.inf, -math.inf]}))
    unnamed_floor = not hints.signed and stats.negative_count <= RARE_SHARE * n and q["p05"] >= 0 \
        and 0 <= q["p01"] <= HUGS_ZERO * q["p50"]
    bulk = stats.spreads.get("all")
    if hints.positive and stats.zero_count + stats.negative_count < MINORITY * n:
        plan.conditions.append(("zero or negative", {"$lte": 0}))
        bulk = stats.spreads.get("positive", bulk)
    elif hints.nonnegative or hints.positive or unnamed_floor:
        plan.conditions.append(("negative", {"$lt": 0}))
        bulk = stats.spreads.get("nonnegative", bulk)
    middle = bulk.quantiles if bulk is not None else q
    if hints.bounds is not None:
        lo, hi = hints.bounds
        if lo <= middle["p25"] and middle["p50"] <= hi:
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
    if bulk is None or not bulk.quantiles:
        return plan
    scale = Scale(log=_log_scale(bulk.quantiles) and bulk.log_median is not None)
    signed_rule = any(r in ("negative", "zero or negative") for r, _ in plan.conditions)
    for fence in _fences(bulk, scale, lower=not scale.log):
        if fence.side == "below" and fence.at < 0 and signed_rule:
            continue  # the sign rule already covers everything below zero
        plan.fences.append(fence)
    return plan



def _date(seconds: float) -> datetime:
    return EPOCH + timedelta(seconds=seconds)


def date_plan(stats: DateStats, now: datetime, hints: NameHints | None = None) -> RangePlan:
    """Ranges for a date field; fence positions come back as epoch seconds in ``Fence.at``.

    A field of past events (by its name: ``created_at``, ``birth_date``, ``shipped``) gets a hard
    rule: nothing after ``now`` plus a day of clock skew, at any share. Fields of future events
    (``due_date``, ``expires_at``) and unnamed ones get the statistical fences only.
    """
    plan = RangePlan()
    q = {k: epoch_seconds(v) for k, v in stats.quantiles.items()}
    if not q:
        return plan
    if q["p50"] > epoch_seconds(OLDEST_PLAUSIBLE):
        plan.conditions.append(("before 1900", {"$lt": OLDEST_PLAUSIBLE}))
    if q["p50"] > epoch_seconds(datetime(1971, 1, 1, tzinfo=UTC)):
        plan.conditions.append(("the Unix epoch placeholder", {"$eq": EPOCH}))
    past = hints is not None and hints.past_event
    if past:
        plan.conditions.append(("in the future", {"$gt": (now + CLOCK_SKEW).astimezone(UTC)}))
    if stats.spread is None:
        return plan
    for fence in _fences(stats.spread, Scale(log=False), lower=True):
        if fence.side == "above":
            if past:
                continue
            if q["p50"] <= epoch_seconds(now):  # mostly past: a fence inside the next day would flag today's writes
                fence = replace(fence, at=max(fence.at, epoch_seconds(now + CLOCK_SKEW)))
        plan.fences.append(fence)
    return plan


def detached(fence: Fence, inside: float | None, outside: float | None) -> bool:
    """True when the values beyond the fence are separated from the bulk by a gap: at least the
    fence's own, and wider than the bulk's tail reaches past its edge (a heavy tail thins out
    gradually; a cluster of defects sits apart)."""
    if inside is None or outside is None:
        return outside is not None
    if fence.scale.log and (inside <= 0 or outside <= 0):
        return False
    inner, outer = fence.scale.to(inside), fence.scale.to(outside)
    tail = (inner - fence.edge) if fence.side == "above" else (fence.edge - inner)
    return abs(outer - inner) >= max(fence.gap, TAIL_GAP * tail)


def as_date(seconds: float) -> datetime:
    return _date(seconds)
