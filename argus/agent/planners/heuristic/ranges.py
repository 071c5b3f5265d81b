"""Plausible ranges for numbers and dates: rules a growing defect cannot move.

Two kinds of bound. Semantic rules come from the field's name and hold while their violations
are the minority (a past event's future date at any share): a negative amount, a zero price or
duration, an age of 999, a birth date after the audit's ``now``. Some come from the values
whatever the name: a negative or a zero below positive values that stand clear of zero, a value
above 100 where values pile up at 100, a future date in a field whose sample lies all in the past.
A name only adds rules; it never takes away one the values ask for (a name that sounds signed or
planned, ``balance_change`` or ``due_date``, once did). The values themselves say what is normal:
negatives in a fair share of documents (a ledger's debits, early departures), zero as a state
(free apps), future dates in the sample (posts scheduled ahead), a tier held by many documents (a
49.00 plan).
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
from itertools import pairwise
from typing import Any

from argus.agent.clock import epoch_seconds
from argus.agent.planners.heuristic.names import NameHints
from argus.agent.planners.heuristic.scales import scale_splits
from argus.agent.tools.models import DateStats, NumericStats, Spread

__all__ = ["CLOCK_SKEW", "Fence", "RangePlan", "date_plan", "detached", "numeric_plan"]

# Fences from the median, in median absolute deviations (5 is about 3.4 sigma). A gap is looked
# for beyond each: a near fence finds a cluster just past a short tail, a far one a cluster past a
# long tail that reaches beyond the near fence.
FENCE_MADS = (5.0, 8.0, 12.0)
GAP_MADS = 1.7          # an outlier must sit this far (in MADs) from the largest normal value
TAIL_GAP = 1.5          # ... and this many times as far as the bulk's own tail reaches past its edge
SCALE_GAP = 0.15        # decades between a moved cluster and the bulk over the whole collection (a factor of 1.4) ...
SPACING_GAP = 1.5       # ... and this many times the mean gap between the cluster's own distinct sampled values
LOG_SYMMETRY = 1.25     # a log-scale bulk reaching at most this much further below than above gets lower fences
SKEW_FOR_LOG = 1.2      # (p75 - p50) / (p50 - p25) above this → work on a log scale
RARE_SHARE = 0.02       # unnamed fields: negatives or zeros above this share are part of the data
HUGS_ZERO = 0.2         # p01 below this fraction of the median: the values have a floor at zero
MINORITY = 0.5          # a rule's violations are reported while they are fewer than this share
TAIL_REACH = 1.5        # zero is clear of a bulk whose 1st percentile stands this many tail-reaches above it
FAR_FROM_ZERO = 0.5     # ... and its smallest positive value this many tail-reaches above zero
# Zero held by this share of a positive-named field without negatives is a state, not a defect: free
# apps, unanswered calls. Planted impossible values (zero, negatives, absurd sizes) put their zeros
# beside as many negatives, which keep the rule; a zero placeholder alone above this share is missed.
ZERO_STATE = 0.05
MIRROR_SHARE = 0.35     # negatives up to this share that mirror the positive bulk are a sign flipped on some of it ...
MIRROR_MIN = 5          # ... seen in at least this many sampled values
MIRROR_TOLERANCE = 0.1  # ... whose quartiles and median, on a log scale, lie this close to the positives' (decades),
MIRROR_ERRORS = 2.0     # ... plus this many standard errors of a quantile of that many values
SENTINELS = 3           # an integer field's negatives taking at most this many values are sentinels or typos
MODE_SHARE = 0.05       # a single value held by this share of the sample is one of the field's modes ...
MODE_REACH = 3.0        # ... when it lies within this many times the fence's distance from the centre
CEILING = 100.0         # the full scale of a percentage or a score out of 100
CEILING_MIN = 5         # values piled at the ceiling in the sample: at least this many ...
CEILING_SHARE = 0.005   # ... and this share
CEILING_PILE = 3.0      # ... and this many times the count of any other value near the top
CLOCK_SKEW = timedelta(days=1)  # a past event may be stamped this far ahead of the audit's clock
ALL_PAST_FUTURE = 0.005  # an unnamed date field with at most this share of future values records past events
CONTINUATION_GAP = 10  # future values this many typical gaps apart still continue the bulk
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
    shift: int = 0     # a scale fence: the values beyond are the bulk moved by this many decades (log scale)
    few: bool = False  # ... seen in few sampled values, whose shape said nothing
    spacing: float = 0.0  # ... whose distinct sampled values lie this many decades apart on average
    future: bool = False  # a date fence at the audit's now: the values beyond are events that have not happened


@dataclass
class RangePlan:
    conditions: list[tuple[str, dict[str, Any]]] = field(default_factory=list)  # (reason, condition on the field)
    fences: list[Fence] = field(default_factory=list)
    seen: set[str] = field(default_factory=set)  # reasons whose violations the sample itself holds

    def __bool__(self) -> bool:
        return bool(self.conditions or self.fences)


def _fences(spread: Spread, scale: Scale, *, lower: bool) -> list[Fence]:
    """Fences around the median, at ``FENCE_MADS`` deviations: a minority cannot move them."""
    center, mad = (spread.log_median, spread.log_mad) if scale.log else (spread.median, spread.mad)
    if mad is not None and mad <= 0:  # most values equal: the MAD is 0, the deciles still spread
        q = spread.quantiles
        mad = _spread_width({k: math.log10(v) for k, v in q.items()} if scale.log else q)
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


# The bulk's width from a pair of quantiles, as a MAD: a normal's MAD is 0.6745 sigma, its
# quartiles 1.349 sigma apart, its deciles 2.563, its 5th and 95th percentiles 3.290, its 1st and 99th 4.653.
_WIDTHS = ((("p25", "p75"), 2.0), (("p10", "p90"), 3.8), (("p05", "p95"), 4.88), (("p01", "p99"), 6.9))


def _spread_width(q: dict[str, float]) -> float:
    """The width of the bulk, in MADs: from its quartiles or, where most values are equal (counts
    of 1 with a few 2s and 3s), from the deciles' or the percentiles' range, so a field whose
    values are mostly equal still has a width and fences."""
    for (lo, hi), per_mad in _WIDTHS:
        if q[hi] > q[lo]:
            return (q[hi] - q[lo]) / per_mad
    return 0.0


def _detached_from_zero(stats: NumericStats) -> bool:
    """The positive values stand well clear of zero (flight passengers 40 to 320, flat prices in
    the thousands): zero lies below the 1st percentile by more than the lowest tail's own reach
    (1st to 5th percentile), so the tail, continued, does not get there, and the smallest value
    keeps a good part of that distance too. A normal spread that crosses zero now and then (a
    gauge centred at three standard deviations) thins out towards zero and is not clear of it."""
    positive = stats.spreads.get("positive")
    if positive is None or not positive.quantiles:
        return False
    p = positive.quantiles
    reach = p["p05"] - p["p01"]
    smallest = next((v for v, _ in stats.low_tail if v > 0), p["p01"])
    return _spread_width(p) > 0 and p["p01"] >= TAIL_REACH * reach and smallest >= FAR_FROM_ZERO * reach


def _ceiling(stats: NumericStats, n: int) -> float | None:
    """100 when values pile up there (scores and shares written as a percentage and clipped at
    full): the value 100 is held by many more documents than any other value near the top, and
    values above it are rare. A pile-up is what a range's edge looks like; a score on another
    scale (credit scores, 300 to 850) never piles up at 100."""
    at = dict(stats.high_tail).get(CEILING)
    if not at or at < max(CEILING_MIN, CEILING_SHARE * n) or stats.quantiles["p50"] > CEILING:
        return None
    above = sum(c for v, c in stats.high_tail if v > CEILING)
    below = [c for v, c in stats.high_tail if v < CEILING]
    if above > RARE_SHARE * n or at < CEILING_PILE * max(below, default=1):
        return None
    return CEILING


def numeric_plan(stats: NumericStats, hints: NameHints) -> RangePlan:
    """Rules and fences for a number field.

    The sign rules hold for a name that says so (an amount, a count) while the violations stay
    fewer than the rest (a ledger whose debits are written negative is signed, whatever its
    name), and for any name, one that sounds signed included, when the violations are rare and the
    values hug zero or stand well clear of it (both shapes have no room for a negative). A
    positive name (a price, a duration) adds zero, unless zero is one of the field's states: held
    by a sizable share of its documents while negatives are (nearly) absent, as free apps and
    unanswered calls are; impossible values planted among them spread over zero and below zero alike.
    """
    plan = RangePlan()
    q = stats.quantiles
    if not q or stats.min is None or stats.max is None:
        return plan
    n = max(stats.count - stats.nan_count - stats.inf_count, 1)
    plan.conditions.append(("not a number", {"$in": [math.nan, math.inf, -math.inf]}))
    if stats.nan_count or stats.inf_count:
        plan.seen.add("not a number")
    rare_negatives = stats.negative_count <= RARE_SHARE * n
    clear_of_zero = _detached_from_zero(stats)
    unnamed_floor = rare_negatives and q["p05"] >= 0 and (0 <= q["p01"] <= HUGS_ZERO * q["p50"] or clear_of_zero)
    # More than a rare few: the values decide whether the negatives are the positive bulk with its
    # sign flipped (a mirror) or a handful of impossible counts; a field the name calls signed keeps
    # its mirror (debits beside credits look just so), never the rare rule above.
    # Zero held often (a score's change of 0) is the middle of a spread that crosses it, no gap.
    unnamed_floor = unnamed_floor or (stats.negative_count <= MIRROR_SHARE * n and stats.zero_count <= ZERO_STATE * n
                                      and ((not hints.signed and _mirrors(stats)) or _sentinels(stats)))
    zero_state = stats.zero_count >= ZERO_STATE * n and rare_negatives
    bulk = stats.spreads.get("all")
    named = (hints.nonnegative or hints.positive) and stats.negative_count < MINORITY * n
    if hints.positive and not zero_state and stats.zero_count + stats.negative_count < MINORITY * n:
        plan.conditions.append(("zero or negative", {"$lte": 0}))
        if stats.zero_count or stats.negative_count:
            plan.seen.add("zero or negative")
        bulk = stats.spreads.get("positive", bulk)
    elif named or unnamed_floor:
        plan.conditions.append(("negative", {"$lt": 0}))
        if stats.negative_count:
            plan.seen.add("negative")
        few_zeros = zero_state or stats.zero_count <= ZERO_STATE * n  # a state, or too few to shape the bulk
        bulk = stats.spreads.get("positive" if few_zeros else "nonnegative", bulk)
    middle = bulk.quantiles if bulk is not None else q
    if hints.bounds is not None:
        lo, hi = hints.bounds
        if lo <= middle["p25"] and middle["p50"] <= hi:
            plan.conditions.append(("above the possible range", {"$gt": hi}))
            if stats.max > hi:
                plan.seen.add("above the possible range")
            if lo > 0 or not any(r == "negative" for r, _ in plan.conditions):
                plan.conditions.append(("below the possible range", {"$lt": lo}))
                if stats.min < lo:
                    plan.seen.add("below the possible range")
    elif (ceiling := _ceiling(stats, n)) is not None:
        plan.conditions.append(("above the 100 its values pile up at", {"$gt": ceiling}))
        if stats.max > ceiling:
            plan.seen.add("above the 100 its values pile up at")
    if hints.identifier:
        return plan  # the magnitude of an identifier carries no meaning
    plan.fences += [Fence(split.side, split.at, 0.0, Scale(log=True), edge=split.edge, shift=split.shift,
                          few=split.few, spacing=split.spacing) for split in scale_splits(stats)]
    # Zero is a state when many documents hold it and negatives are (nearly) absent; zeros planted
    # beside negatives (impossible counts: -15, 0, 99,999) keep the rule at any minority share.
    zeros_apart = stats.zero_count <= ZERO_STATE * n or (not zero_state and stats.zero_count < MINORITY * n)
    if not hints.positive and zeros_apart and q["p25"] > 0 and clear_of_zero:
        plan.conditions.append(("zero placeholder far below the bulk", {"$eq": 0}))
        if stats.zero_count:
            plan.seen.add("zero placeholder far below the bulk")
        bulk = stats.spreads.get("positive", bulk)  # the zeros are the rule's: the bulk's fences are the positives'
    if bulk is None or not bulk.quantiles:
        return plan
    # Counts where most values are equal (attempts: 1, now and then 2 or 3) have no MAD: their width
    # comes from the deciles, and on a log scale, so a pack of 12 copies beside 1s and 2s is a
    # tail while 99 attempts is not.
    equal = (bulk.log_mad if bulk.log_mad is not None else bulk.mad) <= 0
    scale = Scale(log=(_log_scale(bulk.quantiles) or equal) and bulk.log_median is not None)
    signed_rule = any(r in ("negative", "zero or negative") for r, _ in plan.conditions)
    center = scale.back(bulk.log_median if scale.log and bulk.log_median is not None else bulk.median)
    # Below the bulk: on a log scale only where the values spread alike both ways there (prices
    # around 250,000, where a 1 is a placeholder); values that reach down to zero (waiting times)
    # spread without end below on a log scale.
    lower = (not scale.log or _log_symmetric(bulk.quantiles)) and not zero_state
    for fence in _fences(bulk, scale, lower=lower):
        if fence.side == "below" and fence.at < 0 and signed_rule:
            continue  # the sign rule already covers everything below zero
        if _mode_beyond(fence, stats, n, center):
            continue
        plan.fences.append(fence)
    return plan


def _mirrors(stats: NumericStats) -> bool:
    """The negatives' magnitudes spread as the positive values do (their quartiles and median within
    ``MIRROR_TOLERANCE`` decades, plus what so few negatives leave uncertain): the bulk written with
    the wrong sign. A spread that crosses zero (temperatures, balances, deltas) puts its negatives
    nearer zero than its positives, by a quarter of a decade and more at every quartile."""
    negated, positive = stats.spreads.get("negated"), stats.spreads.get("positive")
    if negated is None or positive is None or negated.count < MIRROR_MIN:
        return False
    a, b = negated.quantiles, positive.quantiles
    if min(a["p25"], b["p25"]) <= 0:
        return False
    sigma = math.log10(b["p75"] / b["p25"]) / 1.349  # the positives' spread, decades, as a normal's
    tolerance = MIRROR_TOLERANCE + MIRROR_ERRORS * 1.25 * sigma / math.sqrt(negated.count)
    return all(abs(math.log10(a[k] / b[k])) <= tolerance for k in ("p25", "p50", "p75"))


def _sentinels(stats: NumericStats) -> bool:
    """A field of integers whose bulk stands above zero (its 10th percentile is positive), with
    negatives of a few values only (-1, -30): sentinels or typos. A spread that crosses zero holds
    zero itself often and thins out below it through many values."""
    nonnegative = stats.spreads.get("nonnegative")
    if stats.integer_share < 1.0 or nonnegative is None or stats.negative_count < MIRROR_MIN:
        return False
    negatives = [v for v, _ in stats.low_tail if v < 0]
    every_one = len(negatives) < len(stats.low_tail)  # the tail reached past them: it lists them all
    return every_one and len(negatives) <= SENTINELS and nonnegative.quantiles["p10"] > 0


def _log_symmetric(q: dict[str, float]) -> bool:
    """On a log scale the bulk reaches no further below its median than above (a log-normal)."""
    if q["p05"] <= 0:
        return False
    below = math.log10(q["p50"]) - math.log10(q["p05"])
    above = math.log10(q["p95"]) - math.log10(q["p50"])
    return below <= LOG_SYMMETRY * above


def _mode_beyond(fence: Fence, stats: NumericStats, n: int, center: float) -> bool:
    """A value beyond the fence that a large share of the sample holds, a few fence-widths from
    the centre: a tier (a 49.00 plan beside 4.99 to 19.99, a pack of 24 beside singles), not a
    defect. A unit or placeholder error lies orders of magnitude out and keeps the fence."""
    tail = stats.high_tail if fence.side == "above" else stats.low_tail
    reach = MODE_REACH * abs(fence.at - center)
    return any(c >= MODE_SHARE * n and (v > fence.at if fence.side == "above" else v < fence.at)
               and abs(v - center) <= reach for v, c in tail)


def _date(seconds: float) -> datetime:
    return EPOCH + timedelta(seconds=seconds)


def _all_past(stats: DateStats, now: datetime, n: int) -> bool:
    """Essentially every sampled value lies before ``now`` (plus the clock skew): the share after
    it is at most ``ALL_PAST_FUTURE``, counted on the sample's largest values."""
    limit = now + CLOCK_SKEW
    future = sum(c for v, c in stats.high_tail if v > limit)
    if stats.high_tail and stats.high_tail[-1][0] > limit:
        return False  # the whole tail lies in the future: more of it than the tail shows
    return future <= ALL_PAST_FUTURE * n


def _future_continues_the_bulk(stats: DateStats, now: datetime) -> bool:
    """The sample's few future values carry on the bulk's own spacing across ``now`` (due dates a
    few days ahead of bookings made until last week), rather than standing apart from it past an
    empty stretch (a date a month ahead in a field that ends today). Judged on the sample's
    largest values: no gap from the last past value through the future ones is wider than
    ``CONTINUATION_GAP`` times the past values' median gap."""
    limit = now + CLOCK_SKEW
    values = sorted(v for v, _ in stats.high_tail)
    past = [epoch_seconds(v) for v in values if v <= limit]
    future = [epoch_seconds(v) for v in values if v > limit]
    if len(past) < 3 or not future:
        return False
    past_gaps = sorted(b - a for a, b in pairwise(past))
    typical = past_gaps[len(past_gaps) // 2]
    ahead = [past[-1], *future]
    widest = max(b - a for a, b in pairwise(ahead))
    return widest <= CONTINUATION_GAP * max(typical, 1.0)


def date_plan(stats: DateStats, now: datetime, hints: NameHints | None = None) -> RangePlan:
    """Ranges for a date field; fence positions come back as epoch seconds in ``Fence.at``.

    A field of past events gets a hard rule: nothing after ``now`` plus a day of clock skew, at
    any share. Past events are known by their name (``created_at``, ``birth_date``, ``shipped``),
    or by their values, whatever the name: a field whose sample lies all in the past (but for a
    stray few) records events as they happen, even one named as if it could be planned (a
    ``due_date`` that has only ever been in the past). Fields with future values in their sample
    get the statistical fences only.
    """
    plan = RangePlan()
    q = {k: epoch_seconds(v) for k, v in stats.quantiles.items()}
    if not q:
        return plan
    if q["p50"] > epoch_seconds(OLDEST_PLAUSIBLE):
        plan.conditions.append(("before 1900", {"$lt": OLDEST_PLAUSIBLE}))
        if stats.min < OLDEST_PLAUSIBLE:
            plan.seen.add("before 1900")
    if q["p50"] > epoch_seconds(datetime(1971, 1, 1, tzinfo=UTC)):
        plan.conditions.append(("the Unix epoch placeholder", {"$eq": EPOCH}))
        if any(v == EPOCH for v, _ in stats.low_tail):
            plan.seen.add("the Unix epoch placeholder")
    # A name that says the date may be planned (due_date) narrows the rule only where the values
    # agree: the few future values in the sample continue the bulk instead of standing apart.
    planned_and_seen = hints is not None and hints.future_event and _future_continues_the_bulk(stats, now)
    past = (hints is not None and hints.past_event) or (_all_past(stats, now, stats.count) and not planned_and_seen)
    if past:
        plan.conditions.append(("in the future", {"$gt": (now + CLOCK_SKEW).astimezone(UTC)}))
        if stats.max > now + CLOCK_SKEW:
            plan.seen.add("in the future")
    ahead = epoch_seconds(now + CLOCK_SKEW)
    if not past and stats.max > now + CLOCK_SKEW and q["p50"] <= epoch_seconds(now):
        # Mostly past, a few ahead: planned dates carry on the bulk's spacing across now (due dates,
        # bookings), events written ahead of time stand apart from it past an empty stretch.
        spacing = _spacing(q, stats.count, epoch_seconds(now))
        if spacing is not None:
            plan.fences.append(Fence("above", ahead, max(CONTINUATION_GAP * spacing, CLOCK_SKEW.total_seconds()),
                                     Scale(log=False), edge=ahead, future=True))
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


_FRACTIONS = {"p01": 0.01, "p05": 0.05, "p10": 0.10, "p25": 0.25, "p50": 0.50, "p75": 0.75, "p90": 0.90,
              "p95": 0.95, "p99": 0.99}


def _spacing(q: dict[str, float], count: int, now: float) -> float | None:
    """The typical seconds between two sampled dates just before ``now``: from the highest
    quantile not after it and the quantile a quarter of the values below (over the whole
    collection the values lie closer still, so this asks a wider gap than they leave)."""
    past = [k for k in _FRACTIONS if q[k] <= now]
    if not past:
        return None
    hi = past[-1]
    lo = min(_FRACTIONS, key=lambda k: abs(_FRACTIONS[k] - (_FRACTIONS[hi] - 0.25)))
    values = (_FRACTIONS[hi] - _FRACTIONS[lo]) * count
    if values < 1 or q[hi] <= q[lo]:
        return None
    return (q[hi] - q[lo]) / values


def detached(fence: Fence, inside: float | None, outside: float | None) -> bool:
    """True when the values beyond the fence are separated from the bulk by a gap: at least the
    fence's own, and wider than the bulk's tail reaches past its edge (a heavy tail thins out
    gradually; a cluster of defects sits apart). A scale fence's cluster is the bulk moved by a
    power of ten, which the sample showed: a band of ``SCALE_GAP`` decades is gap enough; when the
    sample held only a few of the moved values, which show no shape, the gap must outreach the
    tail as a tail fence's does."""
    if inside is None or outside is None:
        return outside is not None
    if fence.scale.log and (inside <= 0 or outside <= 0):
        return False
    inner, outer = fence.scale.to(inside), fence.scale.to(outside)
    tail = (inner - fence.edge) if fence.side == "above" else (fence.edge - inner)
    if fence.shift:
        return abs(outer - inner) >= max(SCALE_GAP, TAIL_GAP * tail if fence.few else 0.0, SPACING_GAP * fence.spacing)
    return abs(outer - inner) >= max(fence.gap, TAIL_GAP * tail)


def as_date(seconds: float) -> datetime:
    return _date(seconds)
