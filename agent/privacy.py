"""What document values may leave a run, by privacy mode.

``strict``: no values at all, only types and counts. ``shapes`` (default): a free-form value is
replaced by its shape (``Zoe.12@mail.org`` → ``Aa+.9+@a+.a+``), numbers by their magnitude; values
of low-cardinality categorical fields (at most 20 distinct) appear as themselves. ``full``: raw values.
"""

from __future__ import annotations

import math
from typing import Any

from agent.options import PrivacyMode
from agent.tools.profiling import shape_of

__all__ = ["CATEGORICAL_MAX", "mask_value", "mask_values", "redact_query"]

CATEGORICAL_MAX = 20


def _magnitude(number: float) -> str:
    if math.isnan(number) or math.isinf(number):
        return str(number)
    if number == 0:
        return "0"
    sign = "-" if number < 0 else ""
    digits = len(str(int(abs(number)))) if abs(number) >= 1 else 0
    return f"{sign}<1" if digits == 0 else f"{sign}{digits}-digit number"


def mask_value(value: Any, *, mode: PrivacyMode, categorical: bool = False) -> Any:
    if mode == "full" or (mode == "shapes" and categorical):
        return value
    if mode == "strict":
        return None
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int | float):
        return _magnitude(float(value))
    if isinstance(value, str):
        return f"shape:{shape_of(value)}"
    if isinstance(value, dict) and len(value) == 1:
        (key, _inner), = value.items()
        return f"<{key.lstrip('$')}>"  # an Extended JSON scalar such as {"$date": ...}
    return f"<{type(value).__name__}>"


def mask_values(values: list[Any], *, mode: PrivacyMode, categorical: bool = False) -> list[Any]:
    if mode == "strict":
        return []
    return [mask_value(v, mode=mode, categorical=categorical) for v in values]


# Operators whose operands are values taken from documents (``$in`` of duplicated keys, say);
# range bounds, regexes, types and sizes describe the rule, not a document, and stay.
_VALUE_OPERATORS = frozenset({"$eq", "$ne", "$in", "$nin", "$all"})
_LIST_MAX = 5


def redact_query(query: Any, *, mode: PrivacyMode) -> tuple[Any, bool]:
    """An evidence query fit to leave the run under ``mode``, and whether anything was masked.

    In ``full`` mode the query is returned as it is. Otherwise literal values compared for
    equality are replaced by their shape (``strict``: by their type), long lists are cut to a
    few items with a count of the rest, and operators, field names and range bounds stay, so
    the reader still sees what the query tests."""
    if mode == "full":
        return query, False
    masked = [False]

    def literal(value: Any) -> Any:
        masked[0] = True
        if mode == "strict":
            return f"<{type(value).__name__}>"
        return mask_value(value, mode="shapes")

    def values(operand: Any) -> Any:
        if isinstance(operand, list):
            out = [values(v) for v in operand[:_LIST_MAX]]
            if len(operand) > _LIST_MAX:
                out.append(f"... {len(operand) - _LIST_MAX} more")
            return out
        if isinstance(operand, dict) and not _is_scalar(operand):
            return walk(operand)
        return literal(operand)

    def walk(node: Any) -> Any:
        if isinstance(node, list):
            return [walk(v) for v in node]
        if not isinstance(node, dict):
            return node
        out: dict[str, Any] = {}
        for key, value in node.items():
            if key in _VALUE_OPERATORS:
                out[key] = values(value)
            elif key.startswith("$") or (isinstance(value, dict) and not _is_scalar(value)):
                out[key] = walk(value)
            else:
                out[key] = values(value)  # {field: literal} is an implicit $eq
        return out

    return walk(query), masked[0]


def _is_scalar(value: dict[str, Any]) -> bool:
    """An Extended JSON scalar such as ``{"$date": ...}`` or ``{"$oid": ...}``."""
    return len(value) == 1 and next(iter(value)) in {"$date", "$oid", "$numberDecimal", "$numberLong",
                                                     "$numberInt", "$numberDouble", "$binary", "$uuid"}
