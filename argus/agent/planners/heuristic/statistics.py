"""The statistics pass: server-side statistics (value counts, duplicates, values near a fence)
turned into checks whose exact counts decide them.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from argus.agent.ejson import decode
from argus.agent.findings import Category
from argus.agent.planners.heuristic.keys import KeyPlan, verdict
from argus.agent.planners.heuristic.plan import Check, Plan, Probe, any_of, beyond_fence, outlier_why
from argus.agent.planners.heuristic.ranges import Fence, detached
from argus.agent.planners.heuristic.sets import breaks, moved_values, outside_values
from argus.agent.planners.heuristic.text import enum_violations
from argus.agent.tools.models import StatsResult

__all__ = ["duplicate_check", "from_statistics"]

_DECLARED_KEY = KeyPlan(cap=1.0)  # a duplicates probe no inference made: the field is a key whatever the share


def _scalar(value: Any) -> float | None:
    """A min/max result as a number (dates as epoch seconds)."""
    if value is None:
        return None
    if isinstance(value, dict) and "$date" in value:
        d = decode(value)
        return d.timestamp() if isinstance(d, datetime) else None
    if isinstance(value, dict) and "$numberDecimal" in value:
        try:
            return float(value["$numberDecimal"])
        except ValueError:
            return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def from_statistics(plan: Plan, probes: list[Probe], stats: list[StatsResult], size: int) -> list[Check]:
    out: list[Check] = []
    fences: dict[tuple[str, str, float], dict[str, Any]] = {}
    moved: dict[str, tuple[dict[str, Any], str]] = {}  # per number field: its set's moved values, and why
    unanswered: set[tuple[str, str, float]] = set()  # fences a statistic of which went unanswered
    for probe, result in zip(probes, stats, strict=True):
        if result.error is not None:  # refused or timed out: no verdict either way
            if probe.fence is not None:  # nor on its fence: no answer is not "no value inside"
                unanswered.add((probe.path, probe.fence.side, probe.fence.at))
            continue
        check = None
        if probe.kind == "enum":
            check = _enum_check(probe.path, result)
        elif probe.kind == "number_set":
            rules = [rule[probe.path] for rule in plan.outliers.get(probe.path, ([], [], False))[0]]
            clause = _moved_clause(probe.path, result, rules)
            if clause is not None:
                moved[probe.path] = clause
        elif probe.kind == "duplicates":
            check = duplicate_check(probe, result, size)
        else:
            assert probe.fence is not None
            key = (probe.path, probe.fence.side, probe.fence.at)
            fences.setdefault(key, {"fence": probe.fence})[probe.kind] = result.value
        if check is not None:
            out.append(check)
    verified: dict[str, list[Fence]] = {}
    innermost: dict[tuple[str, str], Fence] = {}  # of the fences at which a gap was found, per side
    for (path, side, at), found in sorted(fences.items()):
        if (path, side, at) in unanswered:
            continue
        fence: Fence = found["fence"]
        if detached(fence, _scalar(found.get("fence_in")), _scalar(found.get("fence_out"))):
            best = innermost.get((path, side))
            if best is None or (at < best.at if side == "above" else at > best.at):
                innermost[(path, side)] = fence
    for (path, _), fence in sorted(innermost.items()):
        verified.setdefault(path, []).append(fence)
    for path in sorted(set(verified) | set(moved)):
        sides = verified.get(path, [])
        hard, reasons, dates = plan.outliers[path]
        clauses = list(hard) + [{path: beyond_fence(fence, dates)} for fence in sides]
        why = reasons + [_fence_reason(fence) for fence in sides]
        if path in moved:
            clauses.append(moved[path][0])
            why.append(moved[path][1])
        out.insert(0, Check(path, Category.OUTLIER_VALUE, any_of(clauses),
                             description=f"have an implausible {path} ({'; '.join(why)})",
                             hypothesis=outlier_why(dates)))
    return out


def _moved_clause(path: str, result: StatsResult, rules: list[dict[str, Any]]) -> tuple[dict[str, Any], str] | None:
    """The values of a number field's set moved by a power of ten, or outside it (but for those the
    field's range ``rules`` already report), from its exact value counts."""
    if result.capped or not isinstance(result.value, list):
        return None
    counts = [(float(item["value"]), int(item["count"])) for item in result.value
              if isinstance(item["value"], int | float) and not isinstance(item["value"], bool)]
    found = moved_values(counts)
    outside = [v for v in outside_values(counts) if (found is None or v not in found.values)
               and not any(breaks(rule, v) for rule in rules)]
    values, why = list(outside), (["a rare value outside the set of the field's few others"] if outside else [])
    if found is not None:
        times = f"{10 ** abs(found.shift):,}"
        size = f"{times} times" if found.shift > 0 else f"1/{times} of"
        values += found.values
        why.insert(0, f"{size} a value of the field's few others "
                      "(one unit written as another: a percent for a fraction)")
    return ({path: {"$in": sorted(values)}}, "; ".join(why)) if values else None


def _fence_reason(fence: Fence) -> str:
    if fence.future:
        return "in the future, apart from every earlier value"
    if not fence.shift:
        return f"far {fence.side} every other value"
    times = f"{10 ** abs(fence.shift):,}"
    return (f"about {times} times the other values" if fence.shift > 0 else f"about 1/{times} of the other values") \
        + " (one unit written as another: a percent for a fraction, cents for units)"


def _enum_check(path: str, result: StatsResult) -> Check | None:
    if result.capped or not isinstance(result.value, list):
        return None
    counts = [(item["value"], item["count"]) for item in result.value if isinstance(item["value"], str)]
    bad = enum_violations(counts, path=path)
    if not bad:
        return None
    reasons = sorted(set(bad.values()))
    return Check(path, Category.ENUM_VIOLATION, {path: {"$in": sorted(bad)}},
                  description=f"hold one of {len(bad)} values outside the field's usual set ({', '.join(reasons)})",
                  hypothesis="values typed by hand or written by a client with its own spelling")


def duplicate_check(probe: Probe, result: StatsResult, size: int) -> Check | None:
    """A probe without a ``KeyPlan`` (a key declared elsewhere, not inferred) is a key at any share."""
    if not result.totals or result.totals["values"] == 0 or not isinstance(result.value, list):
        return None
    key = probe.key or _DECLARED_KEY
    documents, values = result.totals["documents"], result.totals["values"]
    if not verdict(key, documents=documents, values=values, size=size):
        return None  # so common the field is no key, however unique the sample looked, or chance explains them
    shared = sorted((item["value"] for item in result.value), key=lambda v: str(v))
    listed = "" if len(shared) == values else f"; the {len(shared):,} most repeated are counted here"
    return Check(probe.path, Category.DUPLICATE_VALUE, {probe.path: {"$in": [decode(v) for v in shared]}},
                  description=f"share their {probe.path} with another document ({values:,} "
                              f"values used more than once{listed})",
                  hypothesis="a retry or a merge wrote the same record twice", identifier=key.identifier)
