"""Whether a query's condition on one path matches every value of a ``Group``, none, or it cannot tell.

A ``Group`` is the values of one path of one ``$type`` in a field profile (``argus.agent.tools.field_profile``):
how many, and (for the ordered types) the least and greatest. A verdict is three-valued: ``True`` when the
query matches every value of the group, ``False`` when it matches none, ``None`` when only the server can
say. Type tests, ``$exists`` and null are decided by the type alone; ranges and equalities by where the least
and greatest values lie; regexes and string comparisons never (``None``).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any

from bson.code import Code
from bson.datetime_ms import DatetimeMS
from bson.decimal128 import Decimal128
from bson.objectid import ObjectId
from bson.regex import Regex
from pymongo.errors import OperationFailure

from argus.agent.engine.operators import type_names as engine_type_names
from argus.agent.engine.values import is_nan

__all__ = ["NUMBERS", "Group", "Verdict", "compare_keys", "condition_verdict", "document_verdict",
           "is_nan", "order_key", "type_names"]

NUMBERS = frozenset({"double", "int", "long", "decimal"})

Verdict = bool | None  # True: every value of the group matches; False: none does; None: not known


@dataclass(frozen=True)
class Group:
    """The values of one path of one ``$type`` (``missing`` for the documents without the path)."""

    type: str
    n: int
    lo: Any = None
    hi: Any = None


def _all(verdicts: Iterable[Verdict]) -> Verdict:
    seen = list(verdicts)
    if any(v is False for v in seen):
        return False
    return True if all(v is True for v in seen) else None


def _any(verdicts: Iterable[Verdict]) -> Verdict:
    seen = list(verdicts)
    if any(v is True for v in seen):
        return True
    return False if all(v is False for v in seen) else None


def _negate(verdict: Verdict) -> Verdict:
    return None if verdict is None else not verdict


def document_verdict(query: Mapping[str, Any], path: str, group: Group) -> Verdict:
    verdicts: list[Verdict] = []
    for key, value in query.items():
        if key == "$and":
            verdicts.append(_all(document_verdict(q, path, group) for q in value))
        elif key == "$or":
            verdicts.append(_any(document_verdict(q, path, group) for q in value))
        elif key == "$nor":
            verdicts.append(_negate(_any(document_verdict(q, path, group) for q in value)))
        else:
            verdicts.append(condition_verdict(value, group))
    return _all(verdicts)


def condition_verdict(value: Any, group: Group) -> Verdict:
    """Whether a query's condition on the path (``{$gt: 5}``, a literal, a regex) matches the group."""
    if isinstance(value, Mapping) and value and all(isinstance(k, str) and k.startswith("$") for k in value):
        if "$options" in value and "$regex" not in value:
            return None
        return _all(_operator(op, v, group) for op, v in value.items() if op != "$options")
    return _equals(value, group)


def _operator(op: str, value: Any, group: Group) -> Verdict:
    if op == "$eq":
        return _equals(value, group)
    if op == "$ne":
        return _negate(_equals(value, group))
    if op in ("$in", "$nin"):
        if not isinstance(value, list):
            return None
        verdict = _any(_equals(item, group) for item in value)
        return verdict if op == "$in" else _negate(verdict)
    if op in ("$gt", "$gte", "$lt", "$lte"):
        return _compare(op, value, group)
    if op == "$exists":
        if not isinstance(value, bool | int):
            return None
        return (group.type != "missing") == bool(value)
    if op == "$type":
        return _type(value, group)
    if op == "$regex":
        return _regex(group)
    if op == "$not":
        if isinstance(value, Regex):
            return _negate(_regex(group))
        if not isinstance(value, Mapping) or not value:
            return None
        return _negate(condition_verdict(value, group))
    return None


def _type(value: Any, group: Group) -> Verdict:
    wanted = type_names(value)
    return None if wanted is None else group.type in wanted


def type_names(value: Any) -> set[str] | None:
    """The types a ``$type`` operand names, as the engine reads them; None for one a server refuses (an empty
    list, an unknown name or code)."""
    try:
        return engine_type_names(value)
    except OperationFailure:
        return None


def _regex(group: Group) -> Verdict:
    """A regex matches strings (and symbols, kept out); whether it matches a given string, only the server says."""
    if group.type in ("string", "regex"):
        return None
    return False


def _bracket(value: Any) -> frozenset[str] | None:
    """The types a query's comparison with ``value`` can match (type bracketing)."""
    if isinstance(value, bool):
        return frozenset({"bool"})
    if isinstance(value, int | float | Decimal128):
        return NUMBERS
    if isinstance(value, str) and not isinstance(value, Code):  # bson's Code is a str: JavaScript, not a string
        return frozenset({"string"})
    if isinstance(value, datetime | DatetimeMS):
        return frozenset({"date"})
    if isinstance(value, ObjectId):
        return frozenset({"objectId"})
    return None


def order_key(value: Any) -> Any:
    """A value as Python orders it the way BSON orders values of its bracket; None for NaN or another value."""
    if isinstance(value, bool):
        return value
    if isinstance(value, Decimal128):
        number = value.to_decimal()
        return None if number.is_nan() else number
    if isinstance(value, float):
        return None if math.isnan(value) else value
    if isinstance(value, int | str | ObjectId):
        return value
    if isinstance(value, DatetimeMS):
        return int(value)
    if isinstance(value, datetime):
        return int(DatetimeMS(value))
    return None


def _equals(value: Any, group: Group) -> Verdict:
    if value is None:
        return group.type in ("null", "missing")
    if isinstance(value, Regex):
        return _regex(group)
    bracket = _bracket(value)
    if bracket is None:
        return None  # a document, an array or a rarer type: compared otherwise
    if group.type not in bracket:
        return False
    if is_nan(value):  # a query's NaN equals NaN, and NaN sorts below every number
        if is_nan(group.hi):
            return True
        return None if is_nan(group.lo) else False
    if is_nan(group.hi):
        return False  # every value NaN
    target, lo, hi = order_key(value), order_key(group.lo), order_key(group.hi)
    if target is None or hi is None:
        return None
    above = compare_keys(target, hi)
    if above is None:
        return None
    if above > 0:
        return False
    if lo is None:  # NaN among the values: the least other value is not known
        return None
    below = compare_keys(lo, target)
    if below is None:
        return None
    if below > 0:
        return False
    return True if above == below == 0 else None


def compare_keys(a: Any, b: Any) -> int | None:
    """-1, 0 or 1 as BSON orders two values of one bracket; None for two numbers of two types (an int and a
    double, a double and a decimal) that are one double apart or equal only as a double, or beyond 2**53.
    MongoDB compares those exactly, as Python does; DocumentDB does not always (it matched a decimal
    0.1000000000000000055511151231257827 to the double 0.1, and no double -2**63 to the long -2**63 in ``$nin``)."""
    if _kind(a) != _kind(b) and None not in (_kind(a), _kind(b)):
        try:
            fa, fb = float(a), float(b)
        except OverflowError:
            return None
        if fa == fb and (fa != a or fb != b or abs(fa) >= 2.0 ** 53):
            return None
    return 1 if a > b else -1 if a < b else 0


def _kind(value: Any) -> type | None:
    for kind in (float, Decimal):
        if isinstance(value, kind):
            return kind
    return int if isinstance(value, int) and not isinstance(value, bool) else None


def _compare(op: str, bound: Any, group: Group) -> Verdict:
    bracket = _bracket(bound)
    if bracket is None or is_nan(bound):
        return None
    if group.type not in bracket:
        return False  # a query compares within a type: null, missing and other types never match
    b, lo, hi = order_key(bound), order_key(group.lo), order_key(group.hi)
    if b is None or hi is None:
        return False if is_nan(group.hi) else None  # every value NaN: no comparison matches
    upward = op in ("$gt", "$gte")
    strict = op in ("$gt", "$lt")

    def holds(x: Any) -> Verdict:
        order = compare_keys(x, b)
        if order is None:
            return None
        return order == (1 if upward else -1) or (not strict and order == 0)

    if upward:
        greatest = holds(hi)
        if not greatest:
            return greatest  # not even the greatest (False), or not known
        return True if lo is not None and holds(lo) else None
    if lo is None:
        return None  # NaN among the values: they never match, the others may
    least = holds(lo)
    if not least:
        return least  # not even the least (False), or not known
    return True if holds(hi) else None

