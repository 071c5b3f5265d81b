"""Why a query that matched nothing may not mean what it seems: hints for the observation a planner reads.

A filter on a field no sampled document has, or a comparison of a date field with a string (BSON
compares types before values, so ``{"signup": {"$lt": "2024-01-01"}}`` never matches a date),
"matches 0" without an error. A model reads that as "no defect"; the hint says what went wrong,
naming fields and types only, never values.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from argus.agent.tools.models import SchemaSampleResult

__all__ = ["zero_match_hints"]

_COMPARISONS = ("$eq", "$ne", "$lt", "$lte", "$gt", "$gte", "$in", "$nin")


def _known(path: str, schema: SchemaSampleResult) -> bool:
    return any(f.path == path or f.path.startswith(path + ".") or path.startswith(f.path + ".")
               for f in schema.fields)


def _date_field(path: str, schema: SchemaSampleResult) -> bool:
    stats = schema.field(path)
    if stats is None:
        return False
    types = stats.non_null_types
    return bool(types) and max(types, key=lambda t: types[t]) == "date"


def _clauses(query: Mapping[str, Any]) -> list[tuple[str, Any]]:
    out: list[tuple[str, Any]] = []
    for key, value in query.items():
        if key in ("$and", "$or", "$nor") and isinstance(value, list):
            for clause in value:
                if isinstance(clause, Mapping):
                    out += _clauses(clause)
        elif not key.startswith("$"):
            out.append((key, value))
    return out


def _compares_with_text(operand: Any) -> bool:
    if isinstance(operand, str):
        return True
    if isinstance(operand, Mapping):
        for op in _COMPARISONS:
            value = operand.get(op)
            if isinstance(value, str) or (isinstance(value, list) and any(isinstance(v, str) for v in value)):
                return True
    return False


def zero_match_hints(query: Mapping[str, Any], schema: SchemaSampleResult | None) -> list[str]:
    """Hints for a decoded filter that matched no document (empty when nothing looks wrong)."""
    if schema is None:
        return []
    hints: list[str] = []
    clauses = _clauses(query)
    unknown = sorted({path for path, _ in clauses if not _known(path, schema)})
    if unknown:
        hints.append(f"no sampled document has the field{'s' if len(unknown) > 1 else ''} {', '.join(unknown[:5])}: "
                     f"a filter on a missing field matches nothing (options such as limit go beside filter, "
                     f"not inside it)")
    dated = sorted({path for path, operand in clauses if _date_field(path, schema) and _compares_with_text(operand)})
    if dated:
        hints.append(f"{', '.join(dated[:5])} hold{'s' if len(dated) == 1 else ''} dates, compared here with a "
                     f"string, which never matches a date: write the bound as {{\"$date\": "
                     f"\"2024-01-01T00:00:00Z\"}}")
    return hints
