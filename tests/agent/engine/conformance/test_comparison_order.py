"""BSON comparison order across types, in ``$sort``, ``$expr``, ``$min``/``$max`` and ``$cmp``.

Sources: the manual's "Comparison/Sort Order" page (MinKey < null < numbers < strings < objects <
arrays < binData < ObjectId < booleans < dates < timestamps < regex < MaxKey; a missing field sorts
as null; ascending ``$sort`` takes an array's least element and an empty array sorts before null);
``src/mongo/bson/bsontypes.cpp`` ``canonicalizeBSONType`` (EOO, a missing value in expressions,
ranks 0, below null's 5, so ``{$lt: ["$missing", null]}`` is true); ``compare_numbers.h`` (NaN is
a number below every other number, and so above null and missing).
"""

from __future__ import annotations

from datetime import datetime

from bson import Binary, Decimal128, MaxKey, MinKey, ObjectId, Regex, Timestamp

from tests.agent.engine.conformance.answers import aggregate, matching

NAN = float("nan")
ORDERED = [MinKey(), None, -1, "a", {"x": 1}, [], Binary(b"\x00", 0), ObjectId("65a1b2c3d4e5f60718293a4b"), False,
           datetime(2020, 1, 1), Timestamp(1, 1), Regex("a"), MaxKey()]


def test_sort_follows_the_canonical_type_order() -> None:
    docs = [{"_id": i, "v": [v] if isinstance(v, list) else v} for i, v in reversed(list(enumerate(ORDERED)))]
    docs[[d["_id"] for d in docs].index(5)]["v"] = [[]]  # an array whose least element is an array
    rows = aggregate(docs, [{"$sort": {"v": 1}}])
    assert [r["_id"] for r in rows] == list(range(len(ORDERED)))


def test_nan_sorts_after_null_and_missing_before_numbers() -> None:
    """Issue 29, defect 5: null and missing first, then NaN, then the other numbers."""
    docs = [{"_id": 1, "a": 1}, {"_id": 2, "a": NAN}, {"_id": 3, "a": None}, {"_id": 4}, {"_id": 5, "a": -1e308},
            {"_id": 6, "a": Decimal128("NaN")}]
    assert [r["_id"] for r in aggregate(docs, [{"$sort": {"a": 1}}])] == [3, 4, 2, 6, 5, 1]
    assert [r["_id"] for r in aggregate(docs, [{"$sort": {"a": -1}}])] == [1, 5, 2, 6, 3, 4]


def test_expr_comparisons_put_nan_above_null_and_missing() -> None:
    docs = [{"_id": 1, "a": NAN}, {"_id": 2, "a": None}, {"_id": 3}, {"_id": 4, "a": 0}]
    assert matching(docs, {"$expr": {"$gt": ["$a", None]}}) == [1, 4]
    assert matching(docs, {"$expr": {"$lt": ["$a", -1e308]}}) == [1, 2, 3]
    assert matching(docs, {"$expr": {"$eq": ["$a", NAN]}}) == [1]
    assert matching(docs, {"$expr": {"$lt": ["$a", None]}}) == [3]
    assert matching(docs, {"$expr": {"$eq": ["$a", None]}}) == [2]


def test_expr_compares_across_types_by_type_order() -> None:
    docs = [{"_id": 1, "a": "10", "b": 9}, {"_id": 2, "a": 10, "b": 9},
            {"_id": 3, "a": datetime(2020, 1, 1), "b": True}]
    assert matching(docs, {"$expr": {"$gt": ["$a", "$b"]}}) == [1, 2, 3]
    rows = aggregate(docs, [{"$project": {"c": {"$cmp": ["$b", "$a"]}}}])
    assert [r["c"] for r in rows] == [-1, -1, -1]


def test_group_min_and_max_use_the_same_order_and_skip_null() -> None:
    """Manual, ``$min``/``$max`` (accumulators): null and missing are ignored; mixed types compare
    by the comparison order."""
    docs = [{"_id": 1, "v": "a"}, {"_id": 2, "v": 5}, {"_id": 3, "v": None}, {"_id": 4}, {"_id": 5, "v": NAN}]
    rows = aggregate(docs, [{"$group": {"_id": None, "lo": {"$min": "$v"}, "hi": {"$max": "$v"}}}])
    assert rows[0]["hi"] == "a"
    assert rows[0]["lo"] != rows[0]["lo"]  # NaN, the least number


def test_ascending_sort_of_arrays_uses_the_least_element() -> None:
    docs = [{"_id": 1, "v": [5, 1]}, {"_id": 2, "v": 2}, {"_id": 3, "v": []}, {"_id": 4, "v": None}]
    assert [r["_id"] for r in aggregate(docs, [{"$sort": {"v": 1}}])] == [3, 4, 1, 2]
    assert [r["_id"] for r in aggregate(docs, [{"$sort": {"v": -1}}])] == [1, 2, 4, 3]
