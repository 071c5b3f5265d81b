"""When documents without a field are no defect, judged from the values; names only narrow dates.

Every field the bulk of documents carries is checked for documents without it, whatever its name
and type (a true/false flag named ``paid`` included). Two exceptions, each needing the data to agree:

- a link between the collection's own documents (``manager_id`` beside ``employee_id``, written
  alike, repeating as a reference does) is empty at the top of its hierarchy;
- a date whose name says a later stage of a record's life (``delivered_at``, ``end_date``) is empty
  until that stage comes, while the share without it holds steady: a share that jumps past what
  earlier runs measured is a writer that stopped writing it.
"""

from __future__ import annotations

from typing import Any

from argus.agent.history import HistoricalContext
from argus.agent.planners.heuristic.names import later_stage
from argus.agent.tools.models import FieldStats

__all__ = ["STEADY_GROWTH", "self_links", "waits_for_its_event"]

SHAPE_SHARE = 0.9       # a field is written in one shape when this share of its values has it
KEY_DISTINCT = 0.98     # the collection's own key: distinct but for a chance pair in the sample
LINK_DISTINCT = 0.9     # a link repeats: many documents point at the same one
STEADY_GROWTH = 1.5     # a share without the date this many times the largest earlier one is a jump ...
STEADY_SLACK = 0.02     # ... and this much more than it besides (a sample's noise)


def _parent(path: str) -> str:
    return path.rpartition(".")[0]


def _shape(f: FieldStats) -> str | None:
    s = f.strings
    if s is None or not s.exact_shapes or s.exact_shapes[0][1] < SHAPE_SHARE * s.count:
        return None
    return s.exact_shapes[0][0]


def self_links(fields: list[FieldStats]) -> frozenset[str]:
    """Fields that point at another document of the same collection: written exactly like a field
    unique to each document beside them (``E100123``), but repeating, as a reference does."""
    keys: dict[tuple[str, str], str] = {}
    for f in fields:
        shape = _shape(f)
        if shape is not None and f.distinct_ratio >= KEY_DISTINCT and not f.in_array:
            keys.setdefault((_parent(f.path), shape), f.path)
    links = set()
    for f in fields:
        shape = _shape(f)
        if shape is not None and f.distinct_ratio < LINK_DISTINCT and (_parent(f.path), shape) in keys:
            links.add(f.path)
    return frozenset(links)


def _earlier_shares(history: Any, path: str) -> list[float]:
    if not isinstance(history, HistoricalContext):
        return []
    out = []
    for snapshot in history.health:
        measured = snapshot.field(path)
        if measured is not None:
            out.append(measured.null_share)
    return out


def waits_for_its_event(f: FieldStats, dominant: str | None, share: float, history: Any = None) -> bool:
    """A date of a later stage (``delivered_at``) whose missing share ``share`` is no jump: steady
    against every earlier run that measured it (none yet: nothing says it jumped)."""
    if dominant != "date" or not later_stage(f.path):
        return False
    earlier = _earlier_shares(history, f.path)
    return not earlier or share <= max(earlier) * STEADY_GROWTH + STEADY_SLACK
