"""Random documents and the filters Argus sends, for the engine's differential checks.

``documents(rng)`` draws a small collection where MongoDB's semantics are subtle: null against
missing, nested arrays, arrays of documents, every numeric width with Decimal128, NaN and -0.0,
dates against date-like strings, and non-ASCII text (Unicode digits, spaces, letters).
``filters(rng, n)`` draws the shapes the planners and contracts write: null and missing checks,
``$type`` and ``$not``, regex shapes, ``$in``/``$nin``, ranges, both forms of ``$elemMatch``,
``$size``, ``$mod``, logical combinations and ``$expr`` cross-field checks. ``disagreements``
runs one collection's filters through the fast path, the general path, ``count_documents`` and
``count_many``'s batched ``$facet`` count, and returns every filter on which they differ.
"""

from __future__ import annotations

import random
from datetime import datetime
from typing import Any

from bson import Decimal128, Int64, ObjectId, Regex

from argus.agent.ejson import encode
from argus.agent.engine import MemoryCollection
from argus.agent.engine.match import compile_filter, general_path
from argus.agent.errors import QueryRefused
from argus.agent.tools.count_pipeline import count_many_pipeline
from argus.agent.tools.models import CountManyInput, CountQuery

__all__ = ["Disagreement", "disagreements", "documents", "filters"]

_NUMBERS: list[Any] = [0, -0.0, 1, -5, 2.5, 7, Int64(2 ** 40), Int64(1), 1.0, float("nan"), float("inf"),
                       Decimal128("1"), Decimal128("2.0"), Decimal128("-0"), Decimal128("NaN"), Decimal128("7.50"),
                       Decimal128("-3.25")]
_STRINGS = ["", "a", "abc", "Abc", "café", "٣٣", "33", "\u00a0", " ", "x y", "n/a", "2024-01-02", "ÉCOLE", "a\nb"]
_DATES = [datetime(2024, 1, 2), datetime(1969, 12, 31, 23), datetime(2024, 6, 30, 12)]
_OTHER: list[Any] = [None, True, False, ObjectId("65a1b2c3d4e5f60718293a4b")]
_SCALARS = [*_NUMBERS, *_STRINGS, *_DATES, *_OTHER]
_PATHS = ["a", "b", "a.b", "a.c", "a.0", "b.b", "a.b.c", "b.0.c"]
_TYPES = ["string", "double", "int", "long", "decimal", "number", "bool", "date", "object", "array", "null",
          "objectId", 2, 16]
_PATTERNS = [r"^\s*$", r"^\d+$", r"^\w+$", r"\bé", "^a", "b", r"^[A-Z]", r"^\S+$", "^.$", r"^\p{L}+$", "^n/?a$",
             r"^\d{4}-\d{2}-\d{2}$", "^(?:n/a|none|null|-)$"]


def _scalar(rng: random.Random) -> Any:
    return rng.choice(_SCALARS)


def _value(rng: random.Random, depth: int = 0) -> Any:
    roll = rng.random()
    if roll < 0.55 or depth >= 2:
        return _scalar(rng)
    if roll < 0.7:
        return {k: _value(rng, depth + 1) for k in rng.sample(["b", "c"], rng.randint(0, 2))}
    if roll < 0.85:
        return [_scalar(rng) if rng.random() < 0.7 else _value(rng, depth + 1) for _ in range(rng.randint(0, 3))]
    return [{k: _value(rng, depth + 1) for k in rng.sample(["b", "c"], rng.randint(0, 2))}
            for _ in range(rng.randint(0, 3))]


def documents(rng: random.Random) -> list[dict[str, Any]]:
    docs = []
    for i in range(rng.randint(4, 20)):
        doc: dict[str, Any] = {"_id": i}
        for field in ("a", "b"):
            if rng.random() < 0.8:
                doc[field] = _value(rng)
        docs.append(doc)
    return docs


def _condition(rng: random.Random) -> Any:
    kind = rng.choice(["null", "ne_null", "exists", "type", "not_type", "regex", "not_regex", "in", "nin", "range",
                       "eq", "elem_object", "elem_value", "size", "mod", "all", "empty"])
    if kind == "null":
        return None
    if kind == "ne_null":
        return {"$ne": None}
    if kind == "exists":
        return {"$exists": rng.random() < 0.5}
    if kind in ("type", "not_type"):
        spec = rng.choice(_TYPES) if rng.random() < 0.8 else rng.sample(_TYPES, 2)
        return {"$type": spec} if kind == "type" else {"$not": {"$type": spec}}
    if kind in ("regex", "not_regex"):
        regex = {"$regex": rng.choice(_PATTERNS), **({"$options": rng.choice(["i", "m", "s"])} if rng.random() < 0.3
                                                     else {})}
        return regex if kind == "regex" else {"$not": {"$regex": Regex(regex["$regex"], regex.get("$options", ""))}}
    if kind in ("in", "nin"):
        # half the lists hold plain numbers only, as contracts' allowed values do (the fast path's own case)
        plain = [v for v in _NUMBERS if type(v) in (int, float, Int64)]
        pool = plain if rng.random() < 0.5 else [*_NUMBERS, *_STRINGS[:6], None, Regex("^a", "i"), [1, 2], []]
        return {f"${kind}": [rng.choice(pool) for _ in range(rng.randint(1, 4))]}
    if kind == "range":
        bound = rng.choice([*_NUMBERS, *_DATES, "b", None])
        ops = rng.sample(["$gt", "$gte", "$lt", "$lte"], rng.randint(1, 2))
        return {op: bound for op in ops}
    if kind == "eq":
        return rng.choice([*_SCALARS, [1, 2], {"b": 1}])
    if kind == "elem_object":
        return {"$elemMatch": {rng.choice(["b", "c", "0"]): rng.choice([None, {"$exists": False}, {"$gt": 0},
                                                                         {"$type": "string"}, 1])}}
    if kind == "elem_value":
        return {"$elemMatch": rng.choice([{"$lt": 0}, {"$gte": 1, "$lt": 8}, {"$nin": ["a", 1]}, {"$type": "array"},
                                          {"$eq": None}, {"$ne": None}, {"$regex": "^a"}])}
    if kind == "size":
        return {"$size": rng.randint(0, 2)}
    if kind == "mod":
        return {"$mod": [rng.choice([2, 3]), rng.choice([0, 1])]}
    if kind == "all":
        return {"$all": [rng.choice(_SCALARS[:10]) for _ in range(rng.randint(1, 2))]}
    return ""


def _filter(rng: random.Random, depth: int = 0) -> dict[str, Any]:
    shape = rng.choice(["field"] * 6 + ["two", "or", "and", "nor", "expr"] if depth == 0 else ["field"])
    if shape == "field":
        return {rng.choice(_PATHS): _condition(rng)}
    if shape == "two":
        first, second = rng.sample(_PATHS, 2)
        return {first: _condition(rng), second: _condition(rng)}
    if shape == "expr":
        op = rng.choice(["$lt", "$gt", "$eq", "$ne", "$lte", "$gte"])
        guard = rng.choice([{"a": {"$type": "number"}, "b": {"$type": "number"}}, {}])
        return {**guard, "$expr": {op: ["$a", rng.choice(["$b", 0, None, float("nan")])]}}
    return {f"${shape}": [_filter(rng, depth + 1) for _ in range(rng.randint(1, 3))]}


def filters(rng: random.Random, n: int) -> list[dict[str, Any]]:
    return [_filter(rng) for _ in range(n)]


Disagreement = tuple[dict[str, Any], str]


def disagreements(docs: list[dict[str, Any]], queries: list[dict[str, Any]]) -> tuple[int, list[Disagreement]]:
    """How many filters were compared on ``docs``, and each one whose answers differ (with how)."""
    collection = MemoryCollection.of(docs)
    stored = [d for batch in collection._store.batches() for d in batch]
    found: list[Disagreement] = []
    compared = 0
    for query in queries:
        try:
            fast = [d["_id"] for d in collection.find(query)]
        except Exception as exc:
            with general_path():
                try:
                    compile_filter(query)
                    found.append((query, f"fast path raised {type(exc).__name__}, general path did not"))
                except Exception:
                    pass
            continue
        compared += 1
        with general_path():
            test = compile_filter(query)
        general = [d["_id"] for d in stored if test(d)]
        if general != fast:
            found.append((query, f"fast path {fast} != general path {general}"))
        counted = collection.count_documents(query)
        if counted != len(fast):
            found.append((query, f"count_documents {counted} != find {len(fast)}"))
        try:
            pipeline, _ = count_many_pipeline(CountManyInput(queries=[CountQuery(filter=encode(query))]))
        except (QueryRefused, ValueError):
            continue  # the guard refuses it: Argus never sends it
        rows = collection.aggregate(pipeline)
        batched = rows[0]["q0"][0]["n"] if rows and rows[0]["q0"] else 0
        if batched != counted:
            found.append((query, f"$facet count {batched} != count_documents {counted}"))
    return compared, found
