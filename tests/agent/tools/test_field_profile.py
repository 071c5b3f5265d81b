"""A field profile answers a count only with the count itself: on collections that mix every numeric
type, NaN, infinities, -0.0, strings, dates, nulls, missing values, scalars where objects are expected
and arrays, each count the profile decides equals ``count_documents`` of the same filter on the
in-process engine (held to MongoDB's semantics), and a fence's min or max equals ``get_stats``'s.
It decides most of them (else the batch would gain nothing), and none over a field holding arrays."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from bson.code import Code
from bson.objectid import ObjectId
from pymongo.errors import OperationFailure

from argus.agent.ejson import encode
from argus.agent.engine import MemoryCollection
from argus.agent.tools import get_stats
from argus.agent.tools.count_many import count_many
from argus.agent.tools.field_profile import answerable, profile_paths, profile_pipeline, read_profile
from argus.agent.tools.models import CountManyInput, GetStatsInput
from argus.agent.tools.target import AuditTarget
from tests.agent.tools.profile_cases import documents, fences, filters, near_numbers, refused_filters
from tests.agent.tools.test_batch_size import _LimitedServer


def _target(docs: list[dict[str, Any]]) -> AuditTarget:
    return AuditTarget(MemoryCollection.of(docs, name="mixed", database="db"))


@pytest.mark.parametrize("seed", range(6))
def test_every_count_a_profile_decides_equals_the_query(seed: int) -> None:
    target = _target(documents(seed))
    queries = filters()
    paths = profile_paths(queries)
    profile = read_profile(paths, target.aggregate(profile_pipeline(paths)))
    assert profile is not None

    decided = {i: n for i, q in enumerate(queries) if (n := profile.count(q)) is not None}

    wrong = [(queries[i], n, target.count_documents(queries[i])) for i, n in decided.items()
             if n != target.count_documents(queries[i])]
    assert wrong == []
    assert all(answerable(q) for q in queries)
    assert len(decided) >= len(queries) // 2
    assert not [queries[i] for i in decided if "arr" in str(queries[i])]  # a query looks inside arrays


@pytest.mark.parametrize("seed", range(4))
def test_a_fence_the_profile_answers_equals_the_statistic(seed: int) -> None:
    target = _target(documents(seed))
    asked = fences()
    paths = profile_paths([], [path for path, _, _ in asked])
    profile = read_profile(paths, target.aggregate(profile_pipeline(paths)))
    assert profile is not None
    answered = 0
    for path, operation, condition in asked:
        known, value = profile.extreme(path, operation, condition)
        if not known:
            continue
        answered += 1
        stat = get_stats(target, GetStatsInput(field=path, operation=operation, value_filter=encode(condition)))
        assert (path, operation, condition, encode(value) if value is not None else None) == \
            (path, operation, condition, stat.value)
    assert answered >= len(asked) // 3


def _wide(n: int = 150, fields: int = 30) -> list[dict[str, Any]]:
    docs = [{"_id": i, **{f"f{k}": (i * 7 + k) % 100 for k in range(fields)}} for i in range(n)]
    for k in range(fields):
        docs[k][f"f{k}"] = str(docs[k][f"f{k}"])  # one value written as text in every field
    return docs


def _planner_like(fields: int = 30) -> list[dict[str, Any]]:
    """Per field what the heuristic planner asks: null, type, NaN or negative, two fences beyond the values
    and one inside them (its count depends on the values: the batch asks it)."""
    queries = []
    for k in range(fields):
        f = f"f{k}"
        queries += [{f: None}, {f: {"$exists": True, "$ne": None, "$not": {"$type": "number"}}},
                    {"$or": [{f: {"$in": [float("nan"), float("inf"), float("-inf")]}}, {f: {"$lt": 0}}]},
                    {f: {"$gt": 150}}, {f: {"$lt": -50}}, {f: {"$gt": 90}}]
    return queries


def _wide_batch() -> tuple[list[dict[str, Any]], CountManyInput, list[int]]:
    """The wide documents, the planner-like batch over them, and its counts on the in-process engine."""
    docs = _wide()
    asked = CountManyInput(queries=[{"filter": encode(q)} for q in _planner_like()])
    return docs, asked, [c.matched_count for c in count_many(_target(docs), asked).counts]


def test_a_batch_too_large_for_one_pass_is_answered_from_a_profile_and_one_more_pass() -> None:
    """DocumentDB spends a scan per check (here 10 ms a branch, 2 s a pass): 180 checks went in three
    chunked passes; a profile (10 ms a path) answers the 150 it decides, and the other 30 fit one pass."""
    docs, asked, expected = _wide_batch()
    server = _LimitedServer(docs)
    target = AuditTarget(server, in_memory=False, max_time_ms=2000)

    result = count_many(target, asked)

    assert [c.matched_count for c in result.counts] == expected
    assert all(c.error is None for c in result.counts)
    assert target.cost().passes == 2 and server.facets == [30]  # the profile, then the fences inside the values
    assert not [o for o in target.cost().operations if o.error]


class _RefusesProfiles(_LimitedServer):
    """A server that refuses the profile's pipeline (an expression in ``$project`` it does not know)."""

    def aggregate(self, pipeline: list[dict[str, Any]], maxTimeMS: int | None = None, **kwargs: Any) -> Any:
        if any(isinstance(stage.get("$project", {}).get("r"), list) for stage in pipeline):
            raise OperationFailure("Unrecognized expression '$type'", 168, {"code": 168})
        return super().aggregate(pipeline, maxTimeMS=maxTimeMS, **kwargs)


def test_a_server_that_refuses_the_profile_has_every_check_batched_and_is_told_once() -> None:
    docs, asked, expected = _wide_batch()
    server = _RefusesProfiles(docs)
    target = AuditTarget(server, in_memory=False, max_time_ms=2000)

    result = count_many(target, asked)

    assert [c.matched_count for c in result.counts] == expected and all(c.error is None for c in result.counts)
    assert sum(server.facets) == len(asked.queries)  # every check went to the batch
    assert [n for n in target.notes if "profile" in n] == [
        "a profile of the checked fields was not answered (QueryRejected): its checks were batched as branches"]


def test_no_string_comparison_is_decided_a_collation_may_order_strings_otherwise() -> None:
    docs = [{"_id": i, "s": s} for i, s in enumerate(["a", "B", "c", "c"])]
    target = _target(docs)
    profile = read_profile(["s"], target.aggregate(profile_pipeline(["s"])))
    assert profile is not None
    # Binary order says "B" < "a" and nothing equals "A"; a case-insensitive collation says otherwise.
    assert [profile.count(q) for q in ({"s": {"$gt": "Z"}}, {"s": "A"}, {"s": {"$nin": ["a", "B", "c"]}})] == \
        [None, None, None]
    assert profile.count({"s": {"$type": "string"}}) == 4 and profile.groups["s"][0].lo is None  # no value read


def test_a_filter_a_server_refuses_is_never_decided_even_beside_a_false_condition() -> None:
    """DocumentDB (as MongoDB) refuses each of these filters; a profile that read ``$in: []`` as false and
    ignored the rest answered 0 where the user's own query fails."""
    target = _target([{"_id": i, "a": i} for i in range(5)])
    profile = read_profile(["a"], target.aggregate(profile_pipeline(["a"])))
    assert profile is not None
    refused = refused_filters()
    beside = [{"$and": [q, {"a": {"$in": []}}]} for q in refused] + \
        [{"a": {**q["a"], "$in": []}} for q in refused if "$in" not in q["a"] and "$not" not in q["a"]]
    assert [q for q in refused + beside if profile.count(q) is not None] == []
    assert profile.count({"$and": [{"a": {"$type": "int"}}, {"a": {"$in": []}}]}) == 0  # a valid one still is


def test_a_fence_holding_values_of_two_types_is_left_to_the_statistic() -> None:
    """BSON orders a number below an id, a bool and a date whatever their values: a min read as the least
    value across types was a date of 1960 (-3e11 ms) where the server's min is 5, and an id beside a number
    was a TypeError."""
    docs = [{"_id": 1, "a": 5}, {"_id": 2, "a": datetime(1960, 1, 1, tzinfo=UTC)}, {"_id": 3, "a": False},
            {"_id": 4, "b": 7}, {"_id": 5, "b": ObjectId()}]
    target = _target(docs)
    profile = read_profile(["a", "b"], target.aggregate(profile_pipeline(["a", "b"])))
    assert profile is not None
    asked = [("a", "min", {"$exists": True}), ("a", "max", {"$ne": 0}), ("b", "min", {"$nin": [1]}),
             ("a", "min", {"$type": "int"}), ("a", "max", {"$not": {"$type": []}})]
    assert [profile.extreme(*a) for a in asked] == [(False, None)] * 3 + [(True, 5), (False, None)]
    stat = get_stats(target, GetStatsInput(field="a", operation="min", value_filter={"$exists": True}))
    assert stat.value == 5


def test_a_javascript_value_is_not_taken_for_a_string() -> None:
    """bson's ``Code`` is a ``str``: read as a string it matched no ``javascript`` value, 0 where there are 3."""
    target = _target([{"_id": i, "a": Code("x")} for i in range(3)])
    profile = read_profile(["a"], target.aggregate(profile_pipeline(["a"])))
    assert profile is not None and target.count_documents({"a": Code("x")}) == 3
    assert [profile.count(q) for q in ({"a": Code("x")}, {"a": {"$in": [Code("x")]}}, {"a": {"$ne": Code("x")}})] == \
        [None, None, None]


def test_numbers_of_two_types_one_double_apart_are_left_to_the_server() -> None:
    docs, queries = near_numbers()
    for doc in docs:  # one value a collection, so each group's least and greatest is that value
        target = _target([doc])
        profile = read_profile(["a"], target.aggregate(profile_pipeline(["a"])))
        assert profile is not None
        near = [q for q in queries if (n := profile.count(q)) is not None and n != target.count_documents(q)]
        assert near == []  # the engine agrees with each decided count (MongoDB's exact comparison) ...
    target = _target(docs[:2])
    profile = read_profile(["a"], target.aggregate(profile_pipeline(["a"])))
    assert profile is not None
    assert profile.count(queries[0]) is None  # ... and what a server decides otherwise is not decided
    assert profile.extreme("a", "min", {"$gt": 0}) == (False, None)


@pytest.mark.parametrize("rows", [
    [{"_id": {"k": 0, "t": "int"}, "n": True}], [{"_id": {"k": 0, "t": "int"}, "n": 0}],
    [{"_id": {"k": False, "t": "int"}, "n": 3}], [{"_id": {"k": 0, "t": "integer"}, "n": 3}],
    [{"_id": {"k": 0, "t": "int"}, "n": 3}, {"_id": {"k": 0, "t": "int"}, "n": 2}],
    [{"_id": {"k": 0, "t": "int"}, "n": 3, "lo": "x", "hi": 5}],
    [{"_id": {"k": 0, "t": "int"}, "n": 3, "lo": 9, "hi": 5}],
    [{"_id": {"k": 0, "t": "int"}, "n": 3, "lo": False, "hi": True}],
    [{"_id": {"k": 0, "t": "string"}, "n": 3, "lo": "a"}],
    [{"_id": {"k": 0, "t": "double"}, "n": 3, "lo": 1.0, "hi": float("nan")}]])
def test_a_row_the_pipeline_does_not_make_is_no_profile(rows: list[dict[str, Any]]) -> None:
    """A proxy or a server that answers otherwise (a count of 0 or true, a type twice, an int group whose least
    value is a string) gives no profile, rather than counts from it or a TypeError in a comparison."""
    assert read_profile(["a"], rows) is None
    assert read_profile(["a"], [{"_id": {"k": 0, "t": "int"}, "n": 3, "lo": 1, "hi": 5}]) is not None
