"""Date parts and conversions: ``$year`` ... ``$hour``, ``$dateToString``, ``$toString``,
``$toDouble``, ``$toInt``, ``$toLong``, ``$toDate``, ``$convert`` (with ``onError`` and ``onNull``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from datetime import UTC, datetime, timedelta
from decimal import InvalidOperation
from typing import Any

from bson import Decimal128, Int64, ObjectId
from bson.datetime_ms import DatetimeMS
from pymongo.errors import OperationFailure

from argus.agent.engine.deadline import Deadline
from argus.agent.engine.errors import failure
from argus.agent.engine.expressions.compiler import INT32, INT64, Evaluate, args, compile_node, nullish
from argus.agent.engine.values import bson_type, date_ms, is_nan, is_number, number_value, truthy

__all__ = ["OPERATORS", "from_ms", "to_string"]

_EPOCH = datetime(1970, 1, 1)


def from_ms(ms: int) -> Any:
    try:
        return _EPOCH + timedelta(milliseconds=ms)
    except OverflowError:
        return DatetimeMS(ms)


def _as_datetime(value: Any, op: str) -> datetime:
    if isinstance(value, DatetimeMS):
        raise failure(f"{op}: the date is outside the years 1-9999", 18537)
    if isinstance(value, datetime):
        return value.astimezone(UTC).replace(tzinfo=None) if value.tzinfo else value
    if isinstance(value, ObjectId):
        return value.generation_time.replace(tzinfo=None)
    raise failure(f"can't convert from BSON type {bson_type(value)} to Date", 16006)


def _date_part(op: str, part: Callable[[datetime], int]) -> Callable[[Any, Deadline], Evaluate]:
    def build(arg: Any, deadline: Deadline) -> Evaluate:
        if isinstance(arg, Mapping) and "date" in arg:
            arg = arg["date"]
        (item,) = args(arg, deadline, 1, op)

        def run(doc: Any) -> Any:
            value = item(doc)
            return None if nullish(value) else part(_as_datetime(value, op))
        return run
    return build


def _date_to_string(arg: Any, deadline: Deadline) -> Evaluate:
    if not isinstance(arg, Mapping) or "date" not in arg:
        raise failure("$dateToString needs 'date'", 18628)
    item = compile_node(arg["date"], deadline)
    fmt = arg.get("format", "%Y-%m-%dT%H:%M:%S.%LZ")
    on_null = compile_node(arg["onNull"], deadline) if "onNull" in arg else None

    def run(doc: Any) -> Any:
        value = item(doc)
        if nullish(value):
            return on_null(doc) if on_null else None
        when = _as_datetime(value, "$dateToString")
        out = fmt.replace("%L", f"{when.microsecond // 1000:03d}").replace("%Z", "0").replace("%z", "+0000")
        return when.strftime(out.replace("%%", "\x00")).replace("\x00", "%")
    return run


def to_string(value: Any) -> str:
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
    raise failure(f"Unsupported conversion from {bson_type(value)} to string", 241)


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
            raise failure(f"Failed to parse number '{value[:40]}' in $convert", 241) from None
    elif is_number(value):
        number = number_value(value)
        if target != "double":
            if is_nan(value) or number in (math.inf, -math.inf):
                raise failure(f"Attempt to convert NaN or infinity to {target}", 241)
            number = int(number)
    else:
        raise failure(f"Unsupported conversion from {bson_type(value)} to {target}", 241)
    if target == "double":
        return float(number)
    limit = INT32 if target == "int" else INT64
    if number not in limit:
        raise failure(f"Conversion would overflow target type in $convert with no onError value: {number}", 241)
    return int(number) if target == "int" else Int64(number)


def _to_date(value: Any) -> Any:
    if isinstance(value, datetime | DatetimeMS):
        return value
    if isinstance(value, ObjectId):
        return value.generation_time.replace(tzinfo=None)
    if type(value) is int and value in INT32:
        # an int32 is no date ($toDate/$convert: double, decimal, long, string, ObjectId; not int)
        raise failure("Unsupported conversion from int to date in $convert with no onError value", 241)
    if is_number(value) and not is_nan(value):
        return from_ms(int(number_value(value)))
    if isinstance(value, str):
        try:
            parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            raise failure(f"Error parsing date string '{value[:40]}'", 241) from None
        return parsed.astimezone(UTC).replace(tzinfo=None) if parsed.tzinfo else parsed
    raise failure(f"can't convert from BSON type {bson_type(value)} to Date", 241)


def _converter(target: str) -> Callable[[Any], Any]:
    if target == "string":
        return to_string
    if target == "date":
        return _to_date
    if target in ("double", "int", "long"):
        return lambda value: _to_number(target, value)
    if target == "decimal":
        return lambda value: Decimal128(str(_to_number("double", value))) if not isinstance(value, Decimal128) \
            else value
    if target == "bool":
        return truthy
    raise failure(f"Unknown type name: {target}", 241)


def _to(target: str) -> Callable[[Any, Deadline], Evaluate]:
    def build(arg: Any, deadline: Deadline) -> Evaluate:
        (item,) = args(arg, deadline, 1, f"$to{target.title()}")
        convert = _converter(target)

        def run(doc: Any) -> Any:
            value = item(doc)
            return None if nullish(value) else convert(value)
        return run
    return build


def _convert(arg: Any, deadline: Deadline) -> Evaluate:
    if not isinstance(arg, Mapping) or "input" not in arg or "to" not in arg:
        raise failure("$convert needs 'input' and 'to'", 241)
    item = compile_node(arg["input"], deadline)
    to = arg["to"]
    names = {1: "double", 2: "string", 8: "bool", 9: "date", 16: "int", 18: "long", 19: "decimal"}
    target = names.get(int(to)) if is_number(to) else to
    convert = _converter(str(target))
    on_error = compile_node(arg["onError"], deadline) if "onError" in arg else None
    on_null = compile_node(arg["onNull"], deadline) if "onNull" in arg else None

    def run(doc: Any) -> Any:
        value = item(doc)
        if nullish(value):
            return on_null(doc) if on_null else None
        try:
            return convert(value)
        except (OperationFailure, InvalidOperation, ValueError, OverflowError):
            if on_error is None:
                raise
            return on_error(doc)
    return run

OPERATORS: dict[str, Callable[[Any, Deadline], Evaluate]] = {
    "$year": _date_part("$year", lambda d: d.year), "$month": _date_part("$month", lambda d: d.month),
    "$dayOfMonth": _date_part("$dayOfMonth", lambda d: d.day), "$hour": _date_part("$hour", lambda d: d.hour),
    "$dateToString": _date_to_string,
    "$toString": _to("string"), "$toDouble": _to("double"), "$toInt": _to("int"), "$toLong": _to("long"),
    "$toDate": _to("date"), "$convert": _convert,
}
