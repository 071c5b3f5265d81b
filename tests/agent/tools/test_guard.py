"""The read-only guard refuses every operator that could write, run code or leave the collection."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from argus.agent.errors import QueryRefused
from argus.agent.tools.guard import (
    EXPRESSION_OPERATORS,
    QUERY_OPERATORS,
    check_field_path,
    check_filter,
    filter_fields,
)
from argus.agent.tools.guard_pipeline import check_pipeline, check_projection

REFUSED_IN_FILTERS = ["$where", "$function", "$accumulator", "$text", "$jsonSchema", "$geoWithin", "$near",
                      "$rand", "$sampleRate", "$bitsAllSet"]
REFUSED_STAGES = ["$out", "$merge", "$lookup", "$graphLookup", "$unionWith", "$currentOp", "$collStats",
                  "$indexStats", "$listSessions", "$planCacheStats", "$redact", "$geoNear", "$setWindowFields",
                  "$documents", "$changeStream"]


@pytest.mark.parametrize("operator", REFUSED_IN_FILTERS)
def test_refused_query_operator_is_named_at_top_level(operator: str) -> None:
    with pytest.raises(QueryRefused, match=re.escape(operator)) as info:
        check_filter({operator: "1 == 1"})
    assert info.value.operator == operator


@pytest.mark.parametrize("operator", ["$where", "$function", "$accumulator"])
def test_javascript_operators_are_refused_with_the_reason(operator: str) -> None:
    with pytest.raises(QueryRefused, match="runs JavaScript"):
        check_filter({"$and": [{"a": 1}, {operator: "sleep(1000)"}]})


@pytest.mark.parametrize("operator", REFUSED_IN_FILTERS)
def test_refused_operator_is_found_inside_a_field_condition(operator: str) -> None:
    with pytest.raises(QueryRefused, match=re.escape(operator)):
        check_filter({"a": {"$gt": 1, operator: 2}})


@pytest.mark.parametrize("nesting", [
    lambda op: {"$or": [{"a": 1}, {"$and": [{"b": {op: 1}}]}]},
    lambda op: {"a": {"$not": {op: 1}}},
    lambda op: {"a": {"$elemMatch": {"b": {op: 1}}}},
    lambda op: {"a": {"$elemMatch": {op: 1}}},
    lambda op: {"$nor": [{"a": {"$in": [{op: 1}]}}]},
])
def test_refused_operator_is_found_however_deeply_it_hides(nesting) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(QueryRefused, match=r"\$where"):
        check_filter(nesting("$where"))


def test_literal_documents_cannot_smuggle_operators() -> None:
    with pytest.raises(QueryRefused, match=r"\$function"):
        check_filter({"a": {"b": {"$function": {"body": "x", "args": [], "lang": "js"}}}})


@pytest.mark.parametrize("operator", ["$function", "$accumulator", "$where", "$rand", "$let", "$map"])
def test_expr_has_its_own_allow_list(operator: str) -> None:
    with pytest.raises(QueryRefused, match=re.escape(operator)):
        check_filter({"$expr": {"$gt": [{operator: {}}, 1]}})


def test_expr_with_listed_operators_passes() -> None:
    check_filter({"$expr": {"$and": [{"$gt": ["$a", "$b"]}, {"$eq": [{"$type": "$c"}, "string"]}]}})


def test_ordinary_filters_pass() -> None:
    check_filter({"a": {"$gte": 1, "$lt": 9}, "b": {"$in": ["x", "y"]}, "c": {"$exists": True},
                  "d": {"$type": "string", "$not": {"$regex": "^x", "$options": "i"}},
                  "$or": [{"e": None}, {"f": {"$size": 0}}], "g.h": {"$elemMatch": {"q": {"$lt": 0}}}})


def test_filter_must_be_a_document() -> None:
    with pytest.raises(QueryRefused, match="must be a document"):
        check_filter([{"a": 1}])


def test_excessive_nesting_is_refused() -> None:
    query: dict = {"a": 1}
    for _ in range(40):
        query = {"$and": [query]}
    with pytest.raises(QueryRefused, match="nested deeper"):
        check_filter(query)


@pytest.mark.parametrize("stage", REFUSED_STAGES)
def test_refused_pipeline_stage_is_named(stage: str) -> None:
    with pytest.raises(QueryRefused, match=re.escape(stage)):
        check_pipeline([{"$match": {}}, {stage: {}}])


@pytest.mark.parametrize("stage", ["$out", "$merge"])
def test_write_stages_are_refused_with_the_reason(stage: str) -> None:
    with pytest.raises(QueryRefused, match="writes to a collection"):
        check_pipeline([{stage: "stolen"}])


def test_write_stage_inside_facet_is_refused() -> None:
    with pytest.raises(QueryRefused, match=r"\$merge"):
        check_pipeline([{"$facet": {"x": [{"$merge": {"into": "other"}}]}}])


def test_accumulator_inside_group_is_refused() -> None:
    with pytest.raises(QueryRefused, match=r"\$accumulator"):
        check_pipeline([{"$group": {"_id": None, "x": {"$accumulator": {"init": "function() {}"}}}}])


def test_where_inside_match_stage_is_refused() -> None:
    with pytest.raises(QueryRefused, match=r"\$where"):
        check_pipeline([{"$match": {"$where": "true"}}])


def test_stage_document_with_two_operators_is_refused() -> None:
    with pytest.raises(QueryRefused, match="exactly one"):
        check_pipeline([{"$match": {}, "$limit": 1}])


def test_a_write_stage_beside_another_stage_is_named() -> None:
    with pytest.raises(QueryRefused, match=r"\$out is refused in a pipeline: it writes to a collection"):
        check_pipeline([{"$match": {}, "$out": "x"}])


def test_argus_own_pipelines_pass() -> None:
    check_pipeline([{"$sample": {"size": 10}}])
    check_pipeline([{"$match": {"a": 1}}, {"$project": {"_id": 0, "v": "$a.b"}}, {"$unwind": "$v"},
                    {"$group": {"_id": "$v", "n": {"$sum": 1}}}, {"$sort": {"n": -1}}, {"$limit": 1001},
                    {"$facet": {"t": [{"$count": "n"}]}}])


@pytest.mark.parametrize("projection", [{"a": {"$function": {}}}, {"a": "$b"}, {"$where": 1}, {"a": 2}])
def test_computed_projections_are_refused(projection: dict) -> None:
    with pytest.raises(QueryRefused):
        check_projection(projection)


def test_plain_projection_passes() -> None:
    check_projection({"a.b": 1, "_id": 0, "c": True})


@pytest.mark.parametrize("path", ["", "$a", "a..b", "a.$b", "a\x00b", ".a"])
def test_unusable_field_paths_are_refused(path: str) -> None:
    with pytest.raises(QueryRefused):
        check_field_path(path)


@given(st.text(alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ", min_size=1, max_size=20))
def test_any_operator_not_on_the_allow_list_is_refused(name: str) -> None:
    operator = "$" + name
    if operator in QUERY_OPERATORS:
        return
    with pytest.raises(QueryRefused, match=re.escape(operator)):
        check_filter({"a": {operator: 1}})
    if operator not in EXPRESSION_OPERATORS:
        with pytest.raises(QueryRefused, match=re.escape(operator)):
            check_filter({"$expr": {operator: [1, 2]}})


def test_filter_fields_lists_every_path_read() -> None:
    query = {"$or": [{"a": 1}, {"b.c": {"$gt": 2}}], "d": {"$elemMatch": {"e": 1, "f": {"$lt": 0}}}}
    assert filter_fields(query) == {"a", "b.c", "d", "d.e", "d.f"}


def test_a_query_on_each_element_may_combine_conditions_with_or() -> None:
    """{$elemMatch: {$or: [...]}} is a query on each element, as the server parses it (a contract's
    required_fields on array elements sends it); an operator of the refused list inside is still found."""
    check_filter({"items": {"$elemMatch": {"$or": [{"sku": {"$exists": False}}, {"qty": {"$exists": False}}]}}})
    with pytest.raises(QueryRefused, match=r"\$where"):
        check_filter({"items": {"$elemMatch": {"$or": [{"$where": "1"}]}}})
