"""The read-only guard: every filter, projection and pipeline passes here (pipelines and projections in
``guard_pipeline``) before pymongo sees it.

It is an allow-list, not a deny-list: an operator that is not named below is refused, so a new
server operator cannot slip through. ``$where``, ``$function``, ``$accumulator`` (server-side
JavaScript), ``$out``, ``$merge`` (writes) and ``$lookup``/``$unionWith`` (reads outside the
audited collection) are refused with a message naming them. ``$expr`` is allowed, with its own
allow-list of expression operators.

The guard judges what goes on the wire, not what a Python object looks like: each entry point
first walks the value without recursion (``wire_view``), refusing anything nested deeper than
``MAX_DEPTH`` or larger than ``MAX_VALUES``, refusing JavaScript (``Code``, ``$code``) and every
type that is not plain data, and turning a ``DBRef`` into the document BSON sends for it
(``{"$ref", "$id", "$db", ...}``) so an operator hidden among its fields is seen and refused.
What BSON cannot carry is refused there too, before any driver encodes it: an integer beyond
int64, a NUL in a key or a pattern, a string that is not valid Unicode, and (as a last check)
anything else ``bson.encode`` would raise on, or a query past MongoDB's 16 MiB document limit.
Regular expressions are checked for catastrophic backtracking (``regex_cost``). Operators must
stand where the server reads them: a field condition (``$type``) at the top of a filter, or a
logical operator (``$or``) under a field, is refused with the form to write instead.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Mapping
from datetime import datetime
from typing import Any

import bson
from bson import Binary, Code, Decimal128, Int64, MaxKey, MinKey, ObjectId, Regex, Timestamp
from bson.datetime_ms import DatetimeMS
from bson.dbref import DBRef
from bson.errors import BSONError

from argus.agent.errors import QueryRefused
from argus.agent.tools.regex_cost import regex_problem

__all__ = [
    "EXPRESSION_OPERATORS",
    "MAX_BSON_BYTES",
    "MAX_DEPTH",
    "MAX_VALUES",
    "PIPELINE_STAGES",
    "QUERY_OPERATORS",
    "check_expression",
    "check_field_path",
    "check_filter",
    "filter_fields",
]

MAX_DEPTH = 32
MAX_VALUES = 100_000
MAX_BSON_BYTES = 16 * 1024 * 1024  # MongoDB's document limit, which a command's query must fit in
_INT64 = (-(2 ** 63), 2 ** 63 - 1)

QUERY_OPERATORS = frozenset({
    "$eq", "$ne", "$gt", "$gte", "$lt", "$lte", "$in", "$nin",
    "$and", "$or", "$nor", "$not",
    "$exists", "$type", "$regex", "$options", "$size", "$all", "$elemMatch", "$mod",
    "$expr", "$comment",
})

EXPRESSION_OPERATORS = frozenset({
    "$eq", "$ne", "$gt", "$gte", "$lt", "$lte", "$cmp", "$and", "$or", "$not", "$in",
    "$cond", "$ifNull", "$switch", "$literal", "$type", "$isNumber", "$isArray",
    "$size", "$arrayElemAt", "$first", "$last", "$setUnion", "$objectToArray", "$strLenCP", "$strLenBytes", "$toLower",
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

# Operators that combine whole conditions; every other query operator is a condition on one field.
_TOP_LEVEL = frozenset({"$and", "$or", "$nor", "$expr", "$comment"})
GROUP_ACCUMULATORS = frozenset({"$sum", "$avg", "$min", "$max", "$first", "$last", "$push", "$addToSet", "$count"})
_SYSTEM_VARIABLES = frozenset({"$$ROOT", "$$CURRENT", "$$REMOVE"})
_REGEX_FLAGS = frozenset("imsxu")
_DBREF_KEYS = ("$ref", "$id", "$db")
_PLAIN_SCALARS = (str, bool, int, float, type(None), Int64, Decimal128, ObjectId, datetime, DatetimeMS,
                  Binary, bytes, uuid.UUID, Timestamp, MinKey, MaxKey)

PIPELINE_STAGES = frozenset({
    "$match", "$group", "$sort", "$limit", "$skip", "$project", "$count", "$sample",
    "$unwind", "$facet", "$addFields", "$sortByCount",
})

FIELD_SEGMENT = re.compile(r"^[^$.\x00][^.\x00]*$")


def refuse(operator: str, where: str) -> QueryRefused:
    reason = _REFUSED_REASONS.get(operator)
    if reason:
        return QueryRefused(f"operator {operator} is refused in {where}: it {reason}; Argus is read-only",
                            operator=operator)
    return QueryRefused(f"operator {operator} is not on the read-only allow-list for {where}", operator=operator)


def wire_view(value: Any, where: str) -> Any:
    """The plain tree BSON sends for ``value``: dicts, lists, plain scalars and ``Regex``.

    Walks with an explicit stack, so depth and size are refused before anything recurses.
    """
    root: list[Any] = [None]
    stack: list[tuple[Any, list[Any] | dict[str, Any], Any, int]] = [(value, root, 0, 0)]
    seen = 0
    while stack:
        item, parent, slot, depth = stack.pop()
        seen += 1
        if seen > MAX_VALUES:
            raise QueryRefused(f"{where} holds more than {MAX_VALUES} values", operator="size")
        if isinstance(item, Code):  # before str: Code (and code with scope) is a str subclass
            raise QueryRefused(f"a JavaScript code value ($code) is refused in {where}: it runs on the server; "
                               "Argus is read-only", operator="$code")
        if isinstance(item, DBRef):
            item = item.as_doc()
        if isinstance(item, Mapping | list | tuple):
            if depth >= MAX_DEPTH:
                raise QueryRefused(f"{where} is nested deeper than {MAX_DEPTH} levels", operator="nesting")
            if isinstance(item, Mapping):
                copy: dict[str, Any] = {}
                parent[slot] = copy
                for key, child in item.items():
                    if not isinstance(key, str):
                        raise QueryRefused(f"{where} has a non-string key", operator="key")
                    if key in _REFUSED_REASONS:  # JavaScript, writes, other collections: refused at any depth
                        raise refuse(key, where)
                    if "\x00" in key:
                        raise QueryRefused(f"a key in {where} is not a plain dot-notation path: it holds a NUL "
                                           "character, which BSON cannot carry", operator="key")
                    _check_unicode(key, f"a key in {where}")
                    copy[key] = None
                    stack.append((child, copy, key, depth + 1))
            else:
                items: list[Any] = [None] * len(item)
                parent[slot] = items
                stack.extend((child, items, i, depth + 1) for i, child in enumerate(item))
        elif isinstance(item, Regex | re.Pattern):
            parent[slot] = _checked_regex(item, where)
        elif isinstance(item, _PLAIN_SCALARS):
            if isinstance(item, int) and not isinstance(item, bool) and not _INT64[0] <= item <= _INT64[1]:
                raise QueryRefused(f"an integer of {len(str(abs(item)))} digits in {where} is beyond the 64-bit "
                                   "integers MongoDB stores (±9,223,372,036,854,775,807); compare with a double "
                                   "(1e22) or a $numberDecimal", operator="int64")
            if isinstance(item, str):
                _check_unicode(item, f"a string in {where}")
            parent[slot] = item
        else:
            raise QueryRefused(f"a value of type {type(item).__name__} is refused in {where}: only plain BSON data "
                               "can be sent", operator="type")
    _check_encodes(root[0], where)
    return root[0]


def _check_unicode(text: str, what: str) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise QueryRefused(f"{what} is not valid Unicode (an unpaired surrogate such as \\ud800), which BSON "
                           "cannot carry", operator="string") from None


def _check_encodes(view: Any, where: str) -> None:
    """The last word on what the driver can send: ``bson.encode`` itself, and the document size limit."""
    try:
        size = len(bson.encode({"q": view}))
    except (BSONError, OverflowError, ValueError, TypeError) as exc:
        raise QueryRefused(f"{where} cannot be encoded as BSON ({type(exc).__name__}); send plain values",
                           operator="bson") from None
    if size > MAX_BSON_BYTES:
        raise QueryRefused(f"{where} is larger than MongoDB's 16 MiB document limit", operator="size")


def _checked_regex(value: Regex[Any] | re.Pattern[Any] | str, where: str, options: Any = "") -> Any:
    if isinstance(value, Regex | re.Pattern):
        pattern, flags = value.pattern, value.flags
    else:
        pattern, flags = value, 0
    if isinstance(pattern, bytes):
        pattern = pattern.decode("utf-8", "replace")
    if not isinstance(pattern, str):
        raise QueryRefused(f"$regex in {where} needs a pattern string", operator="$regex")
    if "\x00" in pattern:
        raise QueryRefused(f"$regex in {where} holds a NUL character, which BSON cannot carry in a pattern; "
                           "write it as \\x00", operator="$regex")
    _check_unicode(pattern, f"$regex in {where}")
    if not isinstance(options, str) or not set(options) <= _REGEX_FLAGS:
        raise QueryRefused(f"$options in {where} must be letters from 'imsxu'", operator="$options")
    py_flags = (flags if isinstance(flags, int) else 0) & (re.IGNORECASE | re.MULTILINE | re.DOTALL | re.VERBOSE)
    if "x" in options:
        py_flags |= re.VERBOSE
    problem = regex_problem(pattern, py_flags)
    if problem:
        raise QueryRefused(f"$regex in {where} is refused: {problem}", operator="$regex")
    return value


def _is_dbref(doc: Mapping[str, Any]) -> bool:
    return next(iter(doc), None) == "$ref" and "$id" in doc


def _check_dbref(doc: Mapping[str, Any], where: str, depth: int) -> None:
    """A DBRef literal: ``$ref``, ``$id`` and ``$db`` only, plus plain fields; any other operator is named."""
    for key in doc:
        if key.startswith("$") and key not in _DBREF_KEYS:
            raise refuse(key, f"a DBRef in {where}")
    if not isinstance(doc["$ref"], str) or not isinstance(doc.get("$db", ""), str):
        raise QueryRefused(f"a DBRef in {where} needs string $ref and $db", operator="$ref")
    for key, item in doc.items():
        if key not in ("$ref", "$db"):
            _check_literal(item, where, depth + 1)


def check_field_path(path: str) -> None:
    """A queryable dot-notation path: no empty segment, no ``$``-prefixed segment, no NUL."""
    if not isinstance(path, str) or not path or not all(FIELD_SEGMENT.match(s) for s in path.split(".")):
        raise QueryRefused(f"field path {path!r} is not a plain dot-notation path", operator="path")


def check_filter(query: Any, *, where: str = "a filter") -> None:
    """Refuse any query document that uses an operator outside ``QUERY_OPERATORS``."""
    view = wire_view(query, where)
    if not isinstance(view, Mapping) or _is_dbref(view):
        raise QueryRefused(f"{where} must be a document of conditions, not "
                           f"{_kind(view, where)}{_regex_hint(view)}", operator="shape")
    _check_query_doc(view, where, depth=0)


def _kind(value: Any, where: str) -> str:
    if isinstance(value, Mapping) and _is_dbref(value):
        _check_dbref(value, where, 0)  # an operator hidden in it is named before the shape
        return "a DBRef"
    return "a regular expression" if isinstance(value, Regex | re.Pattern) else f"a {type(value).__name__}"


def _regex_hint(value: Any) -> str:
    if isinstance(value, Regex | re.Pattern):
        return '; a $regex is a condition on a field: write {"field": {"$regex": "..."}}'
    return ""


def _check_query_doc(doc: Mapping[str, Any], where: str, depth: int) -> None:
    for key, value in doc.items():
        if key.startswith("$"):
            if key in _REFUSED_REASONS or key not in QUERY_OPERATORS:
                raise refuse(key, where)
            if key not in _TOP_LEVEL:
                raise QueryRefused(
                    f"operator {key} in {where} stands where a field name belongs: it is a condition on one field; "
                    f'write {{"field": {{"{key}": ...}}}}', operator=key)
            _check_operator_value(key, value, where, depth)
        else:
            check_field_path(key)
            _check_condition(value, where, depth)


def _check_condition(value: Any, where: str, depth: int) -> None:
    """A field's condition: a literal, or a document of operators (``{"$gt": 3}``)."""
    if isinstance(value, Mapping) and not _is_dbref(value) and any(k.startswith("$") for k in value):
        for op, arg in value.items():
            if not op.startswith("$"):
                raise QueryRefused(f"{where} mixes operators and field names in one condition", operator="shape")
            if op in _REFUSED_REASONS or op not in QUERY_OPERATORS:
                raise refuse(op, where)
            if op in _TOP_LEVEL:
                raise QueryRefused(
                    f"operator {op} in {where} stands under a field, but it combines whole conditions; "
                    f'write {{"{op}": [{{"field": ...}}, ...]}} at the top of the filter', operator=op)
            if op == "$regex":
                _checked_regex(arg, where, value.get("$options", ""))
            elif op == "$options" and "$regex" not in value:
                raise QueryRefused(f"$options in {where} needs a $regex beside it", operator="$options")
            else:
                _check_operator_value(op, arg, where, depth)
    else:
        _check_literal(value, where, depth)


def _check_operator_value(op: str, value: Any, where: str, depth: int) -> None:
    if op in ("$and", "$or", "$nor"):
        if not isinstance(value, list) or not value:
            raise QueryRefused(f"{op} in {where} needs a non-empty list of documents", operator=op)
        for clause in value:
            if not isinstance(clause, Mapping) or _is_dbref(clause):
                raise QueryRefused(f"{op} in {where} needs a list of documents of conditions, not "
                                   f"{_kind(clause, where)}{_regex_hint(clause)}", operator=op)
            _check_query_doc(clause, where, depth + 1)
    elif op == "$not":
        if isinstance(value, Mapping) and not _is_dbref(value):
            if not value or not all(k.startswith("$") for k in value):
                raise QueryRefused(f"$not in {where} needs a document of operators or a regex", operator="$not")
            _check_condition(value, where, depth + 1)
        elif isinstance(value, Regex | re.Pattern):
            _check_literal(value, where, depth + 1)
        else:
            raise QueryRefused(f"$not in {where} needs a document of operators or a regex, "
                               f"not {_kind(value, where)}", operator="$not")
    elif op == "$elemMatch":
        if not isinstance(value, Mapping) or _is_dbref(value):
            raise QueryRefused(f"$elemMatch in {where} needs a document of conditions, not {_kind(value, where)}",
                               operator="$elemMatch")
        # {$or: [...]} alone is a query on each element, as the server parses it, not an operator on a value
        if value and all(k.startswith("$") and k not in _TOP_LEVEL for k in value):
            _check_condition(value, where, depth + 1)
        else:
            _check_query_doc(value, where, depth + 1)
    elif op == "$expr":
        check_expression(value, where=f"$expr in {where}", depth=depth + 1)
    elif op in ("$in", "$nin", "$all"):
        if not isinstance(value, list):
            raise QueryRefused(f"{op} in {where} needs a list", operator=op)
        _check_literal(value, where, depth + 1)
    elif op == "$exists":
        if not isinstance(value, bool | int):
            raise QueryRefused(f"$exists in {where} needs true or false", operator="$exists")
    elif op == "$comment":
        if not isinstance(value, str):
            raise QueryRefused(f"$comment in {where} needs a string", operator="$comment")
    else:
        _check_literal(value, where, depth + 1)


def _check_literal(value: Any, where: str, depth: int) -> None:
    """Literal values may be documents, but never hide an operator inside them."""
    if isinstance(value, Mapping):
        if _is_dbref(value):
            _check_dbref(value, where, depth)
            return
        for key, item in value.items():
            if key.startswith("$"):
                raise refuse(key, where)
            _check_literal(item, where, depth + 1)
    elif isinstance(value, list | tuple):
        for item in value:
            _check_literal(item, where, depth + 1)
    elif isinstance(value, Regex | re.Pattern):
        _checked_regex(value, where)


def check_expression(expr: Any, *, where: str = "an expression", depth: int = 0) -> None:
    """Refuse aggregation expressions using operators outside ``EXPRESSION_OPERATORS``."""
    check_expression_value(wire_view(expr, where) if depth == 0 else expr, where)


def check_expression_value(expr: Any, where: str) -> None:
    if isinstance(expr, Mapping):
        if _is_dbref(expr):
            _check_dbref(expr, where, 0)
            raise QueryRefused(f"a DBRef in {where} would be read as an operator; wrap it in $literal",
                               operator="$ref")
        for key, value in expr.items():
            if key.startswith("$"):
                if key in _REFUSED_REASONS or key not in EXPRESSION_OPERATORS:
                    raise refuse(key, where)
                if key == "$literal":
                    _check_literal(value, where, 0)
                    continue
                if key == "$regexMatch" and isinstance(value, Mapping):
                    _checked_regex(value.get("regex", ""), where, value.get("options", ""))
            check_expression_value(value, where)
    elif isinstance(expr, list | tuple):
        for item in expr:
            check_expression_value(item, where)
    elif isinstance(expr, str) and expr.startswith("$$"):
        if expr.split(".", 1)[0] not in _SYSTEM_VARIABLES:
            raise QueryRefused(f"variable {expr.split('.', 1)[0]} is refused in {where}: only $$ROOT, $$CURRENT "
                               "and $$REMOVE are allowed", operator="$$")
    elif isinstance(expr, Regex | re.Pattern):
        _checked_regex(expr, where)


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
