"""Aggregation expressions (``$expr``, ``$project``, ``$group``) compiled into Python functions.

``compile_expression(expr, deadline)`` returns ``evaluate(document) -> value``. Field paths
(``"$a.b"``) read as the aggregation framework reads them: through an array of documents they
give the array of the values present; a missing field is ``MISSING``, which the comparison
operators order below null. Every operator on the guard's expression allow-list is here;
arithmetic keeps MongoDB's types (int stays int, any Decimal128 makes Decimal128, ``$divide``
gives a double) and a type the server refuses raises ``OperationFailure``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from datetime import UTC, datetime, timedelta
from decimal import ROUND_HALF_EVEN, Decimal, InvalidOperation
from typing import Any

from bson import Decimal128, Int64, ObjectId, Regex
from bson.datetime_ms import DatetimeMS
from pymongo.errors import OperationFailure

from argus.agent.engine.deadline import Deadline
from argus.agent.engine.regexes import compile_regex
from argus.agent.engine.values import (
    MISSING,
    bson_type,
    date_ms,
    group_key,
    is_nan,
    is_number,
    number_value,
    sort_key,
    truthy,
)

__all__ = ["OPERATORS", "Evaluate", "compile_expression", "field_getter"]

Evaluate = Callable[[Any], Any]
_INT64 = range(-(2 ** 63), 2 ** 63)
_INT32 = range(-(2 ** 31), 2 ** 31)
_EPOCH = datetime(1970, 1, 1)


def _fail(message: str, code: int = 2) -> OperationFailure:
    return OperationFailure(message, code, {"ok": 0, "errmsg": message, "code": code})


def field_getter(path: str) -> Evaluate:
    """``$path`` as the aggregation framework reads it."""
    parts = path.split(".")

    def get(value: Any, i: int) -> Any:
        for j in range(i, len(parts)):
            if isinstance(value, dict):
                value = value.get(parts[j], MISSING)
                if value is MISSING:
                    return MISSING
            elif isinstance(value, list):
                out = []
                for element in value:
                    if isinstance(element, dict | list):
                        got = get(element, j)
                        if got is not MISSING:
                            out.append(got)
                return out
            else:
                return MISSING
        return value

    if len(parts) == 1:
        key = parts[0]
        return lambda doc: doc.get(key, MISSING) if isinstance(doc, dict) else MISSING
    return lambda doc: get(doc, 0)


def compile_expression(expr: Any, deadline: Deadline | None = None) -> Evaluate:
    deadline = deadline or Deadline(None)
    return _compile(expr, deadline)


def _compile(expr: Any, deadline: Deadline) -> Evaluate:
    if isinstance(expr, str) and expr.startswith("$"):
        if expr.startswith("$$"):
            name, _, rest = expr[2:].partition(".")
            if name in ("ROOT", "CURRENT"):
                if not rest:
                    return lambda doc: doc
                inner = field_getter(rest)
                return inner
            if name == "REMOVE":
                return lambda doc: MISSING
            raise _fail(f"Use of undefined variable: {name}", 17276)
        return field_getter(expr[1:])
    if isinstance(expr, list):
        items = [_compile(e, deadline) for e in expr]
        return lambda doc: [_present(f(doc)) for f in items]
    if isinstance(expr, Mapping):
        keys = list(expr)
        if len(keys) == 1 and str(keys[0]).startswith("$"):
            op = keys[0]
            if op == "$literal":
                value = expr[op]
                return lambda doc: value
            builder = OPERATORS.get(op)
            if builder is None:
                raise _fail(f"Unrecognized expression '{op}'", 168)
            return builder(expr[op], deadline)
        if any(str(k).startswith("$") for k in keys):
            raise _fail(f"an expression object cannot mix operators and fields: {keys[0]}", 16410)
        fields = {k: _compile(v, deadline) for k, v in expr.items()}

        def document(doc: Any) -> dict[str, Any]:
            out = {}
            for key, f in fields.items():
                value = f(doc)
                if value is not MISSING:
                    out[key] = value
            return out
        return document
    return lambda doc: expr


def _present(value: Any) -> Any:
    return None if value is MISSING else value


def _args(arg: Any, deadline: Deadline, count: int | None = None, name: str = "") -> list[Evaluate]:
    items = arg if isinstance(arg, list) else [arg]
    if count is not None and len(items) != count:
        raise _fail(f"Expression {name} takes exactly {count} arguments. {len(items)} were passed in.", 16020)
    return [_compile(item, deadline) for item in items]


def _nullish(value: Any) -> bool:
    return value is None or value is MISSING


# --- comparison and logic --------------------------------------------------------------------------

def _comparison(name: str, test: Callable[[int], bool]) -> Callable[[Any, Deadline], Evaluate]:
    def build(arg: Any, deadline: Deadline) -> Evaluate:
        left, right = _args(arg, deadline, 2, name)

        def run(doc: Any) -> Any:
            a, b = sort_key(left(doc)), sort_key(right(doc))
            return test((a > b) - (a < b))
        return run
    return build


def _cmp(arg: Any, deadline: Deadline) -> Evaluate:
    left, right = _args(arg, deadline, 2, "$cmp")

    def run(doc: Any) -> int:
        a, b = sort_key(left(doc)), sort_key(right(doc))
        return (a > b) - (a < b)
    return run


def _and(arg: Any, deadline: Deadline) -> Evaluate:
    items = _args(arg, deadline)
    return lambda doc: all(truthy(f(doc)) for f in items)


def _or(arg: Any, deadline: Deadline) -> Evaluate:
    items = _args(arg, deadline)
    return lambda doc: any(truthy(f(doc)) for f in items)


def _not(arg: Any, deadline: Deadline) -> Evaluate:
    (item,) = _args(arg, deadline, 1, "$not")
    return lambda doc: not truthy(item(doc))


def _in(arg: Any, deadline: Deadline) -> Evaluate:
    needle, haystack = _args(arg, deadline, 2, "$in")

    def run(doc: Any) -> bool:
        values = haystack(doc)
        if not isinstance(values, list):
            raise _fail(f"$in requires an array as a second argument, found: {bson_type(values)}", 40081)
        key = sort_key(_present(needle(doc)))
        return any(sort_key(v) == key for v in values)
    return run


def _cond(arg: Any, deadline: Deadline) -> Evaluate:
    if isinstance(arg, Mapping):
        if set(arg) != {"if", "then", "else"}:
            raise _fail("$cond needs 'if', 'then' and 'else'", 17080)
        arg = [arg["if"], arg["then"], arg["else"]]
    test, then, other = _args(arg, deadline, 3, "$cond")
    return lambda doc: then(doc) if truthy(test(doc)) else other(doc)


def _if_null(arg: Any, deadline: Deadline) -> Evaluate:
    items = _args(arg, deadline)
    if len(items) < 2:
        raise _fail("$ifNull needs at least two arguments", 1257300)

    def run(doc: Any) -> Any:
        for f in items[:-1]:
            value = f(doc)
            if not _nullish(value):
                return value
        return items[-1](doc)
    return run


def _switch(arg: Any, deadline: Deadline) -> Evaluate:
    if not isinstance(arg, Mapping) or not isinstance(arg.get("branches"), list):
        raise _fail("$switch requires at least one branch", 40060)
    branches = [(_compile(b.get("case"), deadline), _compile(b.get("then"), deadline))
                for b in arg["branches"] if isinstance(b, Mapping)]
    default = _compile(arg["default"], deadline) if "default" in arg else None

    def run(doc: Any) -> Any:
        for case, then in branches:
            if truthy(case(doc)):
                return then(doc)
        if default is None:
            raise _fail("$switch could not find a matching branch for an input, and no default was specified.", 40066)
        return default(doc)
    return run


# --- types and arrays ------------------------------------------------------------------------------

def _type(arg: Any, deadline: Deadline) -> Evaluate:
    (item,) = _args(arg, deadline, 1, "$type")
    return lambda doc: bson_type(item(doc))


def _is_number(arg: Any, deadline: Deadline) -> Evaluate:
    (item,) = _args(arg, deadline, 1, "$isNumber")
    return lambda doc: is_number(item(doc))


def _is_array(arg: Any, deadline: Deadline) -> Evaluate:
    (item,) = _args(arg, deadline, 1, "$isArray")
    return lambda doc: isinstance(item(doc), list)


def _size(arg: Any, deadline: Deadline) -> Evaluate:
    (item,) = _args(arg, deadline, 1, "$size")

    def run(doc: Any) -> int:
        value = item(doc)
        if not isinstance(value, list):
            raise _fail(f"The argument to $size must be an array. Type of argument: {bson_type(value)}", 17124)
        return len(value)
    return run


def _set_union(arg: Any, deadline: Deadline) -> Evaluate:
    """The distinct elements of its arrays (equal as ``$group`` compares them); null when one is null or missing."""
    items = _args(arg, deadline, None, "$setUnion")

    def run(doc: Any) -> Any:
        out: dict[Any, Any] = {}
        for item in items:
            values = item(doc)
            if _nullish(values):
                return None
            if not isinstance(values, list):
                raise _fail(f"All operands of $setUnion must be arrays. One argument is of type: "
                            f"{bson_type(values)}", 17043)
            for value in values:
                out.setdefault(group_key(value), value)
        return list(out.values())
    return run


def _object_to_array(arg: Any, deadline: Deadline) -> Evaluate:
    """A document as ``[{k, v}, ...]`` in its field order; null for null or missing."""
    (item,) = _args(arg, deadline, 1, "$objectToArray")

    def run(doc: Any) -> Any:
        value = item(doc)
        if _nullish(value):
            return None
        if not isinstance(value, dict):
            raise _fail(f"$objectToArray requires a document input, found: {bson_type(value)}", 40390)
        return [{"k": k, "v": v} for k, v in value.items()]
    return run


def _array_elem_at(arg: Any, deadline: Deadline) -> Evaluate:
    array, index = _args(arg, deadline, 2, "$arrayElemAt")

    def run(doc: Any) -> Any:
        values, i = array(doc), index(doc)
        if _nullish(values) or _nullish(i):
            return None
        if not isinstance(values, list) or not is_number(i):
            raise _fail("$arrayElemAt needs an array and a number", 28689)
        n = int(number_value(i))
        return values[n] if -len(values) <= n < len(values) else MISSING
    return run


def _end(last: bool) -> Callable[[Any, Deadline], Evaluate]:
    def build(arg: Any, deadline: Deadline) -> Evaluate:
        (item,) = _args(arg, deadline, 1, "$last" if last else "$first")

        def run(doc: Any) -> Any:
            values = item(doc)
            if _nullish(values):
                return values if values is MISSING else None
            if not isinstance(values, list):
                raise _fail(f"$first/$last's argument must be an array, but is {bson_type(values)}", 28689)
            return (values[-1] if last else values[0]) if values else MISSING
        return run
    return build


# --- strings ---------------------------------------------------------------------------------------

def _string_of(value: Any, op: str) -> str:
    if isinstance(value, str):
        return value
    raise _fail(f"{op} requires a string argument, found: {bson_type(value)}", 34471)


def _str_len(op: str, measure: Callable[[str], int]) -> Callable[[Any, Deadline], Evaluate]:
    def build(arg: Any, deadline: Deadline) -> Evaluate:
        (item,) = _args(arg, deadline, 1, op)
        return lambda doc: measure(_string_of(item(doc), op))
    return build


def _case(op: str, upper: bool) -> Callable[[Any, Deadline], Evaluate]:
    def build(arg: Any, deadline: Deadline) -> Evaluate:
        (item,) = _args(arg, deadline, 1, op)

        def run(doc: Any) -> str:
            value = item(doc)
            text = "" if _nullish(value) else value if isinstance(value, str) else _to_string(value)
            return "".join(c.upper() if upper and c.isascii() else c.lower() if not upper and c.isascii() else c
                           for c in text)
        return run
    return build


def _trim(op: str, left: bool, right: bool) -> Callable[[Any, Deadline], Evaluate]:
    def build(arg: Any, deadline: Deadline) -> Evaluate:
        if not isinstance(arg, Mapping) or "input" not in arg:
            raise _fail(f"{op} requires an 'input' field", 50696)
        item = _compile(arg["input"], deadline)
        chars = _compile(arg["chars"], deadline) if "chars" in arg else None

        def run(doc: Any) -> Any:
            value = item(doc)
            if _nullish(value):
                return None
            text = _string_of(value, op)
            strip = None if chars is None else chars(doc)
            if strip is not None and not isinstance(strip, str):
                raise _fail(f"{op} requires 'chars' to be a string", 50700)
            strip = " \t\n\r\x0b\x0c\x00\u00a0\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a" \
                if strip is None else strip
            if left and right:
                return text.strip(strip)
            return text.lstrip(strip) if left else text.rstrip(strip)
        return run
    return build


def _concat(arg: Any, deadline: Deadline) -> Evaluate:
    items = _args(arg, deadline)

    def run(doc: Any) -> Any:
        values = [f(doc) for f in items]
        if any(_nullish(v) for v in values):
            return None
        return "".join(_string_of(v, "$concat") for v in values)
    return run


def _substr_cp(arg: Any, deadline: Deadline) -> Evaluate:
    text, start, count = _args(arg, deadline, 3, "$substrCP")

    def run(doc: Any) -> str:
        value = text(doc)
        value = "" if _nullish(value) else value if isinstance(value, str) else _to_string(value)
        a, n = start(doc), count(doc)
        if not is_number(a) or not is_number(n):
            raise _fail("$substrCP needs numeric start and length", 34450)
        i, k = int(number_value(a)), int(number_value(n))
        if i < 0 or k < 0:
            raise _fail("$substrCP needs non-negative start and length", 34455)
        return value[i:i + k]
    return run


def _regex_match(arg: Any, deadline: Deadline) -> Evaluate:
    if not isinstance(arg, Mapping) or "input" not in arg or "regex" not in arg:
        raise _fail("$regexMatch needs 'input' and 'regex'", 51105)
    item = _compile(arg["input"], deadline)
    pattern = arg["regex"]
    if not isinstance(pattern, str | Regex):
        raise _fail("$regexMatch needs a constant regex", 51105)
    run_regex = compile_regex(pattern, arg.get("options", ""), deadline)

    def run(doc: Any) -> bool:
        value = item(doc)
        if _nullish(value):
            return False
        return run_regex(_string_of(value, "$regexMatch"))
    return run


def _split(arg: Any, deadline: Deadline) -> Evaluate:
    text, delimiter = _args(arg, deadline, 2, "$split")

    def run(doc: Any) -> Any:
        value, sep = text(doc), delimiter(doc)
        if _nullish(value):
            return None
        if not isinstance(sep, str) or not sep:
            raise _fail("$split requires a non-empty string delimiter", 40087)
        return _string_of(value, "$split").split(sep)
    return run


# --- numbers ---------------------------------------------------------------------------------------

def _number_result(value: int | float | Decimal, decimal: bool) -> Any:
    if decimal:
        return Decimal128(Decimal(value) if not isinstance(value, Decimal) else value)
    if isinstance(value, int) and value not in _INT64:
        return float(value)
    return value


def _numbers(values: list[Any], op: str) -> tuple[list[Any], bool]:
    out = []
    decimal = False
    for value in values:
        if not is_number(value):
            raise _fail(f"{op} only supports numeric types, not {bson_type(value)}", 16554)
        decimal |= isinstance(value, Decimal128)
        out.append(value.to_decimal() if isinstance(value, Decimal128) else value)
    if decimal:
        out = [v if isinstance(v, Decimal) else Decimal(v) for v in out]
    return out, decimal


def _add(arg: Any, deadline: Deadline) -> Evaluate:
    items = _args(arg, deadline)

    def run(doc: Any) -> Any:
        values = [f(doc) for f in items]
        if any(_nullish(v) for v in values):
            return None
        dates = [v for v in values if isinstance(v, datetime | DatetimeMS)]
        if len(dates) > 1:
            raise _fail("only one date allowed in an $add expression", 16612)
        numbers, decimal = _numbers([v for v in values if not isinstance(v, datetime | DatetimeMS)], "$add")
        total: Any = sum(numbers, Decimal(0) if decimal else 0)
        if dates:
            return _from_ms(date_ms(dates[0]) + round(total))
        return _number_result(total, decimal)
    return run


def _subtract(arg: Any, deadline: Deadline) -> Evaluate:
    left, right = _args(arg, deadline, 2, "$subtract")

    def run(doc: Any) -> Any:
        a, b = left(doc), right(doc)
        if _nullish(a) or _nullish(b):
            return None
        if isinstance(a, datetime | DatetimeMS):
            if isinstance(b, datetime | DatetimeMS):
                return Int64(date_ms(a) - date_ms(b))
            (n,), _ = _numbers([b], "$subtract")
            return _from_ms(date_ms(a) - round(n))
        (x, y), decimal = _numbers([a, b], "$subtract")
        return _number_result(x - y, decimal)
    return run


def _multiply(arg: Any, deadline: Deadline) -> Evaluate:
    items = _args(arg, deadline)

    def run(doc: Any) -> Any:
        values = [f(doc) for f in items]
        if any(_nullish(v) for v in values):
            return None
        numbers, decimal = _numbers(values, "$multiply")
        product: Any = Decimal(1) if decimal else 1
        for n in numbers:
            product = product * n
        return _number_result(product, decimal)
    return run


def _divide(arg: Any, deadline: Deadline) -> Evaluate:
    left, right = _args(arg, deadline, 2, "$divide")

    def run(doc: Any) -> Any:
        a, b = left(doc), right(doc)
        if _nullish(a) or _nullish(b):
            return None
        (x, y), decimal = _numbers([a, b], "$divide")
        if y == 0:
            raise _fail("can't $divide by zero", 16608)
        return Decimal128(x / y) if decimal else float(x) / float(y)
    return run


def _mod(arg: Any, deadline: Deadline) -> Evaluate:
    left, right = _args(arg, deadline, 2, "$mod")

    def run(doc: Any) -> Any:
        a, b = left(doc), right(doc)
        if _nullish(a) or _nullish(b):
            return None
        (x, y), decimal = _numbers([a, b], "$mod")
        if y == 0:
            raise _fail("can't $mod by zero", 16610)
        if isinstance(x, int) and isinstance(y, int):
            result: Any = abs(x) % abs(y) * (-1 if x < 0 else 1)
        else:
            result = math.fmod(float(x), float(y)) if not decimal else x % y
        return _number_result(result, decimal)
    return run


def _unary(op: str, fn: Callable[[Any], Any]) -> Callable[[Any, Deadline], Evaluate]:
    def build(arg: Any, deadline: Deadline) -> Evaluate:
        (item,) = _args(arg, deadline, 1, op)

        def run(doc: Any) -> Any:
            value = item(doc)
            if _nullish(value):
                return None
            (n,), decimal = _numbers([value], op)
            if isinstance(n, float):
                # a double stays a double ($floor of 2.5 is 2.0, manual): math.floor would give an int
                return n if math.isnan(n) or (math.isinf(n) and op != "$abs") else float(fn(n))
            return _number_result(fn(n), decimal)
        return run
    return build


def _round(arg: Any, deadline: Deadline) -> Evaluate:
    items = _args(arg, deadline)

    def run(doc: Any) -> Any:
        value = items[0](doc)
        places = items[1](doc) if len(items) > 1 else 0
        if _nullish(value) or _nullish(places):
            return None
        (n,), decimal = _numbers([value], "$round")
        digits = int(number_value(places))
        if isinstance(n, float) and (math.isnan(n) or math.isinf(n)):
            return n
        if isinstance(n, int) and digits >= 0:
            return n
        rounded = Decimal(n).quantize(Decimal(1).scaleb(-digits), rounding=ROUND_HALF_EVEN)
        if decimal:
            return Decimal128(rounded)
        return int(rounded) if isinstance(n, int) else float(rounded)
    return run


def _spread(values: list[Any]) -> list[Any]:
    if len(values) == 1 and isinstance(values[0], list):
        return values[0]
    return values


def _sum(arg: Any, deadline: Deadline) -> Evaluate:
    items = _args(arg, deadline)

    def run(doc: Any) -> Any:
        numbers = [v for v in _spread([f(doc) for f in items]) if is_number(v)]
        values, decimal = _numbers(numbers, "$sum")
        return _number_result(sum(values, Decimal(0) if decimal else 0), decimal)
    return run


def _avg(arg: Any, deadline: Deadline) -> Evaluate:
    items = _args(arg, deadline)

    def run(doc: Any) -> Any:
        numbers = [v for v in _spread([f(doc) for f in items]) if is_number(v)]
        if not numbers:
            return None
        values, decimal = _numbers(numbers, "$avg")
        total = sum(values, Decimal(0) if decimal else 0)
        return Decimal128(total / len(values)) if decimal else float(total) / len(values)
    return run


def _extreme(highest: bool) -> Callable[[Any, Deadline], Evaluate]:
    def build(arg: Any, deadline: Deadline) -> Evaluate:
        items = _args(arg, deadline)

        def run(doc: Any) -> Any:
            values = [v for v in _spread([f(doc) for f in items]) if not _nullish(v)]
            if not values:
                return None
            return (max if highest else min)(values, key=sort_key)
        return run
    return build


# --- dates and conversions -------------------------------------------------------------------------

def _from_ms(ms: int) -> Any:
    try:
        return _EPOCH + timedelta(milliseconds=ms)
    except OverflowError:
        return DatetimeMS(ms)


def _as_datetime(value: Any, op: str) -> datetime:
    if isinstance(value, DatetimeMS):
        raise _fail(f"{op}: the date is outside the years 1-9999", 18537)
    if isinstance(value, datetime):
        return value.astimezone(UTC).replace(tzinfo=None) if value.tzinfo else value
    if isinstance(value, ObjectId):
        return value.generation_time.replace(tzinfo=None)
    raise _fail(f"can't convert from BSON type {bson_type(value)} to Date", 16006)


def _date_part(op: str, part: Callable[[datetime], int]) -> Callable[[Any, Deadline], Evaluate]:
    def build(arg: Any, deadline: Deadline) -> Evaluate:
        if isinstance(arg, Mapping) and "date" in arg:
            arg = arg["date"]
        (item,) = _args(arg, deadline, 1, op)

        def run(doc: Any) -> Any:
            value = item(doc)
            return None if _nullish(value) else part(_as_datetime(value, op))
        return run
    return build


def _date_to_string(arg: Any, deadline: Deadline) -> Evaluate:
    if not isinstance(arg, Mapping) or "date" not in arg:
        raise _fail("$dateToString needs 'date'", 18628)
    item = _compile(arg["date"], deadline)
    fmt = arg.get("format", "%Y-%m-%dT%H:%M:%S.%LZ")
    on_null = _compile(arg["onNull"], deadline) if "onNull" in arg else None

    def run(doc: Any) -> Any:
        value = item(doc)
        if _nullish(value):
            return on_null(doc) if on_null else None
        when = _as_datetime(value, "$dateToString")
        out = fmt.replace("%L", f"{when.microsecond // 1000:03d}").replace("%Z", "0").replace("%z", "+0000")
        return when.strftime(out.replace("%%", "\x00")).replace("\x00", "%")
    return run


def _to_string(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, datetime | DatetimeMS):
        when = _as_datetime(value, "$toString")
        return when.strftime("%Y-%m-%dT%H:%M:%S.") + f"{when.microsecond // 1000:03d}Z"
    if isinstance(value, ObjectId | Decimal128):
        return str(value)
    if isinstance(value, float):
        return repr(value) if not value.is_integer() or math.isinf(value) else str(int(value))
    if isinstance(value, int):
        return str(int(value))
    raise _fail(f"Unsupported conversion from {bson_type(value)} to string", 241)


def _to_number(target: str, value: Any) -> Any:
    if isinstance(value, bool):
        return {"double": float, "int": int, "long": Int64}[target](value)
    if isinstance(value, datetime | DatetimeMS) and target in ("double", "long"):
        ms = date_ms(value)
        return float(ms) if target == "double" else Int64(ms)
    if isinstance(value, str):
        try:
            number: Any = float(value) if target == "double" else int(value, 10)
        except ValueError:
            raise _fail(f"Failed to parse number '{value[:40]}' in $convert", 241) from None
    elif is_number(value):
        number = number_value(value)
        if target != "double":
            if is_nan(value) or number in (math.inf, -math.inf):
                raise _fail(f"Attempt to convert NaN or infinity to {target}", 241)
            number = int(number)
    else:
        raise _fail(f"Unsupported conversion from {bson_type(value)} to {target}", 241)
    if target == "double":
        return float(number)
    limit = _INT32 if target == "int" else _INT64
    if number not in limit:
        raise _fail(f"Conversion would overflow target type in $convert with no onError value: {number}", 241)
    return int(number) if target == "int" else Int64(number)


def _to_date(value: Any) -> Any:
    if isinstance(value, datetime | DatetimeMS):
        return value
    if isinstance(value, ObjectId):
        return value.generation_time.replace(tzinfo=None)
    if type(value) is int and value in _INT32:
        # an int32 is no date ($toDate/$convert: double, decimal, long, string, ObjectId; not int)
        raise _fail("Unsupported conversion from int to date in $convert with no onError value", 241)
    if is_number(value) and not is_nan(value):
        return _from_ms(int(number_value(value)))
    if isinstance(value, str):
        try:
            parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            raise _fail(f"Error parsing date string '{value[:40]}'", 241) from None
        return parsed.astimezone(UTC).replace(tzinfo=None) if parsed.tzinfo else parsed
    raise _fail(f"can't convert from BSON type {bson_type(value)} to Date", 241)


def _converter(target: str) -> Callable[[Any], Any]:
    if target == "string":
        return _to_string
    if target == "date":
        return _to_date
    if target in ("double", "int", "long"):
        return lambda value: _to_number(target, value)
    if target == "decimal":
        return lambda value: Decimal128(str(_to_number("double", value))) if not isinstance(value, Decimal128) \
            else value
    if target == "bool":
        return truthy
    raise _fail(f"Unknown type name: {target}", 241)


def _to(target: str) -> Callable[[Any, Deadline], Evaluate]:
    def build(arg: Any, deadline: Deadline) -> Evaluate:
        (item,) = _args(arg, deadline, 1, f"$to{target.title()}")
        convert = _converter(target)

        def run(doc: Any) -> Any:
            value = item(doc)
            return None if _nullish(value) else convert(value)
        return run
    return build


def _convert(arg: Any, deadline: Deadline) -> Evaluate:
    if not isinstance(arg, Mapping) or "input" not in arg or "to" not in arg:
        raise _fail("$convert needs 'input' and 'to'", 241)
    item = _compile(arg["input"], deadline)
    to = arg["to"]
    names = {1: "double", 2: "string", 8: "bool", 9: "date", 16: "int", 18: "long", 19: "decimal"}
    target = names.get(int(to)) if is_number(to) else to
    convert = _converter(str(target))
    on_error = _compile(arg["onError"], deadline) if "onError" in arg else None
    on_null = _compile(arg["onNull"], deadline) if "onNull" in arg else None

    def run(doc: Any) -> Any:
        value = item(doc)
        if _nullish(value):
            return on_null(doc) if on_null else None
        try:
            return convert(value)
        except (OperationFailure, InvalidOperation, ValueError, OverflowError):
            if on_error is None:
                raise
            return on_error(doc)
    return run


def _no_expression(op: str) -> Callable[[Any, Deadline], Evaluate]:
    def build(arg: Any, deadline: Deadline) -> Evaluate:
        raise _fail(f"{op} is an accumulator, not an expression", 168)
    return build


OPERATORS: dict[str, Callable[[Any, Deadline], Evaluate]] = {
    "$eq": _comparison("$eq", lambda c: c == 0), "$ne": _comparison("$ne", lambda c: c != 0),
    "$gt": _comparison("$gt", lambda c: c > 0), "$gte": _comparison("$gte", lambda c: c >= 0),
    "$lt": _comparison("$lt", lambda c: c < 0), "$lte": _comparison("$lte", lambda c: c <= 0),
    "$cmp": _cmp, "$and": _and, "$or": _or, "$not": _not, "$in": _in,
    "$cond": _cond, "$ifNull": _if_null, "$switch": _switch,
    "$type": _type, "$isNumber": _is_number, "$isArray": _is_array, "$size": _size,
    "$arrayElemAt": _array_elem_at, "$first": _end(False), "$last": _end(True),
    "$setUnion": _set_union, "$objectToArray": _object_to_array,
    "$strLenCP": _str_len("$strLenCP", len), "$strLenBytes": _str_len("$strLenBytes", lambda s: len(s.encode())),
    "$toLower": _case("$toLower", False), "$toUpper": _case("$toUpper", True),
    "$trim": _trim("$trim", True, True), "$ltrim": _trim("$ltrim", True, False),
    "$rtrim": _trim("$rtrim", False, True), "$concat": _concat, "$substrCP": _substr_cp,
    "$regexMatch": _regex_match, "$split": _split,
    "$abs": _unary("$abs", abs), "$add": _add, "$subtract": _subtract, "$multiply": _multiply,
    "$divide": _divide, "$mod": _mod, "$floor": _unary("$floor", math.floor), "$ceil": _unary("$ceil", math.ceil),
    "$round": _round, "$sum": _sum, "$avg": _avg, "$min": _extreme(False), "$max": _extreme(True),
    "$count": _no_expression("$count"),
    "$year": _date_part("$year", lambda d: d.year), "$month": _date_part("$month", lambda d: d.month),
    "$dayOfMonth": _date_part("$dayOfMonth", lambda d: d.day), "$hour": _date_part("$hour", lambda d: d.hour),
    "$dateToString": _date_to_string,
    "$toString": _to("string"), "$toDouble": _to("double"), "$toInt": _to("int"), "$toLong": _to("long"),
    "$toDate": _to("date"), "$convert": _convert,
}

