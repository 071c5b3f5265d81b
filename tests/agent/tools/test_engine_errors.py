"""The in-memory engine ignores maxTimeMS: the client stops waiting at the limit instead."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pytest

from agent.errors import QueryTimeout, ToolError
from agent.tools.engine_deadline import honours_max_time
from agent.tools.target import AuditTarget


def test_a_catastrophic_regex_ends_at_the_time_limit(make_target: Callable[..., AuditTarget]) -> None:
    target = make_target([{"s": "a" * 34 + "!"} for _ in range(3)], max_time_ms=500)
    started = time.monotonic()
    with pytest.raises(QueryTimeout, match="ran past its time limit"):
        target.count_documents({"s": {"$regex": "^(a+)+$"}})
    assert time.monotonic() - started < 5


def test_an_unwind_over_a_huge_array_ends_at_the_time_limit(make_target: Callable[..., AuditTarget]) -> None:
    target = make_target([{"arr": list(range(100_000))}] * 3, max_time_ms=300)
    started = time.monotonic()
    with pytest.raises(QueryTimeout):
        target.aggregate([{"$unwind": "$arr"}, {"$unwind": "$arr"}, {"$group": {"_id": "$arr"}}])
    assert time.monotonic() - started < 5


def test_answers_and_errors_come_back_as_they_would_inline(make_target: Callable[..., AuditTarget]) -> None:
    docs: list[dict[str, Any]] = [{"k": i, "t": ["x", "y"][i % 2]} for i in range(50)]
    target = make_target(docs)
    assert not honours_max_time(target._collection)
    assert target.count_documents({"t": "x"}) == 25
    assert [d["k"] for d in target.find({"k": {"$lt": 3}}, {"_id": 0}, 10)] == [0, 1, 2]
    assert target.aggregate([{"$group": {"_id": "$t", "n": {"$sum": 1}}}, {"$sort": {"_id": 1}}]) == [
        {"_id": "x", "n": 25}, {"_id": "y", "n": 25}]
    with pytest.raises(ToolError, match="failed in the database engine"):
        target.count_documents({"t": {"$regex": "("}})


@pytest.mark.parametrize(("in_memory", "expected_ms"), [(False, 10), (True, 60_000)])
def test_the_in_memory_engine_gets_the_runs_remaining_time_a_server_its_max_time(
        make_collection: Callable[..., Any], in_memory: bool, expected_ms: int) -> None:
    from tests.conftest import RecordingCollection

    recording = RecordingCollection(make_collection([{"k": 1}]))
    target = AuditTarget(recording, max_time_ms=10, in_memory=in_memory)
    target.cap_time_with(lambda: 60_000)
    target.count_documents({"k": 1})
    assert [kw.get("maxTimeMS") for op, kw in recording.calls if op == "count_documents"] == [expected_ms]
