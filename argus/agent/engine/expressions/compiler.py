"""The expression compiler: field paths, literals, documents and arrays, and the operator table's
lookup; every operator family compiles its arguments back through ``compile_node``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from argus.agent.engine.deadline import Deadline
from argus.agent.engine.errors import failure
from argus.agent.engine.values import MISSING

__all__ = ["INT32", "INT64", "OPERATORS", "Evaluate", "args", "compile_expression", "compile_node", "field_getter",
           "nullish", "present"]

Evaluate = Callable[[Any], Any]
INT64 = range(-(2 ** 63), 2 ** 63)
INT32 = range(-(2 ** 31), 2 ** 31)


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
    return compile_node(expr, deadline)


def compile_node(expr: Any, deadline: Deadline) -> Evaluate:
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
            raise failure(f"Use of undefined variable: {name}", 17276)
        return field_getter(expr[1:])
    if isinstance(expr, list):
        items = [compile_node(e, deadline) for e in expr]
        return lambda doc: [present(f(doc)) for f in items]
    if isinstance(expr, Mapping):
        keys = list(expr)
        if len(keys) == 1 and str(keys[0]).startswith("$"):
            op = keys[0]
            if op == "$literal":
                value = expr[op]
                return lambda doc: value
            builder = OPERATORS.get(op)
            if builder is None:
                raise failure(f"Unrecognized expression '{op}'", 168)
            return builder(expr[op], deadline)
        if any(str(k).startswith("$") for k in keys):
            raise failure(f"an expression object cannot mix operators and fields: {keys[0]}", 16410)
        fields = {k: compile_node(v, deadline) for k, v in expr.items()}

        def document(doc: Any) -> dict[str, Any]:
            out = {}
            for key, f in fields.items():
                value = f(doc)
                if value is not MISSING:
                    out[key] = value
            return out
        return document
    return lambda doc: expr


def present(value: Any) -> Any:
    return None if value is MISSING else value


def args(arg: Any, deadline: Deadline, count: int | None = None, name: str = "") -> list[Evaluate]:
    items = arg if isinstance(arg, list) else [arg]
    if count is not None and len(items) != count:
        raise failure(f"Expression {name} takes exactly {count} arguments. {len(items)} were passed in.", 16020)
    return [compile_node(item, deadline) for item in items]


def nullish(value: Any) -> bool:
    return value is None or value is MISSING


# Filled by the package from every operator family's table (``argus.agent.engine.expressions``).
OPERATORS: dict[str, Callable[[Any, Deadline], Evaluate]] = {}
