"""A MongoDB filter compiled once into a Python predicate with the server's semantics.

``compile_filter(query, deadline)`` returns ``predicate(document) -> bool``. What it keeps from
MongoDB's query language (``find``, ``count_documents``, ``$match``):

- dotted paths descend into arrays of documents (``items.qty`` is every line's quantity); a
  numeric segment is both a position (``a.0``) and a field name; a path through a scalar, or
  into a document without the field, is missing; non-documents inside an array are skipped;
- a condition on an array matches the array itself or any of its elements; ``$ne``, ``$nin`` and
  ``$not`` are the negation of the whole path's positive condition;
- ``null`` matches null and missing (and ``{a: [null]}``); ``$exists`` only presence;
- comparisons bracket types: ``{$gt: 5}`` sees numbers only, ``{$lt: date}`` dates only;
  numbers compare by value across int, long, double and Decimal128; NaN equals NaN and is never
  greater or less than anything; booleans are never numbers;
- ``$type`` by name, number or ``"number"``; ``$regex`` with ``i m s x`` options on strings, read
  as PCRE2 without UCP reads it (``pcre``: ``\\d \\w \\s \\b`` are ASCII);
  ``$size``, ``$all``, ``$elemMatch``, ``$mod``, ``$expr`` (see ``expressions``);
- ``$elemMatch`` as ``expression_array.cpp``: the value form judges each element whole (a nested
  array is one value), the object form reads an element that is an array as the document
  ``{"0": ..., "1": ...}`` and skips scalars.

An operator or a value the server would refuse raises ``OperationFailure`` (code 2, BadValue),
which the target reports as a refused query, as a server's refusal.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from bson import Regex
from bson.dbref import DBRef

from argus.agent.engine.deadline import Deadline
from argus.agent.engine.errors import bad_value
from argus.agent.engine.expressions import compile_expression
from argus.agent.engine.fastpath import combine, fast_field
from argus.agent.engine.operators import (
    Cands,
    Test,
    compare,
    compare_test,
    eq_cands,
    equals,
    in_cands,
    in_test,
    mod_cands,
    mod_test,
    path_values,
    regex_cands,
    size_cands,
    size_of,
    string_test,
    type_cands,
    type_names,
)
from argus.agent.engine.regexes import compile_regex
from argus.agent.engine.values import (
    MISSING,
    bson_type,
    truthy,
)

__all__ = ["Predicate", "compile_filter", "general_path"]

Predicate = Callable[[Any], bool]

_FAST_PATH: ContextVar[bool] = ContextVar("fast_path", default=True)


@contextmanager
def general_path() -> Iterator[None]:
    """Filters compiled inside answer every document on the general path, without the generated fast
    path (``fastpath``): the differential and conformance tests hold the two to the same answers."""
    token = _FAST_PATH.set(False)
    try:
        yield
    finally:
        _FAST_PATH.reset(token)


def _all(values: Any, deadline: Deadline) -> Cands:
    if not isinstance(values, list):
        raise bad_value("$all needs an array")
    if not values:
        return lambda cands: False
    parts: list[Cands] = []
    for item in values:
        if isinstance(item, Mapping) and "$elemMatch" in item:
            parts.append(_elem_match(item["$elemMatch"], deadline))
        elif isinstance(item, Regex | re.Pattern):
            parts.append(regex_cands(item, "", deadline))
        else:
            parts.append(eq_cands(item))
    return lambda cands: all(part(cands) for part in parts)


def _elem_match(spec: Any, deadline: Deadline) -> Cands:
    test = _elem_match_test(spec, deadline)
    return lambda cands: any(type(v) is list and any(test(e) for e in v) for v in cands)


def _elem_match_test(spec: Any, deadline: Deadline) -> Test:
    """The test ``$elemMatch`` applies to each element of an array (``expression_array.cpp``).

    The value form (operators only) judges each element whole, as ``matchesSingleElement`` does: an
    element that is an array is one value, not its elements. The object form matches an element
    that ``isABSONObj()``: a document, or an array read as the document ``{"0": ..., "1": ...}``.
    """
    if not isinstance(spec, Mapping):
        raise bad_value("$elemMatch needs an Object")
    if spec and all(str(k).startswith("$") for k in spec) and not any(k in ("$and", "$or", "$nor", "$expr")
                                                                      for k in spec):
        return _element_test(spec, deadline)
    document = compile_filter(spec, deadline)

    def doc_form(element: Any) -> bool:
        if type(element) is list:
            return document({str(i): e for i, e in enumerate(element)})
        return isinstance(element, dict) and document(element)
    return doc_form


def _element_test(spec: Mapping[str, Any], deadline: Deadline) -> Test:
    """A document of operators as a test on one value taken whole (no array expansion, nothing missing)."""
    tests: list[Test] = []
    for op, arg in spec.items():
        if op == "$options":
            if "$regex" not in spec:
                raise bad_value("$options needs a $regex")
            continue
        tests.append(_one_element(op, arg, spec, deadline))
    return lambda v: all(test(v) for test in tests)


def _one_element(op: str, arg: Any, spec: Mapping[str, Any], deadline: Deadline) -> Test:
    if op in ("$eq", "$ne"):
        equal = equals(arg.as_doc() if isinstance(arg, DBRef) else arg)
        return equal if op == "$eq" else (lambda v: not equal(v))
    if op in ("$gt", "$gte", "$lt", "$lte"):
        if isinstance(arg, Regex | re.Pattern):
            return string_test(compile_regex(arg, "", deadline))
        return compare_test(op, arg)
    if op in ("$in", "$nin"):
        member, _ = in_test(arg, deadline)
        return member if op == "$in" else (lambda v: not member(v))
    if op == "$exists":
        present = truthy(arg)
        return lambda v: present
    if op == "$type":
        wanted = type_names(arg)
        return lambda v: bson_type(v) in wanted
    if op == "$regex":
        return string_test(compile_regex(arg, spec.get("$options", ""), deadline))
    if op == "$size":
        size = size_of(arg)
        return lambda v: type(v) is list and len(v) == size
    if op == "$mod":
        return mod_test(arg)
    if op == "$elemMatch":
        inner = _elem_match_test(arg, deadline)
        return lambda v: type(v) is list and any(inner(e) for e in v)
    if op == "$all":
        if not isinstance(arg, list):
            raise bad_value("$all needs an array")
        parts = [_one_element("$elemMatch", item["$elemMatch"], item, deadline)
                 if isinstance(item, Mapping) and "$elemMatch" in item
                 else string_test(compile_regex(item, "", deadline)) if isinstance(item, Regex | re.Pattern)
                 else equals(item) for item in arg]
        return lambda v: bool(parts) and all(part(v) for part in parts)
    if op == "$not":
        if isinstance(arg, Regex | re.Pattern):
            regex_test = string_test(compile_regex(arg, "", deadline))
            return lambda v: not regex_test(v)
        if not isinstance(arg, Mapping) or not arg or not all(str(k).startswith("$") for k in arg):
            raise bad_value("$not needs a regex or a document")
        inner_test = _element_test(arg, deadline)
        return lambda v: not inner_test(v)
    raise bad_value(f"unknown operator: {op}")


# --- conditions and filters ------------------------------------------------------------------------

class _Condition:
    """The operators of one field's condition; each sees the path's candidates. ``parts`` hold
    ``(operator, argument, predicate on candidates, negated)``."""

    def __init__(self, parts: list[tuple[str, Any, Cands, bool]]) -> None:
        self.parts = parts

    def __call__(self, cands: list[Any]) -> bool:
        return all(part(cands) != negated for _, _, part, negated in self.parts)


def _condition(spec: Any, deadline: Deadline) -> _Condition:
    """A field's condition: a document of operators, or a literal (equality, or a regex)."""
    if isinstance(spec, Mapping) and not isinstance(spec, DBRef) and spec and \
            any(str(k).startswith("$") for k in spec):
        if not all(str(k).startswith("$") for k in spec):
            raise bad_value(f"unknown operator: {next(k for k in spec if str(k).startswith('$'))}")
        parts: list[tuple[str, Any, Cands, bool]] = []
        for op, arg in spec.items():
            if op == "$options":
                if "$regex" not in spec:
                    raise bad_value("$options needs a $regex")
                continue
            cands, negated = _operator(op, arg, spec, deadline)
            parts.append((op, arg, cands, negated))
        return _Condition(parts)
    if isinstance(spec, Regex | re.Pattern):
        return _Condition([("$regex", spec, regex_cands(spec, "", deadline), False)])
    return _Condition([("$eq", spec, eq_cands(spec), False)])


def _operator(op: str, arg: Any, spec: Mapping[str, Any], deadline: Deadline) -> tuple[Cands, bool]:
    if op == "$eq":
        return eq_cands(arg), False
    if op == "$ne":
        return eq_cands(arg), True
    if op in ("$gt", "$gte", "$lt", "$lte"):
        if isinstance(arg, Regex | re.Pattern):
            return regex_cands(arg, "", deadline), False
        return compare(op, arg), False
    if op == "$in":
        return in_cands(arg, deadline), False
    if op == "$nin":
        return in_cands(arg, deadline), True
    if op == "$exists":
        return (lambda cands: any(v is not MISSING for v in cands)), not truthy(arg)
    if op == "$type":
        return type_cands(arg), False
    if op == "$regex":
        return regex_cands(arg, spec.get("$options", ""), deadline), False
    if op == "$size":
        return size_cands(arg), False
    if op == "$all":
        return _all(arg, deadline), False
    if op == "$elemMatch":
        return _elem_match(arg, deadline), False
    if op == "$mod":
        return mod_cands(arg), False
    if op == "$not":
        if isinstance(arg, Regex | re.Pattern):
            return regex_cands(arg, "", deadline), True
        if not isinstance(arg, Mapping) or not arg or not all(str(k).startswith("$") for k in arg):
            raise bad_value("$not needs a regex or a document")
        inner = _condition(arg, deadline)
        return inner, True
    raise bad_value(f"unknown operator: {op}")  # $comment included: the server reads it at the top only


def _truth_of(expression: Callable[[Any], Any]) -> Predicate:
    return lambda doc: truthy(expression(doc))


def compile_filter(query: Any, deadline: Deadline | None = None) -> Predicate:
    """``query`` as a predicate on one decoded document."""
    deadline = deadline or Deadline(None)
    if not isinstance(query, Mapping):
        raise bad_value("the match filter must be an expression in an object")
    tests: list[Predicate] = []
    for key, value in query.items():
        if key == "$comment":
            continue
        if key in ("$and", "$or", "$nor"):
            if not isinstance(value, list) or not value:
                raise bad_value(f"{key} must be a nonempty array")
            tests.append(combine(key, [compile_filter(clause, deadline) for clause in value]))
        elif key == "$expr":
            tests.append(_truth_of(compile_expression(value, deadline)))
        elif key.startswith("$"):
            raise bad_value(f"unknown top level operator: {key}")
        else:
            tests.append(_field(key, value, deadline))
    if not tests:
        return lambda doc: True
    return combine("$and", tests)


def _field(path: str, spec: Any, deadline: Deadline) -> Predicate:
    values = path_values(path)
    condition = _condition(spec, deadline)

    def general(doc: Any) -> bool:
        return condition(values(doc))
    if not _FAST_PATH.get():
        return general
    parts = [(op, arg, negated, cands([MISSING]), cands) for op, arg, cands, negated in condition.parts]
    return fast_field(path, parts, spec if isinstance(spec, Mapping) else {}, general)
