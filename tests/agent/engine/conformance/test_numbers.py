"""Numeric equality and comparison across int, long, double, Decimal128, NaN and -0.0.

Sources: the manual's "Comparison/Sort Order" page (numbers of every type compare by value);
``src/mongo/base/compare_numbers.h`` (``compareDoubles``: NaN equals NaN and is below every other
number; ``compareLongToDouble`` is exact beyond 2**53); ``jstests/core/query/nan.js`` (expected
answers for NaN below); the manual's "Query Predicates and Type Bracketing" (``$gt: 5`` sees
numbers only; booleans are not numbers).
"""

from __future__ import annotations

from bson import Decimal128, Int64

from tests.agent.engine.conformance.answers import matching

NAN = float("nan")


def test_equality_across_numeric_types() -> None:
    docs = [{"_id": 1, "a": 1}, {"_id": 2, "a": Int64(1)}, {"_id": 3, "a": 1.0}, {"_id": 4, "a": Decimal128("1")},
            {"_id": 5, "a": Decimal128("1.000")}, {"_id": 6, "a": True}, {"_id": 7, "a": "1"}]
    for query in (1, Int64(1), 1.0, Decimal128("1.0")):
        assert matching(docs, {"a": query}) == [1, 2, 3, 4, 5]
    assert matching(docs, {"a": {"$ne": 1}}) == [6, 7]


def test_negative_zero_equals_zero() -> None:
    docs = [{"_id": 1, "a": -0.0}, {"_id": 2, "a": 0}, {"_id": 3, "a": Decimal128("-0")}, {"_id": 4, "a": 0.5}]
    assert matching(docs, {"a": 0}) == [1, 2, 3]
    assert matching(docs, {"a": -0.0}) == [1, 2, 3]
    assert matching(docs, {"a": {"$lt": 0}}) == []
    assert matching(docs, {"a": {"$gte": 0, "$lte": 0}}) == [1, 2, 3]


def test_nan_jstest() -> None:
    docs = [{"_id": 0, "a": float("-inf")}, {"_id": 1, "a": -3}, {"_id": 2, "a": 0}, {"_id": 3, "a": 3},
            {"_id": 4, "a": float("inf")}, {"_id": 5, "a": NAN}, {"_id": 6, "a": -NAN}, {"_id": 8, "a": None},
            {"_id": 9, "a": []}, {"_id": 10, "a": {"b": 1}}]
    assert matching(docs, {"a": NAN}) == [5, 6]
    assert matching(docs, {"a": {"$lt": NAN}}) == []
    assert matching(docs, {"a": {"$lte": NAN}}) == [5, 6]
    assert matching(docs, {"a": {"$gt": NAN}}) == []
    assert matching(docs, {"a": {"$gte": NAN}}) == [5, 6]
    assert matching(docs, {"a": {"$in": [NAN, 1000]}}) == [5, 6]
    assert matching(docs, {"a": {"$in": [Decimal128("NaN"), 1000]}}) == [5, 6]
    assert matching(docs, {"a": {"$in": [Decimal128("-NaN"), 1000]}}) == [5, 6]
    assert matching(docs, {"a": {"$ne": NAN}}) == [0, 1, 2, 3, 4, 8, 9, 10]
    for query in ({"a": 1}, {"a": {"$lt": 1}}, {"a": {"$gt": -100}}, {"a": {"$gte": -100}}):
        assert 5 not in matching(docs, query) and 6 not in matching(docs, query)


def test_comparisons_are_exact_across_widths() -> None:
    big = 2 ** 53 + 1
    docs = [{"_id": 1, "a": Int64(big)}, {"_id": 2, "a": float(2 ** 53)},
            {"_id": 3, "a": Decimal128("9007199254740993")}]
    assert matching(docs, {"a": {"$gt": float(2 ** 53)}}) == [1, 3]
    assert matching(docs, {"a": Int64(big)}) == [1, 3]
    assert matching(docs, {"a": float(2 ** 53)}) == [2]


def test_decimal_values_in_a_list_of_plain_numbers() -> None:
    """Issue 29, defect 4: ``{a: {$in: [1, 2]}}`` counts ``Decimal128("1")`` and ``Decimal128("2.0")``,
    and a contract's ``in: [1, 2, 3]`` reports neither (equality by value, Comparison/Sort Order)."""
    docs = [{"_id": 1, "a": Decimal128("1")}, {"_id": 2, "a": Decimal128("2.0")}, {"_id": 3, "a": Decimal128("4")}]
    assert matching(docs, {"a": {"$in": [1, 2]}}) == [1, 2]
    assert matching(docs, {"a": {"$nin": [1, 2, 3]}}) == [3]
    assert matching(docs, {"a": {"$in": [1.0, Int64(2)]}}) == [1, 2]


def test_decimal_ranges_and_type_bracketing() -> None:
    docs = [{"_id": 1, "a": Decimal128("7.5")}, {"_id": 2, "a": 7.5}, {"_id": 3, "a": Decimal128("-0.10")},
            {"_id": 4, "a": "8"}, {"_id": 5, "a": True}]
    assert matching(docs, {"a": {"$gt": 5}}) == [1, 2]
    assert matching(docs, {"a": {"$lt": Decimal128("0")}}) == [3]
    assert matching(docs, {"a": {"$gte": 1}}) == [1, 2]


def test_infinities_bound_every_finite_number() -> None:
    docs = [{"_id": 1, "a": float("inf")}, {"_id": 2, "a": Int64(2 ** 62)}, {"_id": 3, "a": Decimal128("-Infinity")}]
    assert matching(docs, {"a": {"$gt": Int64(2 ** 62)}}) == [1]
    assert matching(docs, {"a": {"$lt": -1e308}}) == [3]
