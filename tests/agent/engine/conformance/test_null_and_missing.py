"""Null against missing, through dotted paths and arrays: the ``null_query_semantics`` matrix.

Source: mongodb/mongo ``jstests/core/query/null_query_semantics.js`` at commit
1704949c0e126334813a811103e481e243291a9b (the 8.0 file, ``requires_fcv_80``). Each query's expected
``_id`` list is the file's, minus the documents holding BSON ``undefined``: pymongo decodes
``undefined`` as ``None``, so no decoded document can hold it (and 8.0 changed only what
``undefined`` matches). Released 7.0/8.0 behaviour is followed where versions differ: the
file's later revision (commit 056154d0875a01c51b77ac655e201fe380d56bc1, ``requires_fcv_90``,
SERVER-36681) makes ``{"a.b": null}`` match arrays holding no documents too (``a: [1, "string", 4]``,
``a: [[]]``, ``a: []``); 8.0 and 7.0 do not, and neither does the engine
(``test_dotted_null_skips_arrays_without_documents_as_released_servers_do``).
"""

from __future__ import annotations

from typing import Any

import pytest
from bson import Regex

from tests.agent.engine.conformance.answers import matching

# The file's documents without `undefined`, first the ones inserted before any array.
PLAIN = [
    {"_id": "a_empty_subobject", "a": {}},
    {"_id": "a_null", "a": None},
    {"_id": "a_number", "a": 4},
    {"_id": "a_subobject_b_not_null", "a": {"b": "hi"}},
    {"_id": "a_subobject_b_null", "a": {"b": None}},
    {"_id": "no_a"},
]
ARRAYS = [
    {"_id": "a_double_array", "a": [[]]},
    {"_id": "a_empty_array", "a": []},
    {"_id": "a_object_array_no_b_nulls", "a": [{"b": 1}, {"b": 3}, {"b": "string"}]},
    {"_id": "a_object_array_some_b_nulls", "a": [{"b": None}, {"b": 3}, {"b": None}]},
    {"_id": "a_object_array_some_b_missing", "a": [{"b": 3}, {}]},
    {"_id": "a_value_array_all_nulls", "a": [None, None]},
    {"_id": "a_value_array_no_nulls", "a": [1, "string", 4]},
    {"_id": "a_value_array_with_null", "a": [1, "string", None, 4]},
]
ALL = PLAIN + ARRAYS

_NOT_NULL = ["a_empty_subobject", "a_number", "a_subobject_b_not_null", "a_subobject_b_null", "a_double_array",
             "a_empty_array", "a_object_array_no_b_nulls", "a_object_array_some_b_nulls",
             "a_object_array_some_b_missing", "a_value_array_no_nulls"]
_A_NULL = ["a_null", "no_a", "a_value_array_all_nulls", "a_value_array_with_null"]
_DOTTED_NULL = ["a_empty_subobject", "a_null", "a_number", "a_subobject_b_null", "no_a",
                "a_object_array_some_b_nulls", "a_object_array_some_b_missing"]
_DOTTED_NOT_NULL = ["a_subobject_b_not_null", "a_double_array", "a_empty_array", "a_object_array_no_b_nulls",
                    "a_value_array_all_nulls", "a_value_array_no_nulls", "a_value_array_with_null"]

# (function in the jstest, query, expected _ids over ALL)
MATRIX: list[tuple[str, dict[str, Any], list[str]]] = [
    ("testBasicNullQuery", {"a": {"$eq": None}}, _A_NULL),
    ("testBasicNotEqualsNullQuery", {"a": {"$ne": None}}, _NOT_NULL),
    ("testBasicNotEqualsGTENullQuery", {"a": {"$not": {"$gte": None}}}, _NOT_NULL),
    ("testInNullQuery", {"a": {"$in": [None, 75]}}, _A_NULL),
    ("testOrNullQuery", {"$or": [{"a": None}, {"a": 75}]}, _A_NULL),
    ("testNotInNullQuery", {"a": {"$nin": [None, 75]}}, _NOT_NULL),
    ("testNotInNullAndEmptyArrayQuery", {"a": {"$nin": [None, []]}},
     [i for i in _NOT_NULL if i not in ("a_double_array", "a_empty_array")]),
    ("testNotInNullAndRegexQuery", {"a": {"$nin": [None, Regex("^str.*")]}},
     [i for i in _NOT_NULL if i != "a_value_array_no_nulls"]),
    ("testElemMatchValue", {"a": {"$elemMatch": {"$eq": None}}},
     ["a_value_array_all_nulls", "a_value_array_with_null"]),
    ("testElemMatchValue", {"a": {"$elemMatch": {"$ne": None}}},
     ["a_double_array", "a_object_array_no_b_nulls", "a_object_array_some_b_nulls", "a_object_array_some_b_missing",
      "a_value_array_no_nulls", "a_value_array_with_null"]),
    ("testDottedEqualsNull", {"a.b": {"$eq": None}}, _DOTTED_NULL),
    ("testDottedNotEqualsNull", {"a.b": {"$ne": None}}, _DOTTED_NOT_NULL),
    ("testDottedInNullQuery", {"a.b": {"$in": [None, 75]}}, _DOTTED_NULL),
    ("testDottedOrNullQuery", {"$or": [{"a.b": None}, {"a.b": 75}]}, _DOTTED_NULL),
    ("testDottedNotInNullQuery", {"a.b": {"$nin": [None, 75]}}, _DOTTED_NOT_NULL),
    ("testDottedNotInNullAndRegexQuery", {"a.b": {"$nin": [None, Regex("^str.*")]}},
     [i for i in _DOTTED_NOT_NULL if i != "a_object_array_no_b_nulls"]),
    ("testDottedElemMatchValue", {"a.b": {"$elemMatch": {"$eq": None}}}, []),
    ("testDottedElemMatchValue", {"a.b": {"$elemMatch": {"$ne": None}}}, []),
    ("testElemMatchObject", {"a": {"$elemMatch": {"b": {"$eq": None}}}},
     ["a_double_array", "a_object_array_some_b_nulls", "a_object_array_some_b_missing"]),
    ("testElemMatchObject", {"a": {"$elemMatch": {"b": {"$ne": None}}}},
     ["a_object_array_no_b_nulls", "a_object_array_some_b_nulls", "a_object_array_some_b_missing"]),
]


@pytest.mark.parametrize(("case", "query", "expected"), MATRIX, ids=[f"{c}-{i}" for i, (c, _, _) in enumerate(MATRIX)])
def test_the_null_query_semantics_matrix(case: str, query: dict[str, Any], expected: list[str]) -> None:
    assert sorted(matching(ALL, query)) == sorted(expected)


# Before any array is inserted (the file's first half).
PLAIN_MATRIX: list[tuple[str, dict[str, Any], list[str]]] = [
    ("testExistsFalse", {"a": {"$exists": False}}, ["no_a"]),
    ("testDottedExistsFalse", {"a.b": {"$exists": False}}, ["no_a", "a_empty_subobject", "a_null", "a_number"]),
    ("testDottedEqualsNull", {"a.b": {"$eq": None}},
     ["a_empty_subobject", "a_null", "a_number", "a_subobject_b_null", "no_a"]),
    ("testDottedNotEqualsNull", {"a.b": {"$ne": None}}, ["a_subobject_b_not_null"]),
    ("testNotInNullAndRegexQuery", {"a": {"$nin": [None, Regex("^hi.*")]}},
     ["a_empty_subobject", "a_number", "a_subobject_b_not_null", "a_subobject_b_null"]),
    ("testElemMatchQueriesWithNoArrays", {"a": {"$elemMatch": {"$eq": None}}}, []),
    ("testElemMatchQueriesWithNoArrays", {"a": {"$elemMatch": {"b": {"$ne": None}}}}, []),
]


@pytest.mark.parametrize(("case", "query", "expected"), PLAIN_MATRIX,
                         ids=[f"{c}-{i}" for i, (c, _, _) in enumerate(PLAIN_MATRIX)])
def test_the_matrix_before_any_array(case: str, query: dict[str, Any], expected: list[str]) -> None:
    assert sorted(matching(PLAIN, query)) == sorted(expected)


def test_dotted_null_skips_arrays_without_documents_as_released_servers_do() -> None:
    """7.0/8.0 (jstest at 1704949c, testDottedEqualsNull): an array holding no document gives
    ``a.b`` no value, so ``{"a.b": null}`` does not match it. 9.0 (SERVER-36681) does match it;
    Argus follows the released servers its users run."""
    docs = [{"_id": 1, "a": [1, "string", 4]}, {"_id": 2, "a": []}, {"_id": 3, "a": [[]]}, {"_id": 4, "a": 4}]
    assert matching(docs, {"a.b": None}) == [4]
    assert matching(docs, {"a.b": {"$ne": None}}) == [1, 2, 3]


def test_null_through_a_scalar_mid_path_is_missing() -> None:
    """Manual, "Query for Null or Missing Fields", and the jstest's ``a_number`` (``a: 4`` matches
    ``{"a.b": null}``): a path that meets a scalar has no value there."""
    docs = [{"_id": 1, "a": {"b": {"c": 1}}}, {"_id": 2, "a": {"b": 5}}, {"_id": 3, "a": "x"}, {"_id": 4}]
    assert matching(docs, {"a.b.c": None}) == [2, 3, 4]
    assert matching(docs, {"a.b.c": {"$exists": True}}) == [1]
