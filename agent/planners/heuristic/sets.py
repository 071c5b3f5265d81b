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
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from agent.tools.models import NumericStats

__all__ = ["SET_VALUES", "MovedValues", "few_values", "moved_values"]

SET_VALUES = 12         # a number field with at most this many distinct values in the sample is a set
SOURCE_RATIO = 4        # a moved value is held by at most a quarter of the documents its source member holds
MIN_SOURCES = 2         # ... and the values moved by one power come from at least this many members
MAX_MOVED_SHARE = 0.3   # moved values are a minority of the field's documents
SHIFTS = (1, 2, 3, -1, -2, -3)
_TAIL = 25              # the profile's tails list this many distinct values


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
