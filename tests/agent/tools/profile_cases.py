"""Collections and filters that put a field profile (``argus.agent.tools.field_profile``) to the test:
every numeric type with NaN, infinities and -0.0, strings, dates, booleans, nulls and missing values,
objects that are sometimes a scalar or missing, and a field holding arrays; the filters the heuristic
planner writes (type, null, range, NaN and regex checks, a nested field under its parent's existence)
and a few more combinations of them. Shared by the engine tests and the live ones on DocumentDB."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from typing import Any

from bson.decimal128 import Decimal128
from bson.int64 import Int64
from bson.regex import Regex

_T0 = datetime(2024, 1, 1, tzinfo=UTC)
NAN, INF = float("nan"), float("inf")
PATHS = ["num", "clean", "s", "d", "o", "o.x", "o.y", "arr", "flag"]


def documents(seed: int, n: int = 300) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    docs = []
    for i in range(n):
        doc: dict[str, Any] = {"_id": i}
        if rng.random() < 0.9:
            doc["num"] = rng.choice([rng.randint(-5, 100), rng.uniform(0, 100), Int64(rng.randint(0, 10**12)),
                                     Decimal128(str(round(rng.uniform(-1, 50), 2))), 0.0, -0.0, None,
                                     "12", True] + ([NAN, INF, -INF, Decimal128("NaN")] if seed % 2 else []))
        if seed % 3 or i % 50:
            doc["clean"] = rng.randint(0, 100)
        if rng.random() < 0.95:
            doc["s"] = rng.choice([f"v{rng.randint(0, 9)}", "n/a", "", " ", "Z-000123", None, rng.randint(0, 3)])
        if rng.random() < 0.9:
            doc["d"] = rng.choice([_T0 + timedelta(days=rng.randint(0, 700)), "2024-13-01", None])
        shape = rng.random()
        if shape < 0.7:
            doc["o"] = {k: v for k, v in (("x", rng.choice([rng.randint(0, 20), None, "x"])),
                                          ("y", rng.uniform(0, 1))) if rng.random() < 0.85}
        elif shape < 0.8:
            doc["o"] = rng.choice([5, "scalar", None])
        if seed % 4 == 0 or rng.random() < 0.9:
            doc["arr"] = rng.choice([1, 2, 3]) if i % 7 else [1, "a"]
        doc["flag"] = rng.random() < 0.5 if i % 13 else "yes"
        docs.append(doc)
    return docs


def filters() -> list[dict[str, Any]]:
    """Filters over one path (or one path under its parent's existence), some of every kind."""
    out: list[dict[str, Any]] = []
    bounds: list[Any] = [-10**9, -1, 0, 0.5, 50, 100, 10**13, INF, -INF, Decimal128("25.5")]
    for path in PATHS:
        out += [{path: None}, {path: {"$exists": True}}, {path: {"$exists": False}}, {path: {"$ne": None}},
                {path: {"$exists": True, "$ne": None, "$not": {"$type": "number"}}},
                {path: {"$exists": True, "$ne": None, "$not": {"$type": "string"}}},
                {path: {"$exists": True, "$ne": None, "$not": {"$type": "bool"}}},
                {path: {"$type": ["date", "null"]}}, {path: {"$type": 16}},
                {"$or": [{path: {"$in": [NAN, INF, -INF]}}, {path: {"$lt": 0}}]},
                {"$or": [{path: {"$in": [NAN, INF, -INF]}}, {path: {"$lt": 0}}, {path: {"$eq": 0}}]},
                {path: NAN}, {path: {"$in": [5, "v1", None]}}, {path: {"$nin": [1, 2]}}, {path: 0},
                {path: Regex("^\\s*((n/?a|null|-+)\\s*)?$", "i")},
                {path: {"$type": "string", "$not": Regex("^[a-z][0-9]$")}},
                {path: {"$gt": "v5"}}, {path: {"$lte": _T0 + timedelta(days=350)}},
                {path: {"$gte": _T0 - timedelta(days=1)}}, {"$nor": [{path: {"$type": "number"}}, {path: None}]},
                {"$and": [{path: {"$gte": 0}}, {path: {"$lte": 100}}]}, {path: {"$gt": 3, "$lt": 8}}, {path: True}]
        for bound in bounds:
            out += [{path: {op: bound}} for op in ("$gt", "$gte", "$lt", "$lte")]
    for child in ("o.x", "o.y"):
        out += [{"o": {"$exists": True}, child: None}, {"o": {"$exists": True}, child: {"$gt": 10}},
                {"o": {"$exists": True}, child: {"$exists": True, "$ne": None, "$not": {"$type": "number"}}}]
    return out


def fences() -> list[tuple[str, str, dict[str, Any]]]:
    """(path, min or max, value condition): the statistics a fence asks."""
    out = []
    for path in ("num", "clean", "o.x", "o.y", "arr", "d"):
        for bound in (-1, 0, 0.5, 50, 99, 100, 1000):
            out += [(path, "min", {"$gt": bound}), (path, "max", {"$lte": bound}), (path, "max", {"$lt": bound})]
    out += [("d", "max", {"$lte": _T0 + timedelta(days=300)}), ("d", "min", {"$gt": _T0 - timedelta(days=3)})]
    return out


def refused_filters() -> list[dict[str, Any]]:
    """Filters over ``a`` a server refuses (DocumentDB as MongoDB: an empty or unknown ``$type``, a regex in
    ``$ne`` or ``$gt``, an operator inside ``$in``, an empty or operator-less ``$not``, ``$options`` twice or alone)."""
    return [{"a": {"$type": []}}, {"a": {"$type": "missing"}}, {"a": {"$ne": Regex("x")}},
            {"a": {"$gt": Regex("x")}}, {"a": {"$in": [{"$gt": 1}]}}, {"a": {"$not": {}}},
            {"a": {"$not": {"x": 1}}}, {"a": {"$regex": 5}}, {"a": {"$options": "i"}},
            {"a": {"$regex": Regex("x", "i"), "$options": "i"}}, {"a": {"$gt": 1, "b": 2}},
            {"a": {"$size": "x"}}, {"a": {"$mod": [0, 1]}}, {"a": {"$elemMatch": 1}}]


def near_numbers() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Numbers of two types one double apart, or equal only as doubles (documents, filters): MongoDB compares
    them exactly, DocumentDB not always (a decimal 0.1000000000000000055511151231257827 equals the double 0.1
    there, and ``$nin``/``$in`` miss a double -2**63 or 2**63 beside the long or decimal of the same value)."""
    values = [[0.1, Decimal128("0.1000000000000000055511151231257827")], [-2.0 ** 63], [2.0 ** 63],
              [Int64(2 ** 53 + 1)], [2.0 ** 53], [Decimal128("9007199254740993")]]
    docs = [{"_id": i, "a": v} for i, group in enumerate(values) for v in group]
    docs = [{**d, "_id": i} for i, d in enumerate(docs)]
    queries: list[dict[str, Any]] = [
        {"a": {"$lte": Decimal128("0.1000000000000000055511151231257827"), "$eq": 0.1}},
        {"a": Decimal128("0.1000000000000000055511151231257827")}, {"a": 0.1}, {"a": {"$gt": 0.1}},
        {"a": {"$nin": [False, Int64(-2 ** 63)]}}, {"a": {"$in": [Int64(-2 ** 63)]}},
        {"a": {"$in": [Decimal128("9223372036854775808")]}}, {"a": {"$gt": Int64(2 ** 63 - 1)}},
        {"a": 2.0 ** 53}, {"a": {"$gt": 2.0 ** 53}}, {"a": Int64(2 ** 53 + 1)}]
    return docs, queries
