"""What document values may leave a run, by privacy mode.

``strict``: no values at all, only types and counts. ``shapes`` (default): a free-form value is
replaced by its shape (``Zoe.12@mail.org`` → ``Aa+.9+@a+.a+``), numbers by their magnitude; values
of low-cardinality categorical fields (at most 20 distinct) appear as themselves. ``full``: raw values.
"""

from __future__ import annotations

import math
from typing import Any

from agent.options import PrivacyMode
from agent.tools.models import SchemaSampleResult
from agent.tools.profiling import shape_of

__all__ = ["CATEGORICAL_MAX", "Masker", "categorical_values", "json_kind", "mask_value", "mask_values", "redact_query"]

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
            return _type_tag(value)
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


# Operands that are part of the question, not data: kept in every mode.
_SAFE_OPERANDS = frozenset({"$type", "$exists", "$size", "$options"})
_TEXT_LIMIT = 80


def categorical_values(schema: SchemaSampleResult | None) -> dict[str, frozenset[Any]]:
    """Values that may appear as themselves in ``shapes`` mode: per categorical field (strings are
    at least 90% of its values and the sample shows at most ``CATEGORICAL_MAX`` distinct), the
    strings the sample saw. A rare value the sample missed is masked like any free-form value, and
    so is text in a field of numbers (``12 oz`` among ounces)."""
    if schema is None:
        return {}
    out: dict[str, frozenset[Any]] = {}
    for f in schema.fields:
        s = f.strings
        if s is None or f.cardinality_capped or s.distinct_count > CATEGORICAL_MAX \
                or s.count < 0.9 * sum(f.non_null_types.values()):
            continue
        out[f.path] = frozenset(v for v, _ in s.top_values if isinstance(v, str))
    return out


class Masker:
    """Applies one privacy mode to values, documents and filters bound for a prompt, trace or log."""

    def __init__(self, mode: PrivacyMode, categorical: dict[str, frozenset[Any]] | None = None) -> None:
        self.mode = mode
        self.categorical = categorical or {}

    def value(self, path: str | None, value: Any) -> Any:
        if self.mode == "full":
            return value[:_TEXT_LIMIT] + "…" if isinstance(value, str) and len(value) > _TEXT_LIMIT else value
        if self.mode == "shapes" and isinstance(value, str) and path is not None \
                and value in self.categorical.get(path, ()):
            return value
        if self.mode == "strict":
            return _type_tag(value)
        if isinstance(value, list):
            return [self.value(path, v) for v in value[:5]] + (["…"] if len(value) > 5 else [])
        if isinstance(value, dict) and len(value) != 1:
            return {k: self.value(f"{path}.{k}" if path else k, v) for k, v in value.items()}
        return mask_value(value, mode=self.mode)

    def document(self, doc: Any, path: str | None = None) -> Any:
        """A document with every scalar masked (field names are kept)."""
        if isinstance(doc, dict) and not (len(doc) == 1 and next(iter(doc)).startswith("$")):
            return {k: self.document(v, f"{path}.{k}" if path else k) for k, v in doc.items()}
        if isinstance(doc, list):
            return [self.document(v, path) for v in doc]
        return self.value(path, doc)

    def filter(self, query: Any, path: str | None = None) -> Any:
        """A MongoDB filter with its operands masked; operators and field names are kept."""
        if self.mode == "full":
            return query
        if isinstance(query, list):
            return [self.filter(v, path) for v in query]
        if not isinstance(query, dict):
            return self.value(path, query)
        if _is_scalar(query):
            return self.value(path, query)
        out: dict[str, Any] = {}
        for key, operand in query.items():
            if key in _SAFE_OPERANDS:
                out[key] = operand
            elif key == "$regex":
                out[key] = "<pattern>"
            elif key.startswith("$"):
                out[key] = self.filter(operand, path)
            else:
                out[key] = self.filter(operand, key)
        return out


def json_kind(value: Any) -> str:
    """The JSON-level kind of a value (``number``, ``string``, ``date`` for ``{"$date": ...}``):
    what strict mode may say about a value instead of the value."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict) and len(value) == 1:
        return next(iter(value)).lstrip("$")
    return "object"


def _type_tag(value: Any) -> str:
    return f"<{json_kind(value)}>"
