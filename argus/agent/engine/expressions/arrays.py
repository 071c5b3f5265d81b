"""Array operators: ``$size``, ``$arrayElemAt``, ``$first``, ``$last``, ``$setUnion``,
``$objectToArray``; null or missing input gives null, any other non-array is refused.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from argus.agent.engine.deadline import Deadline
from argus.agent.engine.errors import failure
from argus.agent.engine.expressions.compiler import Evaluate, args, nullish
from argus.agent.engine.values import MISSING, bson_type, group_key, is_number, number_value

__all__ = ["OPERATORS"]


def _size(arg: Any, deadline: Deadline) -> Evaluate:
    (item,) = args(arg, deadline, 1, "$size")

    def run(doc: Any) -> int:
        value = item(doc)
        if not isinstance(value, list):
            raise failure(f"The argument to $size must be an array. Type of argument: {bson_type(value)}", 17124)
        return len(value)
    return run


def _set_union(arg: Any, deadline: Deadline) -> Evaluate:
    """The distinct elements of its arrays (equal as ``$group`` compares them); null when one is null or missing."""
    items = args(arg, deadline, None, "$setUnion")

    def run(doc: Any) -> Any:
        out: dict[Any, Any] = {}
        for item in items:
            values = item(doc)
            if nullish(values):
                return None
            if not isinstance(values, list):
                raise failure(f"All operands of $setUnion must be arrays. One argument is of type: "
                            f"{bson_type(values)}", 17043)
            for value in values:
                out.setdefault(group_key(value), value)
        return list(out.values())
    return run


def _object_to_array(arg: Any, deadline: Deadline) -> Evaluate:
    """A document as ``[{k, v}, ...]`` in its field order; null for null or missing."""
    (item,) = args(arg, deadline, 1, "$objectToArray")

    def run(doc: Any) -> Any:
        value = item(doc)
        if nullish(value):
            return None
        if not isinstance(value, dict):
            raise failure(f"$objectToArray requires a document input, found: {bson_type(value)}", 40390)
        return [{"k": k, "v": v} for k, v in value.items()]
    return run


def _array_elem_at(arg: Any, deadline: Deadline) -> Evaluate:
    array, index = args(arg, deadline, 2, "$arrayElemAt")

    def run(doc: Any) -> Any:
        values, i = array(doc), index(doc)
        if nullish(values) or nullish(i):
            return None
        if not isinstance(values, list) or not is_number(i):
            raise failure("$arrayElemAt needs an array and a number", 28689)
        n = int(number_value(i))
        return values[n] if -len(values) <= n < len(values) else MISSING
    return run


def _end(last: bool) -> Callable[[Any, Deadline], Evaluate]:
    def build(arg: Any, deadline: Deadline) -> Evaluate:
        (item,) = args(arg, deadline, 1, "$last" if last else "$first")

        def run(doc: Any) -> Any:
            values = item(doc)
            if nullish(values):
                return values if values is MISSING else None
            if not isinstance(values, list):
                raise failure(f"$first/$last's argument must be an array, but is {bson_type(values)}", 28689)
            return (values[-1] if last else values[0]) if values else MISSING
        return run
    return build

OPERATORS: dict[str, Callable[[Any, Deadline], Evaluate]] = {
    "$size": _size, "$arrayElemAt": _array_elem_at, "$first": _end(False), "$last": _end(True),
    "$setUnion": _set_union, "$objectToArray": _object_to_array,
}
