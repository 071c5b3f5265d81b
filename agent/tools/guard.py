"""The read-only guard: every filter, projection and pipeline passes here before pymongo sees it.

It is an allow-list, not a deny-list: an operator that is not named below is refused, so a new
server operator cannot slip through. ``$where``, ``$function``, ``$accumulator`` (server-side
JavaScript), ``$out``, ``$merge`` (writes) and ``$lookup``/``$unionWith`` (reads outside the
audited collection) are refused with a message naming them. ``$expr`` is allowed, with its own
allow-list of expression operators.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from agent.errors import QueryRefused

__all__ = [
    "EXPRESSION_OPERATORS",
    "PIPELINE_STAGES",
    "QUERY_OPERATORS",
    "check_field_path",
    "check_filter",
    "check_pipeline",
    "check_projection",
    "filter_fields",
]

MAX_DEPTH = 32

QUERY_OPERATORS = frozenset({
    "$eq", "$ne", "$gt", "$gte", "$lt", "$lte", "$in", "$nin",
    "$and", "$or", "$nor", "$not",
    "$exists", "$type", "$regex", "$options", "$size", "$all", "$elemMatch", "$mod",
    "$expr", "$comment",
})

EXPRESSION_OPERATORS = frozenset({
    "$eq", "$ne", "$gt", "$gte", "$lt", "$lte", "$cmp", "$and", "$or", "$not", "$in",
    "$cond", "$ifNull", "$switch", "$literal", "$type", "$isNumber", "$isArray",
    "$size", "$arrayElemAt", "$first", "$last", "$strLenCP", "$strLenBytes", "$toLower",
    "$toUpper", "$trim", "$ltrim", "$rtrim", "$concat", "$substrCP", "$regexMatch", "$split",
    "$abs", "$add", "$subtract", "$multiply", "$divide", "$mod", "$floor", "$ceil", "$round",
    "$sum", "$avg", "$min", "$max", "$count",
    "$year", "$month", "$dayOfMonth", "$hour", "$dateToString",
    "$toString", "$toDouble", "$toInt", "$toLong", "$toDate", "$convert",
})

# Named so refusals can say why, not only that; anything else unlisted is refused as unknown.
_REFUSED_REASONS = {
    "$where": "runs JavaScript on the server",
    "$function": "runs JavaScript on the server",
    "$accumulator": "runs JavaScript on the server",
    "$out": "writes to a collection",
    "$merge": "writes to a collection",
    "$lookup": "reads another collection",
    "$graphLookup": "reads another collection",
    "$unionWith": "reads another collection",
    "$currentOp": "reads server state",
    "$listSessions": "reads server state",
    "$collStats": "reads server state",
    "$indexStats": "reads server state",
    "$planCacheStats": "reads server state",
}

PIPELINE_STAGES = frozenset({
    "$match", "$group", "$sort", "$limit", "$skip", "$project", "$count", "$sample",
    "$unwind", "$facet", "$addFields", "$sortByCount",
})

_SEGMENT = re.compile(r"^[^$.\x00][^.\x00]*$")


def _refuse(operator: str, where: str) -> QueryRefused:
    reason = _REFUSED_REASONS.get(operator)
    if reason:
        return QueryRefused(f"operator {operator} is refused in {where}: it {reason}; Argus is read-only",
                            operator=operator)
    return QueryRefused(f"operator {operator} is not on the read-only allow-list for {where}", operator=operator)


def check_field_path(path: str) -> None:
    """A queryable dot-notation path: no empty segment, no ``$``-prefixed segment, no NUL."""
    if not isinstance(path, str) or not path or not all(_SEGMENT.match(s) for s in path.split(".")):
        raise QueryRefused(f"field path {path!r} is not a plain dot-notation path")


def check_filter(query: Any, *, where: str = "a filter") -> None:
    """Refuse any query document that uses an operator outside ``QUERY_OPERATORS``."""
    if not isinstance(query, Mapping):
        raise QueryRefused(f"{where} must be a document, not {type(query).__name__}")
    _check_query_doc(query, where, depth=0)


def _check_query_doc(doc: Mapping[str, Any], where: str, depth: int) -> None:
    if depth > MAX_DEPTH:
        raise QueryRefused(f"{where} is nested deeper than {MAX_DEPTH} levels")
    for key, value in doc.items():
        if not isinstance(key, str):
            raise QueryRefused(f"{where} has a non-string key")
        if key.startswith("$"):
            if key not in QUERY_OPERATORS:
                raise _refuse(key, where)
            _check_operator_value(key, value, where, depth)
        else:
            _check_condition(value, where, depth)


def _check_condition(value: Any, where: str, depth: int) -> None:
    """A field's condition: a literal, or a document of operators (``{"$gt": 3}``)."""
    if isinstance(value, Mapping) and any(isinstance(k, str) and k.startswith("$") for k in value):
        for op, arg in value.items():
            if not (isinstance(op, str) and op.startswith("$")):
                raise QueryRefused(f"{where} mixes operators and field names in one condition")
            if op not in QUERY_OPERATORS:
                raise _refuse(op, where)
            _check_operator_value(op, arg, where, depth)
    else:
        _check_literal(value, where, depth)


def _check_operator_value(op: str, value: Any, where: str, depth: int) -> None:
    if op in ("$and", "$or", "$nor"):
        if not isinstance(value, list) or not value:
            raise QueryRefused(f"{op} in {where} needs a non-empty list of documents")
        for clause in value:
            if not isinstance(clause, Mapping):
                raise QueryRefused(f"{op} in {where} needs a list of documents")
            _check_query_doc(clause, where, depth + 1)
    elif op == "$not":
        if isinstance(value, Mapping):
            _check_condition(value, where, depth + 1)
        else:
            _check_literal(value, where, depth + 1)
    elif op == "$elemMatch":
        if not isinstance(value, Mapping):
            raise QueryRefused(f"$elemMatch in {where} needs a document")
        if all(isinstance(k, str) and k.startswith("$") for k in value):
            _check_condition(value, where, depth + 1)
        else:
            _check_query_doc(value, where, depth + 1)
    elif op == "$expr":
        check_expression(value, where=f"$expr in {where}", depth=depth + 1)
    else:
        _check_literal(value, where, depth + 1)


def _check_literal(value: Any, where: str, depth: int) -> None:
    """Literal values may be documents, but never hide an operator inside them."""
    if depth > MAX_DEPTH:
        raise QueryRefused(f"{where} is nested deeper than {MAX_DEPTH} levels")
    if isinstance(value, Mapping):
        for key, item in value.items():
            if isinstance(key, str) and key.startswith("$"):
                raise _refuse(key, where)
            _check_literal(item, where, depth + 1)
    elif isinstance(value, list | tuple):
        for item in value:
            _check_literal(item, where, depth + 1)


def check_expression(expr: Any, *, where: str = "an expression", depth: int = 0) -> None:
    """Refuse aggregation expressions using operators outside ``EXPRESSION_OPERATORS``."""
    if depth > MAX_DEPTH:
        raise QueryRefused(f"{where} is nested deeper than {MAX_DEPTH} levels")
    if isinstance(expr, Mapping):
        for key, value in expr.items():
            if isinstance(key, str) and key.startswith("$"):
                if key not in EXPRESSION_OPERATORS:
                    raise _refuse(key, where)
                if key == "$literal":
                    continue
            check_expression(value, where=where, depth=depth + 1)
    elif isinstance(expr, list | tuple):
        for item in expr:
            check_expression(item, where=where, depth=depth + 1)


def check_projection(projection: Any) -> None:
    """Only plain inclusion or exclusion of plain paths: ``{"a.b": 1, "_id": 0}``."""
    if projection is None:
        return
    if not isinstance(projection, Mapping):
        raise QueryRefused("a projection must be a document of path: 0 or 1")
    for path, flag in projection.items():
        check_field_path(path)
        if isinstance(flag, bool) or flag in (0, 1):
            continue
        raise QueryRefused(f"projection of {path!r} must be 0 or 1; computed projections are refused")


def check_pipeline(pipeline: Any, *, depth: int = 0) -> None:
    """Refuse any pipeline with a stage outside ``PIPELINE_STAGES`` or a refused operator inside."""
    where = "a pipeline"
    if not isinstance(pipeline, list):
        raise QueryRefused("a pipeline must be a list of stages")
    for stage in pipeline:
        if not isinstance(stage, Mapping) or len(stage) != 1:
            raise QueryRefused("each pipeline stage must be a document with exactly one stage operator")
        (name, body), = stage.items()
        if name not in PIPELINE_STAGES:
            raise _refuse(name, where)
        if name == "$match":
            check_filter(body, where="a $match stage")
        elif name == "$facet":
            if not isinstance(body, Mapping):
                raise QueryRefused("$facet needs a document of sub-pipelines")
            for sub in body.values():
                check_pipeline(sub, depth=depth + 1)
        elif name in ("$limit", "$skip", "$count"):
            continue
        elif name == "$sample":
            if not isinstance(body, Mapping) or set(body) != {"size"}:
                raise QueryRefused("$sample needs exactly {size: N}")
        elif name == "$sort":
            if not isinstance(body, Mapping):
                raise QueryRefused("$sort needs a document")
            for path in body:
                check_field_path(path)
        else:  # $group, $project, $unwind, $addFields, $sortByCount hold expressions
            check_expression(body, where=f"a {name} stage", depth=depth + 1)


def filter_fields(query: Mapping[str, Any], prefix: str = "") -> set[str]:
    """Field paths a (guard-checked) filter reads: ``{"$or": [{"a": 1}, {"b.c": {"$gt": 2}}]}`` → {a, b.c}."""
    found: set[str] = set()
    for key, value in query.items():
        if key in ("$and", "$or", "$nor") and isinstance(value, list):
            for clause in value:
                if isinstance(clause, Mapping):
                    found |= filter_fields(clause, prefix)
        elif not key.startswith("$"):
            path = prefix + key
            found.add(path)
            if isinstance(value, Mapping) and isinstance(value.get("$elemMatch"), Mapping):
                inner = value["$elemMatch"]
                if not all(str(k).startswith("$") for k in inner):
                    found |= filter_fields(inner, path + ".")
    return found
