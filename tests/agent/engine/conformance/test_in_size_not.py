"""``$in``/``$nin`` with null, arrays and regexes; ``$size``; ``$not``; ``$all``; ``$exists``; ``$mod``.

Sources: the manual's ``$in`` page (an array field matches when any element, or the array itself,
is in the list; a regex in the list matches strings), ``$nin`` (the negation, including documents
without the field), ``$size`` (arrays only; a field that is no array never matches), ``$not``
(documents without the field match; ``$not`` of a regex), ``$all``, ``$mod`` (truncates the value
towards zero); ``jstests/core/query/null_query_semantics.js`` for null in ``$in``.
"""

from __future__ import annotations

import pytest
from bson import Regex
from pymongo.errors import OperationFailure

from tests.agent.engine.conformance.answers import matching

DOCS = [{"_id": 1, "a": None}, {"_id": 2}, {"_id": 3, "a": [1, 2]}, {"_id": 4, "a": [[1, 2]]}, {"_id": 5, "a": "abc"},
        {"_id": 6, "a": ["x", "Abd"]}, {"_id": 7, "a": 2}, {"_id": 8, "a": []}]


def test_in_with_null_matches_null_and_missing() -> None:
    assert matching(DOCS, {"a": {"$in": [None]}}) == [1, 2]
    assert matching(DOCS, {"a": {"$nin": [None]}}) == [3, 4, 5, 6, 7, 8]


def test_in_with_an_array_matches_the_array_whole_or_an_element_equal_to_it() -> None:
    assert matching(DOCS, {"a": {"$in": [[1, 2]]}}) == [3, 4]
    assert matching(DOCS, {"a": {"$in": [2]}}) == [3, 7]
    assert matching(DOCS, {"a": {"$in": [[]]}}) == [8]
    assert matching(DOCS, {"a": {"$nin": [[1, 2], 2]}}) == [1, 2, 5, 6, 8]


def test_in_with_regexes_matches_strings_and_string_elements() -> None:
    assert matching(DOCS, {"a": {"$in": [Regex("^ab", "i")]}}) == [5, 6]
    assert matching(DOCS, {"a": {"$in": [Regex("^x$"), 2]}}) == [3, 6, 7]
    assert matching(DOCS, {"a": {"$nin": [Regex("^a")]}}) == [1, 2, 3, 4, 6, 7, 8]


def test_size_counts_arrays_only() -> None:
    docs = [{"_id": 1, "a": "xy"}, {"_id": 2, "a": {"b": 1, "c": 2}}, {"_id": 3, "a": [5, 6]}, {"_id": 4, "a": []},
            {"_id": 5, "a": [[1, 2]]}, {"_id": 6}]
    assert matching(docs, {"a": {"$size": 2}}) == [3]
    assert matching(docs, {"a": {"$size": 0}}) == [4]
    assert matching(docs, {"a": {"$size": 1}}) == [5]
    assert matching(docs, {"a": {"$not": {"$size": 2}}}) == [1, 2, 4, 5, 6]


def test_size_through_a_path_into_arrays_of_documents() -> None:
    docs = [{"_id": 1, "o": [{"l": [1, 2]}, {"l": [3]}]}, {"_id": 2, "o": {"l": [1]}}]
    assert matching(docs, {"o.l": {"$size": 1}}) == [1, 2]


def test_not_matches_missing_and_negates_the_whole_path() -> None:
    docs = [{"_id": 1, "a": 5}, {"_id": 2, "a": [1, 9]}, {"_id": 3}, {"_id": 4, "a": "s"}, {"_id": 5, "a": [1, 2]}]
    assert matching(docs, {"a": {"$not": {"$gt": 3}}}) == [3, 4, 5]
    assert matching(docs, {"a": {"$not": Regex("^s")}}) == [1, 2, 3, 5]
    assert matching(docs, {"a": {"$not": {"$type": "number"}}}) == [3, 4]


def test_all_needs_every_value() -> None:
    docs = [{"_id": 1, "a": [1, 2, 3]}, {"_id": 2, "a": [1]}, {"_id": 3, "a": 1}, {"_id": 4, "a": [[1, 2]]}]
    assert matching(docs, {"a": {"$all": [1, 2]}}) == [1]
    assert matching(docs, {"a": {"$all": [1]}}) == [1, 2, 3]
    assert matching(docs, {"a": {"$all": [[1, 2]]}}) == [4]
    assert matching(docs, {"a": {"$all": []}}) == []


def test_exists_is_presence_only() -> None:
    docs = [{"_id": 1, "a": None}, {"_id": 2}, {"_id": 3, "a": [{"b": None}]}, {"_id": 4, "a": [{}]}]
    assert matching(docs, {"a": {"$exists": True}}) == [1, 3, 4]
    assert matching(docs, {"a.b": {"$exists": True}}) == [3]
    assert matching(docs, {"a.b": {"$exists": False}}) == [1, 2, 4]


def test_mod_truncates_towards_zero() -> None:
    docs = [{"_id": 1, "a": 5}, {"_id": 2, "a": -3}, {"_id": 3, "a": 5.9}, {"_id": 4, "a": "5"}, {"_id": 5, "a": [9]}]
    assert matching(docs, {"a": {"$mod": [4, 1]}}) == [1, 3, 5]
    assert matching(docs, {"a": {"$mod": [4, -3]}}) == [2]


def test_logical_operators_and_comments() -> None:
    """Manual, ``$nor`` (a document missing the field fails no clause, so it matches), ``$and``,
    ``$or``, and ``$comment`` (changes no answer)."""
    docs = [{"_id": 1, "a": 1}, {"_id": 2, "a": 2}, {"_id": 3}]
    assert matching(docs, {"$nor": [{"a": 1}, {"a": {"$gt": 1}}]}) == [3]
    assert matching(docs, {"$and": [{"a": {"$gte": 1}}, {"a": {"$lt": 2}}]}) == [1]
    assert matching(docs, {"$or": [{"a": 2}, {"a": {"$exists": False}}]}) == [2, 3]
    assert matching(docs, {"a": 2, "$comment": "why this was asked"}) == [2]
    with pytest.raises(OperationFailure, match=r"unknown operator: \$comment"):
        matching(docs, {"a": {"$eq": 2, "$comment": "under a field"}})  # the server reads it at the top only
