"""One quantity written in two units: a second cluster a power of ten off the bulk.

A rate kept as a fraction in most documents and as a percent in a few (0.19 beside 19.0), cents
beside units, grams beside kilograms, milliseconds beside seconds: on a log scale the minority is
the bulk moved by 1, 2 or 3 decades, across a band no value holds. The tail fences miss it when
the bulk has a long tail of its own (they ask a gap wider than the tail's reach), or when the moved
cluster spreads across a fence; this looks for the band itself, whatever the field is called.

From the sample (``NumericStats.log_bins``, tenths of a decade): an empty band at least
``SAMPLE_GAP`` wide splits the positive values into a bulk and a minority of at most ``MAX_SHARE``;
the minority's middle sits a whole number of decades (1 to 3) from the bulk's, within
``SHIFT_TOLERANCE`` (more for a minority of few values, whose middle is uncertain); the bulk is
narrower than the shift (a unit mistake on a wide spread of values lands inside it and cannot be
told apart); a minority of several values straddles the bulk's middle once moved back, as a copy
of the bulk does (a natural tail only thins out), and a few values need a bulk that reaches no
further out on their side than on the other; and a field of few distinct values moves them
exactly (499 beside 4.99, not 12 beside 1, 2, 3 and 5). The threshold goes in the band's middle;
the whole collection must keep a band there (``ranges.detached``), so the count of values beyond
it is exactly the moved cluster.
"""

from __future__ import annotations

import math

from argus.agent.tools.models import NumericStats

__all__ = ["ScaleSplit", "scale_splits"]

SAMPLE_GAP = 2           # tenths of a decade: an empty band this wide in the sample (a factor of 1.6)
MAX_SHARE = 0.3          # the moved cluster is a minority: at most this share of the positive values
SHIFT_TOLERANCE = 0.3    # decades the minority's middle may stray from the bulk's moved by a power of ten ...
SHIFT_NOISE = 2.0        # ... and this many standard errors of a few values' middle more, up to ...
SHIFT_TOLERANCE_MAX = 0.45  # ... this (half a decade would be no power of ten at all)
SHIFTS = (1, 2, 3)       # 10x (mm and cm), 100x (percent, cents), 1000x (grams, milliseconds)
STRADDLE = 0.1           # a minority of MIN_STRADDLE values or more puts this share on each side of the middle
MIN_STRADDLE = 5
SYMMETRY = 1.25          # ... fewer: the bulk reaches at most this much further out on their side (log scale)
MIN_VALUES = 20
TAIL = 25                # the profile's tails list this many distinct values


class ScaleSplit:
    """Values beyond ``at`` (above or below) are the bulk moved by ``shift`` decades."""

    __slots__ = ("at", "edge", "few", "shift", "side", "spacing")

    def __init__(self, *, side: str, at: float, shift: int, edge: float, few: bool, spacing: float = 0.0) -> None:
        self.side = side
        self.at = at
        self.shift = shift
        self.edge = edge    # the bulk's edge on this side, log10 (its middle plus one deviation)
        self.few = few      # the sample held few moved values: their shape could not be judged
        self.spacing = spacing  # decades between neighbouring distinct moved values in the sample (0: dense)

    def __repr__(self) -> str:
        return f"ScaleSplit(side={self.side!r}, at={self.at:g}, shift={self.shift})"


def _quantile(bins: list[tuple[int, int]], q: float) -> float:
    """The q-quantile of binned values, as a bin position (a bin's middle is ``b + 0.5``)."""
    total = sum(n for _, n in bins)
    rank = q * total
    seen = 0
    for b, n in bins:
        if seen + n >= rank:
            return b + 0.5
        seen += n
    return bins[-1][0] + 0.5


def _like_the_bulk(stats: NumericStats, minority: list[tuple[int, int]], bulk: list[tuple[int, int]],
                   shift_bins: int, side: str) -> bool:
    """Moved back, several values straddle the bulk's middle as a copy of the bulk does (a natural
    tail only thins out). A few values cannot show that: then the bulk must not reach out on their
    side on a log scale more than on the other, so no natural tail leads there (a normal spread
    around 60 reaches far down on a log scale, and a lone 5 is its tail, not a tenth of it)."""
    total = sum(n for _, n in minority)
    middle = _quantile(bulk, 0.5)
    if total < MIN_STRADDLE:
        positive = stats.spreads.get("positive")
        q = positive.quantiles if positive is not None else stats.quantiles
        if not q or q["p05"] <= 0:
            return False
        low, high = math.log10(q["p50"] / q["p05"]), math.log10(q["p95"] / q["p50"])
        return (low if side == "below" else high) <= SYMMETRY * (high if side == "below" else low)
    below = sum(n for b, n in minority if b - shift_bins + 0.5 < middle)
    above = sum(n for b, n in minority if b - shift_bins + 0.5 > middle)
    return min(below, above) >= STRADDLE * total


def _copies_of_few(stats: NumericStats, at: float, side: str, shift: int) -> bool:
    """A field of few distinct values (counts of 1, 2, 3, 5; price tiers) moved by a unit keeps its
    values: 499 beside 4.99 is a price in cents, 12 beside 1, 2, 3 and 5 is a dozen, no unit. (The
    sample's tails hold every distinct value when it has fewer than a tail's length.)"""
    if len(stats.low_tail) >= TAIL:
        return True
    values = {v for v, _ in stats.low_tail}
    moved = [v for v in values if (v > at if side == "above" else 0 < v < at)]
    bulk = {_rounded(v) for v in values if v not in moved}
    return all(_rounded(v / 10 ** shift) in bulk for v in moved)


def _spacing(stats: NumericStats, at: float, side: str) -> float:
    """The mean gap, in decades, between neighbouring distinct values beyond ``at`` in the sample:
    what a band must outreach to be one. A moved copy of the bulk is dense, its values far closer
    to each other than to the bulk; the sparse end of a wide spread (a uniform 1 to 1,000 holds
    about nine values in a thousand below 10, a tenth of a decade and more apart) leaves gaps as
    wide inside the minority as between it and the bulk, and the whole collection's holds more
    of them. 0 when the minority has more distinct values than a tail lists (dense by then)."""
    tail = stats.low_tail if side == "below" else stats.high_tail
    moved = [v for v, _ in tail if (0 < v < at if side == "below" else v > at)]
    complete = len(tail) < TAIL or any((v >= at if side == "below" else v <= at) for v, _ in tail)
    if not complete or len(moved) < 2:
        return 0.0
    return math.log10(max(moved) / min(moved)) / (len(moved) - 1)


def _rounded(v: float) -> float:
    return float(f"{v:.9g}")


def scale_splits(stats: NumericStats) -> list[ScaleSplit]:
    """Where the sample shows a second cluster a power of ten off the bulk (at most one per side)."""
    bins = stats.log_bins
    positive = sum(n for _, n in bins)
    if positive < MIN_VALUES:
        return []
    out: dict[str, ScaleSplit] = {}
    for i in range(len(bins) - 1):
        low, high = bins[: i + 1], bins[i + 1:]
        if high[0][0] - low[-1][0] - 1 < SAMPLE_GAP:
            continue
        n_low, n_high = sum(n for _, n in low), sum(n for _, n in high)
        side, bulk, minority = ("above", low, high) if n_high <= n_low else ("below", high, low)
        if min(n_low, n_high) > MAX_SHARE * positive or side in out:
            continue
        middle = _quantile(bulk, 0.5)
        shift = (_quantile(minority, 0.5) - middle) / 10
        k = round(shift)
        width = (_quantile(bulk, 0.99) - _quantile(bulk, 0.01)) / 10
        deviation = (_quantile(bulk, 0.75) - _quantile(bulk, 0.25)) / 13.5   # decades, as a normal's
        tolerance = min(SHIFT_TOLERANCE + SHIFT_NOISE * deviation / math.sqrt(min(n_low, n_high)),
                        SHIFT_TOLERANCE_MAX)
        if abs(k) not in SHIFTS or abs(shift - k) > tolerance or width >= abs(k):
            continue
        at = 10 ** ((low[-1][0] + 1 + high[0][0]) / 20)   # the middle of the empty band
        if not _like_the_bulk(stats, minority, bulk, 10 * k, side) or not _copies_of_few(stats, at, side, k):
            continue
        spread = max(deviation * 0.6745, 0.05)  # the bulk's median absolute deviation, decades
        edge = middle / 10 + (spread if side == "above" else -spread)
        if math.isfinite(at) and at > 0:
            out[side] = ScaleSplit(side=side, at=at, shift=k, edge=edge, few=min(n_low, n_high) < MIN_STRADDLE,
                                   spacing=_spacing(stats, at, side))
    return list(out.values())
