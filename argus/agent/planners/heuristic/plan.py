"""The heuristic planner's plan: hypotheses (checks) and the server statistics (probes) they need.

A plan is data, built from the sample by ``hypotheses`` and from the statistics pass by
``statistics``; the planner sends it in batches. The query pieces both write (a field scoped to
its enclosing object, the documents beyond a fence) live here so both write them alike.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from argus.agent.findings import Category
from argus.agent.planners.heuristic.keys import KeyPlan
from argus.agent.planners.heuristic.names import NameHints
from argus.agent.planners.heuristic.ranges import Fence, as_date

__all__ = ["Check", "Plan", "Probe", "any_of", "beyond_fence", "fence_bound", "outlier_why", "parent_of", "scoped"]


def parent_of(path: str) -> str | None:
    return path.rsplit(".", 1)[0] if "." in path else None


def scoped(path: str, condition: Any) -> dict[str, Any]:
    """``{path: condition}``, limited to documents where the enclosing object exists."""
    parent = parent_of(path)
    if parent is None:
        return {path: condition}
    return {parent: {"$exists": True}, path: condition}


def any_of(clauses: list[dict[str, Any]]) -> dict[str, Any]:
    return clauses[0] if len(clauses) == 1 else {"$or": clauses}


@dataclass
class Check:
    """A hypothesis about one field: its exact count over the collection decides it."""

    path: str
    category: Category
    query: dict[str, Any]
    description: str
    hypothesis: str
    identifier: bool = True
    max_share: float | None = None   # more common than this, the pattern is the data's normal, not a defect
    optional: bool = False           # a field records may lack by meaning: one severity step lower
    within: dict[str, Any] | None = None  # judged among the documents of some shapes only (their filter) ...
    scope: str | None = None              # ... named so: 'iban (by method)'
    lead: str | None = None               # a sentence the description follows ('a was renamed b around ...')


@dataclass
class Probe:
    """A server-side statistic some verdict needs (``get_stats`` input, run inside the batch)."""

    path: str
    kind: str                        # "enum", "number_set", "duplicates", "fence_out", "fence_in"
    spec: dict[str, Any]
    fence: Fence | None = None
    dates: bool = False
    hints: NameHints | None = None
    key: KeyPlan | None = None       # duplicates: how the whole collection's repeated values are judged


@dataclass
class Plan:
    checks: list[Check] = field(default_factory=list)
    probes: list[Probe] = field(default_factory=list)
    outliers: dict[str, tuple[list[dict[str, Any]], list[str], bool]] = field(default_factory=dict)
    # (documents with a value beyond the fence, the probes that check its gap when there are any)
    fences: list[tuple[dict[str, Any], list[Probe]]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # checks the audit skipped, and why: the report says so
    counted: list[dict[str, Any]] = field(default_factory=list)  # counts for the report (shapes, type mixes)


def fence_bound(at: float, dates: bool) -> Any:
    return as_date(at) if dates else at


def beyond_fence(fence: Fence, dates: bool) -> dict[str, Any]:
    """The condition on a value beyond ``fence``: below a scale fence, the positive values only
    (zeros and negatives are no unit written another way)."""
    at = fence_bound(fence.at, dates)
    if fence.side == "above":
        return {"$gt": at}
    return {"$gt": 0, "$lt": at} if fence.shift else {"$lt": at}


def outlier_why(dates: bool) -> str:
    return "clock or parsing errors" if dates else "placeholder, unit or data-entry errors"
