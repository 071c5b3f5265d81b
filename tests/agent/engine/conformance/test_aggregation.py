"""Every aggregation stage and accumulator Argus sends, as the manual's stage pages describe them.

Argus sends ``$facet`` of ``[$match, $count]`` and ``[$match, $limit, $project]`` branches
(``count_many``), ``get_stats`` pipelines (``$match``, ``$project``, one ``$unwind`` per path
segment, ``$group`` with ``$min``/``$max``/``$avg``/``$sum``, ``$sort``, ``$limit``, a ``$facet``
of ``top``/``totals``), ``$sample`` (``schema_sample``) and a ``$group`` by ``$dateToString``
(``health/backfill``); the guard also allows ``$skip``, ``$addFields``, ``$sortByCount`` and the
accumulators ``$first``, ``$last``, ``$push``, ``$addToSet``, ``$count``. Sources: the manual's page
for each stage and accumulator (named per test).
"""

from __future__ import annotations

from datetime import datetime

from bson import Decimal128

from argus.agent.tools.get_stats import build_pipeline
from tests.agent.engine.conformance.answers import aggregate

DOCS = [{"_id": 1, "k": "a", "v": 3, "items": [{"q": 1}, {"q": 2}]}, {"_id": 2, "k": "b", "v": None, "items": []},
        {"_id": 3, "k": "a", "v": 7.5}, {"_id": 4, "k": "c", "v": "x", "items": [{"q": None}, {}]},
        {"_id": 5, "k": "a", "v": Decimal128("1.5")}]


def test_a_pipeline_of_streaming_stages_returns_its_output() -> None:
    """Issue 29, defect 6: ``[{$match: {}}]`` returns every document (manual, ``$match``)."""
    assert [d["_id"] for d in aggregate(DOCS, [{"$match": {}}])] == [1, 2, 3, 4, 5]
    assert aggregate(DOCS, [{"$match": {"k": "b"}}, {"$project": {"_id": 1}}]) == [{"_id": 2}]
    assert [d["_id"] for d in aggregate(DOCS, [{"$skip": 3}])] == [4, 5]
    assert [d["_id"] for d in aggregate(DOCS, [{"$limit": 2}])] == [1, 2]
    assert [d["n"] for d in aggregate(DOCS, [{"$addFields": {"n": {"$size": {"$ifNull": ["$items", []]}}}}])] \
        == [2, 0, 0, 2, 0]


def test_count_gives_no_document_for_no_input() -> None:
    """Manual, ``$count``: the count of the documents reaching it; nothing reaching it, nothing out."""
    assert aggregate(DOCS, [{"$match": {"k": "a"}}, {"$count": "n"}]) == [{"n": 3}]
    assert aggregate(DOCS, [{"$match": {"k": "z"}}, {"$count": "n"}]) == []


def test_facet_of_count_and_example_branches() -> None:
    """Manual, ``$facet``: one document, each output an array (empty when nothing matched)."""
    pipeline = [{"$facet": {"q0": [{"$match": {"k": "a"}}, {"$count": "n"}], "q1": [{"$match": {"k": "z"}},
                                                                                     {"$count": "n"}],
                            "e0": [{"$match": {"k": "a"}}, {"$limit": 2}, {"$project": {"v": 1, "_id": 0}}]}}]
    assert aggregate(DOCS, pipeline) == [{"q0": [{"n": 3}], "q1": [], "e0": [{"v": 3}, {"v": 7.5}]}]


def test_unwind_drops_null_missing_and_empty_unless_preserved() -> None:
    """Manual, ``$unwind``: a non-array operand is one value; null, missing and [] give nothing
    unless ``preserveNullAndEmptyArrays``; ``includeArrayIndex`` names the position (null for a
    non-array)."""
    docs = [{"_id": 1, "a": [1, 2]}, {"_id": 2, "a": 5}, {"_id": 3, "a": None}, {"_id": 4}, {"_id": 5, "a": []}]
    assert [(d["_id"], d.get("a")) for d in aggregate(docs, [{"$unwind": "$a"}])] == [(1, 1), (1, 2), (2, 5)]
    preserved = aggregate(docs, [{"$unwind": {"path": "$a", "preserveNullAndEmptyArrays": True,
                                              "includeArrayIndex": "i"}}])
    assert [(d["_id"], d.get("a", "-"), d["i"]) for d in preserved] == \
        [(1, 1, 0), (1, 2, 1), (2, 5, None), (3, None, None), (4, "-", None), (5, "-", None)]


def test_get_stats_pipelines_flatten_arrays_of_documents() -> None:
    """What ``get_stats`` sends for ``items.q``: a ``$project``, one ``$unwind`` per segment, nulls dropped."""
    rows = aggregate(DOCS, build_pipeline("items.q", "max", None, None))
    assert rows == [{"_id": None, "r": 2}]
    counts = aggregate(DOCS, build_pipeline("items.q", "value_counts", None, None))
    assert sorted((r["_id"], r["n"]) for r in counts) == [(1, 1), (2, 1)]


def test_group_accumulators() -> None:
    """Manual, ``$sum``/``$avg`` (non-numbers ignored; ``$avg`` of none is null; any Decimal128
    makes Decimal128), ``$min``/``$max`` (null and missing ignored), ``$first``/``$last`` (a missing
    value is null), ``$push``/``$addToSet`` (a missing value is not added), ``$count``."""
    rows = aggregate(DOCS, [{"$group": {"_id": "$k", "sum": {"$sum": "$v"}, "avg": {"$avg": "$v"},
                                        "lo": {"$min": "$v"}, "hi": {"$max": "$v"}, "first": {"$first": "$items"},
                                        "last": {"$last": "$items"}, "all": {"$push": "$v"},
                                        "set": {"$addToSet": "$k"}, "n": {"$count": {}}, "ones": {"$sum": 1}}},
                            {"$sort": {"_id": 1}}])
    a, b, c = rows
    assert a["sum"].to_decimal() == 12 and a["avg"].to_decimal() == 4 and a["n"] == 3 and a["ones"] == 3
    assert (a["lo"], a["hi"]) == (Decimal128("1.5"), 7.5)
    assert a["first"] == [{"q": 1}, {"q": 2}] and a["last"] is None
    assert a["all"] == [3, 7.5, Decimal128("1.5")] and a["set"] == ["a"]
    assert (b["sum"], b["avg"], b["lo"], b["hi"], b["all"]) == (0, None, None, None, [None])
    assert (c["sum"], c["avg"], c["lo"]) == (0, None, "x")


def test_group_by_date_string_as_the_backfill_sends_it() -> None:
    docs = [{"_id": 1, "t": datetime(2024, 1, 2, 3)}, {"_id": 2, "t": datetime(2024, 1, 2, 9)}, {"_id": 3}]
    rows = aggregate(docs, [{"$group": {"_id": {"$dateToString": {"format": "%Y-%m-%d", "date": "$t"}},
                                        "n": {"$sum": 1}}}, {"$sort": {"_id": 1}}])
    assert rows == [{"_id": None, "n": 1}, {"_id": "2024-01-02", "n": 2}]


def test_sort_limit_and_sort_by_count() -> None:
    """Manual, ``$sortByCount``: ``{_id, count}`` by count, highest first; ``$sort`` on two keys."""
    assert aggregate(DOCS, [{"$sortByCount": "$k"}])[0] == {"_id": "a", "count": 3}
    rows = aggregate(DOCS, [{"$sort": {"k": 1, "_id": -1}}, {"$limit": 3}])
    assert [r["_id"] for r in rows] == [5, 3, 1]


def test_sample_draws_distinct_documents() -> None:
    """Manual, ``$sample``: ``size`` documents, each at most once, all when fewer."""
    drawn = aggregate(DOCS, [{"$sample": {"size": 3}}])
    assert len(drawn) == 3 and len({d["_id"] for d in drawn}) == 3
    assert sorted(d["_id"] for d in aggregate(DOCS, [{"$sample": {"size": 50}}])) == [1, 2, 3, 4, 5]


def test_project_inclusion_exclusion_and_computed_fields() -> None:
    """Manual, ``$project``: inclusion keeps ``_id`` unless excluded, through arrays of documents."""
    assert aggregate(DOCS[:1], [{"$project": {"items.q": 1}}]) == [{"_id": 1, "items": [{"q": 1}, {"q": 2}]}]
    assert aggregate(DOCS[:1], [{"$project": {"items": 0, "k": 0, "_id": 0}}]) == [{"v": 3}]
    assert aggregate(DOCS[:1], [{"$project": {"_id": 0, "w": "$items.q"}}]) == [{"w": [1, 2]}]
