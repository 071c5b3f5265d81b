"""What a server refused, and how reads are reshaped for it: a careful client's memory of one run.

Servers that speak MongoDB's protocol do not all take what Argus sends. An older API version has
no ``$facet`` or ``$sample``; a look-alike refuses ``$not`` in every form, or ``$expr`` inside
``$facet``; an older server does not know the ``$type`` alias ``number``; a user may not run
``listIndexes`` or Cosmos DB's ``getLastRequestStatistics``. Each refusal is learned once per run
(``ServerRefusals``), every later read is sent in a form the server takes or the tool falls back
(unbatched counts, a ``find``-based sample, a ``$not`` count by subtraction, skipping the one check),
and the report's notes say which. Nothing here sends anything: ``AuditTarget`` and the tools ask it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from argus.agent.errors import QueryRejected

__all__ = [
    "NOT_BY_SUBTRACTION",
    "TYPE_CODES",
    "ServerRefusals",
    "complement_split",
    "facet_note",
    "has_type_alias",
    "named_operators",
    "operators_in",
    "refusal_reason",
    "refuses_type_alias",
    "with_type_codes",
]

# The numeric BSON type codes every server version knows; "number" stands for the four numeric types.
TYPE_CODES: dict[str, int | list[int]] = {
    "double": 1, "string": 2, "object": 3, "array": 4, "binData": 5, "undefined": 6, "objectId": 7, "bool": 8,
    "date": 9, "null": 10, "regex": 11, "dbPointer": 12, "javascript": 13, "symbol": 14, "javascriptWithScope": 15,
    "int": 16, "timestamp": 17, "long": 18, "decimal": 19, "minKey": -1, "maxKey": 127, "number": [1, 16, 18, 19],
}

NOT_BY_SUBTRACTION = (
    "the server refused $not: each count written with it was answered as the count without the $not minus the "
    "count of what it negates, in two queries (MongoDB's $not matches exactly the documents its condition does not "
    "match, arrays and missing fields included); examples of those checks were not read")

_OPERATOR = re.compile(r"\$[A-Za-z][A-Za-z0-9]*")
_TYPE_ALIAS_REFUSED = re.compile(r"type (name )?alias|alias for \$type|unknown type name|\$type", re.IGNORECASE)


@dataclass
class ServerRefusals:
    """What the server refused in this run (``what`` -> the note the report carries), learned once."""

    learned: dict[str, str] = field(default_factory=dict)

    def refuses(self, what: str) -> bool:
        return what in self.learned

    def learn(self, what: str, note: str) -> None:
        self.learned.setdefault(what, note)

    @property
    def notes(self) -> list[str]:
        return list(self.learned.values())


def operators_in(value: Any) -> set[str]:
    """Every ``$``-operator a filter, pipeline or expression uses (keys only: ``"$qty"`` is a path)."""
    found: set[str] = set()
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, Mapping):
            for key, inner in item.items():
                if isinstance(key, str) and key.startswith("$"):
                    found.add(key)
                stack.append(inner)
        elif isinstance(item, list | tuple):
            stack.extend(item)
    return found


def named_operators(exc: QueryRejected) -> set[str]:
    """Operators the server's refusal names (``Operator '$not' is not currently implemented``)."""
    return set(_OPERATOR.findall(exc.server_message))


def facet_note(exc: QueryRejected) -> str:
    """What the report says once the server has refused ``$facet``."""
    code = f" (code {exc.code})" if exc.code is not None else ""
    return (f"the server refused $facet{code}: every check was asked on its own (count_documents, find, one "
            f"pipeline per statistic) instead of in batched passes")


def refusal_reason(exc: QueryRejected, used: set[str] | None = None) -> str:
    """A short reason without document values: the operator the server named, else its code."""
    named = sorted(named_operators(exc) & used) if used is not None else sorted(named_operators(exc))
    if named:
        return f"the server refused {', '.join(named)}"
    if exc.code is not None:
        return f"refused by the server (code {exc.code})"
    return "refused by the database engine"


def refuses_type_alias(exc: QueryRejected) -> bool:
    return bool(_TYPE_ALIAS_REFUSED.search(exc.server_message))


def _alias(value: Any) -> bool:
    if isinstance(value, str):
        return value in TYPE_CODES
    return isinstance(value, list) and bool(value) and all(isinstance(v, str) and v in TYPE_CODES for v in value)


def has_type_alias(value: Any) -> bool:
    """Does a filter or pipeline hold a query ``$type`` written with a string alias?"""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, Mapping):
            if _alias(item.get("$type")):
                return True
            stack.extend(item.values())
        elif isinstance(item, list | tuple):
            stack.extend(item)
    return False


def _codes(value: Any) -> Any:
    aliases = [value] if isinstance(value, str) else value
    out: list[int] = []
    for alias in aliases:
        code = TYPE_CODES[alias]
        out.extend(code if isinstance(code, list) else [code])
    return out[0] if len(out) == 1 else out


def with_type_codes(value: Any) -> Any:
    """``value`` with every query ``$type`` alias written as its numeric code(s), which every
    server version knows (``{"$type": "number"}`` -> ``{"$type": [1, 16, 18, 19]}``). An aggregation
    expression ``{"$type": "$qty"}`` names a path, not an alias, and is left as it is."""
    if isinstance(value, Mapping):
        return {k: (_codes(v) if k == "$type" and _alias(v) else with_type_codes(v)) for k, v in value.items()}
    if isinstance(value, list):
        return [with_type_codes(v) for v in value]
    return value


def _nots(value: Any) -> int:
    """How many ``$not`` operators a filter holds, at any depth."""
    found = 0
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, Mapping):
            found += sum(1 for key in item if key == "$not")
            stack.extend(item.values())
        elif isinstance(item, list | tuple):
            stack.extend(item)
    return found


def complement_split(query: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """For a filter ``Q AND {f: {$not: P}}`` (one ``$not``, on a field's condition at the top level):
    ``Q`` and ``Q AND {f: P}``, whose counts differ by exactly the filter's count, since ``$not``
    matches exactly the documents ``P`` does not (those without ``f``, and arrays none of whose
    elements match, included): ``count(Q AND NOT P) = count(Q) - count(Q AND P)``. None for any
    other shape (``$not`` inside ``$or``, ``$nor``, ``$elemMatch``: no such difference holds there)."""
    if _nots(query) != 1:
        return None
    for key, condition in query.items():
        if isinstance(key, str) and not key.startswith("$") and isinstance(condition, Mapping) \
                and "$not" in condition:
            rest = {k: v for k, v in condition.items() if k != "$not"}
            positive = {k: v for k, v in query.items() if k != key}
            if rest:
                positive[key] = rest
            negated = {key: condition["$not"]}  # a document of operators, or a regex: {f: /re/} matches as $regex
            return positive, ({"$and": [positive, negated]} if positive else negated)
    return None
