"""Counts and fence statistics answered from one profile of the fields they read.

A batch of counts costs a server documents times filters: a ``$match`` is evaluated per document and
per filter, and a wide document makes each evaluation dearer (on DocumentDB, products' 669 checks
over 3,000 documents of 150 fields took four passes and 13.5 s). Most checks of a batch ask about
one field's type, nullness or range, and their exact answer follows from how many values of each
type the field holds and the least and greatest of them. One pass gives that for every path at once,
at a cost of documents times paths: each document becomes one row per path (``{k, v}``, ``v`` absent
where the path is missing), grouped by path and ``$type`` with the count, ``$min`` and ``$max``
(products: one pass of 1.8 s).

A check is answered from the profile only where that answer is exact; any other goes to the batch:

- its filter reads one path (conditions combined with ``$and``, ``$or``, ``$nor``), or one path and
  ``{$exists: true}`` on an ancestor of it (a document whose ancestor is missing has the path missing);
- no value of the path is an array (a query looks inside arrays; a path through an array is one
  too, ``$type`` says ``array``), ``undefined`` or a symbol;
- for each type the path holds, the condition is true for every value of it or for none: a type test,
  ``$exists`` and ``null`` are; a range or an equality is when the type's least and greatest values
  are both inside or both outside it (``{$gt: 100}`` over values from 3 to 90 matches none); NaN is
  kept out of ranges as the query keeps it; a comparison with a string or a regex over strings never is
  (a collection's collation may compare strings otherwise).

A ``min``/``max`` statistic inside a fence (``get_stats`` with a ``value_filter``) is answered the
same way: every type's values all inside the fence or all outside, its value the least or greatest of
those inside. The last profile of the run is kept on the target for the later statistics.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from typing import Any

from bson.code import Code
from bson.datetime_ms import DatetimeMS
from bson.decimal128 import Decimal128
from bson.objectid import ObjectId
from bson.regex import Regex

from argus.agent.tools.compat import TYPE_CODES
from argus.agent.tools.guard_pipeline import check_pipeline

__all__ = ["MAX_PATHS", "FieldProfile", "Group", "answerable", "profile_paths", "profile_pipeline", "read_profile"]

MAX_PATHS = 2000  # paths one profile pass carries, at most (a row each per document)

_ODD = frozenset({"array", "undefined", "symbol"})  # types whose query semantics a profile does not reproduce
_NUMBERS = frozenset({"double", "int", "long", "decimal"})
# Types whose least and greatest values are read. Not strings: a collection's default collation orders and
# compares them (case-insensitively, say) where Python would not, so no string comparison is decided here,
# and no string value comes back.
_ORDERED = frozenset({*_NUMBERS, "date", "objectId", "bool"})
_TYPE_NAMES = {code: name for name, code in TYPE_CODES.items() if isinstance(code, int)}
_LOGIC = ("$and", "$or", "$nor")

Verdict = bool | None  # True: every value of the group matches; False: none does; None: not known


@dataclass(frozen=True)
class Group:
    """The values of one path of one ``$type`` (``missing`` for the documents without the path)."""

    type: str
    n: int
    lo: Any = None
    hi: Any = None


@dataclass
class FieldProfile:
    """Per path, its groups by type; ``paths`` lists the paths profiled."""

    groups: dict[str, list[Group]] = field(default_factory=dict)

    def covers(self, paths: Iterable[str]) -> bool:
        return all(p in self.groups for p in paths)

    def count(self, query: Mapping[str, Any]) -> int | None:
        """The exact number of documents ``query`` matches, or None when the profile cannot tell."""
        form = _form(query)
        if form is None or not self.covers(form.paths):
            return None
        groups = self.groups[form.path]
        if any(g.type in _ODD for g in groups):
            return None
        total = 0
        for group in groups:
            if group.type == "missing" and form.ancestor is not None:
                continue
            verdict = form.condition(group)
            if verdict is None:
                return None
            total += group.n if verdict else 0
        if form.ancestor is not None:
            ancestor = self.groups[form.ancestor]
            if any(g.type in _ODD for g in ancestor):
                return None
            verdict = form.condition(Group("missing", 0))
            if verdict is None:
                return None
            if verdict:  # the path missing where its ancestor is present
                total += _missing(groups) - _missing(ancestor)
        return total

    def extreme(self, path: str, operation: str, condition: Mapping[str, Any] | None) -> tuple[bool, Any]:
        """``(True, value)`` for the ``min``/``max`` of ``path``'s values inside ``condition`` (a fence, over
        every document) when the profile answers it exactly (value None: no value inside), else ``(False, None)``."""
        if operation not in ("min", "max") or not condition or path not in self.groups or not _plain_path(path) \
                or not _valid_condition(condition):
            return False, None
        inside: list[Any] = []
        brackets: set[str] = set()
        for group in self.groups[path]:
            if group.type in _ODD:
                return False, None
            if group.type == "missing":
                continue
            verdict = _condition(condition, group)
            if verdict is None:
                return False, None
            if verdict:
                inside.append(group.lo if operation == "min" else group.hi)
                brackets.add("number" if group.type in _NUMBERS else group.type)
        if not inside:
            return True, None
        if len(brackets) > 1:
            return False, None  # a number, a date and a bool inside: the server orders their types, not their values
        keys = [_order_key(v) for v in inside]
        if any(k is None for k in keys):
            return False, None
        orders = [[_cmp(k, other) for other in keys] for k in keys]
        if any(order is None for row in orders for order in row):
            return False, None  # numbers of two types one double apart: servers order them otherwise
        wanted = -1 if operation == "min" else 1
        best = [i for i, row in enumerate(orders) if all(o in (wanted, 0) for o in row)]
        if len(best) > 1:
            return False, None  # equal values of two types (5 and 5.0): which one the server returns is its own
        return True, inside[best[0]]


def profile_paths(filters: Iterable[Mapping[str, Any]], fields: Iterable[str] = ()) -> list[str]:
    """The paths a profile needs to answer counts of ``filters`` (decoded; each one's own path and the
    ancestor it tests) and statistics over ``fields``; a filter the profile cannot answer adds none."""
    paths = {f for f in fields if _plain_path(f)}
    for query in filters:
        form = _form(query)
        if form is not None:
            paths |= form.paths
    return sorted(paths)


def answerable(query: Any) -> bool:
    """Whether a count of ``query`` (decoded) has the form a profile may answer (its values decide)."""
    return _form(query) is not None


def profile_pipeline(paths: list[str]) -> list[dict[str, Any]]:
    """One row per document and path, grouped by path and ``$type``: count, least and greatest (those
    two only for the ordered scalar types: no document or array comes back)."""
    rows = [{"k": i, "v": f"${path}"} for i, path in enumerate(paths)]
    ordered = sorted(_ORDERED)
    pipeline: list[dict[str, Any]] = [
        {"$project": {"_id": 0, "r": rows}},
        {"$unwind": "$r"},
        {"$group": {"_id": {"k": "$r.k", "t": {"$type": "$r.v"}}, "n": {"$sum": 1},
                    "lo": {"$min": "$r.v"}, "hi": {"$max": "$r.v"}}},
        {"$project": {"n": 1, "lo": {"$cond": [{"$in": ["$_id.t", ordered]}, "$lo", None]},
                      "hi": {"$cond": [{"$in": ["$_id.t", ordered]}, "$hi", None]}}},
    ]
    check_pipeline(pipeline)
    return pipeline


def read_profile(paths: list[str], rows: list[Any]) -> FieldProfile | None:
    """The profile from the pass's rows; None when a row is not one the pipeline makes (an unknown type, a
    count below 1 or not an integer, a path's type twice, a least or greatest value not of its type or out of order)."""
    profile = FieldProfile({p: [] for p in paths})
    for row in rows:
        key = row.get("_id") if isinstance(row, Mapping) else None
        if not isinstance(key, Mapping) or not _integer(key.get("k")) or not 0 <= key["k"] < len(paths) \
                or key.get("t") not in _TYPES or not _count(row.get("n")):
            return None
        groups = profile.groups[paths[key["k"]]]
        group = Group(key["t"], int(row["n"]), row.get("lo"), row.get("hi"))
        if any(g.type == group.type for g in groups) or not _consistent(group):
            return None
        groups.append(group)
    return profile


_TYPES = frozenset({"missing", *(name for name, code in TYPE_CODES.items() if isinstance(code, int))})
_PYTHON_TYPES: dict[str, tuple[type, ...]] = {
    "double": (float,), "int": (int,), "long": (int,), "decimal": (Decimal128,), "date": (datetime, DatetimeMS),
    "objectId": (ObjectId,), "bool": (bool,)}


def _integer(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _count(value: Any) -> bool:
    return _integer(value) and value >= 1


def _consistent(group: Group) -> bool:
    """A group's least and greatest values: both absent for a type not read, else of its type, least first."""
    kinds = _PYTHON_TYPES.get(group.type)
    if kinds is None:
        return group.lo is None and group.hi is None
    if group.lo is None and group.hi is None:
        return True
    if not all(isinstance(v, kinds) and (group.type == "bool") == isinstance(v, bool) for v in (group.lo, group.hi)):
        return False
    if _nan(group.lo) or _nan(group.hi):
        return not _nan(group.hi) or _nan(group.lo)  # NaN sorts first: a NaN greatest means a NaN least
    lo, hi = _order_key(group.lo), _order_key(group.hi)
    return lo is not None and hi is not None and not lo > hi


def _missing(groups: list[Group]) -> int:
    return sum(g.n for g in groups if g.type == "missing")


def _plain_path(path: str) -> bool:
    """A path an aggregation expression reads as a query does (no array position, no ``$`` name)."""
    return all(part and not part.isdigit() and not part.startswith("$") for part in path.split("."))


@dataclass(frozen=True)
class _Form:
    """A filter over one ``path`` (``condition`` of a group), with an optional ``{ancestor: {$exists: true}}``."""

    path: str
    condition: Callable[[Group], Verdict]
    ancestor: str | None = None

    @property
    def paths(self) -> set[str]:
        return {self.path} | ({self.ancestor} if self.ancestor else set())


def _form(query: Any) -> _Form | None:
    if not isinstance(query, Mapping) or not query:
        return None
    paths = _paths_of(query)
    if paths is None or not all(_plain_path(p) for p in paths):
        return None
    if len(paths) == 1 and _valid_document(query):
        (path,) = paths
        return _Form(path, lambda g: _document(query, path, g))
    if len(paths) == 2 and len(query) == 2 and all(not k.startswith("$") for k in query):
        ancestor, path = sorted(paths, key=len)
        if path.startswith(ancestor + ".") and _exists_true(query[ancestor]) and _valid_condition(query[path]):
            return _Form(path, lambda g: _condition(query[path], g), ancestor)
    return None


_KNOWN = frozenset({"$eq", "$ne", "$in", "$nin", "$gt", "$gte", "$lt", "$lte", "$exists", "$type", "$regex",
                    "$options", "$not"})


def _valid_document(query: Mapping[str, Any]) -> bool:
    """Whether every condition of a filter (its ``$and``/``$or``/``$nor`` included) is one a server accepts
    and ``_condition`` knows. Any other leaves the whole filter undecided: a server may refuse it (``$type: []``,
    ``$regex`` beside ``$options`` twice, a regex in ``$gt``), and a condition false beside it must not answer 0."""
    return all(all(_valid_document(q) for q in value) if key in _LOGIC else _valid_condition(value)
               for key, value in query.items())


def _valid_condition(value: Any) -> bool:
    if not _operators(value):
        return _plain_value(value)
    if not all(op in _KNOWN for op in value):
        return False
    return all(_valid_operand(op, operand, value) for op, operand in value.items())


def _operators(value: Any) -> bool:
    """Whether a condition is a document of operators (``{$gt: 5}``), not a value compared whole."""
    return isinstance(value, Mapping) and bool(value) and any(isinstance(k, str) and k.startswith("$") for k in value)


def _plain_value(value: Any) -> bool:
    """A value compared as such: no operator inside it (``$in: [{$gt: 1}]`` is refused)."""
    if isinstance(value, Mapping):
        return not _operators(value) and all(map(_plain_value, value.values()))
    if isinstance(value, list):
        return all(map(_plain_value, value))
    return True


def _valid_operand(op: str, operand: Any, condition: Mapping[str, Any]) -> bool:
    if op in ("$in", "$nin"):
        return isinstance(operand, list) and all(map(_plain_value, operand))
    if op in ("$ne", "$gt", "$gte", "$lt", "$lte"):  # a regex is refused in each (MongoDB: "Can't have RegEx")
        return not isinstance(operand, Regex | re.Pattern) and _plain_value(operand)
    if op == "$eq":
        return _plain_value(operand)
    if op == "$type":
        return _type_names(operand) is not None
    if op == "$regex":
        return isinstance(operand, str) or (isinstance(operand, Regex) and "$options" not in condition)
    if op == "$options":
        return isinstance(operand, str) and isinstance(condition.get("$regex"), str)
    if op == "$not":
        return isinstance(operand, Regex) or (_operators(operand) and _valid_condition(operand))
    return op == "$exists"  # any value: its truth is what counts


def _exists_true(value: Any) -> bool:
    return isinstance(value, Mapping) and list(value) == ["$exists"] and value["$exists"] is True


def _paths_of(query: Mapping[str, Any]) -> set[str] | None:
    paths: set[str] = set()
    for key, value in query.items():
        if not isinstance(key, str):
            return None
        if key in _LOGIC:
            if not isinstance(value, list) or not value:
                return None
            for inner in value:
                found = _paths_of(inner) if isinstance(inner, Mapping) and inner else None
                if found is None:
                    return None
                paths |= found
        elif key.startswith("$"):
            return None
        else:
            paths.add(key)
    return paths


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


def _document(query: Mapping[str, Any], path: str, group: Group) -> Verdict:
    verdicts: list[Verdict] = []
    for key, value in query.items():
        if key == "$and":
            verdicts.append(_all(_document(q, path, group) for q in value))
        elif key == "$or":
            verdicts.append(_any(_document(q, path, group) for q in value))
        elif key == "$nor":
            verdicts.append(_negate(_any(_document(q, path, group) for q in value)))
        else:
            verdicts.append(_condition(value, group))
    return _all(verdicts)


def _condition(value: Any, group: Group) -> Verdict:
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
        return _negate(_condition(value, group))
    return None


def _type(value: Any, group: Group) -> Verdict:
    wanted = _type_names(value)
    return None if wanted is None else group.type in wanted


def _type_names(value: Any) -> set[str] | None:
    """The types a ``$type`` operand names; None for one a server refuses (an empty list, an unknown name)."""
    names = value if isinstance(value, list) else [value]
    if not names:
        return None
    wanted: set[str] = set()
    for name in names:
        if isinstance(name, bool):
            return None
        if isinstance(name, int | float) and name in _TYPE_NAMES:
            wanted.add(_TYPE_NAMES[int(name)])
        elif name == "number":
            wanted |= _NUMBERS
        elif isinstance(name, str) and name in TYPE_CODES:
            wanted.add(name)
        else:
            return None
    return wanted


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
        return _NUMBERS
    if isinstance(value, str) and not isinstance(value, Code):  # bson's Code is a str: JavaScript, not a string
        return frozenset({"string"})
    if isinstance(value, datetime | DatetimeMS):
        return frozenset({"date"})
    if isinstance(value, ObjectId):
        return frozenset({"objectId"})
    return None


def _order_key(value: Any) -> Any:
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


def _nan(value: Any) -> bool:
    return (isinstance(value, float) and math.isnan(value)) or \
        (isinstance(value, Decimal128) and value.to_decimal().is_nan())


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
    if _nan(value):  # a query's NaN equals NaN, and NaN sorts below every number
        if _nan(group.hi):
            return True
        return None if _nan(group.lo) else False
    if _nan(group.hi):
        return False  # every value NaN
    target, lo, hi = _order_key(value), _order_key(group.lo), _order_key(group.hi)
    if target is None or hi is None:
        return None
    above = _cmp(target, hi)
    if above is None:
        return None
    if above > 0:
        return False
    if lo is None:  # NaN among the values: the least other value is not known
        return None
    below = _cmp(lo, target)
    if below is None:
        return None
    if below > 0:
        return False
    return True if above == below == 0 else None


def _cmp(a: Any, b: Any) -> int | None:
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
    if bracket is None or _nan(bound):
        return None
    if group.type not in bracket:
        return False  # a query compares within a type: null, missing and other types never match
    b, lo, hi = _order_key(bound), _order_key(group.lo), _order_key(group.hi)
    if b is None or hi is None:
        return False if _nan(group.hi) else None  # every value NaN: no comparison matches
    upward = op in ("$gt", "$gte")
    strict = op in ("$gt", "$lt")

    def holds(x: Any) -> Verdict:
        order = _cmp(x, b)
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
