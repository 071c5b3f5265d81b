"""A model's answer nested thousands of levels deep (in a tool call's arguments, in the text, in the
HTTP body, in an evaluator's verdict) is an invalid answer, never the end of the run: before, the
JSON parser's RecursionError ended it as ``failed``, and a hybrid run lost its rule sweep's findings."""

from __future__ import annotations

import json
from typing import Any

import pytest

from argus.agent.llm.options import LLMOptions
from argus.agent.loop import run_audit
from argus.agent.options import AuditOptions
from argus.agent.planners.factory import make_planner
from argus.agent.planners.heuristic import HeuristicPlanner
from argus.agent.report import AuditReport
from argus.agent.tools.target import AuditTarget
from tests.doubles.model_server import Reply, raw_reply, text_reply, tool_reply

DOCS = [{"age": i % 90, "email": f"user{i}@mail.org"} for i in range(100)] + [{"age": 999, "email": "n/a"}]
LEVELS = 5000


def _deep_filter() -> str:
    return '{"filter": ' + '{"$and": [' * LEVELS + '{"age": 1}' + ']}' * LEVELS + ', "limit": 0}'


def _deep_evidence() -> str:
    return ('{"field": "age", "category": "outlier_value", "severity": "high", "description": "x", '
            '"evidence_query": ' + '{"x": ' * LEVELS + '1' + '}' * LEVELS + ', "affected_count": 1, '
            '"affected_pct": 0.0099}')


ANSWERS: dict[str, Reply] = {
    "tool call arguments": tool_reply("run_query", _deep_filter()),
    "a finding's evidence": tool_reply("write_finding", _deep_evidence()),
    "reasoning": tool_reply("run_query", '{"filter": {}, "limit": 0, "reasoning": ' + "[" * LEVELS + "]" * LEVELS
                            + "}"),
    "text call": text_reply('{"name": "run_query", "arguments": ' + _deep_filter() + "}"),
    "text call list": text_reply('[{"name": "run_query", "arguments": ' + _deep_filter() + "}]"),
    "HTTP body": raw_reply(("[" * LEVELS + "]" * LEVELS).encode(), content_type="application/json"),
}


def _audit(target: AuditTarget, server: Any, kind: str, **llm: Any) -> AuditReport:
    settings = LLMOptions(**{"model": "m", "base_url": server.base_url, "timeout_s": 5.0, "max_retries": 0,
                             "fallback_after": 3, **llm})
    setup = make_planner(kind, llm=settings, sleep=lambda _s: None)  # type: ignore[arg-type]
    return run_audit(target, setup.planner, options=AuditOptions(time_budget_s=60), gates=setup.gates,
                     llm=setup.account)


@pytest.mark.parametrize("kind", ["llm", "hybrid"])
@pytest.mark.parametrize("where", sorted(ANSWERS))
def test_an_answer_nested_thousands_deep_is_an_invalid_answer_and_the_run_goes_on(make_target: Any, chat_server: Any,
                                                                                  kind: str, where: str) -> None:
    server = chat_server([ANSWERS[where], tool_reply("conclude", {"summary": "done"})],
                         default=tool_reply("conclude", {}))
    report = _audit(make_target(DOCS), server, kind)

    assert report.outcome == "succeeded" and report.error is None, report.error
    baseline = run_audit(make_target(DOCS), HeuristicPlanner())
    found = {(f.field, f.category) for f in report.findings}
    if kind == "hybrid":  # the rule sweep's findings are kept
        assert {(f.field, f.category) for f in baseline.findings} <= found and found
    assert report.llm is not None
    if where == "HTTP body":
        assert len(server.requests) >= 2  # a body that is no chat completion: the next turn asks again
    else:
        assert report.llm.invalid_answers == 1
        critique = server.requests[1].body["messages"][1]["content"]
        assert "nested deeper than 100 levels" in critique


def test_an_evaluator_verdict_nested_thousands_deep_leaves_the_rules_verdict(make_target: Any,
                                                                             chat_server: Any) -> None:
    outliers = {"age": {"$gt": 130}}
    plan = [tool_reply("run_query", {"filter": outliers, "limit": 0}),
            tool_reply("write_finding", {"field": "age", "category": "outlier_value", "severity": "high",
                                         "description": "impossible ages", "evidence_query": outliers,
                                         "affected_count": 1, "affected_pct": round(1 / 101, 6)})]

    def respond(body: dict[str, Any]) -> Reply:
        if "response_format" in body:  # the self-evaluation
            return text_reply('{"verdict": ' + "[" * LEVELS + "]" * LEVELS + "}")
        return plan.pop(0) if plan else tool_reply("conclude", {})

    report = _audit(make_target(DOCS), chat_server(respond), "llm", evaluators="balanced")
    assert report.outcome == "succeeded" and ("age", "outlier_value") in {(f.field, f.category.value)
                                                                          for f in report.findings}
    finding_gate = next(e for e in report.evaluations if e.gate == "finding")
    assert finding_gate.verdict == "WARN" and "self_eval skipped" in finding_gate.rules[-1].message


def test_a_deep_answer_costs_no_more_than_reading_it() -> None:
    from argus.agent.ejson import NestedTooDeep, parse_json

    with pytest.raises(NestedTooDeep, match="nested deeper than 100 levels"):
        parse_json("[" * 1_000_000 + "]" * 1_000_000)
    assert parse_json(json.dumps({"a": ["[", "{" * 500]})) == {"a": ["[", "{" * 500]}  # brackets inside strings
