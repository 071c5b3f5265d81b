"""``$elemMatch`` in both forms over nested arrays.

Source: ``src/mongo/db/matcher/expression_array.cpp``. ``ElemMatchObjectMatchExpression::matchesArray``
tries every element for which ``isABSONObj()`` holds, a document or an array (an array is a BSON
object with keys "0", "1", ...), and skips scalars. ``ElemMatchValueMatchExpression`` tests each
element with ``matchesSingleElement``: the element is one value, an array element is not expanded.
``ArrayMatchingMatchExpression::matchesSingleElement`` needs an array at the path.
"""

from __future__ import annotations

from tests.agent.engine.conformance.answers import matching


def test_object_form_reads_an_array_element_as_a_document() -> None:
    """Issue 29, defect 1: ``{items: [[1, 2]]}`` has an element with no ``qty``, so
    ``{$elemMatch: {qty: null}}`` matches (the jstest's ``a_double_array`` likewise)."""
    docs = [{"_id": 1, "items": [[1, 2]]}, {"_id": 2, "items": [{"qty": 3}]}, {"_id": 3, "items": [1, 2]},
            {"_id": 4, "items": [{"qty": None}]}]
    assert matching(docs, {"items": {"$elemMatch": {"qty": None}}}) == [1, 4]
    assert matching(docs, {"items": {"$elemMatch": {"qty": {"$exists": False}}}}) == [1]


def test_object_form_reaches_an_inner_array_by_position() -> None:
    docs = [{"_id": 1, "a": [[5, 6]]}, {"_id": 2, "a": [[7]]}, {"_id": 3, "a": [{"0": 5}]}]
    assert matching(docs, {"a": {"$elemMatch": {"0": 5}}}) == [1, 3]
    assert matching(docs, {"a": {"$elemMatch": {"1": {"$gt": 5}}}}) == [1]


def test_object_form_skips_scalar_elements() -> None:
    docs = [{"_id": 1, "a": [None, 1]}, {"_id": 2, "a": [{}]}]
    assert matching(docs, {"a": {"$elemMatch": {"b": None}}}) == [2]


def test_value_form_judges_a_nested_array_whole() -> None:
    """Issue 29, defect 3: ``[[-5]]`` has one element, the array ``[-5]``, which is no number."""
    docs = [{"_id": 1, "a": [[-5]]}, {"_id": 2, "a": [-5]}, {"_id": 3, "a": [["x"]]}, {"_id": 4, "a": ["x"]}]
    assert matching(docs, {"a": {"$elemMatch": {"$lt": 0}}}) == [2]
    assert matching(docs, {"a": {"$elemMatch": {"$nin": ["x"]}}}) == [1, 2, 3]
    assert matching(docs, {"a": {"$elemMatch": {"$in": ["x"]}}}) == [4]
    assert matching(docs, {"a": {"$elemMatch": {"$eq": [-5]}}}) == [1]
    assert matching(docs, {"a": {"$elemMatch": {"$type": "array"}}}) == [1, 3]
    assert matching(docs, {"a": {"$elemMatch": {"$ne": "x"}}}) == [1, 2, 3]
    assert matching(docs, {"a": {"$elemMatch": {"$not": {"$lt": 0}}}}) == [1, 3, 4]


def test_value_form_conditions_hold_on_one_element() -> None:
    """Manual, ``$elemMatch``: ``{$gte: 80, $lt: 85}`` needs one element in range, not two elements."""
    docs = [{"_id": 1, "r": [82, 85, 88]}, {"_id": 2, "r": [75, 88, 89]}]
    assert matching(docs, {"r": {"$elemMatch": {"$gte": 80, "$lt": 85}}}) == [1]
    assert matching(docs, {"r": {"$gte": 80, "$lt": 85}}) == [1, 2]


def test_value_form_size_and_nested_elem_match_need_an_array_element() -> None:
    docs = [{"_id": 1, "a": [[1, 2], 3]}, {"_id": 2, "a": [1, 2]}]
    assert matching(docs, {"a": {"$elemMatch": {"$size": 2}}}) == [1]
    assert matching(docs, {"a": {"$elemMatch": {"$elemMatch": {"$gt": 1}}}}) == [1]


def test_elem_match_needs_an_array_at_the_path() -> None:
    """``matchesSingleElement``: no array there, no match (null_query_semantics' first half)."""
    docs = [{"_id": 1, "a": {"b": 1}}, {"_id": 2, "a": 5}, {"_id": 3}, {"_id": 4, "a": [{"b": 1}]}]
    assert matching(docs, {"a": {"$elemMatch": {"b": 1}}}) == [4]
    assert matching(docs, {"a": {"$elemMatch": {"$exists": True}}}) == [4]


def test_elem_match_through_a_dotted_path_into_arrays_of_documents() -> None:
    docs = [{"_id": 1, "o": [{"lines": [{"q": 0}, {"q": 2}]}]}, {"_id": 2, "o": [{"lines": [{"q": 5}]}]}]
    assert matching(docs, {"o.lines": {"$elemMatch": {"q": {"$lt": 1}}}}) == [1]
