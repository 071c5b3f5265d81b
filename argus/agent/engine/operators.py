"""The query operators on one value, and the values a dotted path reaches: the leaves ``match`` composes.

Equality and comparisons (type-bracketed, numbers by value across BSON's numeric types, NaN equal to
NaN and never greater or less), ``$in``, ``$type``, ``$size``, ``$mod`` and ``$regex``. Each returns a
test of one value (``Test``) or of the candidates a path yields (``Cands``: a match when some candidate,
or some element of a candidate array, passes). A value the server would refuse raises ``bad_value``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from datetime import datetime
from decimal import Decimal
from typing import Any

from bson import Decimal128, Int64, Regex
from bson.datetime_ms import DatetimeMS
from bson.dbref import DBRef

from argus.agent.engine.deadline import Deadline
from argus.agent.engine.errors import bad_value
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
    type_code,
)

Test = Callable[[Any], bool]          # one value (an element, or a whole array)
Cands = Callable[[list[Any]], bool]   # the candidates a path yields


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


def any_value(test: Test) -> Cands:
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

def equals(target: Any) -> Test:
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


def eq_cands(target: Any) -> Cands:
    if isinstance(target, DBRef):
        target = target.as_doc()
    test = any_value(equals(target))
    if target is None:
        def null(cands: list[Any]) -> bool:
            return any(v is MISSING for v in cands) or test(cands)
        return null
    return test


def compare(op: str, target: Any) -> Cands:
    if target is None:  # $gte/$lte null is equality with null; $gt/$lt null match nothing
        return eq_cands(None) if op in ("$gte", "$lte") else (lambda cands: False)
    if is_nan(target):
        return eq_cands(target) if op in ("$gte", "$lte") else (lambda cands: False)
    return any_value(compare_test(op, target))


def compare_test(op: str, target: Any) -> Test:
    """``op`` against ``target`` on one value, type-bracketed (null and NaN bounds are equality or nothing)."""
    if target is None or is_nan(target):
        return equals(target) if op in ("$gte", "$lte") else (lambda v: False)
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

def regex_cands(pattern: Any, options: Any, deadline: Deadline) -> Cands:
    run = compile_regex(pattern, options, deadline)
    return any_value(lambda v: type(v) is str and run(v))


def string_test(run: Callable[[str], bool]) -> Test:
    return lambda v: type(v) is str and run(v)


def in_cands(values: Any, deadline: Deadline) -> Cands:
    test, null = in_test(values, deadline)
    positive = any_value(test)
    if null:
        return lambda cands: any(v is MISSING for v in cands) or positive(cands)
    return positive


def in_test(values: Any, deadline: Deadline) -> tuple[Test, bool]:
    """``$in`` on one value, and whether the list holds null (which a missing field matches too)."""
    if not isinstance(values, list | tuple):
        raise bad_value("$in needs an array")
    fast: set[Any] = set()
    tests: list[Test] = []
    null = False
    for item in values:
        if isinstance(item, Mapping) and any(str(k).startswith("$") for k in item) and not isinstance(item, DBRef):
            raise bad_value("cannot nest $ under $in")
        if isinstance(item, Regex | re.Pattern):
            tests.append(string_test(compile_regex(item, "", deadline)))
        elif item is None:
            null = True
            tests.append(equals(None))
        elif (type(item) is str) or (is_number(item) and not is_nan(item) and not isinstance(item, Decimal128)):
            fast.add(item)
        else:
            tests.append(equals(item.as_doc() if isinstance(item, DBRef) else item))

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


def type_cands(spec: Any) -> Cands:
    wanted = type_names(spec)
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


def type_names(spec: Any) -> set[str]:
    """The BSON type names a ``$type`` argument asks for (``"number"`` is the four numeric types)."""
    names = spec if isinstance(spec, list) else [spec]
    if not names:
        raise bad_value("$type must match at least one type")  # as MongoDB and DocumentDB refuse []
    wanted: set[str] = set()
    for name in names:
        code = type_code(name)
        if code is None:
            raise bad_value(f"unknown type name alias: {name}" if isinstance(name, str) else f"Invalid numerical type "
                            f"code: {name}")
        wanted |= {"int", "long", "double", "decimal"} if code == "number" else {code}
    return wanted


def size_cands(n: Any) -> Cands:
    size = size_of(n)
    return lambda cands: any(type(v) is list and len(v) == size for v in cands)


def size_of(n: Any) -> int:
    if not is_number(n) or is_nan(n) or number_value(n) != int(number_value(n)):
        raise bad_value("$size needs a number")
    return int(number_value(n))


def mod_cands(spec: Any) -> Cands:
    return any_value(mod_test(spec))


def mod_test(spec: Any) -> Test:
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
