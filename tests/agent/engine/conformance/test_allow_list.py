"""Every operator, stage and accumulator the guard lets through is one the engine answers, with a
conformance case in this folder, or one it refuses with an error naming it: never answered
silently wrong. The operators the guard refuses by name are refused by the engine too."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pymongo.errors import OperationFailure

from argus.agent.engine import MemoryCollection
from argus.agent.tools.guard import (
    _REFUSED_REASONS,
    EXPRESSION_OPERATORS,
    GROUP_ACCUMULATORS,
    PIPELINE_STAGES,
    QUERY_OPERATORS,
)
from tests.agent.engine.conformance.test_expression_operators import CASES

_HERE = Path(__file__).parent
_CASE_TEXT = "".join(p.read_text() for p in _HERE.glob("test_*.py") if p.name != Path(__file__).name)
_COLLECTION = MemoryCollection.of([{"_id": 1, "a": [1, 2], "s": "x"}, {"_id": 2, "a": 3}])
_FIELD_ARGS: dict[str, Any] = {"$in": [1], "$nin": [1], "$all": [1], "$exists": True, "$type": "int", "$regex": "x",
                               "$size": 1, "$elemMatch": {"$gt": 0}, "$mod": [2, 0], "$not": {"$gt": 0}}
_TOP = {"$and": [{"a": 1}], "$or": [{"a": 1}], "$nor": [{"a": 1}], "$expr": {"$eq": ["$a", 3]}, "$comment": "c"}
_STAGES: dict[str, Any] = {"$match": {}, "$group": {"_id": "$a"}, "$sort": {"a": 1}, "$limit": 1, "$skip": 1,
                           "$project": {"a": 1}, "$count": "n", "$sample": {"size": 1}, "$unwind": "$a",
                           "$facet": {"x": [{"$count": "n"}]}, "$addFields": {"b": 1}, "$sortByCount": "$a"}


def _query_use(op: str) -> dict[str, Any]:
    if op in _TOP:
        return {op: _TOP[op]}
    if op == "$options":
        return {"s": {"$regex": "X", "$options": "i"}}
    return {"a": {op: _FIELD_ARGS.get(op, 1)}}


def _has_case(op: str) -> bool:
    return f'"{op}"' in _CASE_TEXT


@pytest.mark.parametrize("op", sorted(QUERY_OPERATORS))
def test_each_allowed_query_operator_is_answered_and_has_a_case(op: str) -> None:
    assert isinstance(_COLLECTION.count_documents(_query_use(op)), int)
    assert _has_case(op), f"no conformance case uses {op}"


@pytest.mark.parametrize("op", sorted(PIPELINE_STAGES))
def test_each_allowed_stage_is_answered_and_has_a_case(op: str) -> None:
    assert isinstance(_COLLECTION.aggregate([{op: _STAGES[op]}]), list)
    assert _has_case(op), f"no conformance case uses {op}"


@pytest.mark.parametrize("op", sorted(GROUP_ACCUMULATORS))
def test_each_allowed_accumulator_is_answered_and_has_a_case(op: str) -> None:
    rows = _COLLECTION.aggregate([{"$group": {"_id": None, "r": {op: {} if op == "$count" else "$a"}}}])
    assert len(rows) == 1
    assert _has_case(op), f"no conformance case uses {op}"


@pytest.mark.parametrize("op", sorted(EXPRESSION_OPERATORS))
def test_each_allowed_expression_operator_has_a_case_or_is_refused_by_name(op: str) -> None:
    if any(case[0] == op for case in CASES):
        return  # test_expression_operators asserts its manual answer
    with pytest.raises(OperationFailure) as refused:
        _COLLECTION.aggregate([{"$project": {"v": {op: "$a"}}}])
    assert op in str(refused.value)


@pytest.mark.parametrize("op", sorted(_REFUSED_REASONS))
def test_operators_the_guard_refuses_are_refused_by_the_engine_by_name(op: str) -> None:
    uses = [lambda: _COLLECTION.count_documents({op: {}}), lambda: _COLLECTION.aggregate([{op: {}}]),
            lambda: _COLLECTION.aggregate([{"$project": {"v": {op: {}}}}]),
            lambda: _COLLECTION.aggregate([{"$group": {"_id": None, "v": {op: {}}}}])]
    for use in uses:
        with pytest.raises(OperationFailure) as refused:
            use()
        assert op in str(refused.value)
