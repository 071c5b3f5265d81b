"""``count_many``: many exact counts, examples and field statistics in one pass over the collection.

One ``aggregate`` with a single ``$facet`` stage: each counted filter is a ``[$match, $count]``
branch, so its count uses the query language exactly as ``count_documents`` does (pymongo's
``count_documents`` is itself ``$match`` then a sum): nulls, missing fields and arrays behave the
same, and each filter is on its own a standalone evidence query reproducing its count. Examples
are ``[$match, $limit, $project]`` branches; statistics are the ``get_stats`` pipelines. The
server reads the collection once, whatever the number of branches. A batch of counts alone is
preceded by the ``$or`` of its filters (every count stays exact: a document one filter matches
also matches the ``$or``), so the branches see only the suspect documents. ``$facet`` runs on MongoDB
3.4+, Azure Cosmos DB for MongoDB (RU, 4.2+ API; vCore) and mongomock.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

import structlog
from bson.regex import Regex

from agent.ejson import decode, encode
from agent.errors import QueryRefused, QueryRejected
from agent.tools.get_stats import build_pipeline, duplicate_branches, stats_result, value_condition
from agent.tools.guard import check_field_path, check_filter, check_pipeline, check_projection
from agent.tools.models import CountedQuery, CountManyInput, CountManyResult, CountQuery, GetStatsInput, StatsResult
from agent.tools.target import AuditTarget

__all__ = ["ISOLATION_PASSES", "count_many", "count_many_pipeline"]

ISOLATION_PASSES = 16   # reads spent, at most, finding the checks of a batch the engine refuses
log = structlog.get_logger(__name__)


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
        return list(duplicate_branches(params.field, query, value_filter))
    return [build_pipeline(params.field, params.operation, query, value_filter)]


def count_many_pipeline(params: CountManyInput) -> tuple[list[dict[str, Any]], list[Any]]:
    """The one-stage pipeline for ``params`` (guard-checked), and the decoded filters it counts."""
    facet: dict[str, list[dict[str, Any]]] = {}
    filters: list[Any] = []
    for i, item in enumerate(params.queries):
        query = decode(item.filter)
        check_filter(query)
        _check_patterns(query)
        filters.append(query)
        facet[f"q{i}"] = [{"$match": query}, {"$count": "n"}]
        if item.examples_of is not None:
            projection = {item.examples_of: 1, "_id": 0}
            check_field_path(item.examples_of)
            check_projection(projection)
            facet[f"e{i}"] = [{"$match": query}, {"$limit": item.examples}, {"$project": projection}]
    for i, stat in enumerate(params.stats):
        check_field_path(stat.field)
        query = decode(stat.filter) if stat.filter else None
        value_filter = value_condition(stat.value_filter)
        if query is not None:
            check_filter(query)
            _check_patterns(query)
        if value_filter is not None:
            _check_patterns(value_filter)
        for j, branch in enumerate(_stats_branches(stat, query, value_filter)):
            facet[f"s{i}_{j}"] = branch
    pipeline = [{"$facet": facet}] if facet else []
    if filters and not params.stats:
        # Only documents some filter matches can change a count or be an example: the rest
        # are dropped before the branches, so each branch scans the few suspects, not the collection.
        pipeline.insert(0, {"$match": filters[0] if len(filters) == 1 else {"$or": filters}})
    check_pipeline(pipeline)
    return pipeline, filters


def count_many(target: AuditTarget, params: CountManyInput) -> CountManyResult:
    """Count every filter of ``params.queries`` and compute every ``params.stats`` in one pass.

    When the engine refuses the batch (an operator or a BSON type it does not support), the
    batch is split in halves until the refused items stand alone, so one unsupported check costs
    its own answer, not every other one's: those items come back with ``error`` set. Finding them
    takes at most ``ISOLATION_PASSES`` more reads; past that the refusal is raised."""
    pipeline, filters = count_many_pipeline(params)
    try:
        return _counted(target, params, pipeline, filters)
    except QueryRejected:
        if len(params.queries) + len(params.stats) <= 1:
            raise
    budget = [ISOLATION_PASSES]
    counts, stats = _isolated(target, params, budget)
    log.warning("batch_items_rejected", queries=sum(c.error is not None for c in counts),
                stats=sum(s.error is not None for s in stats), passes=ISOLATION_PASSES - budget[0])
    return CountManyResult(collection=target.name, counts=counts, stats=stats,
                           query_used=json.dumps(encode(pipeline), separators=(",", ":"))[:2000])


def _isolated(target: AuditTarget, params: CountManyInput,
              budget: list[int]) -> tuple[list[CountedQuery], list[StatsResult]]:
    items: list[CountQuery | GetStatsInput] = [*params.queries, *params.stats]
    if len(items) == 1:
        error = "refused by the database engine when run alone"
        if params.queries:
            return [CountedQuery(filter=params.queries[0].filter, matched_count=0, error=error)], []
        stat = params.stats[0]
        return [], [StatsResult(collection=target.name, field=stat.field, operation=stat.operation, value=None,
                                error=error, query_used="")]
    counts: list[CountedQuery] = []
    stats: list[StatsResult] = []
    for half in (items[:len(items) // 2], items[len(items) // 2:]):
        part = CountManyInput(queries=[i for i in half if isinstance(i, CountQuery)],
                              stats=[i for i in half if isinstance(i, GetStatsInput)])
        if budget[0] <= 0:
            raise QueryRejected("count_many was refused by the database engine, and isolating the refused "
                                f"checks took more than {ISOLATION_PASSES} reads")
        budget[0] -= 1
        try:
            done = _counted(target, part, *count_many_pipeline(part))
            more_counts, more_stats = done.counts, done.stats
        except QueryRejected:
            more_counts, more_stats = _isolated(target, part, budget)
        counts += more_counts
        stats += more_stats
    return counts, stats


def _counted(target: AuditTarget, params: CountManyInput, pipeline: list[dict[str, Any]],
             filters: list[Any]) -> CountManyResult:
    rows = target.aggregate(pipeline) if pipeline else []
    out: dict[str, list[Any]] = rows[0] if rows else {}
    counts = []
    for i, query in enumerate(filters):
        counted = out.get(f"q{i}") or []
        documents = out.get(f"e{i}") or []
        counts.append(CountedQuery(filter=encode(query), matched_count=int(counted[0]["n"]) if counted else 0,
                                   documents=[encode(d) for d in documents]))
    stats = []
    for i, stat in enumerate(params.stats):
        query = decode(stat.filter) if stat.filter else None
        if stat.operation == "duplicates":
            rows_for = [{"top": out.get(f"s{i}_0") or [], "totals": out.get(f"s{i}_1") or []}]
        else:
            rows_for = out.get(f"s{i}_0") or []
        branch = build_pipeline(stat.field, stat.operation, query, value_condition(stat.value_filter))
        stats.append(stats_result(stat, target.name, rows_for, query, branch))
    return CountManyResult(collection=target.name, counts=counts, stats=stats,
                           query_used=json.dumps(encode(pipeline), separators=(",", ":"))[:2000])
