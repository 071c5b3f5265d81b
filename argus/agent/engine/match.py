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
from datetime import datetime
from decimal import Decimal
from typing import Any

from bson import Decimal128, Int64, Regex
from bson.datetime_ms import DatetimeMS
from bson.dbref import DBRef

from argus.agent.engine.deadline import Deadline
from argus.agent.engine.errors import bad_value
from argus.agent.engine.expressions import compile_expression
from argus.agent.engine.fastpath import combine, fast_field
from argus.agent.engine.regexes import compile_regex
from argus.agent.engine.values import (
    MISSING,
    bson_type,
    date_ms,
    is_nan,
    is_number,
    number_value,
    rank,
    sort_key,
    truthy,
    type_code,
)

__all__ = ["Predicate", "compile_filter", "general_path", "path_values"]

Predicate = Callable[[Any], bool]
_Test = Callable[[Any], bool]          # one value (an element, or a whole array)
_Cands = Callable[[list[Any]], bool]   # the candidates a path yields

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


# --- paths -----------------------------------------------------------------------------------------

def path_values(path: str) -> Callable[[Any], list[Any]]:
    """The values ``path`` reaches in a document, as the query engine reaches them (``MISSING`` where a
    document lacks the field or a scalar stands mid-path; nothing for non-documents inside an array)."""
    parts = path.split(".")
    if len(parts) == 1:
        key = parts[0]

        def one(doc: Any) -> list[Any]:
            return [doc.get(key, MISSING)]
        return one

    def walk(value: Any, i: int, out: list[Any]) -> None:
        part = parts[i]
        last = i == len(parts) - 1
        if isinstance(value, dict):
            child = value.get(part, MISSING)
            if last or child is MISSING:
                out.append(child)
            else:
                walk(child, i + 1, out)
        elif isinstance(value, list):
            if part.isdigit():
                index = int(part)
                if index < len(value):
                    if last:
                        out.append(value[index])
                    else:
                        walk(value[index], i + 1, out)
            for element in value:
                if isinstance(element, dict):
                    walk(element, i, out)
        else:
            out.append(MISSING)

    def many(doc: Any) -> list[Any]:
        out: list[Any] = []
        walk(doc, 0, out)
        return out
    return many


def _any_value(test: _Test) -> _Cands:
    """Matches when some candidate, or some element of a candidate array, passes ``test``; ``test`` itself
    stays reachable as ``run.scalar`` (the answer for one value that is not an array)."""
    def run(cands: list[Any]) -> bool:
        for value in cands:
            if value is MISSING:
                continue
            if test(value):
                return True
            if type(value) is list:
                for element in value:
                    if test(element):
                        return True
        return False
    run.scalar = test  # type: ignore[attr-defined]
    return run


# --- equality and comparison -------------------------------------------------------------------------

def _equals(target: Any) -> _Test:
    """A test for MongoDB equality with ``target`` (one value; arrays are expanded by the caller)."""
    if target is None:
        return lambda v: v is None
    if type(target) is str:
        return lambda v: type(v) is str and v == target
    if isinstance(target, bool):
        return lambda v: v is target
    if is_number(target):
        if is_nan(target):
            return is_nan
        number = number_value(target)
        if isinstance(target, int):
            return lambda v: ((type(v) is int or type(v) is float or type(v) is Int64) and v == number) \
                or (type(v) is Decimal128 and number_value(v) == number)
        return lambda v: is_number(v) and number_value(v) == number
    if isinstance(target, datetime | DatetimeMS):
        ms = date_ms(target)
        return lambda v: isinstance(v, datetime | DatetimeMS) and date_ms(v) == ms
    key = sort_key(target)
    target_rank = rank(target)

    def generic(v: Any) -> bool:
        try:
            return rank(v) == target_rank and sort_key(v) == key
        except TypeError:
            return False
    return generic


def _eq_cands(target: Any) -> _Cands:
    if isinstance(target, DBRef):
        target = target.as_doc()
    test = _any_value(_equals(target))
    if target is None:
        def null(cands: list[Any]) -> bool:
            return any(v is MISSING for v in cands) or test(cands)
        return null
    return test


def _compare(op: str, target: Any) -> _Cands:
    if target is None:  # $gte/$lte null is equality with null; $gt/$lt null match nothing
        return _eq_cands(None) if op in ("$gte", "$lte") else (lambda cands: False)
    if is_nan(target):
        return _eq_cands(target) if op in ("$gte", "$lte") else (lambda cands: False)
    return _any_value(_compare_test(op, target))


def _compare_test(op: str, target: Any) -> _Test:
    """``op`` against ``target`` on one value, type-bracketed (null and NaN bounds are equality or nothing)."""
    if target is None or is_nan(target):
        return _equals(target) if op in ("$gte", "$lte") else (lambda v: False)
    target_rank = rank(target)
    if is_number(target):
        bound = number_value(target)

        def in_bracket(v: Any) -> Any:
            if not is_number(v):
                return MISSING
            number = number_value(v)
            return MISSING if number != number else number
        key: Any = bound
    elif isinstance(target, datetime | DatetimeMS):
        key = date_ms(target)

        def in_bracket(v: Any) -> Any:
            return date_ms(v) if isinstance(v, datetime | DatetimeMS) else MISSING
    elif type(target) is str:
        key = target

        def in_bracket(v: Any) -> Any:
            return v if type(v) is str else MISSING
    else:
        key = sort_key(target)

        def in_bracket(v: Any) -> Any:
            try:
                return sort_key(v) if rank(v) == target_rank else MISSING
            except TypeError:
                return MISSING
    check: Callable[[Any], bool] = {
        "$gt": lambda x: x > key, "$gte": lambda x: x >= key,
        "$lt": lambda x: x < key, "$lte": lambda x: x <= key,
    }[op]

    def test(v: Any) -> bool:
        x = in_bracket(v)
        return x is not MISSING and check(x)
    return test


# --- other operators -------------------------------------------------------------------------------

def _regex_cands(pattern: Any, options: Any, deadline: Deadline) -> _Cands:
    run = compile_regex(pattern, options, deadline)
    return _any_value(lambda v: type(v) is str and run(v))


def _string_test(run: Callable[[str], bool]) -> _Test:
    return lambda v: type(v) is str and run(v)


def _in(values: Any, deadline: Deadline) -> _Cands:
    test, null = _in_test(values, deadline)
    positive = _any_value(test)
    if null:
        return lambda cands: any(v is MISSING for v in cands) or positive(cands)
    return positive


def _in_test(values: Any, deadline: Deadline) -> tuple[_Test, bool]:
    """``$in`` on one value, and whether the list holds null (which a missing field matches too)."""
    if not isinstance(values, list | tuple):
        raise bad_value("$in needs an array")
    fast: set[Any] = set()
    tests: list[_Test] = []
    null = False
    for item in values:
        if isinstance(item, Mapping) and any(str(k).startswith("$") for k in item) and not isinstance(item, DBRef):
            raise bad_value("cannot nest $ under $in")
        if isinstance(item, Regex | re.Pattern):
            tests.append(_string_test(compile_regex(item, "", deadline)))
        elif item is None:
            null = True
            tests.append(_equals(None))
        elif (type(item) is str) or (is_number(item) and not is_nan(item) and not isinstance(item, Decimal128)):
            fast.add(item)
        else:
            tests.append(_equals(item.as_doc() if isinstance(item, DBRef) else item))

    def test(v: Any) -> bool:
        t = type(v)
        if (t is str or t is int or t is float or t is Int64) and v in fast:
            return True
        if t is Decimal128 and fast:
            number = v.to_decimal()
            if not number.is_nan() and number in fast:
                return True
        return any(check(v) for check in tests)
    return test, null


def _type(spec: Any) -> _Cands:
    wanted = _type_names(spec)
    array = "array" in wanted

    def run(cands: list[Any]) -> bool:
        for value in cands:
            if value is MISSING:
                continue
            if type(value) is list:
                if array:
                    return True
                if any(bson_type(e) in wanted for e in value):
                    return True
            elif bson_type(value) in wanted:
                return True
        return False
    return run


def _type_names(spec: Any) -> set[str]:
    """The BSON type names a ``$type`` argument asks for (``"number"`` is the four numeric types)."""
    names = spec if isinstance(spec, list) else [spec]
    wanted: set[str] = set()
    for name in names:
        code = type_code(name)
        if code is None:
            raise bad_value(f"unknown type name alias: {name}" if isinstance(name, str) else f"Invalid numerical type "
                            f"code: {name}")
        wanted |= {"int", "long", "double", "decimal"} if code == "number" else {code}
    return wanted


def _size(n: Any) -> _Cands:
    size = _size_of(n)
    return lambda cands: any(type(v) is list and len(v) == size for v in cands)


def _size_of(n: Any) -> int:
    if not is_number(n) or is_nan(n) or number_value(n) != int(number_value(n)):
        raise bad_value("$size needs a number")
    return int(number_value(n))


def _mod(spec: Any) -> _Cands:
    return _any_value(_mod_test(spec))


def _mod_test(spec: Any) -> _Test:
    if not isinstance(spec, list) or len(spec) != 2 or not all(is_number(x) for x in spec):
        raise bad_value("malformed mod, needs to be an array of two numbers")
    divisor, remainder = (_truncated(x) for x in spec)
    if divisor is None or remainder is None:
        raise bad_value("malformed mod, divisor and remainder must be finite numbers")
    if divisor == 0:
        raise bad_value("divisor cannot be 0")

    def test(v: Any) -> bool:
        if not is_number(v):
            return False
        value = _truncated(v)
        if value is None:
            return False
        left = abs(value) % abs(divisor)
        return (-left if value < 0 else left) == remainder
    return test


def _truncated(value: Any) -> int | None:
    number = number_value(value)
    if isinstance(number, float | Decimal) and (number != number or number in (float("inf"), float("-inf"))):
        return None
    return int(number)


def _all(values: Any, deadline: Deadline) -> _Cands:
    if not isinstance(values, list):
        raise bad_value("$all needs an array")
    if not values:
        return lambda cands: False
    parts: list[_Cands] = []
    for item in values:
        if isinstance(item, Mapping) and "$elemMatch" in item:
            parts.append(_elem_match(item["$elemMatch"], deadline))
        elif isinstance(item, Regex | re.Pattern):
            parts.append(_regex_cands(item, "", deadline))
        else:
            parts.append(_eq_cands(item))
    return lambda cands: all(part(cands) for part in parts)


def _elem_match(spec: Any, deadline: Deadline) -> _Cands:
    test = _elem_match_test(spec, deadline)
    return lambda cands: any(type(v) is list and any(test(e) for e in v) for v in cands)


def _elem_match_test(spec: Any, deadline: Deadline) -> _Test:
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


def _element_test(spec: Mapping[str, Any], deadline: Deadline) -> _Test:
    """A document of operators as a test on one value taken whole (no array expansion, nothing missing)."""
    tests: list[_Test] = []
    for op, arg in spec.items():
        if op == "$options":
            if "$regex" not in spec:
                raise bad_value("$options needs a $regex")
            continue
        tests.append(_one_element(op, arg, spec, deadline))
    return lambda v: all(test(v) for test in tests)


def _one_element(op: str, arg: Any, spec: Mapping[str, Any], deadline: Deadline) -> _Test:
    if op in ("$eq", "$ne"):
        equal = _equals(arg.as_doc() if isinstance(arg, DBRef) else arg)
        return equal if op == "$eq" else (lambda v: not equal(v))
    if op in ("$gt", "$gte", "$lt", "$lte"):
        if isinstance(arg, Regex | re.Pattern):
            return _string_test(compile_regex(arg, "", deadline))
        return _compare_test(op, arg)
    if op in ("$in", "$nin"):
        member, _ = _in_test(arg, deadline)
        return member if op == "$in" else (lambda v: not member(v))
    if op == "$exists":
        present = truthy(arg)
        return lambda v: present
    if op == "$type":
        wanted = _type_names(arg)
        return lambda v: bson_type(v) in wanted
    if op == "$regex":
        return _string_test(compile_regex(arg, spec.get("$options", ""), deadline))
    if op == "$size":
        size = _size_of(arg)
        return lambda v: type(v) is list and len(v) == size
    if op == "$mod":
        return _mod_test(arg)
    if op == "$elemMatch":
        inner = _elem_match_test(arg, deadline)
        return lambda v: type(v) is list and any(inner(e) for e in v)
    if op == "$all":
        if not isinstance(arg, list):
            raise bad_value("$all needs an array")
        parts = [_one_element("$elemMatch", item["$elemMatch"], item, deadline)
                 if isinstance(item, Mapping) and "$elemMatch" in item
                 else _string_test(compile_regex(item, "", deadline)) if isinstance(item, Regex | re.Pattern)
                 else _equals(item) for item in arg]
        return lambda v: bool(parts) and all(part(v) for part in parts)
    if op == "$not":
        if isinstance(arg, Regex | re.Pattern):
            regex_test = _string_test(compile_regex(arg, "", deadline))
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

    def __init__(self, parts: list[tuple[str, Any, _Cands, bool]]) -> None:
        self.parts = parts

    def __call__(self, cands: list[Any]) -> bool:
        return all(part(cands) != negated for _, _, part, negated in self.parts)


def _condition(spec: Any, deadline: Deadline) -> _Condition:
    """A field's condition: a document of operators, or a literal (equality, or a regex)."""
    if isinstance(spec, Mapping) and not isinstance(spec, DBRef) and spec and \
            any(str(k).startswith("$") for k in spec):
        if not all(str(k).startswith("$") for k in spec):
            raise bad_value(f"unknown operator: {next(k for k in spec if str(k).startswith('$'))}")
        parts: list[tuple[str, Any, _Cands, bool]] = []
        for op, arg in spec.items():
            if op == "$options":
                if "$regex" not in spec:
                    raise bad_value("$options needs a $regex")
                continue
            cands, negated = _operator(op, arg, spec, deadline)
            parts.append((op, arg, cands, negated))
        return _Condition(parts)
    if isinstance(spec, Regex | re.Pattern):
        return _Condition([("$regex", spec, _regex_cands(spec, "", deadline), False)])
    return _Condition([("$eq", spec, _eq_cands(spec), False)])


def _operator(op: str, arg: Any, spec: Mapping[str, Any], deadline: Deadline) -> tuple[_Cands, bool]:
    if op == "$eq":
        return _eq_cands(arg), False
    if op == "$ne":
        return _eq_cands(arg), True
    if op in ("$gt", "$gte", "$lt", "$lte"):
        if isinstance(arg, Regex | re.Pattern):
            return _regex_cands(arg, "", deadline), False
        return _compare(op, arg), False
    if op == "$in":
        return _in(arg, deadline), False
    if op == "$nin":
        return _in(arg, deadline), True
    if op == "$exists":
        return (lambda cands: any(v is not MISSING for v in cands)), not truthy(arg)
    if op == "$type":
        return _type(arg), False
    if op == "$regex":
        return _regex_cands(arg, spec.get("$options", ""), deadline), False
    if op == "$size":
        return _size(arg), False
    if op == "$all":
        return _all(arg, deadline), False
    if op == "$elemMatch":
        return _elem_match(arg, deadline), False
    if op == "$mod":
        return _mod(arg), False
    if op == "$not":
        if isinstance(arg, Regex | re.Pattern):
            return _regex_cands(arg, "", deadline), True
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
