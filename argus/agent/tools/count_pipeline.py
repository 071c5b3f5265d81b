"""The one ``aggregate`` ``count_many`` sends: a ``$facet`` of ``[$match, $count]`` branches, examples and
statistics, narrowed by the ``$or`` of its filters where every count stays exact (see ``count_many``), and
the check that no pattern in it is too costly for a server to run.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from bson.regex import Regex

from argus.agent.ejson import decode
from argus.agent.errors import QueryRefused
from argus.agent.segments.passes import SegmentPass
from argus.agent.tools.compat import operators_in
from argus.agent.tools.get_stats import (
    build_pipeline,
    duplicate_branches,
    value_condition,
)
from argus.agent.tools.group_stats import group_pipeline
from argus.agent.tools.guard import check_field_path, check_filter, filter_fields
from argus.agent.tools.guard_pipeline import check_pipeline, check_projection
from argus.agent.tools.models import (
    CountManyInput,
    CountQuery,
    GetStatsInput,
)

__all__ = ["count_many_pipeline", "examples_projection"]

_WHOLE_DOCUMENT = frozenset({"$expr", "$where", "$jsonSchema", "$text"})  # filters that read more than their paths


def _check_patterns(query: Any) -> None:
    """Refuse a ``$regex`` the engine would reject (``^+[0-9]``) before it is sent, naming it."""
    pattern = query.pattern if isinstance(query, Regex) else query.get("$regex") \
        if isinstance(query, Mapping) else None
    if isinstance(pattern, bytes):
        pattern = pattern.decode("utf-8", "replace")
    if isinstance(pattern, str):
        try:
            re.compile(pattern)
        except re.error as exc:
            raise QueryRefused(f"$regex {pattern[:60]!r} is not a valid pattern ({exc.msg})") from exc
    if isinstance(query, Mapping):
        for value in query.values():
            _check_patterns(value)
    elif isinstance(query, list | tuple):
        for item in query:
            _check_patterns(item)


def _stats_branches(params: GetStatsInput, query: dict[str, Any] | None,
                    value_filter: dict[str, Any] | None) -> list[list[dict[str, Any]]]:
    if params.operation == "duplicates":
        # Only the repeated values: their totals are those rows' own unless more than DUPLICATES_CAP came
        # back (then the totals are asked alone, ``count_many._duplicate_totals``). A branch is a scan of its own.
        return [duplicate_branches(params.field, query, value_filter)[0]]
    return [build_pipeline(params.field, params.operation, query, value_filter, params.limit)]


def _narrowing(params: CountManyInput, filters: list[Any], stat_filters: list[Any],
               segments: SegmentPass | None, grouped: set[str]) -> dict[str, int] | None:
    """The paths every branch of a batch with statistics reads, to project before its ``$facet``: each
    branch then reads a narrow document, not the whole one (on DocumentDB a branch costs by the bytes it
    reads: half as much over products' 150 fields). None when a filter reads what paths cannot name
    (``$expr``, ``$where``, ``$jsonSchema``, ``$text``) or a path names an array position, and for a
    run with segments (its groups read the segment's fields and the null-counted ones)."""
    if segments is not None:
        return None
    paths: set[str] = {s.field for s in params.stats} | grouped
    paths |= {q.examples_of for q in params.queries if q.examples_of is not None}
    if any(q.failing for q in params.queries if q.examples_of is not None):
        paths.add("_id")  # the failing documents are named by their _id
    for query in [*filters, *stat_filters]:
        if query is None:
            continue
        if operators_in(query) & _WHOLE_DOCUMENT:
            return None
        paths |= filter_fields(query)
    if any(part.isdigit() for path in paths for part in path.split(".")):
        return None
    kept = sorted(p for p in paths if not any(p.startswith(q + ".") for q in paths))
    projection = {path: 1 for path in kept}
    if "_id" not in projection:
        projection["_id"] = 0
    return projection


def count_many_pipeline(params: CountManyInput, segments: SegmentPass | None = None, *,
                        totals: bool = False,
                        group: list[GetStatsInput] | None = None) -> tuple[list[dict[str, Any]], list[Any]]:
    """The one-stage pipeline for ``params`` (guard-checked), and the decoded filters it counts.
    ``segments``: each filter's documents are also grouped by segment, in the same ``$facet``;
    ``totals``: so are the collection's documents and nulls (``argus.agent.segments.passes``);
    ``group``: min/max statistics in one ``$group`` (``argus.agent.tools.group_stats``), branch ``grp``."""
    facet: dict[str, list[dict[str, Any]]] = {}
    filters: list[Any] = []
    for i, item in enumerate(params.queries):
        query = decode(item.filter)
        check_filter(query)
        _check_patterns(query)
        filters.append(query)
        facet[f"q{i}"] = [{"$match": query}, {"$count": "n"}]
        if segments is not None:
            facet[f"g{i}"] = segments.branch(query)
        if item.examples_of is not None:
            projection = examples_projection(item)
            check_field_path(item.examples_of)
            check_projection(projection)
            facet[f"e{i}"] = [{"$match": query}, {"$limit": max(item.examples, item.failing)},
                              {"$project": projection}]
    stat_filters = []
    for i, stat in enumerate(params.stats):
        check_field_path(stat.field)
        query = decode(stat.filter) if stat.filter else None
        value_filter = value_condition(stat.value_filter)
        if query is not None:
            check_filter(query)
            _check_patterns(query)
        if value_filter is not None:
            _check_patterns(value_filter)
        stat_filters.append(query)
        for j, branch in enumerate(_stats_branches(stat, query, value_filter)):
            facet[f"s{i}_{j}"] = branch
    totals = totals and segments is not None and bool(facet)
    if totals and segments is not None:
        facet.update(segments.totals_branches())
    if group:
        facet["grp"] = group_pipeline(group)
    pipeline: list[dict[str, Any]] = [{"$facet": facet}] if facet else []
    narrow = _narrowing(params, filters, stat_filters, segments, {s.field for s in group or []}) \
        if params.stats or group else None
    if narrow is not None:
        pipeline.insert(0, {"$project": narrow})
    if filters and not params.stats and not totals and not group:
        # Only documents some filter matches can change a count or be an example: the rest
        # are dropped before the branches, so each branch scans the few suspects, not the collection.
        pipeline.insert(0, {"$match": filters[0] if len(filters) == 1 else {"$or": filters}})
    check_pipeline(pipeline)
    return pipeline, filters


def examples_projection(item: CountQuery) -> dict[str, Any]:
    """The examples branch's projection: the field, and ``_id`` when failing documents are asked for
    (one branch serves both: the failing documents cost no pass and no branch of their own)."""
    if item.examples_of == "_id":
        return {"_id": 1}
    return {item.examples_of or "_id": 1, "_id": 1 if item.failing else 0}
