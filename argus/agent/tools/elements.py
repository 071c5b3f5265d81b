"""Conditions on paths inside arrays of objects, asked of one element (``$elemMatch``).

Shared by every planner that writes filters from sampled paths: the heuristic planner's
hypotheses and a contract's declared rules count an order with one bad line among good ones.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from argus.agent.tools.models import FieldStats

__all__ = ["array_paths", "per_element"]


def array_paths(fields: Iterable[FieldStats]) -> frozenset[str]:
    """Sampled paths that hold an array in at least half of their values."""
    return frozenset(f.path for f in fields if f.types.get("array", 0) and f.types["array"] >= 0.5 * f.value_count)


def per_element(query: dict[str, Any], arrays: frozenset[str]) -> dict[str, Any]:
    """``query`` with every condition on a path inside an array of objects asked of one element.

    ``{"items.qty": {"$not": {"$type": "number"}}}`` matches a document only when *no* element's
    ``qty`` is a number, so one bad line among good ones went uncounted; an order with one bad
    line is affected: ``{"items": {"$elemMatch": {"qty": {"$not": ...}}}}``. Conditions on the
    same array share one ``$elemMatch`` (they speak of the same element)."""
    out: dict[str, Any] = {}
    grouped: dict[str, dict[str, Any]] = {}
    for key, cond in query.items():
        if key in ("$or", "$and", "$nor") and isinstance(cond, list):
            out[key] = [per_element(c, arrays) for c in cond]
            continue
        parts = key.split(".")
        prefix = next((".".join(parts[:i]) for i in range(1, len(parts)) if ".".join(parts[:i]) in arrays), None)
        if prefix is None:
            out[key] = cond
        else:
            grouped.setdefault(prefix, {})[key[len(prefix) + 1:]] = cond
    for prefix, conditions in grouped.items():
        nested = frozenset(a[len(prefix) + 1:] for a in arrays if a.startswith(prefix + "."))
        out.pop(prefix, None)  # "the enclosing object exists" is implied by a matching element
        out[prefix] = {"$elemMatch": per_element(conditions, nested)}
    return out
