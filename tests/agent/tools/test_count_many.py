"""count_many: many exact counts and statistics in one pass, each count equal to count_documents."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from argus.agent.errors import QueryRefused
from argus.agent.tools import get_stats
from argus.agent.tools.count_many import count_many
from argus.agent.tools.models import CountManyInput, GetStatsInput
from argus.agent.tools.target import AuditTarget
from tests.conftest import RecordingCollection, memory_collection

# Nulls, missing fields, arrays with and without nulls, nested objects and arrays of objects:
# where query-language matching is subtle, so where a re-implementation would drift.
_DOCS = [{"a": None}, {}, {"a": [1, None]}, {"a": [1, 2]}, {"a": 3, "b": {"c": None}}, {"b": {}},
         {"b": [{"c": 1}, {}]}, {"a": "3", "b": {"c": "x"}}, {"a": [], "when": datetime(2030, 1, 1, tzinfo=UTC)},
         {"a": float("nan")}, {"a": {"x": 1}}, {"a": -1, "b": [{"c": -2}, {"c": 5}]}]

_FILTERS = [
    {"a": None}, {"a": {"$exists": False}}, {"a": {"$gt": 1}}, {"a": {"$ne": None}}, {"b.c": None},
    {"b": {"$exists": True}, "b.c": None}, {"a": {"$not": {"$type": "number"}}},
    {"a": {"$exists": True, "$ne": None, "$not": {"$type": "number"}}}, {"a": {"$size": 0}},
    {"a": {"$in": [float("nan")]}}, {"b.c": {"$lt": 0}}, {"$or": [{"a": {"$lt": 0}}, {"a": {"$gt": 2}}]},
    {"a": {"$type": "string", "$not": {"$regex": "^[0-9]+$"}}}, {"when": {"$gt": datetime(2029, 1, 1, tzinfo=UTC)}},
    {"b.c": {"$in": [1, "x"]}},
]


@pytest.fixture
def coll():  # type: ignore[no-untyped-def]

    c = memory_collection([dict(d) for d in _DOCS], "things", database="db")
    return c


def test_each_count_equals_count_documents_of_its_filter(coll) -> None:  # type: ignore[no-untyped-def]
    from argus.agent.ejson import encode

    result = count_many(AuditTarget(coll), CountManyInput(queries=[{"filter": encode(f)} for f in _FILTERS]))
    assert [c.matched_count for c in result.counts] == [coll.count_documents(f) for f in _FILTERS]


def test_everything_is_counted_in_one_aggregate(coll) -> None:  # type: ignore[no-untyped-def]
    from argus.agent.ejson import encode

    recording = RecordingCollection(coll)
    count_many(AuditTarget(recording), CountManyInput(
        queries=[{"filter": encode(f), "examples_of": "a"} for f in _FILTERS],
        stats=[{"field": "a", "operation": "duplicates"}, {"field": "b.c", "operation": "value_counts"}]))
    assert [name for name, _ in recording.calls] == ["aggregate"]
    assert recording.calls[0][1]["maxTimeMS"] > 0


def test_statistics_equal_what_get_stats_computes_alone(coll) -> None:  # type: ignore[no-untyped-def]
    specs = [GetStatsInput(field="a", operation="duplicates"), GetStatsInput(field="b.c", operation="value_counts"),
             GetStatsInput(field="a", operation="max", value_filter={"$lt": 3}),
             GetStatsInput(field="a", operation="min", value_filter={"$gt": 1}),
             GetStatsInput(field="a", operation="count")]
    target = AuditTarget(coll)
    batched = count_many(target, CountManyInput(stats=specs)).stats
    alone = [get_stats(target, spec) for spec in specs]
    assert [(s.value, s.totals, s.capped) for s in batched] == [(s.value, s.totals, s.capped) for s in alone]


def test_examples_come_from_matching_documents_only(coll) -> None:  # type: ignore[no-untyped-def]
    result = count_many(AuditTarget(coll), CountManyInput(queries=[
        {"filter": {"a": {"$type": "string"}}, "examples_of": "a", "examples": 3}]))
    assert result.counts[0].matched_count == 1
    assert result.counts[0].documents == [{"a": "3"}]


def test_an_invalid_learned_pattern_is_refused_before_it_is_sent(coll) -> None:  # type: ignore[no-untyped-def]
    recording = RecordingCollection(coll)
    with pytest.raises(QueryRefused, match="not a valid regular expression"):
        count_many(AuditTarget(recording), CountManyInput(queries=[{"filter": {"a": {"$regex": "^+[0-9]"}}}]))
    assert recording.calls == []


def test_a_write_stage_cannot_be_smuggled_into_a_statistic(coll) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(QueryRefused):
        count_many(AuditTarget(coll), CountManyInput(queries=[{"filter": {"$where": "sleep(100)"}}]))


def test_nothing_to_count_reads_nothing(coll) -> None:  # type: ignore[no-untyped-def]
    recording = RecordingCollection(coll)
    result = count_many(AuditTarget(recording), CountManyInput())
    assert (result.counts, result.stats, recording.calls) == ([], [], [])


# Where projecting a batch's fields before its $facet could change what a branch sees: arrays of
# documents beside scalars, arrays of arrays, empty documents, a parent that is sometimes a scalar,
# and statistics filtered on fields they do not compute.
_NESTED = [{"_id": 1, "p": {"q": 1, "r": "x"}, "s": 5}, {"_id": 2, "p": [{"q": 2}, 7, {"r": "y"}, {"q": [3, [4]]}]},
           {"_id": 3, "p": [[{"q": 9}], {"q": None}], "s": "t"}, {"_id": 4, "p": 3, "s": [1, 1]},
           {"_id": 5, "p": {"q": 1}, "s": None}, {"_id": 6}, {"_id": 7, "p": {}, "s": 5},
           {"_id": 8, "p": {"q": [1, 2, 1]}, "s": 6}]


def test_a_narrowed_batch_answers_as_each_statistic_alone() -> None:
    coll = memory_collection([dict(d) for d in _NESTED], "nested", database="db")
    specs = [GetStatsInput(field="p.q", operation=op) for op in ("duplicates", "value_counts", "min", "max", "count",
                                                                 "distinct", "avg")]
    specs += [GetStatsInput(field="p.q", operation="max", value_filter={"$lt": 3}),
              GetStatsInput(field="p.q", operation="value_counts", filter={"s": {"$gte": 5}}),
              GetStatsInput(field="s", operation="duplicates", filter={"p.r": {"$exists": False}}),
              GetStatsInput(field="p", operation="count", filter={"_id": {"$gt": 2}}),
              GetStatsInput(field="p.r", operation="distinct", filter={"$or": [{"s": 5}, {"p.q": 2}]})]
    target = AuditTarget(coll)
    batched = count_many(target, CountManyInput(stats=specs, queries=[{"filter": {"p.q": 1}, "examples_of": "s"}]))
    alone = [get_stats(target, spec) for spec in specs]

    assert '"$project"' in batched.query_used  # the batch read a narrowed document
    assert [(s.value, s.totals, s.capped) for s in batched.stats] == [(s.value, s.totals, s.capped) for s in alone]
    assert batched.counts[0].matched_count == coll.count_documents({"p.q": 1})


def test_duplicates_beyond_the_cap_are_totalled_over_every_repeated_value() -> None:
    from argus.agent.tools.models import DUPLICATES_CAP

    docs = [{"_id": i, "code": i // 2} for i in range(2 * (DUPLICATES_CAP + 3))]  # each code twice
    target = AuditTarget(memory_collection(docs, "codes", database="db"))
    spec = GetStatsInput(field="code", operation="duplicates")

    batched = count_many(target, CountManyInput(stats=[spec])).stats[0]

    assert batched.capped and batched.totals == {"values": DUPLICATES_CAP + 3, "documents": 2 * (DUPLICATES_CAP + 3)}
    assert batched.totals == get_stats(target, spec).totals


def test_a_regex_beside_other_operators_is_counted_with_all_of_them() -> None:
    """``{"$regex": "^a", "$ne": "ab"}`` as a user writes it in mongosh: pymongo's Extended JSON read it as
    the regex alone (its legacy ``{$regex, $options}`` form) and dropped ``$ne``, so Argus counted 3 where
    the user's own query counts 2; ``$gt`` beside it counted strings it never matches."""
    docs = [{"_id": i, "s": s} for i, s in enumerate(["ab", "ac", "ad", "b"])]
    target = AuditTarget(memory_collection(docs, "words", database="db"))
    asked = [{"s": {"$regex": "^a", "$ne": "ab"}}, {"s": {"$regex": "^a", "$options": "i", "$gt": 5}},
             {"s": {"$regex": "^A", "$options": "i"}}]

    counted = count_many(target, CountManyInput(queries=[{"filter": q} for q in asked])).counts

    assert [c.matched_count for c in counted] == [2, 0, 3]
