"""Each aggregation expression operator on the guard's allow-list, with the manual page's answer.

Sources: the manual's page for each operator (``/reference/operator/aggregation/<name>/``),
named in each test: null or missing input, the type of the result, and the edge the page
documents (``$round`` rounds half to even, ``$toInt`` truncates, ``$arrayElemAt`` out of range is
missing, ``$strLenBytes`` counts UTF-8 bytes, ...).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import pytest
from bson import Int64
from pymongo.errors import OperationFailure

from tests.agent.engine.conformance.answers import aggregate, matching

DOC = {"_id": 1, "s": " café\t", "n": 2.5, "i": 7, "arr": [1, 2, 3], "t": datetime(2024, 3, 9, 17, 5),
       "csv": "a,b", "none": None}


def _value(expression: Any) -> Any:
    row = aggregate([DOC], [{"$project": {"_id": 0, "v": expression}}])[0]
    return row.get("v", "MISSING")


CASES: list[tuple[str, Any, Any]] = [
    ("$and", {"$and": [1, "$i"]}, True),
    ("$or", {"$or": [0, "$none"]}, False),
    ("$not", {"$not": ["$none"]}, True),
    ("$in", {"$in": [2, "$arr"]}, True),
    ("$cond", {"$cond": [{"$gt": ["$i", 5]}, "big", "small"]}, "big"),
    ("$switch", {"$switch": {"branches": [{"case": {"$lt": ["$i", 0]}, "then": "neg"}], "default": "pos"}}, "pos"),
    ("$literal", {"$literal": "$i"}, "$i"),
    ("$isNumber", {"$isNumber": "$n"}, True),
    ("$isNumber", {"$isNumber": "$s"}, False),
    ("$isArray", {"$isArray": "$arr"}, True),
    ("$size", {"$size": "$arr"}, 3),
    ("$arrayElemAt", {"$arrayElemAt": ["$arr", -1]}, 3),
    ("$arrayElemAt", {"$arrayElemAt": ["$arr", 5]}, "MISSING"),
    ("$first", {"$first": "$arr"}, 1),
    ("$last", {"$last": "$arr"}, 3),
    # setUnion: duplicates within and across arrays appear once (1 and 1.0 are one value); null when an
    # operand is null or missing
    ("$setUnion", {"$size": {"$setUnion": [[1, 1.0, 2], "$arr"]}}, 3),
    ("$setUnion", {"$setUnion": ["$arr", "$none"]}, None),
    # objectToArray: k and v per field, in the document's order; null for null
    ("$objectToArray", {"$objectToArray": {"a": 1, "b": "x"}}, [{"k": "a", "v": 1}, {"k": "b", "v": "x"}]),
    ("$objectToArray", {"$objectToArray": "$none"}, None),
    ("$strLenCP", {"$strLenCP": "$s"}, 6),
    ("$strLenBytes", {"$strLenBytes": "$s"}, 7),
    ("$toLower", {"$toLower": "AbC"}, "abc"),
    ("$toUpper", {"$toUpper": "AbC"}, "ABC"),
    ("$toUpper", {"$toUpper": "$none"}, ""),
    ("$trim", {"$trim": {"input": "$s"}}, "café"),
    ("$ltrim", {"$ltrim": {"input": "$s"}}, "café\t"),
    ("$rtrim", {"$rtrim": {"input": "$s"}}, " café"),
    ("$concat", {"$concat": ["x", "$csv"]}, "xa,b"),
    ("$concat", {"$concat": ["x", "$none"]}, None),
    ("$substrCP", {"$substrCP": ["$s", 1, 3]}, "caf"),
    ("$regexMatch", {"$regexMatch": {"input": "$s", "regex": r"\w+"}}, True),
    ("$regexMatch", {"$regexMatch": {"input": "$none", "regex": "x"}}, False),
    ("$split", {"$split": ["$csv", ","]}, ["a", "b"]),
    ("$abs", {"$abs": -3}, 3),
    ("$add", {"$add": ["$i", 1]}, 8),
    ("$subtract", {"$subtract": ["$i", 10]}, -3),
    ("$multiply", {"$multiply": ["$i", 2]}, 14),
    ("$divide", {"$divide": ["$i", 2]}, 3.5),
    ("$mod", {"$mod": [-7, 3]}, -1),
    ("$floor", {"$floor": "$n"}, 2.0),
    ("$ceil", {"$ceil": "$n"}, 3.0),
    ("$floor", {"$floor": -2.5}, -3.0),
    ("$abs", {"$abs": -2.5}, 2.5),
    ("$round", {"$round": ["$n", 0]}, 2.0),
    ("$round", {"$round": [3.5, 0]}, 4.0),
    ("$sum", {"$sum": "$arr"}, 6),
    ("$avg", {"$avg": "$arr"}, 2.0),
    ("$min", {"$min": ["$i", "$n"]}, 2.5),
    ("$max", {"$max": "$arr"}, 3),
    ("$year", {"$year": "$t"}, 2024),
    ("$month", {"$month": "$t"}, 3),
    ("$dayOfMonth", {"$dayOfMonth": "$t"}, 9),
    ("$hour", {"$hour": "$t"}, 17),
    ("$dateToString", {"$dateToString": {"format": "%Y-%m-%d", "date": "$t"}}, "2024-03-09"),
    ("$toString", {"$toString": "$i"}, "7"),
    ("$toDouble", {"$toDouble": "1.5"}, 1.5),
    ("$toInt", {"$toInt": 2.7}, 2),
    ("$toLong", {"$toLong": "$i"}, Int64(7)),
    ("$toDate", {"$toDate": Int64(0)}, datetime(1970, 1, 1, 0, 0)),
    ("$toDate", {"$toDate": 1.5}, datetime(1970, 1, 1, 0, 0, 0, 1000)),
    ("$convert", {"$convert": {"input": "x", "to": "int", "onError": -1}}, -1),
    ("$eq", {"$eq": ["$i", 7.0]}, True),
    ("$ne", {"$ne": ["$i", 7]}, False),
    ("$gt", {"$gt": ["$n", 2]}, True),
    ("$gte", {"$gte": ["$i", 7]}, True),
    ("$lt", {"$lt": ["$none", 0]}, True),
    ("$lte", {"$lte": ["$n", 2]}, False),
    ("$cmp", {"$cmp": ["$i", "$n"]}, 1),
    ("$ifNull", {"$ifNull": ["$none", "$missing", "d"]}, "d"),
    ("$type", {"$type": "$arr"}, "array"),
]


@pytest.mark.parametrize(("op", "expression", "expected"), CASES, ids=[f"{i}-{c[0]}" for i, c in enumerate(CASES)])
def test_expression_operator(op: str, expression: Any, expected: Any) -> None:
    value = _value(expression)
    assert value == expected and type(value) is type(expected)


def test_to_date_refuses_an_int32() -> None:
    """Manual, ``$toDate``: a double, decimal, long, string, ObjectId or timestamp converts; an int
    does not ("Unsupported conversion from int to date"), unless ``$convert`` has ``onError``."""
    with pytest.raises(OperationFailure, match="from int to date"):
        _value({"$toDate": 0})
    assert _value({"$convert": {"input": 0, "to": "date", "onError": "no"}}) == "no"


def test_expression_operators_inside_expr_filters() -> None:
    """Manual, ``$toLower``: null gives "", which null is not equal to."""
    docs = [{"_id": 1, "email": "A@x.io"}, {"_id": 2, "email": "b@x.io"}, {"_id": 3, "email": None}]
    assert matching(docs, {"$expr": {"$ne": ["$email", {"$toLower": "$email"}]}}) == [1, 3]
