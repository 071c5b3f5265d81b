"""Numbers of few distinct values are a set as well as a range: a rate of 0.05, 0.1 or 0.2, a
discount of 0, 5, 10 or 15, a code. A unit written another way moves a few documents' values by a
power of ten (5, 10 and 20 beside 0.05, 0.1 and 0.2), where a log-scale band between two
clusters cannot show it: the set is narrow, may hold 0, and its moved copies land close to it.

The sample only says the field is a set (``few_values``); the whole collection's value counts,
asked in the batched statistics pass, decide. A value is moved when it is a member held by at
least ``SOURCE_RATIO`` times as many documents, times ten to the power of 1, 2 or 3 (or divided by
it), and not itself the source of a value moved by the same power. The moved values of one power
must come from at least two members (a rate set written as a percent moves each of its rates), so
a set whose values happen to be powers of ten apart (pack sizes 1 and 10, coins of 1, 10 and 100)
stays a set. The finding counts exactly the documents holding a moved value.

A value is outside the set (a status 33 among 1 to 5, a rate 0.12 among 0.05, 0.1 and 0.2) when
the set's members, at least ``GRID_MEMBERS`` of them, stand apart from it by a steep drop in
frequency (the rare values hold at most ``OUTSIDE_SHARE`` of the documents, each of them at most
1/``OUTSIDE_BREAK`` of the rarest member's) and it does not carry the set on: it lies off the grid
the members are spaced on (3.5 among integers, 25 among tens), or on it but further beyond the
members (and the rare values continuing them step by step) than the members themselves spread,
on a log scale too when they are positive (16 carries on memory sizes of 1, 2, 4 and 8).
A long tail that thins out gradually (children per household, 0 to 8) has no steep drop, and a
rare value one step past the members (a 1-star rating beside 2 to 5 stars) carries them on: both
stay a set.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from argus.agent.tools.models import NumericStats

__all__ = ["SET_VALUES", "MovedValues", "breaks", "few_values", "moved_values", "outside_values"]

SET_VALUES = 12         # a number field with at most this many distinct values in the sample is a set
SOURCE_RATIO = 4        # a moved value is held by at most a quarter of the documents its source member holds
MIN_SOURCES = 2         # ... and the values moved by one power come from at least this many members
MAX_MOVED_SHARE = 0.3   # moved values are a minority of the field's documents
SHIFTS = (1, 2, 3, -1, -2, -3)
_TAIL = 25              # the profile's tails list this many distinct values
GRID_MEMBERS = 3        # members needed to say what grid the set is spaced on
OUTSIDE_BREAK = 8       # rare values hold at most 1/this of the rarest member's documents ...
OUTSIDE_SHARE = 0.01    # ... and together at most this share of the field's documents
_DECIMALS = 6           # a set's members are written with at most this many decimals


@dataclass(frozen=True)
class MovedValues:
    values: list[float]   # the moved values, ascending
    shift: int            # decades: 2 is a fraction written as a percent


def few_values(stats: NumericStats) -> bool:
    """The sample holds every distinct value in its tails, and there are few of them."""
    return len(stats.low_tail) < _TAIL and 2 <= len(stats.low_tail) <= SET_VALUES


def _key(v: float) -> float:
    return float(f"{v:.9g}")


def moved_values(counts: Iterable[tuple[float, int]]) -> MovedValues | None:
    """The values of ``counts`` (value, documents over the whole collection) that are the field's
    set moved by one power of ten, or None."""
    held = {_key(v): n for v, n in counts if v != 0}
    total = sum(held.values())
    best: MovedValues | None = None
    for shift in SHIFTS:
        moved: dict[float, float] = {}  # moved value -> its source member
        for v, n in held.items():
            source = _key(v / 10 ** shift)
            if source in held and held[source] >= SOURCE_RATIO * n:
                moved[v] = source
        for v in [v for v in moved if v in moved.values()]:  # a chain (1, 10, 100) is a set, not a copy
            del moved[v]
        documents = sum(held[v] for v in moved)
        if len(set(moved.values())) < MIN_SOURCES or documents > MAX_MOVED_SHARE * total:
            continue
        if best is None or documents > sum(held[v] for v in best.values):
            best = MovedValues(values=sorted(moved), shift=shift)
    return best


def _scaled(v: float) -> int | None:
    """``v`` times 10**``_DECIMALS`` when it is written with at most that many decimals."""
    x = v * 10 ** _DECIMALS
    return round(x) if abs(x - round(x)) <= 1e-6 * max(1.0, abs(x)) else None


def outside_values(counts: Iterable[tuple[float, int]]) -> list[float]:
    """The values of ``counts`` (value, documents over the whole collection) that lie outside the
    field's set (see the module's docstring), ascending; [] when the field shows no such set."""
    ordered = sorted(((_key(v), n) for v, n in counts if n > 0), key=lambda vn: -vn[1])
    total = sum(n for _, n in ordered)
    members: list[tuple[float, int]] = []
    for i in range(len(ordered) - 1):
        rest = sum(n for _, n in ordered[i + 1:])
        if ordered[i][1] >= OUTSIDE_BREAK * ordered[i + 1][1] and rest <= OUTSIDE_SHARE * total:
            members = ordered[: i + 1]
            break
    if len(members) < GRID_MEMBERS:
        return []
    scaled = [_scaled(v) for v, _ in members]
    grid = sorted(x for x in scaled if x is not None)
    if len(grid) < len(scaled):
        return []  # members of many decimals: measurements, not a set
    step = 0
    for member in grid[1:]:
        step = math.gcd(step, member - grid[0])
    span = grid[-1] - grid[0]
    low, high = grid[0], grid[-1]
    rare = sorted(v for v, _ in ordered[len(members):])
    on_grid = {v: x for v in rare if (x := _scaled(v)) is not None and (x - grid[0]) % step == 0}
    # The rare values on the grid continue the members step by step, outwards from them.
    for v in sorted(on_grid, key=lambda v: min(abs(on_grid[v] - low), abs(on_grid[v] - high))):
        if low - step <= on_grid[v] <= high + step:
            low, high = min(low, on_grid[v]), max(high, on_grid[v])
    return [v for v in rare if v not in on_grid or _beyond(on_grid[v], low, high, span)]


def _beyond(x: int, low: int, high: int, span: int) -> bool:
    """``x`` lies further beyond ``low``..``high`` than the members spread, and, for a set of
    positive members, on a log scale too (memory sizes 1, 2, 4 and 8 carried on by 16)."""
    if low - span <= x <= high + span:
        return False
    if low <= 0 or x <= 0:
        return True
    decades = math.log10(high / low)
    return not math.log10(low) - decades <= math.log10(x) <= math.log10(high) + decades


_COMPARE = {"$lt": lambda v, x: v < x, "$lte": lambda v, x: v <= x, "$gt": lambda v, x: v > x,
            "$gte": lambda v, x: v >= x, "$eq": lambda v, x: v == x}


def breaks(condition: dict[str, Any], value: float) -> bool:
    """Does ``value`` meet a range rule's condition (``{"$lt": 0}``, ``{"$in": [...]}``)? A rule's own
    values need no second reason; an operator not listed here is never met."""
    for op, operand in condition.items():
        if op == "$in" and isinstance(operand, list) and value in operand:
            return True
        compare = _COMPARE.get(op)
        if compare is not None and isinstance(operand, int | float) and compare(value, operand):
            return True
    return False
