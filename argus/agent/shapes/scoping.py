"""Rules judged per shape: which paths belong to which shapes, the filter that keeps a check
inside them, and the counts the planner's first pass adds for the report (pure).

A path belongs to some shapes when at least half the sampled documents of each holds it and at
most a tenth of every other shape's do: its null-rate is then asked of those shapes only (``iban``
missing in 9 of 740 ``iban`` transfers, not in the 1,260 cards and cash payments that never carry
one). Shapes sampled fewer than ``MIN_SAMPLED`` times say nothing either way. A path whose
value a whole shape lacks is read as belonging to the others: a tagged union looks the same.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from bson import ObjectId

from argus.agent.ejson import decode, encode
from argus.agent.shapes.discover import SPECIFIC_IN, SPECIFIC_OUT
from argus.agent.shapes.models import Rename, ShapeCounts, Shapes
from argus.agent.tools.models import StatsResult

__all__ = ["MIN_SAMPLED", "Scope", "count_queries", "counted", "newest_stats", "rename_lead", "scopes", "with_newest"]

MIN_SAMPLED = 5
_ALIAS = {"number": "number", "string": "string", "object": "object", "array": "array", "bool": "bool",
          "date": "date", "objectId": "objectId", "binData": "binData", "null": "null"}


@dataclass(frozen=True)
class Scope:
    """The shapes a path belongs to, as a filter and in words."""

    within: dict[str, Any]
    label: str              # 'iban (by method)', or '#2 (by method)' when values are masked
    missing_share: float    # sampled share of those shapes' documents without a value


def _within(discriminator: str, values: list[Any]) -> dict[str, Any]:
    return {discriminator: values[0] if len(values) == 1 else {"$in": values}}


def scopes(shapes: Shapes | None, named: Shapes | None = None) -> dict[str, Scope]:
    """Per path that belongs to some shapes but not all, its scope. ``named``: the same shapes with
    the labels the privacy mode allows (``argus.agent.shapes.privacy``)."""
    if shapes is None or shapes.discriminator is None:
        return {}
    disc = shapes.discriminator
    labels = [s.label for s in (named or shapes).shapes]
    judged = [(s, label) for s, label in zip(shapes.shapes, labels, strict=True) if s.sampled >= MIN_SAMPLED]
    if len(judged) < 2:
        return {}
    paths = sorted({p.path for s, _ in judged for p in s.paths})
    out: dict[str, Scope] = {}
    for path in paths:
        if path == disc or path.startswith(disc + "."):
            continue
        presence = [(s, label, next((p.presence for p in s.paths if p.path == path), 0.0)) for s, label in judged]
        holders = [(s, label, p) for s, label, p in presence if p >= SPECIFIC_IN]
        if not holders or len(holders) == len(judged):
            continue
        if any(SPECIFIC_OUT < p < SPECIFIC_IN for _, _, p in presence):
            continue  # held by some shapes' documents in part: no clean line to judge by
        sampled = sum(s.sampled for s, _, _ in holders)
        missing = 1 - sum(s.sampled * p for s, _, p in holders) / sampled
        names = ", ".join(label for _, label, _ in holders)
        out[path] = Scope(within=_within(disc, [s.value for s, _, _ in holders]), label=f"{names} (by {disc})",
                          missing_share=missing)
    return out


def count_queries(shapes: Shapes | None) -> list[dict[str, Any]]:
    """What the first pass counts for the report: each shape's documents, each form of a type mix."""
    if shapes is None:
        return []
    out = [{shapes.discriminator: s.value} for s in shapes.shapes if shapes.discriminator is not None]
    for mix in shapes.mixes:
        out += [{mix.path: {"$type": _ALIAS[t]}} for t in mix.sampled if t in _ALIAS and t != "null"]
    return out


def counted(shapes: Shapes | None, count: Callable[[dict[str, Any]], int | None]) -> ShapeCounts | None:
    """The first pass's exact counts of ``shapes`` (``count(query)``: None when not counted)."""
    if shapes is None:
        return None
    disc = shapes.discriminator
    found = [count({disc: s.value}) for s in shapes.shapes] if disc is not None else [None for _ in shapes.shapes]
    mixes: list[dict[str, int] | None] = []
    for mix in shapes.mixes:
        numbers = {t: count({mix.path: {"$type": _ALIAS[t]}}) for t in mix.sampled if t in _ALIAS and t != "null"}
        exact = {t: n for t, n in numbers.items() if n is not None}
        mixes.append(exact if len(exact) == len(numbers) else None)
    return ShapeCounts(shapes=found, mixes=mixes)


def newest_stats(shapes: Shapes | None) -> list[dict[str, Any]]:
    """Statistics for the second pass: the newest ``_id`` holding each form of a type mix, when
    the sampled documents' ``_id`` are ObjectIds (their time is when they were written)."""
    if shapes is None:
        return []
    return [{"field": "_id", "operation": "max", "filter": encode({mix.path: {"$type": _ALIAS[t]}})}
            for mix in shapes.mixes if mix.last_written for t in mix.sampled if t in _ALIAS and t != "null"]


def with_newest(counts: ShapeCounts | None, shapes: Shapes | None, results: list[StatsResult]) -> ShapeCounts | None:
    """``counts`` with the times ``newest_stats`` measured (``results`` in their order)."""
    if counts is None or shapes is None:
        return counts
    found = iter(results)
    newest: list[dict[str, datetime]] = []
    for mix in shapes.mixes:
        times: dict[str, datetime] = {}
        for t in (t for t in mix.sampled if t in _ALIAS and t != "null") if mix.last_written else ():
            result = next(found, None)
            value = decode(result.value) if result is not None and result.error is None else None
            if isinstance(value, ObjectId):
                times[t] = value.generation_time.astimezone(UTC)
        newest.append(times)
    return counts.model_copy(update={"newest": newest})


def rename_lead(rename: Rename) -> str:
    when = f" around {_day(rename.boundary)}" if rename.boundary is not None else ""
    return f"{rename.old} was renamed {rename.new}{when}"


def _day(at: datetime) -> str:
    return f"{at:%Y-%m-%d}"
