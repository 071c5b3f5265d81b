"""Arithmetic and numeric accumulators in expressions, keeping MongoDB's types: whole numbers
stay whole (a double beyond 64 bits), any Decimal128 makes Decimal128, ``$divide`` gives a double,
a date plus milliseconds is a date.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from datetime import datetime
from decimal import ROUND_HALF_EVEN, Decimal
from typing import Any

from bson import Decimal128, Int64
from bson.datetime_ms import DatetimeMS

from argus.agent.engine.deadline import Deadline
from argus.agent.engine.errors import failure
from argus.agent.engine.expressions.compiler import INT64, Evaluate, args, nullish
from argus.agent.engine.expressions.dates import from_ms
from argus.agent.engine.values import bson_type, date_ms, is_number, number_value, sort_key

__all__ = ["OPERATORS"]


def _number_result(value: int | float | Decimal, decimal: bool) -> Any:
    if decimal:
        return Decimal128(Decimal(value) if not isinstance(value, Decimal) else value)
    if isinstance(value, int) and value not in INT64:
        return float(value)
    return value


def _numbers(values: list[Any], op: str) -> tuple[list[Any], bool]:
    out = []
    decimal = False
    for value in values:
        if not is_number(value):
            raise failure(f"{op} only supports numeric types, not {bson_type(value)}", 16554)
        decimal |= isinstance(value, Decimal128)
        out.append(value.to_decimal() if isinstance(value, Decimal128) else value)
    if decimal:
        out = [v if isinstance(v, Decimal) else Decimal(v) for v in out]
    return out, decimal


def _add(arg: Any, deadline: Deadline) -> Evaluate:
    items = args(arg, deadline)

    def run(doc: Any) -> Any:
        values = [f(doc) for f in items]
        if any(nullish(v) for v in values):
            return None
        dates = [v for v in values if isinstance(v, datetime | DatetimeMS)]
        if len(dates) > 1:
            raise failure("only one date allowed in an $add expression", 16612)
        numbers, decimal = _numbers([v for v in values if not isinstance(v, datetime | DatetimeMS)], "$add")
        total: Any = sum(numbers, Decimal(0) if decimal else 0)
        if dates:
            return from_ms(date_ms(dates[0]) + round(total))
        return _number_result(total, decimal)
    return run


def _subtract(arg: Any, deadline: Deadline) -> Evaluate:
    left, right = args(arg, deadline, 2, "$subtract")

    def run(doc: Any) -> Any:
        a, b = left(doc), right(doc)
        if nullish(a) or nullish(b):
            return None
        if isinstance(a, datetime | DatetimeMS):
            if isinstance(b, datetime | DatetimeMS):
                return Int64(date_ms(a) - date_ms(b))
            (n,), _ = _numbers([b], "$subtract")
            return from_ms(date_ms(a) - round(n))
        (x, y), decimal = _numbers([a, b], "$subtract")
        return _number_result(x - y, decimal)
    return run


def _multiply(arg: Any, deadline: Deadline) -> Evaluate:
    items = args(arg, deadline)

    def run(doc: Any) -> Any:
        values = [f(doc) for f in items]
        if any(nullish(v) for v in values):
            return None
        numbers, decimal = _numbers(values, "$multiply")
        product: Any = Decimal(1) if decimal else 1
        for n in numbers:
            product = product * n
        return _number_result(product, decimal)
    return run


def _divide(arg: Any, deadline: Deadline) -> Evaluate:
    left, right = args(arg, deadline, 2, "$divide")

    def run(doc: Any) -> Any:
        a, b = left(doc), right(doc)
        if nullish(a) or nullish(b):
            return None
        (x, y), decimal = _numbers([a, b], "$divide")
        if y == 0:
            raise failure("can't $divide by zero", 16608)
        return Decimal128(x / y) if decimal else float(x) / float(y)
    return run


def _mod(arg: Any, deadline: Deadline) -> Evaluate:
    left, right = args(arg, deadline, 2, "$mod")

    def run(doc: Any) -> Any:
        a, b = left(doc), right(doc)
        if nullish(a) or nullish(b):
            return None
        (x, y), decimal = _numbers([a, b], "$mod")
        if y == 0:
            raise failure("can't $mod by zero", 16610)
        if isinstance(x, int) and isinstance(y, int):
            result: Any = abs(x) % abs(y) * (-1 if x < 0 else 1)
        else:
            result = math.fmod(float(x), float(y)) if not decimal else x % y
        return _number_result(result, decimal)
    return run


def _unary(op: str, fn: Callable[[Any], Any]) -> Callable[[Any, Deadline], Evaluate]:
    def build(arg: Any, deadline: Deadline) -> Evaluate:
        (item,) = args(arg, deadline, 1, op)

        def run(doc: Any) -> Any:
            value = item(doc)
            if nullish(value):
                return None
            (n,), decimal = _numbers([value], op)
            if isinstance(n, float):
                # a double stays a double ($floor of 2.5 is 2.0, manual): math.floor would give an int
                return n if math.isnan(n) or (math.isinf(n) and op != "$abs") else float(fn(n))
            return _number_result(fn(n), decimal)
        return run
    return build


def _round(arg: Any, deadline: Deadline) -> Evaluate:
    items = args(arg, deadline)

    def run(doc: Any) -> Any:
        value = items[0](doc)
        places = items[1](doc) if len(items) > 1 else 0
        if nullish(value) or nullish(places):
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
    items = args(arg, deadline)

    def run(doc: Any) -> Any:
        numbers = [v for v in _spread([f(doc) for f in items]) if is_number(v)]
        values, decimal = _numbers(numbers, "$sum")
        return _number_result(sum(values, Decimal(0) if decimal else 0), decimal)
    return run


def _avg(arg: Any, deadline: Deadline) -> Evaluate:
    items = args(arg, deadline)

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
        items = args(arg, deadline)

        def run(doc: Any) -> Any:
            values = [v for v in _spread([f(doc) for f in items]) if not nullish(v)]
            if not values:
                return None
            return (max if highest else min)(values, key=sort_key)
        return run
    return build

OPERATORS: dict[str, Callable[[Any, Deadline], Evaluate]] = {
    "$abs": _unary("$abs", abs), "$add": _add, "$subtract": _subtract, "$multiply": _multiply,
    "$divide": _divide, "$mod": _mod, "$floor": _unary("$floor", math.floor), "$ceil": _unary("$ceil", math.ceil),
    "$round": _round, "$sum": _sum, "$avg": _avg, "$min": _extreme(False), "$max": _extreme(True),
}
