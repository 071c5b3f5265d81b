"""``$type`` of every BSON type, by name, by number and by the ``"number"`` alias.

Sources: the manual's ``$type`` page (the table of types, numbers and aliases; "number" matches
double, int, long and decimal; an array field matches ``"array"`` and the types of its elements)
and ``jstests/core/query/type/type_array.js`` (expected ids below). ``undefined``, ``dbPointer``
and ``symbol`` are left out: pymongo decodes them as ``None``, ``DBRef`` and ``str``.
"""

from __future__ import annotations

from datetime import datetime

import pytest
from bson import Binary, Code, Decimal128, Int64, MaxKey, MinKey, ObjectId, Regex, Timestamp

from tests.agent.engine.conformance.answers import aggregate, matching

VALUES = {
    "double": (1, 1.5), "string": (2, "s"), "object": (3, {"x": 1}), "binData": (5, Binary(b"\x01", 0)),
    "objectId": (7, ObjectId("65a1b2c3d4e5f60718293a4b")), "bool": (8, True), "date": (9, datetime(2024, 1, 2)),
    "null": (10, None), "regex": (11, Regex("^a", "i")), "javascript": (13, Code("f()")),
    "javascriptWithScope": (15, Code("f()", {"x": 1})), "int": (16, 7), "timestamp": (17, Timestamp(5, 1)),
    "long": (18, Int64(7)), "decimal": (19, Decimal128("7.5")), "minKey": (-1, MinKey()), "maxKey": (127, MaxKey()),
}
DOCS = [{"_id": name, "v": value} for name, (_, value) in VALUES.items()] + [{"_id": "missing"}]


@pytest.mark.parametrize("name", list(VALUES))
def test_type_by_name_and_by_number(name: str) -> None:
    assert matching(DOCS, {"v": {"$type": name}}) == [name]
    assert matching(DOCS, {"v": {"$type": VALUES[name][0]}}) == [name]


def test_the_number_alias_is_the_four_numeric_types() -> None:
    assert matching(DOCS, {"v": {"$type": "number"}}) == ["double", "int", "long", "decimal"]


@pytest.mark.parametrize("name", list(VALUES))
def test_the_type_expression_names_each_type(name: str) -> None:
    """Manual, ``$type`` (aggregation): the type's alias; ``"missing"`` for an absent field."""
    rows = aggregate(DOCS, [{"$project": {"t": {"$type": "$v"}}}])
    assert {r["_id"]: r["t"] for r in rows}[name] == name
    assert {r["_id"]: r["t"] for r in rows}["missing"] == "missing"


def test_type_array_jstest_first_half() -> None:
    docs = [{"_id": 1, "a": [1, 2, 3]}, {"_id": 2, "a": [1, "foo", 3]}, {"_id": 3, "a": []}, {"_id": 4, "a": [[]]},
            {"_id": 5, "a": [[[]]]}, {"_id": 6, "a": 1}, {"_id": 7, "a": "foo"}]
    assert matching(docs, {"a": {"$type": "number"}}) == [1, 2, 6]
    assert matching(docs, {"a": {"$type": "string"}}) == [2, 7]
    assert matching(docs, {"a": {"$type": "array"}}) == [1, 2, 3, 4, 5]
    assert matching(docs, {"a.0": {"$type": "array"}}) == [4, 5]
    assert matching(docs, {"a.0.0": {"$type": "array"}}) == [5]


def test_type_array_jstest_second_half() -> None:
    docs = [{"_id": 0, "a": 1.0}, {"_id": 1, "a": 1}, {"_id": 2, "a": Int64(1)}, {"_id": 3, "a": "str"},
            {"_id": 4, "a": []}, {"_id": 5, "a": [1, "str"]}, {"_id": 6}]
    assert matching(docs, {"a": {"$type": ["long", 2]}}) == [2, 3, 5]
    assert matching(docs, {"a": {"$type": ["long", "array"]}}) == [2, 4, 5]
    assert matching(docs, {"a": {"$type": ["long", "array", 18, 4]}}) == [2, 4, 5]


def test_an_int_beyond_32_bits_is_a_long() -> None:
    """BSON spec: a Python int is stored as int32 when it fits, else int64."""
    docs = [{"_id": 1, "a": 2 ** 31 - 1}, {"_id": 2, "a": 2 ** 31}]
    assert matching(docs, {"a": {"$type": "int"}}) == [1]
    assert matching(docs, {"a": {"$type": "long"}}) == [2]
