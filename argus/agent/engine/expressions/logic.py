"""Comparison, boolean, conditional and type operators: ``$eq`` ... ``$cmp``, ``$and``, ``$cond``,
``$switch``, ``$ifNull``, ``$in``, ``$type``, ``$isNumber``, ``$isArray``.

Comparisons order values as ``sort_key`` does (missing below null); truth is ``truthy``'s.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from argus.agent.engine.deadline import Deadline
from argus.agent.engine.errors import failure
from argus.agent.engine.expressions.compiler import Evaluate, args, compile_node, nullish, present
from argus.agent.engine.values import bson_type, is_number, sort_key, truthy

__all__ = ["OPERATORS"]


def _comparison(name: str, test: Callable[[int], bool]) -> Callable[[Any, Deadline], Evaluate]:
    def build(arg: Any, deadline: Deadline) -> Evaluate:
        left, right = args(arg, deadline, 2, name)

        def run(doc: Any) -> Any:
            a, b = sort_key(left(doc)), sort_key(right(doc))
            return test((a > b) - (a < b))
        return run
    return build


def _cmp(arg: Any, deadline: Deadline) -> Evaluate:
    left, right = args(arg, deadline, 2, "$cmp")

    def run(doc: Any) -> int:
        a, b = sort_key(left(doc)), sort_key(right(doc))
        return (a > b) - (a < b)
    return run


def _and(arg: Any, deadline: Deadline) -> Evaluate:
    items = args(arg, deadline)
    return lambda doc: all(truthy(f(doc)) for f in items)


def _or(arg: Any, deadline: Deadline) -> Evaluate:
    items = args(arg, deadline)
    return lambda doc: any(truthy(f(doc)) for f in items)


def _not(arg: Any, deadline: Deadline) -> Evaluate:
    (item,) = args(arg, deadline, 1, "$not")
    return lambda doc: not truthy(item(doc))


def _in(arg: Any, deadline: Deadline) -> Evaluate:
    needle, haystack = args(arg, deadline, 2, "$in")

    def run(doc: Any) -> bool:
        values = haystack(doc)
        if not isinstance(values, list):
            raise failure(f"$in requires an array as a second argument, found: {bson_type(values)}", 40081)
        key = sort_key(present(needle(doc)))
        return any(sort_key(v) == key for v in values)
    return run


def _cond(arg: Any, deadline: Deadline) -> Evaluate:
    if isinstance(arg, Mapping):
        if set(arg) != {"if", "then", "else"}:
            raise failure("$cond needs 'if', 'then' and 'else'", 17080)
        arg = [arg["if"], arg["then"], arg["else"]]
    test, then, other = args(arg, deadline, 3, "$cond")
    return lambda doc: then(doc) if truthy(test(doc)) else other(doc)


def _if_null(arg: Any, deadline: Deadline) -> Evaluate:
    items = args(arg, deadline)
    if len(items) < 2:
        raise failure("$ifNull needs at least two arguments", 1257300)

    def run(doc: Any) -> Any:
        for f in items[:-1]:
            value = f(doc)
            if not nullish(value):
                return value
        return items[-1](doc)
    return run


def _switch(arg: Any, deadline: Deadline) -> Evaluate:
    if not isinstance(arg, Mapping) or not isinstance(arg.get("branches"), list):
        raise failure("$switch requires at least one branch", 40060)
    branches = [(compile_node(b.get("case"), deadline), compile_node(b.get("then"), deadline))
                for b in arg["branches"] if isinstance(b, Mapping)]
    default = compile_node(arg["default"], deadline) if "default" in arg else None

    def run(doc: Any) -> Any:
        for case, then in branches:
            if truthy(case(doc)):
                return then(doc)
        if default is None:
            raise failure("$switch could not find a matching branch for an input, and no default was specified.", 40066)
        return default(doc)
    return run


def _type(arg: Any, deadline: Deadline) -> Evaluate:
    (item,) = args(arg, deadline, 1, "$type")
    return lambda doc: bson_type(item(doc))


def _is_number(arg: Any, deadline: Deadline) -> Evaluate:
    (item,) = args(arg, deadline, 1, "$isNumber")
    return lambda doc: is_number(item(doc))


def _is_array(arg: Any, deadline: Deadline) -> Evaluate:
    (item,) = args(arg, deadline, 1, "$isArray")
    return lambda doc: isinstance(item(doc), list)


def _no_expression(op: str) -> Callable[[Any, Deadline], Evaluate]:
    def build(arg: Any, deadline: Deadline) -> Evaluate:
        raise failure(f"{op} is an accumulator, not an expression", 168)
    return build

OPERATORS: dict[str, Callable[[Any, Deadline], Evaluate]] = {
    "$eq": _comparison("$eq", lambda c: c == 0), "$ne": _comparison("$ne", lambda c: c != 0),
    "$gt": _comparison("$gt", lambda c: c > 0), "$gte": _comparison("$gte", lambda c: c >= 0),
    "$lt": _comparison("$lt", lambda c: c < 0), "$lte": _comparison("$lte", lambda c: c <= 0),
    "$cmp": _cmp, "$and": _and, "$or": _or, "$not": _not, "$in": _in,
    "$cond": _cond, "$ifNull": _if_null, "$switch": _switch,
    "$type": _type, "$isNumber": _is_number, "$isArray": _is_array,
    "$count": _no_expression("$count"),
}
