"""Where a nested rule's condition goes: inside ``$elemMatch`` for each declared array of objects
around its field, beside the guards (the enclosing object, a ``one_of`` shape) of each level."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from bson import Regex

from argus.agent.contracts.model import Rule
from argus.agent.ejson import decode

__all__ = ["ELEMENT_COUNTED", "element_condition", "placed", "violation"]

# Rules whose broken elements are counted beside the documents (a value_counts statistic)
ELEMENT_COUNTED = ("type", "in", "min", "max", "format", "pattern", "max_length")


def placed(rule: Rule, condition: Callable[[str], dict[str, Any]],
           element: Callable[[], dict[str, Any]] | None = None) -> dict[str, Any]:
    """The filter of a nested rule: ``condition(path)`` on the field's path relative to the innermost
    declared array of objects around it (each wrapped in ``$elemMatch``, so one bad element among good
    ones counts its document), with the guards of each level. A rule on each element (``element``) is
    ``{path: {$elemMatch: element()}}``."""
    levels = list(rule.arrays)
    inner = levels[-1] if levels else ""
    rel = _relative(rule.field, inner)
    query = {rel: {"$elemMatch": element()}} if rule.element and element is not None else condition(rel)
    query = _and(_guards(rule, inner), query)
    for i in range(len(levels) - 1, -1, -1):
        outer = levels[i - 1] if i else ""
        query = _and(_guards(rule, outer), {_relative(levels[i], outer): {"$elemMatch": query}})
    return query


def _relative(path: str, base: str) -> str:
    return path[len(base) + 1:] if base else path


def _guards(rule: Rule, level: str) -> dict[str, Any]:
    """The guards whose innermost enclosing declared array is ``level``, relative to it."""
    out: dict[str, Any] = {}
    for path, bson_type in rule.guards:
        enclosing = max((a for a in rule.arrays if path.startswith(a + ".")), key=len, default="")
        if enclosing == level:
            out[_relative(path, level)] = {"$type": bson_type}
    return out


def _and(left: dict[str, Any], right: dict[str, Any]) -> dict[str, Any]:
    if not left:
        return right
    if set(left) & set(right):
        return {"$and": [left, right]}
    return {**left, **right}


def violation(rule: Rule, at: Any, regex: str | None) -> dict[str, Any]:
    """The documents breaking a nested rule or a rule on an array's or an object's shape (``at``: the
    bound's value at the audit's clock, for min and max; ``regex``: a format's or pattern's)."""
    kind, value = rule.kind, rule.value

    def on(path: str) -> dict[str, Any]:
        if kind == "required":
            return {path: None}
        if kind == "type":
            if len(value) == 1:
                return {path: {"$exists": True, "$ne": None, "$not": {"$type": value[0]}}}
            return {"$and": [{path: {"$exists": True, "$ne": None}}, {"$nor": [{path: {"$type": t}} for t in value]}]}
        if kind == "in":
            return {path: {"$exists": True, "$ne": None, "$nin": [decode(v) for v in value]}}
        if kind == "min_items":  # no element at index min_items - 1
            return {path: {"$type": "array"}, f"{path}.{value - 1}": {"$exists": False}}
        if kind == "max_items":
            return {path: {"$type": "array"}, f"{path}.{value}": {"$exists": True}}
        if kind == "unique_items":  # fewer distinct elements than elements ($setUnion keeps each value once)
            return {"$expr": {"$cond": [{"$isArray": f"${path}"},
                                        {"$ne": [{"$size": f"${path}"}, {"$size": {"$setUnion": [f"${path}"]}}]},
                                        False]}}
        if kind == "required_fields":
            return {path: {"$type": "object"}, **_missing_keys(value, f"{path}.")}
        if kind == "additional_fields":  # more keys than the declared ones it holds
            held = [{"$cond": [{"$eq": [{"$type": f"${path}.{k}"}, "missing"]}, 0, 1]} for k in value]
            return {"$expr": {"$cond": [{"$eq": [{"$type": f"${path}"}, "object"]},
                                        {"$gt": [{"$size": {"$objectToArray": f"${path}"}}, {"$add": [0, *held]}]},
                                        False]}}
        return {path: _value_operators(rule, at, regex)}

    def each() -> dict[str, Any]:
        if kind == "required":
            return {"$eq": None}
        if kind == "required_fields":
            return _missing_keys(value, "")
        return element_condition(rule, at, regex)

    return placed(rule, on, each)


def element_condition(rule: Rule, at: Any, regex: str | None) -> dict[str, Any]:
    """The operators one scalar value breaks the rule with (each element of an array, or each value
    at a path inside arrays of objects): what the element count of a broken rule counts."""
    if rule.kind == "type":
        value = rule.value
        return {"$ne": None, "$not": {"$type": list(value) if len(value) > 1 else value[0]}}
    if rule.kind == "in":
        return {"$ne": None, "$nin": [decode(v) for v in rule.value]}
    return _value_operators(rule, at, regex)


def _value_operators(rule: Rule, at: Any, regex: str | None) -> dict[str, Any]:
    """The condition on one value (min, max, format, pattern, max_length), as operators."""
    if rule.kind == "min":
        return {"$lt": at}
    if rule.kind == "max":
        return {"$gt": at}
    if rule.kind in ("format", "pattern"):
        return {"$type": "string", "$not": {"$regex": regex}}
    if rule.kind == "max_length":
        # a Regex, not its text: {$type, $regex: text} reads back from Extended JSON as a bare regex
        return {"$type": "string", "$regex": Regex(f"^[\\s\\S]{{{rule.value + 1}}}")}
    raise ValueError(f"{rule.kind} is not a rule of one value")  # pragma: no cover - the parser refuses it


def _missing_keys(keys: tuple[str, ...], prefix: str) -> dict[str, Any]:
    missing = [{f"{prefix}{k}": {"$exists": False}} for k in keys]
    return missing[0] if len(missing) == 1 else {"$or": missing}
