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

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from bson.datetime_ms import DatetimeMS
from bson.decimal128 import Decimal128
from bson.objectid import ObjectId
from bson.regex import Regex

from argus.agent.tools.compat import TYPE_CODES
from argus.agent.tools.guard_pipeline import check_pipeline
from argus.agent.tools.profile_verdicts import (
    NUMBERS,
    Group,
    Verdict,
    compare_keys,
    condition_verdict,
    document_verdict,
    is_nan,
    order_key,
    type_names,
)

__all__ = ["MAX_PATHS", "FieldProfile", "Group", "answerable", "profile_paths", "profile_pipeline", "read_profile"]

MAX_PATHS = 2000  # paths one profile pass carries, at most (a row each per document)

_ODD = frozenset({"array", "undefined", "symbol"})  # types whose query semantics a profile does not reproduce
# Types whose least and greatest values are read. Not strings: a collection's default collation orders and
# compares them (case-insensitively, say) where Python would not, so no string comparison is decided here,
# and no string value comes back.
_ORDERED = frozenset({*NUMBERS, "date", "objectId", "bool"})
_LOGIC = ("$and", "$or", "$nor")

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
            verdict = condition_verdict(condition, group)
            if verdict is None:
                return False, None
            if verdict:
                inside.append(group.lo if operation == "min" else group.hi)
                brackets.add("number" if group.type in NUMBERS else group.type)
        if not inside:
            return True, None
        if len(brackets) > 1:
            return False, None  # a number, a date and a bool inside: the server orders their types, not their values
        keys = [order_key(v) for v in inside]
        if any(k is None for k in keys):
            return False, None
        orders = [[compare_keys(k, other) for other in keys] for k in keys]
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
    if is_nan(group.lo) or is_nan(group.hi):
        return not is_nan(group.hi) or is_nan(group.lo)  # NaN sorts first: a NaN greatest means a NaN least
    lo, hi = order_key(group.lo), order_key(group.hi)
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
        return _Form(path, lambda g: document_verdict(query, path, g))
    if len(paths) == 2 and len(query) == 2 and all(not k.startswith("$") for k in query):
        ancestor, path = sorted(paths, key=len)
        if path.startswith(ancestor + ".") and _exists_true(query[ancestor]) and _valid_condition(query[path]):
            return _Form(path, lambda g: condition_verdict(query[path], g), ancestor)
    return None


_KNOWN = frozenset({"$eq", "$ne", "$in", "$nin", "$gt", "$gte", "$lt", "$lte", "$exists", "$type", "$regex",
                    "$options", "$not"})


def _valid_document(query: Mapping[str, Any]) -> bool:
    """Whether every condition of a filter (its ``$and``/``$or``/``$nor`` included) is one a server accepts
    and ``condition_verdict`` knows. Any other leaves the whole filter undecided: a server may refuse it (``$type: []``,
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
        return type_names(operand) is not None
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
