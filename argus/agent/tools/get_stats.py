"""``get_stats``: exact statistics of one field over the whole collection, computed by the server.

Value-level operations (min, max, avg, distinct, value_counts, duplicates) flatten arrays first,
so ``items.qty`` means every quantity in every order. ``count`` counts documents that have the field.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from bson.regex import Regex

from argus.agent.ejson import decode, encode
from argus.agent.errors import QueryRefused, QueryRejected
from argus.agent.tools.compat import facet_note, named_operators
from argus.agent.tools.guard import check_field_path, check_filter
from argus.agent.tools.guard_pipeline import check_pipeline
from argus.agent.tools.models import DISTINCT_CAP, DUPLICATES_CAP, GetStatsInput, StatsResult
from argus.agent.tools.target import AuditTarget

__all__ = ["build_pipeline", "duplicate_branches", "duplicates_rows", "get_stats", "stats_result", "value_condition"]


def value_condition(value_filter: dict[str, Any] | None) -> dict[str, Any] | None:
    """A ``value_filter`` as the condition on each value, decoded and checked: a document of operators
    (``{"$gt": 100}``). A bare regex (``{"$regex": "^a"}`` is one in Extended JSON) is ``{"$regex": ...}``;
    anything else that decodes to no document (a date, an id, a DBRef) is refused, naming the form."""
    if not value_filter:
        return None
    condition = decode(value_filter)
    if isinstance(condition, Regex | re.Pattern):
        condition = {"$regex": condition}
    if not isinstance(condition, Mapping) or not all(isinstance(k, str) and k.startswith("$") for k in condition):
        raise QueryRefused("value_filter must be a document of operators on each value, like {\"$gt\": 100} or "
                           "{\"$regex\": \"^A\"}; to compare with one value write {\"$eq\": ...}",
                           operator="value_filter")
    check_filter({"v": condition}, where="value_filter")
    return dict(condition)


def _values(field: str, query: dict[str, Any] | None, value_filter: dict[str, Any] | None) -> list[dict[str, Any]]:
    stages: list[dict[str, Any]] = []
    if query:
        stages.append({"$match": query})
    stages.append({"$project": {"_id": 0, "v": f"${field}"}})
    # $unwind of a non-array keeps it as one value, so one unwind per path segment flattens
    # arrays of objects (items.qty) and arrays of scalars alike.
    stages.extend({"$unwind": "$v"} for _ in field.split("."))
    stages.append({"$match": {"v": {"$ne": None, **(value_filter or {})}}})
    return stages


def build_pipeline(field: str, operation: str, query: dict[str, Any] | None,
                   value_filter: dict[str, Any] | None, limit: int | None = None) -> list[dict[str, Any]]:
    """The aggregation pipeline for one operation (decoded BSON values, guard not yet applied);
    ``limit``: how many values a distinct or value_counts lists (default ``DISTINCT_CAP``)."""
    cap = limit or DISTINCT_CAP
    if operation == "count":
        exists = {field: {"$exists": True}}
        match = {"$and": [query, exists]} if query else exists
        return [{"$match": match}, {"$count": "n"}]
    base = _values(field, query, value_filter)
    if operation in ("min", "max", "avg"):
        return [*base, {"$group": {"_id": None, "r": {f"${operation}": "$v"}}}]
    if operation == "distinct":
        return [*base, {"$group": {"_id": "$v"}}, {"$limit": cap + 1}]
    if operation == "value_counts":
        return [*base, {"$group": {"_id": "$v", "n": {"$sum": 1}}}, {"$sort": {"n": -1}},
                {"$limit": cap + 1}]
    if operation == "duplicates":
        top, totals = duplicate_branches(field, query, value_filter)
        shared = len(base) + 2
        return [*top[:shared], {"$facet": {"top": top[shared:], "totals": totals[shared:]}}]
    raise ValueError(f"unknown operation {operation!r}")


def duplicate_branches(field: str, query: dict[str, Any] | None,
                       value_filter: dict[str, Any] | None) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The two pipelines behind ``duplicates``: the most repeated values, and the totals. Kept
    apart so a caller that is already inside a ``$facet`` (which cannot nest) can run both."""
    repeated = [*_values(field, query, value_filter), {"$group": {"_id": "$v", "n": {"$sum": 1}}},
                {"$match": {"n": {"$gt": 1}}}]
    return ([*repeated, {"$sort": {"n": -1}}, {"$limit": DUPLICATES_CAP + 1}],
            [*repeated, {"$group": {"_id": None, "values": {"$sum": 1}, "documents": {"$sum": "$n"}}}])


def _sort_key(item: dict[str, Any]) -> tuple[int, str]:
    return (-int(item["count"]), json.dumps(item["value"], sort_keys=True))


def get_stats(target: AuditTarget, params: GetStatsInput) -> StatsResult:
    check_field_path(params.field)
    query = decode(params.filter) if params.filter else None
    value_filter = value_condition(params.value_filter)
    if query is not None:
        check_filter(query)
    pipeline = build_pipeline(params.field, params.operation, query, value_filter, params.limit)
    check_pipeline(pipeline)
    if params.operation == "duplicates":
        rows = duplicates_rows(target, params.field, query, value_filter, pipeline)
    else:
        rows = target.aggregate(pipeline)
    return stats_result(params, target.name, rows, query, pipeline)


def duplicates_rows(target: AuditTarget, field: str, query: dict[str, Any] | None, value_filter: dict[str, Any] | None,
                    pipeline: list[dict[str, Any]]) -> list[Any]:
    """The rows of ``duplicates``: its one pipeline (a ``$facet`` of two branches), or, on a server
    that refuses ``$facet`` or something inside it (a pattern, an operator it takes only outside
    ``$facet``), its two pipelines asked apart. A refusal of those too is the caller's."""
    if not target.refusals.refuses("$facet"):
        try:
            return target.aggregate(pipeline)
        except QueryRejected as exc:
            if "$facet" in named_operators(exc) and not named_operators(exc) - {"$facet"}:
                target.refusals.learn("$facet", facet_note(exc))
    top, totals = duplicate_branches(field, query, value_filter)
    return [{"top": target.aggregate(top), "totals": target.aggregate(totals)}]


def stats_result(params: GetStatsInput, collection: str, rows: list[Any], query: dict[str, Any] | None,
                 pipeline: list[dict[str, Any]]) -> StatsResult:
    """The result of one operation from the rows its pipeline returned (for duplicates, one
    document ``{"top": [...], "totals": [...]}``)."""
    capped = False
    totals: dict[str, int] | None = None
    value: Any
    op = params.operation
    cap = params.limit or DISTINCT_CAP
    if op == "count":
        value = int(rows[0]["n"]) if rows else 0
    elif op in ("min", "max", "avg"):
        value = encode(rows[0]["r"]) if rows else None
    elif op == "distinct":
        capped = len(rows) > cap
        value = sorted((encode(r["_id"]) for r in rows[:cap]), key=lambda v: json.dumps(v, sort_keys=True))
    elif op == "value_counts":
        capped = len(rows) > cap
        value = sorted(({"value": encode(r["_id"]), "count": int(r["n"])} for r in rows), key=_sort_key)
        value = value[:cap]
    else:  # duplicates
        facet = rows[0] if rows else {"top": [], "totals": []}
        top = facet.get("top", [])
        capped = len(top) > DUPLICATES_CAP
        value = sorted(({"value": encode(r["_id"]), "count": int(r["n"])} for r in top), key=_sort_key)
        value = value[:DUPLICATES_CAP]
        tot = facet.get("totals") or [{"values": 0, "documents": 0}]
        totals = {"values": int(tot[0]["values"]), "documents": int(tot[0]["documents"])}
    return StatsResult(
        collection=collection,
        field=params.field,
        operation=op,
        value=value,
        capped=capped,
        totals=totals,
        filter_used=encode(query) if query is not None else None,
        query_used=json.dumps(encode(pipeline), separators=(",", ":"))[:2000],
    )
