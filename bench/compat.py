#!/usr/bin/env python3
"""What a server takes of what Argus can send: every pipeline stage, query operator, expression
operator, group accumulator and ``$type`` alias the read-only guard allows (``argus/agent/tools/guard.py``),
each sent in one small pipeline to a live server and to the in-process engine over the same
documents (every BSON type Argus meets, missing and null), and compared.

Each probe is checked by the guard first, so it is a pipeline Argus could send. A probe the server
refuses is listed with its error code; one it answers differently from the in-process engine is
listed with both answers. ``--markdown`` prints the table docs/servers.md carries.

Usage: python bench/compat.py --uri mongodb://127.0.0.1:27081 [--markdown]
Exits 1 when the server could not be reached or no probe was answered.
"""

from __future__ import annotations

import sys
from pathlib import Path

_HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _HERE]
sys.path.insert(0, str(_HERE.parent))

import argparse
import os
import uuid
from datetime import UTC, datetime
from typing import Any

import pymongo
from bson import Binary, Decimal128, Int64, ObjectId, json_util
from pymongo.errors import OperationFailure

from argus.agent.engine import MemoryCollection
from argus.agent.tools.compat import TYPE_CODES
from argus.agent.tools.field_profile import profile_pipeline
from argus.agent.tools.group_stats import group_pipeline
from argus.agent.tools.guard import EXPRESSION_OPERATORS, PIPELINE_STAGES, QUERY_OPERATORS
from argus.agent.tools.guard_pipeline import check_pipeline
from argus.agent.tools.models import GetStatsInput

ACCUMULATORS = ("$sum", "$avg", "$min", "$max", "$first", "$last", "$push", "$addToSet", "$count")

DOCUMENTS: list[dict[str, Any]] = [
    {"_id": 1, "n": 5, "s": "Alpha", "d": datetime(2024, 3, 1, 12, tzinfo=UTC), "a": [1, 2, 3], "o": {"x": 1}},
    {"_id": 2, "n": 2.5, "s": " beta ", "d": datetime(1969, 12, 31, tzinfo=UTC), "a": [], "o": {"x": "1"}},
    {"_id": 3, "n": Int64(-7), "s": "gamma@example.org", "a": ["x", {"k": 2}], "o": {}},
    {"_id": 4, "n": Decimal128("10.50"), "s": "", "d": None, "a": [[1], 2]},
    {"_id": 5, "n": "12", "s": "ÉCOLE", "d": "2024-01-01", "a": "not an array", "o": None},
    {"_id": 6, "n": None, "s": None, "a": None, "o": [1]},
    {"_id": 7, "n": True, "s": 42, "d": datetime(2030, 1, 1, tzinfo=UTC), "a": [None], "o": {"x": None}},
    {"_id": 8, "s": "delta", "u": Binary.from_uuid(uuid.UUID(int=8)), "oid": ObjectId("65f000000000000000000000")},
    {"_id": 9, "n": float("nan"), "s": "x" * 3},
    {"_id": 10, "n": 0, "s": "0", "a": [0, 0.0]},
]

_COUNT: list[dict[str, Any]] = [{"$count": "n"}]

QUERY: dict[str, list[dict[str, Any]]] = {
    "$eq": [{"n": {"$eq": 5}}], "$ne": [{"n": {"$ne": 5}}],
    "$gt": [{"n": {"$gt": 2}}, {"d": {"$gt": datetime(2000, 1, 1)}}],
    "$gte": [{"n": {"$gte": 2.5}}], "$lt": [{"n": {"$lt": 3}}, {"s": {"$lt": "b"}}], "$lte": [{"n": {"$lte": 0}}],
    "$in": [{"n": {"$in": [5, None, "12"]}}], "$nin": [{"n": {"$nin": [5, None]}}],
    "$and": [{"$and": [{"n": {"$gt": 0}}, {"n": {"$lt": 10}}]}], "$or": [{"$or": [{"n": 5}, {"s": "delta"}]}],
    "$nor": [{"$nor": [{"n": 5}, {"s": "delta"}]}], "$not": [{"n": {"$not": {"$gt": 3}}}],
    "$exists": [{"d": {"$exists": True}}, {"d": {"$exists": False}}],
    "$type": [{"n": {"$type": "number"}}, {"n": {"$type": [2, "null"]}}],
    "$regex": [{"s": {"$regex": "^[a-z]+$"}}, {"s": {"$regex": "^é", "$options": "i"}}],
    "$options": [{"s": {"$regex": "alpha", "$options": "i"}}],
    "$size": [{"a": {"$size": 0}}, {"a": {"$size": 3}}], "$all": [{"a": {"$all": [1, 2]}}],
    "$elemMatch": [{"a": {"$elemMatch": {"$gt": 1}}}], "$mod": [{"n": {"$mod": [2, 1]}}],
    "$expr": [{"$expr": {"$gt": ["$n", 3]}}], "$comment": [{"$comment": "argus", "n": 5}],
}

_EXPRESSIONS: dict[str, list[Any]] = {
    "$eq": [{"$eq": ["$n", 5]}], "$ne": [{"$ne": ["$n", 5]}],
    "$gt": [{"$gt": ["$n", 2]}], "$gte": [{"$gte": ["$n", 2]}],
    "$lt": [{"$lt": ["$n", 2]}], "$lte": [{"$lte": ["$n", 2]}], "$cmp": [{"$cmp": ["$n", 2]}],
    "$and": [{"$and": ["$n", "$s"]}], "$or": [{"$or": ["$n", "$d"]}], "$not": [{"$not": ["$n"]}],
    "$in": [{"$in": ["$n", [5, 2.5]]}], "$cond": [{"$cond": [{"$gt": ["$n", 2]}, "big", "small"]}],
    "$ifNull": [{"$ifNull": ["$d", "none"]}],
    "$switch": [{"$switch": {"branches": [{"case": {"$eq": ["$n", 5]}, "then": 1}], "default": 0}}],
    "$literal": [{"$literal": "$n"}], "$type": [{"$type": "$n"}, {"$type": "$d"}], "$isNumber": [{"$isNumber": "$n"}],
    "$isArray": [{"$isArray": "$a"}], "$size": [{"$cond": [{"$isArray": "$a"}, {"$size": "$a"}, -1]}],
    "$arrayElemAt": [{"$cond": [{"$isArray": "$a"}, {"$arrayElemAt": ["$a", -1]}, None]}],
    "$first": [{"$cond": [{"$isArray": "$a"}, {"$first": "$a"}, None]}],
    "$last": [{"$cond": [{"$isArray": "$a"}, {"$last": "$a"}, None]}],
    "$strLenCP": [{"$cond": [{"$eq": [{"$type": "$s"}, "string"]}, {"$strLenCP": "$s"}, -1]}],
    "$strLenBytes": [{"$cond": [{"$eq": [{"$type": "$s"}, "string"]}, {"$strLenBytes": "$s"}, -1]}],
    "$toLower": [{"$toLower": "$s"}], "$toUpper": [{"$toUpper": "$s"}], "$trim": [{"$trim": {"input": "$s"}}],
    "$ltrim": [{"$ltrim": {"input": "$s"}}], "$rtrim": [{"$rtrim": {"input": "$s"}}],
    "$concat": [{"$concat": ["$s", "-"]}],
    "$substrCP": [{"$cond": [{"$eq": [{"$type": "$s"}, "string"]}, {"$substrCP": ["$s", 0, 2]}, None]}],
    "$regexMatch": [{"$regexMatch": {"input": "$s", "regex": "^[a-z]"}}],
    "$split": [{"$cond": [{"$eq": [{"$type": "$s"}, "string"]}, {"$split": ["$s", "a"]}, None]}],
    "$abs": [{"$abs": {"$ifNull": [{"$convert": {"input": "$n", "to": "double", "onError": None}}, 0]}}],
    "$add": [{"$add": [1, {"$convert": {"input": "$n", "to": "double", "onError": 0, "onNull": 0}}]}],
    "$subtract": [{"$subtract": ["$d", 1000]}], "$multiply": [{"$multiply": [2, 3.5]}],
    "$divide": [{"$divide": [7, 2]}], "$mod": [{"$mod": [7, 2]}], "$floor": [{"$floor": 2.5}],
    "$ceil": [{"$ceil": 2.5}], "$round": [{"$round": [2.567, 1]}],
    "$sum": [{"$sum": ["$n", 1]}], "$avg": [{"$avg": ["$n", 1]}], "$min": [{"$min": ["$n", "$s"]}],
    "$max": [{"$max": ["$n", "$s"]}],
    "$count": [{"$literal": 1}],  # $count is a stage and an accumulator, never an expression
    "$year": [{"$cond": [{"$eq": [{"$type": "$d"}, "date"]}, {"$year": "$d"}, None]}],
    "$month": [{"$cond": [{"$eq": [{"$type": "$d"}, "date"]}, {"$month": "$d"}, None]}],
    "$dayOfMonth": [{"$cond": [{"$eq": [{"$type": "$d"}, "date"]}, {"$dayOfMonth": "$d"}, None]}],
    "$hour": [{"$cond": [{"$eq": [{"$type": "$d"}, "date"]}, {"$hour": "$d"}, None]}],
    "$dateToString": [{"$cond": [{"$eq": [{"$type": "$d"}, "date"]},
                                 {"$dateToString": {"date": "$d", "format": "%Y-%m-%d"}}, None]}],
    "$toString": [{"$convert": {"input": "$n", "to": "string", "onError": "err"}}, {"$toString": "$oid"}],
    "$toDouble": [{"$convert": {"input": "$n", "to": "double", "onError": "err"}}, {"$toDouble": "2.5"}],
    "$toInt": [{"$toInt": "12"}], "$toLong": [{"$toLong": 12.0}], "$toDate": [{"$toDate": "2024-01-02"}],
    "$convert": [{"$convert": {"input": "$s", "to": "int", "onError": None, "onNull": -1}}],
}


def _probes() -> list[tuple[str, str, list[dict[str, Any]]]]:
    """(kind, name, pipeline) for everything the guard allows."""
    probes: list[tuple[str, str, list[dict[str, Any]]]] = []
    for op in sorted(QUERY_OPERATORS):
        for query in QUERY.get(op, []):
            probes.append(("query operator", op, [{"$match": query}, *_COUNT]))
    for alias in sorted(TYPE_CODES):
        # Document 1 always matches: $count over no documents is a difference of its own (the $count row).
        probes.append(("$type alias", alias, [{"$match": {"$or": [{"n": {"$type": alias}}, {"_id": 1}]}}, *_COUNT]))
    for op in sorted(EXPRESSION_OPERATORS):
        for expr in _EXPRESSIONS.get(op, []):
            probes.append(("expression", op, [{"$sort": {"_id": 1}}, {"$project": {"v": expr}}]))
    for acc in ACCUMULATORS:
        body: Any = {} if acc == "$count" else "$n"
        probes.append(("accumulator", acc, [{"$group": {"_id": None, "v": {acc: body}}}, {"$project": {"_id": 0}}]))
    stages: dict[str, list[dict[str, Any]]] = {
        "$match": [{"$match": {"s": "delta"}}], "$group": [{"$group": {"_id": {"$type": "$n"}, "c": {"$sum": 1}}},
                                                           {"$sort": {"_id": 1}}],
        "$sort": [{"$sort": {"n": 1, "_id": 1}}, {"$project": {"_id": 1}}], "$limit": [{"$sort": {"_id": 1}},
                                                                                     {"$limit": 2}],
        "$skip": [{"$sort": {"_id": 1}}, {"$skip": 8}], "$project": [{"$project": {"s": 1, "o.x": 1}}],
        "$count": [{"$match": {"_id": -1}}, *_COUNT], "$sample": [{"$sample": {"size": 20}}, *_COUNT],
        "$unwind": [{"$unwind": "$a"}, *_COUNT],
        "$facet": [{"$facet": {"a": [{"$match": {"n": {"$type": "number"}}}, *_COUNT],
                               "b": [{"$match": {"$expr": {"$isArray": "$a"}}}, *_COUNT]}}],
        "$addFields": [{"$addFields": {"t": {"$type": "$o"}}}, {"$project": {"t": 1}}],
        "$sortByCount": [{"$sortByCount": {"$type": "$s"}}, {"$sort": {"count": -1, "_id": 1}}],
    }
    for stage in sorted(PIPELINE_STAGES):
        # A blocking stage last: what streaming stages let through is then read the same way everywhere.
        probes.append(("stage", stage, [*stages[stage], {"$sort": {"_id": 1}}]))
    # Whole pipelines Argus builds: the field profile of a batch, and fences grouped in one $group.
    profile = profile_pipeline(["n", "s", "d", "o", "o.x", "a"])
    probes.append(("Argus pipeline", "field profile", [*profile, {"$sort": {"_id.k": 1, "_id.t": 1}}]))
    fences = [GetStatsInput(field=f, operation=op, value_filter={"$gt": 1} if op == "min" else {"$lte": 5})
              for f in ("n", "o.x") for op in ("min", "max")]
    probes.append(("Argus pipeline", "fences in one $group", group_pipeline(fences)))
    return probes


def _canonical(value: Any) -> str:
    return json_util.dumps(value, json_options=json_util.CANONICAL_JSON_OPTIONS, sort_keys=True)


def _run(collection: Any, pipeline: list[dict[str, Any]]) -> list[str]:
    rows = list(collection.aggregate(pipeline, maxTimeMS=10_000))
    if "$addToSet" in _canonical(pipeline):  # a set's order is unspecified
        rows = [{**row, "v": sorted(row["v"], key=_canonical)} for row in rows]
    return [_canonical(row) for row in rows]


def _difference(live: list[str], local: list[str]) -> str:
    for ours, theirs in zip(live, local, strict=False):
        if ours != theirs:
            return f"server `{ours}`, in-process `{theirs}`"
    return f"server {len(live)} rows `{live[len(local):][:1]}`, in-process {len(local)} rows `{local[len(live):][:1]}`"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--uri", default=os.environ.get("ARGUS_TEST_MONGODB_URI"),
                        required="ARGUS_TEST_MONGODB_URI" not in os.environ,
                        help="the server (default: $ARGUS_TEST_MONGODB_URI, as the live tests use)")
    parser.add_argument("--quick", action="store_true", help="the same probes: a run is already small")
    parser.add_argument("--markdown", action="store_true", help="print the docs table of refusals and differences")
    args = parser.parse_args()
    client: pymongo.MongoClient[dict[str, Any]] = pymongo.MongoClient(args.uri, serverSelectionTimeoutMS=5000)
    database = client[f"argus_compat_{uuid.uuid4().hex[:8]}"]
    try:
        database.probe.insert_many(DOCUMENTS)
    except pymongo.errors.PyMongoError as exc:
        print(f"cannot reach {args.uri}: {exc}", file=sys.stderr)
        return 1
    memory = MemoryCollection.of(DOCUMENTS, name="probe")
    rows: list[tuple[str, str, str, str]] = []
    answered = 0
    try:
        for kind, name, pipeline in _probes():
            check_pipeline(pipeline)
            shown = json_util.dumps([stage for stage in pipeline if stage != {"$sort": {"_id": 1}}])
            local: list[str] | None
            try:
                local = _run(memory, pipeline)
            except Exception:  # the in-process engine's refusal is a result too
                local = None
            try:
                live = _run(database.probe, pipeline)
            except OperationFailure as exc:
                verdict = "same (both refuse these values)" if local is None else f"refused (code {exc.code})"
                rows.append((kind, name, verdict, shown))
                continue
            answered += 1
            if local is None:
                rows.append((kind, name, "in-process engine refuses, server answers", shown))
            else:
                rows.append((kind, name, "same" if live == local else "differs: " + _difference(live, local), shown))
    finally:
        client.drop_database(database.name)
    names = sorted({(kind, name) for kind, name, _, _ in rows})
    bad = [row for row in rows if not row[2].startswith("same")]
    if args.markdown:
        print("| kind | operator | DocumentDB (this server) | probe |\n| --- | --- | --- | --- |")
        for kind, name, result, shown in bad:
            print(f"| {kind} | `{name}` | {result} | `{shown}` |")
    else:
        for kind, name, result, shown in rows:
            print(f"{kind:15} {name:20} {result}  {shown if not result.startswith('same') else ''}")
    print(f"{len(names)} operators, {len(rows)} probes: {answered} answered, "
          f"{sum(1 for r in rows if r[2].startswith('refused'))} refused, "
          f"{sum(1 for r in rows if r[2].startswith(('differs', 'in-process')))} differ", file=sys.stderr)
    return 0 if answered else 1


if __name__ == "__main__":
    sys.exit(main())
