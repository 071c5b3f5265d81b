"""Many ``min``/``max`` statistics in one ``$group`` over the collection, not one ``$facet`` branch each.

A ``$facet`` branch is a scan of its own on some engines (DocumentDB: ~106 fence statistics of
``products`` cost ~20 chunked passes); one ``$group`` with an accumulator per statistic reads the
collection once. Only a statistic whose ``get_stats`` pipeline (``build_pipeline``) the group can
reproduce exactly goes in it:

- no document ``filter``; operation ``min`` or ``max``; a ``value_filter`` of ``$gt``/``$gte``/``$lt``/
  ``$lte`` on one number or one date (a fence);
- its value taken as ``$unwind`` would take it: a value that is an array (also an array through a
  dotted path) would be flattened there, so the group also asks whether any value is an array, and a
  statistic over a field where one is goes back to its own branch (``leftover``);
- the query's type bracketing: ``{$lte: 5}`` matches numbers only (a string is no number, though it
  sorts above them), ``{$lte: date}`` dates only, and no comparison matches NaN.
"""

from __future__ import annotations

import math
from datetime import datetime
from typing import Any

from bson.max_key import MaxKey

from argus.agent.tools.get_stats import build_pipeline, stats_result, value_condition
from argus.agent.tools.models import GetStatsInput, StatsResult

__all__ = ["group_pipeline", "group_results", "groupable"]

_COMPARISONS = ("$gt", "$gte", "$lt", "$lte")


def groupable(stat: GetStatsInput) -> bool:
    if stat.filter or stat.operation not in ("min", "max"):
        return False
    condition = value_condition(stat.value_filter)
    if condition is None:
        return False  # a min over every type: no sentinel sorts above them all (MaxKey is a value too)
    bounds = list(condition.values())
    if not all(op in _COMPARISONS for op in condition) or not bounds:
        return False
    numbers = all(isinstance(b, int | float) and not isinstance(b, bool) and not math.isnan(b) for b in bounds)
    dates = all(isinstance(b, datetime) for b in bounds)
    return numbers or dates


def _kept(field: str, condition: dict[str, Any]) -> dict[str, Any]:
    """True for a value the branch's ``$match`` keeps (its value not an array: those are left over), as
    comparisons only (DocumentDB spends by the operator): BSON order puts null, missing and NaN below
    -inf, and strings (then objects, arrays, dates...) above every number; dates sit between booleans
    and timestamps, so a date bound asks the type."""
    v = f"${field}"
    bounds = list(condition.values())
    terms = [{op: [v, bound]} for op, bound in condition.items()]
    if isinstance(bounds[0], datetime):
        return {"$and": [{"$eq": [{"$type": v}, "date"]}, *terms]}
    if not any(op in ("$gt", "$gte") for op in condition):
        terms.insert(0, {"$gte": [v, -math.inf]})  # a number, not NaN
    if not any(op in ("$lt", "$lte") for op in condition):
        terms.append({"$lt": [v, ""]})  # a number, not a string or anything above
    return {"$and": terms}


def group_pipeline(stats: list[GetStatsInput]) -> list[dict[str, Any]]:
    """One ``$group``: ``r{i}`` the statistic's value, ``a{j}`` whether a field's value was an array."""
    fields = sorted({s.field for s in stats})
    group: dict[str, Any] = {"_id": None}
    for i, stat in enumerate(stats):
        condition = value_condition(stat.value_filter)
        assert condition is not None
        # Not null for a value left out of a $min: DocumentDB's $min takes null (and missing) as its least
        # value, where MongoDB's ignores them; MaxKey sorts above every value a fence keeps on both.
        skipped = MaxKey() if stat.operation == "min" else None
        group[f"r{i}"] = {f"${stat.operation}": {"$cond": [_kept(stat.field, condition), f"${stat.field}", skipped]}}
    for j, path in enumerate(fields):
        group[f"a{j}"] = {"$max": {"$isArray": f"${path}"}}
    return [{"$group": group}]  # no $project before it: DocumentDB's costs ten times the group


def group_results(stats: list[GetStatsInput], collection: str,
                  rows: list[Any]) -> tuple[dict[int, StatsResult], list[int]]:
    """The answered statistics by index, and the indexes left over (a field whose value was an array)."""
    fields = sorted({s.field for s in stats})
    row = rows[0] if rows else {}
    arrays = {path for j, path in enumerate(fields) if row.get(f"a{j}") is True}
    answered: dict[int, StatsResult] = {}
    leftover: list[int] = []
    for i, stat in enumerate(stats):
        if stat.field in arrays:
            leftover.append(i)
            continue
        value = row.get(f"r{i}")
        if isinstance(value, MaxKey):
            value = None  # no value inside the fence
        branch = build_pipeline(stat.field, stat.operation, None, value_condition(stat.value_filter))
        answered[i] = stats_result(stat, collection, [{"r": value}] if value is not None else [], None, branch)
    return answered, leftover

