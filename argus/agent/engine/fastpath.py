"""The common case of a field condition, compiled to Python source: one present, non-array value.

Most documents hold a scalar where a filter looks (``{"qty": {"$lt": 0}}`` on ``qty: 3``). For
those the condition is generated as one Python function that reads the field with ``dict.get``
and tests the value with inline type checks (``type(v) in NUMS and v < 0``), which is several
times faster than a chain of closures. Arrays, paths through arrays and missing fields take the
general path (``match``), so the semantics are the general path's: the generated code only
answers where it gives the same answer. The differential test holds the two paths to each other
(``match.general_path``) and the conformance suite both to MongoDB's answers.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from functools import lru_cache
from types import CodeType
from typing import Any

from bson import Decimal128, Int64, ObjectId, Regex
from bson.datetime_ms import DatetimeMS

from argus.agent.engine.values import MISSING, date_ms, is_nan, is_number, type_code

__all__ = ["ARRAY", "combine", "dotted_getter", "fast_field"]

ARRAY = object()  # a path that meets an array: the general path answers
_NUMS = frozenset({int, float, Int64})
_HASHABLE = frozenset({str, int, float, Int64})
_SIMPLE_TYPES = {
    "string": "type(v) is str", "double": "type(v) is float", "bool": "type(v) is bool",
    "object": "type(v) is dict", "null": "v is None", "objectId": "type(v) is ObjectId",
    "date": "(type(v) is datetime or type(v) is DTMS)", "decimal": "type(v) is DEC",
    "number": "(type(v) in NUMS or type(v) is DEC)", "array": "False",
}


@lru_cache(maxsize=4096)
def _compiled(code: str, filename: str) -> CodeType:
    """The bytecode of generated source. Constants are named by their place in the function, not
    by value, so a filter shape an audit sends again (every read compiles its filter afresh, and
    planners repeat shapes across runs) reuses its bytecode; compiling costs 0.2 ms, running the
    ``def`` a microsecond. Each read still gets functions, constants and deadline of its own."""
    return compile(code, filename, "exec")


def dotted_getter(path: str) -> Callable[[Any], Any]:
    """The value at ``path`` when only documents stand on the way; ``MISSING`` past a scalar or an
    absent field; ``ARRAY`` when an array stands before the last segment."""
    parts = path.split(".")

    def get(doc: Any) -> Any:
        value = doc
        for part in parts:
            if type(value) is dict:
                value = value.get(part, MISSING)
            elif type(value) is list:
                return ARRAY
            else:
                return MISSING
        return value
    return get


class _Source:
    """Constants the generated source refers to by name."""

    def __init__(self) -> None:
        self._count = 0
        self.env: dict[str, Any] = {"MISSING": MISSING, "ARRAY": ARRAY, "NUMS": _NUMS, "HASHABLE": _HASHABLE,
                                    "DEC": Decimal128, "DTMS": DatetimeMS, "datetime": datetime,
                                    "ObjectId": ObjectId}

    def const(self, value: Any) -> str:
        name = f"c{self._count}"
        self._count += 1
        self.env[name] = value
        return name


def _naive_ms(value: datetime | DatetimeMS) -> tuple[datetime | None, int]:
    """A date bound as the naive UTC datetime (cut to milliseconds, as BSON keeps it) and its ms."""
    ms = date_ms(value)
    if isinstance(value, DatetimeMS):
        return None, ms
    naive = value.astimezone(UTC).replace(tzinfo=None) if value.tzinfo else value
    return naive.replace(microsecond=naive.microsecond // 1000 * 1000), ms


def _equal_source(target: Any, src: _Source, generic: Callable[[Any], bool]) -> str:
    if target is None:
        return "v is None"
    if type(target) is str:
        return f"v == {src.const(target)}"
    if isinstance(target, bool):
        return f"v is {target!r}"
    if is_number(target) and not isinstance(target, Decimal128) and not is_nan(target):
        return f"((type(v) in NUMS and v == {src.const(target)}) or (type(v) is DEC and {src.const(generic)}(v)))"
    if isinstance(target, datetime | DatetimeMS):
        naive, ms = _naive_ms(target)
        ms_name = src.const(ms)
        dt = f"(type(v) is datetime and v == {src.const(naive)})" if naive is not None else \
            f"(type(v) is datetime and {src.const(date_ms)}(v) == {ms_name})"  # a DatetimeMS bound: by its ms
        return f"({dt} or (type(v) is DTMS and int(v) == {ms_name}))"
    return f"{src.const(generic)}(v)"


def _compare_source(op: str, target: Any, src: _Source, generic: Callable[[Any], bool]) -> str:
    symbol = {"$gt": ">", "$gte": ">=", "$lt": "<", "$lte": "<="}[op]
    if is_number(target) and not isinstance(target, Decimal128) and not is_nan(target):
        return (f"((type(v) in NUMS and v {symbol} {src.const(target)}) or "
                f"(type(v) is DEC and {src.const(generic)}(v)))")
    if type(target) is str:
        return f"(type(v) is str and v {symbol} {src.const(target)})"
    if isinstance(target, datetime | DatetimeMS):
        naive, ms = _naive_ms(target)
        dt = f"(type(v) is datetime and v {symbol} {src.const(naive)})" if naive is not None else \
            f"(type(v) is datetime and {src.const(date_ms)}(v) {symbol} {src.const(ms)})"
        return f"({dt} or (type(v) is DTMS and int(v) {symbol} {src.const(ms)}))"
    return f"{src.const(generic)}(v)"


def _in_source(values: list[Any], src: _Source, generic: Callable[[Any], bool]) -> str:
    fast = [v for v in values if type(v) in _HASHABLE and not is_nan(v)]
    rest = len(fast) < len(values)
    parts = []
    if fast:
        parts.append(f"(type(v) in HASHABLE and v in {src.const(frozenset(fast))})")
    if rest:
        parts.append(f"{src.const(generic)}(v)")
    elif any(type(v) is not str for v in fast):
        # a Decimal128 equals a plain number of the same value (Decimal128("2.0") is in [1, 2])
        parts.append(f"(type(v) is DEC and {src.const(generic)}(v))")
    return "(" + " or ".join(parts) + ")" if parts else "False"


def _type_source(spec: Any, src: _Source, generic: Callable[[Any], bool]) -> str:
    names = spec if isinstance(spec, list) else [spec]
    codes = [type_code(n) for n in names]
    if all(c in _SIMPLE_TYPES for c in codes):
        return "(" + " or ".join(_SIMPLE_TYPES[c] for c in codes if c) + ")"
    return f"{src.const(generic)}(v)"


def scalar_source(op: str, arg: Any, spec: Mapping[str, Any], src: _Source,
                  generic: Callable[[Any], bool]) -> str:
    """A Python expression on ``v`` (present, not an array) with the operator's positive answer;
    ``generic(v)`` answers whatever has no inline form."""
    if op in ("$eq", "$ne"):
        return _equal_source(arg, src, generic)
    if op in ("$gt", "$gte", "$lt", "$lte"):
        if arg is None or isinstance(arg, Regex | re.Pattern):
            return f"{src.const(generic)}(v)"
        return _compare_source(op, arg, src, generic)
    if op in ("$in", "$nin") and isinstance(arg, list | tuple):
        return _in_source(list(arg), src, generic)
    if op == "$exists":
        return "True"
    if op == "$type":
        return _type_source(arg, src, generic)
    if op in ("$size", "$elemMatch"):
        return "False"
    if op == "$regex":
        return f"(type(v) is str and {src.const(generic)}(v))"
    return f"{src.const(generic)}(v)"


def fast_field(path: str, parts: list[tuple[str, Any, bool, bool, Callable[[list[Any]], bool]]],
               spec: Mapping[str, Any], general: Callable[[Any], bool]) -> Callable[[Any], bool]:
    """One field's condition as generated code. ``parts`` are ``(op, arg, negated, missing, cands)``:
    the operator, its argument, whether it is negated ($ne, $nin, $not), its answer on a missing
    field, and its general predicate on the path's candidates; ``general(doc)`` answers the rest."""
    src = _Source()
    tests = []
    missing = True
    for op, arg, negated, on_missing, cands in parts:
        def generic(v, cands=cands):
            return (cands([v]))
        expr = scalar_source(op, arg, spec, src, generic) if op != "$not" else f"{src.const(generic)}(v)"
        tests.append(f"not {expr}" if negated else expr)
        missing = missing and (on_missing != negated)
    get = "doc.get(PATH, MISSING)" if "." not in path else "GET(doc)"
    src.env.update({"PATH": path, "GET": dotted_getter(path), "GENERAL": general})
    body = " and ".join(f"({t})" for t in tests) or "True"
    code = (f"def pred(doc):\n"
            f"    v = {get}\n"
            f"    if v is MISSING:\n        return {missing}\n"
            f"    if type(v) is list or v is ARRAY:\n        return GENERAL(doc)\n"
            f"    return {body}\n")
    namespace = dict(src.env)
    exec(_compiled(code, f"<filter on {path}>"), namespace)
    return namespace["pred"]


def combine(kind: str, preds: list[Callable[[Any], bool]]) -> Callable[[Any], bool]:
    """``$and`` / ``$or`` / ``$nor`` of predicates as one generated function (no generator per call)."""
    if len(preds) == 1 and kind != "$nor":
        return preds[0]
    names = {f"p{i}": p for i, p in enumerate(preds)}
    joined = (" and " if kind == "$and" else " or ").join(f"{n}(doc)" for n in names)
    body = f"not ({joined})" if kind == "$nor" else joined
    namespace: dict[str, Any] = dict(names)
    exec(_compiled(f"def pred(doc):\n    return {body}\n", f"<{kind}>"), namespace)
    return namespace["pred"]
