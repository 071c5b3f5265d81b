"""schema_sample, run_query and get_stats against a real in-memory collection."""

from __future__ import annotations

import base64
from datetime import UTC, datetime

import pytest
from pymongo.errors import ExecutionTimeout, ServerSelectionTimeoutError

from argus.agent.errors import QueryRefused, QueryTimeout, TargetUnavailable
from argus.agent.tools import get_stats, run_query, schema_sample
from argus.agent.tools.models import GetStatsInput, RunQueryInput, SchemaSampleInput
from argus.agent.tools.target import AuditTarget
from tests.conftest import RecordingCollection


def _docs(n: int) -> list[dict]:
    return [{"i": i, "tag": f"t{i % 7}", "items": [{"qty": i % 5 - 1}, {"qty": 2}],
             "when": datetime(2024, 1, 1, tzinfo=UTC)} for i in range(n)]


def test_sample_reads_at_most_the_requested_documents(make_target) -> None:  # type: ignore[no-untyped-def]
    result = schema_sample(make_target(_docs(300)), SchemaSampleInput(sample_size=50))
    assert result.documents_sampled == 50 and result.collection_size == 300
    assert {f.path for f in result.fields} >= {"i", "tag", "items", "items.qty", "when", "_id"}


def test_sample_size_is_capped_at_ten_thousand() -> None:
    assert SchemaSampleInput(sample_size=50_000).sample_size == 10_000


def test_sample_of_an_empty_collection(make_target) -> None:  # type: ignore[no-untyped-def]
    result = schema_sample(make_target([]), SchemaSampleInput())
    assert (result.documents_sampled, result.collection_size, result.fields) == (0, 0, [])


def test_run_query_counts_every_match_but_returns_at_most_the_limit(make_target) -> None:  # type: ignore[no-untyped-def]
    result = run_query(make_target(_docs(200)), RunQueryInput(filter={"i": {"$gte": 20}}))
    assert (result.matched_count, result.returned_count, result.truncated) == (180, 50, True)


def test_run_query_limit_is_capped_at_1000(make_target) -> None:  # type: ignore[no-untyped-def]
    params = RunQueryInput(filter={}, limit=5000)
    assert params.limit == 1000
    assert run_query(make_target(_docs(1200)), params).returned_count == 1000


def test_run_query_limit_zero_only_counts(make_target) -> None:  # type: ignore[no-untyped-def]
    result = run_query(make_target(_docs(30)), RunQueryInput(filter={"items.qty": {"$lt": 0}}, limit=0))
    assert (result.matched_count, result.documents) == (6, [])


def test_run_query_accepts_extended_json_and_returns_it(make_target) -> None:  # type: ignore[no-untyped-def]
    result = run_query(make_target(_docs(3)), RunQueryInput(filter={"when": {"$lt": {"$date": "2025-01-01T00:00:00Z"}}},
                                                            projection={"when": 1, "_id": 0}, limit=1))
    assert result.matched_count == 3
    assert result.documents == [{"when": {"$date": "2024-01-01T00:00:00Z"}}]


def test_run_query_refuses_where(make_target) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(QueryRefused, match=r"\$where"):
        run_query(make_target(_docs(3)), RunQueryInput(filter={"$where": "this.i > 1"}))


def test_every_read_carries_the_server_time_limit(make_collection) -> None:  # type: ignore[no-untyped-def]
    coll = RecordingCollection(make_collection(_docs(20)))
    target = AuditTarget(coll, max_time_ms=1234)
    schema_sample(target, SchemaSampleInput(sample_size=5))
    run_query(target, RunQueryInput(filter={"i": 1}, limit=2))
    for op in ("count", "min", "avg", "distinct", "value_counts", "duplicates"):
        get_stats(target, GetStatsInput(field="i", operation=op))
    assert len(coll.calls) == 10
    for name, kwargs in coll.calls:
        assert kwargs.get("maxTimeMS", kwargs.get("max_time_ms")) == 1234, name


def test_time_limit_shrinks_to_the_remaining_budget(make_collection) -> None:  # type: ignore[no-untyped-def]
    coll = RecordingCollection(make_collection(_docs(5)))
    target = AuditTarget(coll, max_time_ms=10_000)
    target.cap_time_with(lambda: 250)
    run_query(target, RunQueryInput(filter={}, limit=0))
    assert coll.calls == [("count_documents", {"maxTimeMS": 250})]


class _Failing:
    def __init__(self, exc: Exception) -> None:
        self.exc = exc
        self.database = type("D", (), {"name": "db"})()
        self.name = "c"

    def count_documents(self, *a, **k):  # type: ignore[no-untyped-def]
        raise self.exc


def test_server_timeout_becomes_a_tool_error() -> None:
    target = AuditTarget(_Failing(ExecutionTimeout("operation exceeded time limit")))
    with pytest.raises(QueryTimeout, match="time limit"):
        run_query(target, RunQueryInput(filter={}, limit=0))


def test_unreachable_server_is_target_unavailable() -> None:
    target = AuditTarget(_Failing(ServerSelectionTimeoutError("no servers")))
    with pytest.raises(TargetUnavailable):
        run_query(target, RunQueryInput(filter={}, limit=0))


@pytest.mark.parametrize(("operation", "expected"), [("count", 40), ("min", -1), ("max", 3), ("avg", 1.5)])
def test_get_stats_flattens_arrays_of_objects(make_target, operation: str, expected: float) -> None:  # type: ignore[no-untyped-def]
    field = "i" if operation == "count" else "items.qty"
    result = get_stats(make_target(_docs(40)), GetStatsInput(field=field, operation=operation))
    assert result.value == pytest.approx(expected)


def test_get_stats_value_filter_applies_to_each_value(make_target) -> None:  # type: ignore[no-untyped-def]
    result = get_stats(make_target(_docs(40)), GetStatsInput(field="items.qty", operation="max",
                                                              value_filter={"$lt": 2}))
    assert result.value == 1


def test_distinct_is_capped_at_1000(make_target) -> None:  # type: ignore[no-untyped-def]
    result = get_stats(make_target([{"k": i} for i in range(1200)]), GetStatsInput(field="k", operation="distinct"))
    assert result.capped and len(result.value) == 1000


def test_value_counts_are_exact_and_ordered(make_target) -> None:  # type: ignore[no-untyped-def]
    result = get_stats(make_target(_docs(70)), GetStatsInput(field="tag", operation="value_counts",
                                                              filter={"i": {"$lt": 14}}))
    assert result.value[:2] == [{"value": "t0", "count": 2}, {"value": "t1", "count": 2}]
    assert sum(v["count"] for v in result.value) == 14


def test_duplicates_report_totals_and_values(make_target) -> None:  # type: ignore[no-untyped-def]
    docs = [{"k": f"K{i}"} for i in range(100)] + [{"k": "K1"}, {"k": "K1"}, {"k": "K2"}]
    result = get_stats(make_target(docs), GetStatsInput(field="k", operation="duplicates"))
    assert result.totals == {"values": 2, "documents": 5}
    assert result.value == [{"value": "K1", "count": 3}, {"value": "K2", "count": 2}]


def test_get_stats_refuses_operator_field_path(make_target) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(QueryRefused):
        get_stats(make_target(_docs(3)), GetStatsInput(field="$where", operation="count"))


def _hostile() -> list[dict]:
    import math

    from bson import Binary, Decimal128

    deep: dict = {"leaf": 1}
    for _ in range(30):
        deep = {"n": deep}
    return [
        {"deep": deep, "nan": math.nan, "inf": -math.inf, "dec": Decimal128("12.50"), "bin": Binary(b"\x00\xff" * 100),
         "big": list(range(5000)), "objs": [{"k": i} for i in range(2000)], "odd": {"$inner": 1, "a.b": 2}},
        {"deep": {"n": None}, "nan": 1.5, "inf": 2.0, "dec": Decimal128("NaN"), "bin": b"", "big": [], "objs": [],
         "odd": {}},
    ]


def test_sample_profiles_hostile_documents(make_target) -> None:  # type: ignore[no-untyped-def]
    result = schema_sample(make_target(_hostile()), SchemaSampleInput())
    paths = {f.path: f for f in result.fields}
    assert result.truncated_paths and all(p.count(".") < 20 for p in paths)
    assert paths["nan"].numeric.nan_count == 1 and paths["inf"].numeric.inf_count == 1  # type: ignore[union-attr]
    assert paths["dec"].types == {"decimal": 2} and paths["bin"].types == {"binData": 2}
    assert not paths["odd.$inner"].queryable and not paths["odd.a.b"].queryable
    assert paths["objs.k"].value_count == 1000
    result.model_dump_json()  # the whole result serialises


def test_run_query_returns_hostile_documents_as_extended_json(make_target) -> None:  # type: ignore[no-untyped-def]
    result = run_query(make_target(_hostile()), RunQueryInput(filter={"big": {"$size": 5000}},
                                                              projection={"nan": 1, "dec": 1, "bin": 1, "_id": 0}))
    assert result.documents == [{"nan": {"$numberDouble": "NaN"}, "dec": {"$numberDecimal": "12.50"},
                                 "bin": {"$binary": {"base64": base64.b64encode(b"\x00\xff" * 100).decode(),
                                                     "subType": "00"}}}]


def test_an_invalid_regex_is_refused_before_it_is_sent(make_target) -> None:  # type: ignore[no-untyped-def]
    from argus.agent.errors import QueryRefused
    from argus.agent.tools import run_query
    from argus.agent.tools.models import RunQueryInput

    with pytest.raises(QueryRefused, match=r"\$regex in a filter is refused: the pattern is not a valid regular "
                                           r"expression \(missing \), unterminated subpattern\)"):
        run_query(make_target([{"a": "x"}]), RunQueryInput(filter={"a": {"$regex": "("}}, limit=0))


def test_an_in_memory_sample_is_drawn_without_sample_and_repeats_for_a_seed(make_collection) -> None:  # type: ignore[no-untyped-def]
    collection = make_collection(_docs(500))
    first = AuditTarget(collection, in_memory=True).sample(50)
    again = AuditTarget(collection, in_memory=True).sample(50)
    other = AuditTarget(collection, in_memory=True, sample_seed=7).sample(50)  # the default seed is the namespace
    assert [d["_id"] for d in first] == [d["_id"] for d in again] != [d["_id"] for d in other]
    assert len({d["_id"] for d in first}) == 50
    first[0]["a"] = "changed"  # a copy: the collection is untouched
    assert collection.count_documents({"a": "changed"}) == 0
