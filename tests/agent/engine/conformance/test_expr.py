"""``$expr`` arithmetic and comparisons with null, missing and NaN.

Sources: the manual's pages for ``$add``, ``$subtract``, ``$multiply``, ``$divide``, ``$abs``
(an argument that is null or missing gives null; ``$divide`` gives a double; any Decimal128 makes
the result Decimal128), "Comparison/Sort Order" and ``canonicalizeBSONType`` (a missing value
ranks below null in expression comparisons; ``{$eq: ["$x", null]}`` is false when ``x`` is missing),
``$ifNull`` (null and missing are replaced), ``$cond``; ``compare_numbers.h`` for NaN.
"""

from __future__ import annotations

from bson import Decimal128

from tests.agent.engine.conformance.answers import aggregate, matching

NAN = float("nan")


def _values(docs: list[dict], expression: dict) -> list:
    return [r.get("v", "MISSING") for r in aggregate(docs, [{"$project": {"v": expression}}])]


def test_arithmetic_with_null_or_missing_is_null() -> None:
    docs = [{"_id": 1, "a": None, "b": 2}, {"_id": 2, "b": 2}]
    for op in ("$add", "$subtract", "$multiply", "$divide"):
        assert _values(docs, {op: ["$a", "$b"]}) == [None, None]
    assert _values(docs, {"$abs": "$a"}) == [None, None]


def test_arithmetic_types() -> None:
    docs = [{"_id": 1, "a": 7, "b": 2, "d": Decimal128("1.5")}]
    assert _values(docs, {"$divide": ["$a", "$b"]}) == [3.5]
    assert _values(docs, {"$add": ["$a", "$b"]}) == [9]
    assert _values(docs, {"$multiply": ["$a", "$d"]}) == [Decimal128("10.5")]
    assert isinstance(_values(docs, {"$add": ["$a", 0.5]})[0], float)


def test_nan_propagates_through_arithmetic() -> None:
    docs = [{"_id": 1, "a": NAN, "b": 1}]
    value = _values(docs, {"$add": ["$a", "$b"]})[0]
    assert value != value


def test_comparisons_with_null_missing_and_nan() -> None:
    docs = [{"_id": 1, "a": None}, {"_id": 2}, {"_id": 3, "a": NAN}, {"_id": 4, "a": 3}]
    assert matching(docs, {"$expr": {"$eq": ["$a", None]}}) == [1]
    assert matching(docs, {"$expr": {"$ne": ["$a", None]}}) == [2, 3, 4]
    assert matching(docs, {"$expr": {"$lte": ["$a", None]}}) == [1, 2]
    assert matching(docs, {"$expr": {"$gt": ["$a", 2]}}) == [4]
    assert matching(docs, {"$expr": {"$eq": [{"$ifNull": ["$a", "none"]}, "none"]}}) == [1, 2]


def test_truthiness_of_expressions() -> None:
    """Manual, ``$expr``/``$cond``: null, missing, false and zero are false; NaN and all else true."""
    docs = [{"_id": 1, "a": 0}, {"_id": 2, "a": NAN}, {"_id": 3, "a": None}, {"_id": 4}, {"_id": 5, "a": ""},
            {"_id": 6, "a": []}, {"_id": 7, "a": Decimal128("0")}]
    assert matching(docs, {"$expr": "$a"}) == [2, 5, 6]


def test_cross_field_checks_as_argus_writes_them() -> None:
    """The planner's shapes: numbers first, then the relation (``$abs``/``$subtract``/``$multiply``)."""
    docs = [{"_id": 1, "total": 10, "qty": 2, "price": 5}, {"_id": 2, "total": 12, "qty": 2, "price": Decimal128("5")},
            {"_id": 3, "total": None, "qty": 2, "price": 5}]
    off = {"$gt": [{"$abs": {"$subtract": ["$total", {"$multiply": ["$qty", "$price"]}]}},
                   {"$max": [0.01, {"$multiply": [0.001, {"$abs": "$total"}]}]}]}
    assert matching(docs, {"total": {"$type": "number"}, "$expr": off}) == [2]
