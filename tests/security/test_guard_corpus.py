"""A corpus of hostile filters, projections and pipelines: each is refused, naming its operator or reason.

Payloads are written as a planner sends them (Extended JSON), decoded the way tools decode them,
then judged by the guard. Nothing may pass, and nothing may raise anything but ``QueryRefused``
(no ``RecursionError``, no ``AttributeError``). The controls at the end must pass, so the corpus
cannot be satisfied by a guard that refuses everything.
"""

from __future__ import annotations

import re
from typing import Any

import bson
import pytest

from argus.agent.ejson import decode
from argus.agent.errors import QueryRefused
from argus.agent.gates.action import action_gate, parse_action
from argus.agent.options import AuditOptions
from argus.agent.state import AgentAction, AgentState
from argus.agent.tools import run_query
from argus.agent.tools.formats import FORMATS, PLACEHOLDER
from argus.agent.tools.guard import check_filter
from argus.agent.tools.guard_pipeline import check_pipeline, check_projection
from argus.agent.tools.models import RunQueryInput

JS = "sleep(5000) || true"


def _nest(levels: int, leaf: Any, wrap: Any) -> Any:
    value = leaf
    for _ in range(levels):
        value = wrap(value)
    return value


def _dbref(**hidden: Any) -> dict[str, Any]:
    return {"$ref": "users", "$id": 1, **hidden}


# (payload, words the refusal must contain)
FILTERS: list[tuple[Any, str]] = [
    # server-side JavaScript, everywhere it can hide
    ({"$where": JS}, "$where"),
    ({"$function": {"body": JS, "args": [], "lang": "js"}}, "$function"),
    ({"$accumulator": {}}, "$accumulator"),
    ({"$and": [{"a": 1}, {"$where": JS}]}, "$where"),
    ({"$or": [{"a": 1}, {"$where": JS}]}, "$where"),
    ({"$nor": [{"$where": JS}]}, "$where"),
    ({"a": {"$elemMatch": {"$where": JS}}}, "$where"),
    ({"a": {"$elemMatch": {"b": {"$function": JS}}}}, "$function"),
    ({"a": {"$gt": 1, "$where": JS}}, "$where"),
    ({"$expr": {"$function": {"body": JS, "args": [], "lang": "js"}}}, "$function"),
    ({"$expr": {"$accumulator": {}}}, "$accumulator"),
    # DBRef smuggling: the decoded DBRef carries the operator onto the wire
    ({"a": _dbref(**{"$where": JS})}, "$where"),
    ({"a": {"$not": _dbref(**{"$where": JS})}}, "$where"),
    ({"a": {"$in": [_dbref(**{"$where": JS})]}}, "$where"),
    ({"a": {"$nin": [1, _dbref(**{"$where": JS})]}}, "$where"),
    ({"a": {"$all": [_dbref(**{"$function": JS})]}}, "$function"),
    ({"a": {"$eq": _dbref(**{"$where": JS})}}, "$where"),
    ({"a": {"$ne": _dbref(**{"$function": JS})}}, "$function"),
    ({"$expr": {"$eq": ["$a", _dbref(**{"$where": JS})]}}, "$where"),
    ({"$expr": {"$in": ["$a", [_dbref(**{"$function": JS})]]}}, "$function"),
    ({"$expr": {"$eq": ["$a", {"$literal": _dbref(**{"$where": JS})}]}}, "$where"),
    ({"$or": [_dbref(**{"$where": JS})]}, "$where"),
    (_dbref(**{"$where": JS}), "$where"),
    ({"a": {"$elemMatch": {"b": _dbref(**{"$where": JS})}}}, "$where"),
    ({"a": {"b": _dbref(**{"$function": JS})}}, "$function"),
    ({"a": _dbref(**{"$db": {"$where": JS}})}, "$where"),
    # JavaScript code values
    ({"a": {"$code": JS}}, "$code"),
    ({"a": {"$code": JS, "$scope": {"x": 1}}}, "$code"),
    ({"a": {"$in": [{"$code": JS}]}}, "$code"),
    ({"$expr": {"$eq": ["$a", {"$literal": {"$code": JS}}]}}, "$code"),
    ({"a": _dbref(x={"$code": JS})}, "$code"),
    # operators the allow-list does not name
    ({"$text": {"$search": "x"}}, "$text"),
    ({"$jsonSchema": {}}, "$jsonSchema"),
    ({"a": {"$geoWithin": {}}}, "$geoWithin"),
    ({"a": {"$near": [0, 0]}}, "$near"),
    ({"$sampleRate": 0.5}, "$sampleRate"),
    ({"a": {"$bitsAllSet": 1}}, "$bitsAllSet"),
    ({"$expr": {"$rand": {}}}, "$rand"),
    ({"a": {"$in": [{"$gt": 1}]}}, "$gt"),
    ({"a": {"b": {"$where": JS}}}, "$where"),
    ({"$expr": {"$eq": ["$$NOW", 1]}}, "$$NOW"),
    ({"$expr": {"$in": ["admin", "$$USER_ROLES.role"]}}, "$$USER_ROLES"),
    # operators out of position (issue 13 item 7)
    ({"$type": "string"}, 'write {"field": {"$type": ...}}'),
    ({"$or": [{"$type": "string"}]}, 'write {"field": {"$type": ...}}'),
    ({"$exists": {"a": 1}}, 'write {"field": {"$exists": ...}}'),
    ({"$or": [{"$regex": "^A"}]}, 'a $regex is a condition on a field: write {"field": {"$regex": "..."}}'),
    ({"$regex": "^A", "$options": "i"}, 'write {"field": {"$regex": "..."}}'),
    ({"$eq": 1}, 'write {"field": {"$eq": ...}}'),
    ({"$and": [{"$in": [1, 2]}]}, 'write {"field": {"$in": ...}}'),
    ({"$not": {"a": 1}}, 'write {"field": {"$not": ...}}'),
    ({"$elemMatch": {"a": 1}}, 'write {"field": {"$elemMatch": ...}}'),
    ({"$size": 2}, 'write {"field": {"$size": ...}}'),
    ({"a": {"$or": [{"b": 1}]}}, 'write {"$or": [{"field": ...}, ...]}'),
    ({"a": {"$and": [{"b": 1}]}}, 'write {"$and": [{"field": ...}, ...]}'),
    ({"a": {"$expr": {"$eq": [1, 1]}}}, "$expr in a filter stands under a field"),
    ({"a": {"$options": "i"}}, "$options in a filter needs a $regex beside it"),
    # nesting, refused before anything recurses
    (_nest(33, {"a": 1}, lambda v: {"$and": [v]}), "nested deeper than 32 levels"),
    (_nest(600, {"a": 1}, lambda v: {"$and": [v]}), "nested deeper than 100 levels"),
    (_nest(1000, {"a": 1}, lambda v: {"$or": [v]}), "nested deeper than 100 levels"),
    ({"a": _nest(1000, 1, lambda v: {"x": v})}, "nested deeper than 100 levels"),
    ({"a": {"$in": [_nest(1000, 1, lambda v: [v])]}}, "nested deeper than 100 levels"),
    ({"a": _nest(40, 1, lambda v: [v])}, "nested deeper than 32 levels"),
    ({"$expr": _nest(1000, 1, lambda v: {"$abs": v})}, "nested deeper than 100 levels"),
    ({"a": _nest(20, {"$gt": 1}, lambda v: {"$elemMatch": {"b": v}})}, "nested deeper than 32 levels"),
    # size
    ({"a": {"$in": list(range(100_001))}}, "more than 100000 values"),
    # catastrophic or invalid regular expressions
    ({"a": {"$regex": "^(a+)+$"}}, "nested quantifiers"),
    ({"a": {"$regex": "(a*)*b"}}, "nested quantifiers"),
    ({"a": {"$regex": "^(\\w+\\s?)*$"}}, "nested quantifiers"),
    ({"a": {"$regex": "(x+x+)+y"}}, "nested quantifiers"),
    ({"a": {"$regex": "^(([a-z])+.)+[A-Z]([a-z])+$"}}, "nested quantifiers"),
    ({"a": {"$regex": "(a|a)*b"}}, "alternatives that overlap"),
    ({"a": {"$regex": "^(a|ab)+$"}}, "alternatives that overlap"),
    ({"a": {"$regex": "(\\d|\\d\\.)+x"}}, "alternatives that overlap"),
    ({"a": {"$regex": "(|a)+"}}, "alternatives that overlap"),
    ({"a": {"$regex": "^\\s*\\s*$"}}, "adjacent quantifiers"),
    ({"a": {"$regex": "^\\s*(n/a)?\\s*$"}}, "adjacent quantifiers"),
    ({"a": {"$regex": ".*.*=.*"}}, "adjacent quantifiers"),
    ({"a": {"$regex": "("}}, "not a valid regular expression"),
    ({"a": {"$regex": "["}}, "not a valid regular expression"),
    ({"a": {"$regex": "a{1,3}{2}"}}, "not a valid regular expression"),
    ({"a": {"$regex": "x" * 1001}}, "longer than 1000 characters"),
    ({"a": {"$not": {"$options": "i"}}}, "$options in a filter needs a $regex beside it"),
    ({"a": {"$regularExpression": {"pattern": "(a+)+$", "options": ""}}}, "nested quantifiers"),
    ({"a": {"$not": {"$regularExpression": {"pattern": "(a*)*", "options": "i"}}}}, "nested quantifiers"),
    ({"a": {"$in": [{"$regularExpression": {"pattern": "(a+)+", "options": ""}}]}}, "nested quantifiers"),
    ({"$expr": {"$regexMatch": {"input": "$a", "regex": "(a+)+$"}}}, "nested quantifiers"),
    ({"$and": [{"a": {"$regex": "^ok$"}}, {"b": {"$regex": "(a|ab)*"}}]}, "alternatives that overlap"),
    # malformed shapes
    ({"$and": []}, "$and in a filter needs a non-empty list"),
    ({"$or": {"a": 1}}, "$or in a filter needs a non-empty list"),
    ({"$or": [1]}, "$or in a filter needs a list of documents of conditions"),
    ({"a": {"$in": 5}}, "$in in a filter needs a list"),
    ({"a": {"$exists": {"b": 1}}}, "$exists in a filter needs true or false"),
    ({"a": {"$not": 5}}, "$not in a filter needs a document of operators or a regex"),
    ({"a": {"$elemMatch": 5}}, "$elemMatch in a filter needs a document of conditions"),
    ({"a": {"$gt": 1, "b": 2}}, "mixes operators and field names"),
    ({"a..b": 1}, "not a plain dot-notation path"),
    ({"a\x00b": 1}, "not a plain dot-notation path"),
    ({"$comment": {"$where": JS}}, "$where"),
]

PROJECTIONS: list[tuple[Any, str]] = [
    ({"a": {"$function": {"body": JS}}}, "$function is refused in a projection"),
    ({"a": "$b"}, "computed projections are refused"),
    ({"a": 2}, "computed projections are refused"),
    ({"a": {"$slice": 1}}, "computed projections are refused"),
    ({"a": {"$elemMatch": {"b": 1}}}, "computed projections are refused"),
    ({"$where": 1}, "$where is refused in a projection"),
    ({"a.$": 1}, "not a plain dot-notation path"),
    ({"": 1}, "not a plain dot-notation path"),
    ({"a": _dbref(**{"$where": JS})}, "$where is refused in a projection"),
    ({"a": {"$code": JS}}, "$code"),
    ({"a": _nest(1000, 1, lambda v: {"x": v})}, "nested deeper than 100 levels"),
    ({"a": _nest(40, 1, lambda v: {"x": v})}, "nested deeper than 32 levels"),
    (["a"], "a projection must be a document"),
]

PIPELINES: list[tuple[Any, str]] = [
    ([{"$out": "x"}], "$out"),
    ([{"$merge": {"into": "x"}}], "$merge"),
    ([{"$lookup": {"from": "users"}}], "$lookup"),
    ([{"$graphLookup": {"from": "users"}}], "$graphLookup"),
    ([{"$unionWith": "users"}], "$unionWith"),
    ([{"$currentOp": {}}], "$currentOp"),
    ([{"$collStats": {}}], "$collStats"),
    ([{"$indexStats": {}}], "$indexStats"),
    ([{"$listSessions": {}}], "$listSessions"),
    ([{"$planCacheStats": {}}], "$planCacheStats"),
    ([{"$redact": "$$KEEP"}], "$redact"),
    ([{"$setWindowFields": {}}], "$setWindowFields"),
    ([{"$documents": [{}]}], "$documents"),
    ([{"$match": {"$where": JS}}], "$where"),
    ([{"$match": {"a": _dbref(**{"$where": JS})}}], "$where"),
    ([{"$sort": {"a": {"$meta": "textScore"}}}], "$sort of 'a' must be 1 or -1"),
    ([{"$sort": {"a": 2}}], "$sort of 'a' must be 1 or -1"),
    ([{"$sort": {"a": _dbref(**{"$where": JS})}}], "$where"),
    ([{"$sort": {}}], "$sort needs a document"),
    ([{"$sort": {"$where": 1}}], "$where is refused in a pipeline"),
    ([{"$sort": {"$a": 1}}], "not a plain dot-notation path"),
    ([{"$limit": -1}], "$limit needs a positive integer"),
    ([{"$limit": 0}], "$limit needs a positive integer"),
    ([{"$limit": "5"}], "$limit needs a positive integer"),
    ([{"$limit": {"$where": JS}}], "$where"),
    ([{"$limit": True}], "$limit needs a positive integer"),
    ([{"$skip": -1}], "$skip needs a non-negative integer"),
    ([{"$count": "$where"}], "$count needs a plain output field name"),
    ([{"$count": "a.b"}], "$count needs a plain output field name"),
    ([{"$count": {"$function": JS}}], "$function"),
    ([{"$unwind": {"path": "$a", "$where": JS}}], "$where"),
    ([{"$unwind": {"path": "a"}}], "$unwind needs a field path written as $path"),
    ([{"$unwind": "$$ROOT"}], "$unwind needs a field path written as $path"),
    ([{"$unwind": {"path": "$a", "preserveNullAndEmptyArrays": "yes"}}], "preserveNullAndEmptyArrays"),
    ([{"$unwind": {"path": "$a", "includeArrayIndex": "$i"}}], "$unwind needs a plain output field name"),
    ([{"$sample": {"size": -1}}], "$sample needs exactly {size: N}"),
    ([{"$sample": {"size": "10"}}], "$sample needs exactly {size: N}"),
    ([{"$sample": {"size": 5, "where": JS}}], "$sample needs exactly {size: N}"),
    ([{"$sample": {"size": {"$function": JS}}}], "$function"),
    ([{"$facet": {"a": [{"$facet": {"b": [{"$limit": 1}]}}]}}], "$facet cannot stand inside another $facet"),
    ([{"$facet": {"a": [{"$out": "x"}]}}], "$out"),
    ([{"$facet": {"a": {"$limit": 1}}}], "each $facet output needs a list of stages"),
    ([{"$facet": {"$x": [{"$limit": 1}]}}], "$facet needs a plain output field name"),
    ([{"$group": {"_id": None, "n": {"$accumulator": {}}}}], "$accumulator"),
    ([{"$group": {"_id": {"$function": {"body": JS}}}}], "$function"),
    ([{"$group": {"n": {"$sum": 1}}}], "$group needs a document with _id"),
    ([{"$group": {"_id": None, "n": {"$mergeObjects": "$a"}}}], "$mergeObjects"),
    ([{"$group": {"_id": None, "n": {"$sum": 1, "$max": 1}}}], "exactly one accumulator"),
    ([{"$project": {"a": {"$function": {"body": JS}}}}], "$function"),
    ([{"$project": {"a": {"$literal": _dbref(**{"$where": JS})}}}], "$where"),
    ([{"$addFields": {"a": {"$rand": {}}}}], "$rand"),
    ([{"$addFields": {"$x": 1}}], "not a plain dot-notation path"),
    ([{"$sortByCount": {"$function": {"body": JS}}}], "$function"),
    ([{"$project": {"a": "$$CLUSTER_TIME"}}], "$$CLUSTER_TIME"),
    ([{"$match": {"a": 1}, "$out": "x"}], "$out is refused in a pipeline: it writes to a collection"),
    ([{"$match": {"a": 1}, "$limit": 1}], "exactly one stage operator"),
    (["$out"], "exactly one stage operator"),
    ({"$match": {}}, "a pipeline must be a list"),
    ([_nest(1000, {"$limit": 1}, lambda v: {"$facet": {"a": [v]}})], "nested deeper than 100 levels"),
    ([{"$match": _nest(40, {"a": 1}, lambda v: {"$and": [v]})}], "nested deeper than 32 levels"),
]

CORPUS = ([("filter", p, w) for p, w in FILTERS] + [("projection", p, w) for p, w in PROJECTIONS]
          + [("pipeline", p, w) for p, w in PIPELINES])
CHECKS = {"filter": check_filter, "projection": check_projection, "pipeline": check_pipeline}


def test_the_corpus_holds_at_least_a_hundred_payloads() -> None:
    assert len(CORPUS) >= 100


@pytest.mark.parametrize(("kind", "payload", "words"), CORPUS, ids=[f"{k}-{i}" for i, (k, _, _) in enumerate(CORPUS)])
def test_hostile_payload_is_refused_with_its_reason_named(kind: str, payload: Any, words: str) -> None:
    with pytest.raises(QueryRefused, match=re.escape(words)):
        CHECKS[kind](decode(payload))


@pytest.mark.parametrize(("payload", "words"), FILTERS, ids=[f"filter-{i}" for i in range(len(FILTERS))])
def test_hostile_filter_is_refused_by_the_action_gate_before_any_read(payload: Any, words: str) -> None:
    action = AgentAction(action="run_query", action_input={"filter": payload, "limit": 0}, reasoning="probe")
    state = AgentState(connection_name="c", database="d", collection="c", options=AuditOptions())
    state.schema = object()  # type: ignore[assignment]  # only "has sampled" matters to the gate here
    verdict = action_gate().evaluate(parse_action(action), state)
    assert verdict.verdict == "FAIL"
    assert words in (verdict.critique or "")


@pytest.mark.parametrize("payload", [_dbref(**{"$where": JS}), {"$not": _dbref(**{"$where": JS})},
                                     {"$in": [_dbref(**{"$function": JS})]}])
def test_the_reported_dbref_smuggle_never_reaches_the_collection(make_target: Any, payload: Any) -> None:
    sent: list[Any] = []
    target = make_target([{"a": 1}])
    target.count_documents = lambda query: sent.append(query) or 0  # type: ignore[method-assign]
    with pytest.raises(QueryRefused, match=r"\$where|\$function"):
        run_query(target, RunQueryInput(filter={"a": payload}, limit=0))
    assert sent == []


ACCEPTED: list[Any] = [
    {"a": _dbref()},
    {"a": {"$in": [_dbref(), {"$ref": "users", "$id": {"$oid": "5f0000000000000000000001"}, "$db": "app"}]}},
    {"a": {"$regex": FORMATS["email"], "$options": "i"}},
    {"a": {"$not": {"$regex": PLACEHOLDER, "$options": "i"}}},
    {"$or": [{"a": {"$type": "string"}}, {"b": {"$exists": False}}]},
    {"a": {"$elemMatch": {"$gt": 1, "$lt": 5}}},
    {"$expr": {"$gt": [{"$strLenCP": "$a"}, 3]}},
    {"d": {"$lt": {"$date": "2020-01-01T00:00:00Z"}}, "k": {"$gt": {"$minKey": 1}}},
    *[{"a": {"$regex": pattern}} for pattern in FORMATS.values()],
]


@pytest.mark.parametrize("payload", ACCEPTED)
def test_plain_filters_pass_and_their_wire_bytes_hold_no_refused_operator(payload: Any) -> None:
    query = decode(payload)
    check_filter(query)
    wire = bson.encode({"filter": query})
    assert not any(op.encode() in wire for op in ("$where", "$function", "$accumulator", "$code"))


def test_plain_pipelines_pass() -> None:
    check_pipeline([{"$match": {"a": 1}}, {"$project": {"_id": 0, "v": "$a"}}, {"$unwind": "$v"},
                    {"$unwind": {"path": "$w", "includeArrayIndex": "i", "preserveNullAndEmptyArrays": True}},
                    {"$group": {"_id": "$v", "n": {"$sum": 1}}}, {"$sort": {"n": -1}}, {"$limit": 21},
                    {"$skip": 0}, {"$sample": {"size": 5}}, {"$sortByCount": "$v"},
                    {"$facet": {"top": [{"$limit": 1}], "totals": [{"$count": "n"}]}}])


@pytest.mark.parametrize("levels", [150, 450, 1000])
def test_deep_queries_from_a_planner_are_refused_and_the_report_still_serializes(make_target: Any,
                                                                                 levels: int) -> None:
    from argus.agent.loop import run_audit
    from tests.doubles.planner import ScriptedPlanner

    deep_and = _nest(levels, {"a": 1}, lambda v: {"$and": [v]})
    steps = [AgentAction(action="schema_sample", action_input={}, reasoning="sample"),
             AgentAction(action="run_query", action_input={"filter": deep_and, "limit": 1}, reasoning="deep"),
             AgentAction(action="get_stats", action_input={"field": "a", "operation": "count",
                                                           "filter": {"a": {"$in": [_nest(levels, 1, lambda v: [v])]}}},
                         reasoning="deep literal")]
    report = run_audit(make_target([{"a": i} for i in range(5)]), ScriptedPlanner(steps, then_conclude=False),
                       options=AuditOptions(max_iterations=3))
    assert [t.critique for t in report.trace[1:3]] == \
        ["the query is nested deeper than 100 levels; Argus refuses it unread"] * 2
    assert "nested deeper than 100 levels" in report.model_dump_json()
