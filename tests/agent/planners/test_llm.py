"""LLM and hybrid planners over the real openai client and the local server, end to end."""

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
from tests.doubles.model_server import Reply, error_reply, text_reply, tool_reply

DOCS = [{"age": i % 90, "email": f"user{i}@mail.org"} for i in range(100)] + [{"age": 999, "email": "n/a"}]
OUTLIERS = {"age": {"$gt": 130}}
FINDING = {"field": "age", "category": "outlier_value", "severity": "high", "description": "impossible ages",
           "evidence_query": OUTLIERS, "affected_count": 1, "affected_pct": round(1 / 101, 6)}
SCRIPT = [tool_reply("run_query", {"filter": OUTLIERS, "limit": 0}),
          tool_reply("write_finding", FINDING),
          tool_reply("run_query", {"filter": {"email": {"$exists": False}}, "limit": 0}),
          tool_reply("conclude", {"summary": "done"})]


def _audit(target: AuditTarget, server: Any, kind: str = "llm", options: AuditOptions | None = None,
           **llm: Any) -> AuditReport:
    settings = LLMOptions(**{"model": "gpt-4o-mini", "base_url": server.base_url, "timeout_s": 2.0,
                             "max_retries": 0, **llm})
    setup = make_planner(kind, llm=settings, sleep=lambda _s: None)  # type: ignore[arg-type]
    return run_audit(target, setup.planner, options=options, gates=setup.gates, llm=setup.account)


def test_the_model_plans_a_confirmed_finding(make_target: Any, chat_server: Any) -> None:
    server = chat_server(SCRIPT)
    report = _audit(make_target(DOCS), server)
    assert (report.outcome, report.planner, report.model) == ("succeeded", "llm", "gpt-4o-mini")
    assert [(f.field, f.category.value, f.affected_count) for f in report.findings] == [("age", "outlier_value", 1)]
    assert len(server.requests) == 4  # the sample costs no call
    assert report.llm is not None and report.llm.usage[0].calls == 4 and report.llm.fallback is None
    assert report.token_usage.input_tokens > 0 and report.cost_usd > 0


def test_the_first_prompt_already_holds_the_schema(make_target: Any, chat_server: Any) -> None:
    server = chat_server(SCRIPT)
    _audit(make_target(DOCS), server)
    first = server.requests[0].body["messages"][1]["content"]
    assert "# Schema" in first and "- age: int" in first and "- email: string" in first


def test_a_malformed_answer_becomes_a_critique_in_the_next_prompt(make_target: Any, chat_server: Any) -> None:
    server = chat_server([text_reply("I would look at ages."), *SCRIPT])
    report = _audit(make_target(DOCS), server)
    assert report.outcome == "succeeded" and report.llm is not None and report.llm.invalid_answers == 1
    retry = server.requests[1].body["messages"][1]["content"]
    assert "Your last answer was not a valid action: the answer is neither a tool call nor a JSON object" in retry


def test_an_invalid_action_is_rejected_by_the_gate_and_its_critique_sent(make_target: Any, chat_server: Any) -> None:
    server = chat_server([tool_reply("get_stats", {"field": "age", "operation": "median"}), *SCRIPT])
    report = _audit(make_target(DOCS), server)
    assert report.trace[1].outcome == "rejected"
    assert "get_stats.operation" in server.requests[1].body["messages"][1]["content"]


def test_after_consecutive_failures_the_heuristic_planner_finishes_the_run(make_target: Any,
                                                                           chat_server: Any) -> None:
    server = chat_server([], default=error_reply(500, "down"))
    report = _audit(make_target(DOCS), server, fallback_after=2)
    baseline = run_audit(make_target(DOCS), HeuristicPlanner())
    assert report.outcome == "succeeded" and len(server.requests) == 2
    assert report.llm is not None and report.llm.fallback is not None and "500" in report.llm.fallback
    assert any("the heuristic planner finished the run" in n for n in report.notes)
    assert [(f.field, f.category) for f in report.findings] == [(f.field, f.category) for f in baseline.findings]
    assert [e.action for e in report.trace].count("schema_sample") == 1  # the fallback does not sample again


def test_a_refused_configuration_falls_back_at_once(make_target: Any, chat_server: Any) -> None:
    server = chat_server([], default=error_reply(401, "bad key"))
    report = _audit(make_target(DOCS), server, fallback_after=5)
    assert report.outcome == "succeeded" and len(server.requests) == 1
    assert report.llm is not None and "401" in (report.llm.fallback or "")


def test_invalid_answers_count_towards_the_fallback(make_target: Any, chat_server: Any) -> None:
    server = chat_server([], default=text_reply("no idea"))
    report = _audit(make_target(DOCS), server, fallback_after=3)
    assert report.outcome == "succeeded" and report.llm is not None
    assert report.llm.invalid_answers == 3
    assert report.llm.fallback == "3 consecutive turns failed: 3 answers were no valid action"


def test_the_raw_failed_answers_are_in_the_trace_of_the_step_that_followed(make_target: Any,
                                                                           chat_server: Any) -> None:
    server = chat_server([], default=text_reply("no idea"))
    report = _audit(make_target(DOCS), server, fallback_after=3)
    after = report.trace[1]
    assert (after.proposed_by, after.failed_answers) == ("heuristic", ["no idea"] * 3)
    assert report.trace[0].proposed_by == "heuristic"  # the sample is a fixed first step, no model call


def test_the_trace_says_the_model_proposed_its_steps(make_target: Any, chat_server: Any) -> None:
    report = _audit(make_target(DOCS), chat_server(SCRIPT))
    assert [e.proposed_by for e in report.trace] == ["heuristic", "model", "model", "model", "model"]


def test_invalid_answers_and_gate_rejections_are_counted_apart(make_target: Any, chat_server: Any) -> None:
    premature = tool_reply("conclude", {"summary": "nothing to see"})  # the run gate wants coverage first
    server = chat_server([text_reply("no idea"), premature, text_reply("still no idea")],
                         default=text_reply("none"))
    report = _audit(make_target(DOCS), server, fallback_after=3)
    assert report.llm is not None
    assert report.llm.fallback == "3 consecutive turns failed: 2 answers were no valid action and 1 action was " \
                                  "rejected by the gates"


def test_the_token_budget_ends_the_run_as_partial(make_target: Any, chat_server: Any) -> None:
    server = chat_server(SCRIPT)
    report = _audit(make_target(DOCS), server, run_token_budget=7000)
    assert (report.outcome, report.termination_reason) == ("partial", "llm_budget")
    assert 1 <= len(server.requests) < 4 and report.token_usage.total_tokens <= 7000
    assert any("token budget of 7,000 would be exceeded" in n for n in report.notes)
    assert report.llm is not None and report.llm.budget_exhausted


def test_the_cost_budget_ends_the_run_before_any_call(make_target: Any, chat_server: Any) -> None:
    server = chat_server(SCRIPT)
    report = _audit(make_target(DOCS), server, model="gpt-4o", run_cost_budget_usd=0.001)
    assert (report.outcome, report.termination_reason, report.iterations) == ("partial", "llm_budget", 1)
    assert server.requests == [] and report.cost_usd == 0


def test_a_server_without_tool_calling_gets_a_json_schema_response_format(make_target: Any,
                                                                          chat_server: Any) -> None:
    as_json = [text_reply(json.dumps({"reasoning": "", "action": r.body["message"]["tool_calls"][0]["function"]["name"],
                                      "action_input": json.loads(r.body["message"]["tool_calls"][0]["function"]
                                                                 ["arguments"])}))
               for r in SCRIPT if r.body]
    server = chat_server([error_reply(400, "this model does not support tools"), *as_json])
    report = _audit(make_target(DOCS), server)
    assert report.outcome == "succeeded" and len(report.findings) == 1
    assert "tools" in server.requests[0].body and "tools" not in server.requests[1].body
    assert server.requests[1].body["response_format"]["type"] == "json_schema"


def test_hybrid_sweeps_with_rules_then_asks_the_model(make_target: Any, chat_server: Any) -> None:
    server = chat_server([tool_reply("conclude", {"summary": "nothing more"})])
    report = _audit(make_target(DOCS), server, kind="hybrid")
    baseline = run_audit(make_target(DOCS), HeuristicPlanner())
    assert (report.outcome, report.planner) == ("succeeded", "hybrid")
    assert {(f.field, f.category) for f in report.findings} == {(f.field, f.category) for f in baseline.findings}
    [request] = server.requests
    prompt = request.body["messages"][1]["content"]
    assert "# Rule sweep" in prompt and "The rule-based sweep has already run" in request.body["messages"][0]["content"]


def test_hybrid_resumes_the_sweep_when_the_model_is_down(make_target: Any, chat_server: Any) -> None:
    server = chat_server([], default=error_reply(503))
    report = _audit(make_target(DOCS), server, kind="hybrid", fallback_after=1)
    assert report.outcome == "succeeded" and report.llm is not None and report.llm.fallback


def _verdicts(verdicts: list[str], then: list[Reply]) -> Any:
    plan = list(then)
    seen: list[str] = []

    def respond(body: dict[str, Any]) -> Reply:
        if body.get("response_format", {}).get("json_schema", {}).get("name") == "verdict":
            seen.append(body["model"])
            verdict = verdicts.pop(0) if verdicts else "PASS"
            return text_reply(json.dumps({"verdict": verdict, "critique": f"{verdict.lower()}: severity too high"}))
        return plan.pop(0) if plan else tool_reply("conclude", {})

    respond.seen = seen  # type: ignore[attr-defined]
    return respond


def test_balanced_self_evaluation_can_dismiss_a_finding(make_target: Any, chat_server: Any) -> None:
    server = chat_server(_verdicts(["FAIL"], SCRIPT))
    report = _audit(make_target(DOCS), server, evaluators="balanced")
    assert report.findings == [] and report.dismissed_findings[0].critique == "fail: severity too high"
    finding_gate = next(e for e in report.evaluations if e.gate == "finding")
    assert finding_gate.evaluator == "rules+self" and finding_gate.rules[-1].rule == "self_eval"
    assert report.llm is not None and {x.purpose for x in report.llm.usage} == {"planner", "self_eval"}


def test_fast_profile_sends_no_evaluator_calls(make_target: Any, chat_server: Any) -> None:
    responder = _verdicts([], SCRIPT)
    _audit(make_target(DOCS), chat_server(responder), evaluators="fast")
    assert responder.seen == []


def test_thorough_profile_asks_an_independent_judge_at_the_run_gate(make_target: Any, chat_server: Any) -> None:
    responder = _verdicts([], SCRIPT)
    report = _audit(make_target(DOCS), chat_server(responder), evaluators="thorough", judge_model="judge-model")
    assert report.outcome == "succeeded" and responder.seen[-1] == "judge-model"
    run_gate = [e for e in report.evaluations if e.gate == "run"][-1]
    assert run_gate.evaluator == "rules+self+judge" and [r.rule for r in run_gate.rules][-2:] == ["self_eval", "judge"]
    assert report.llm is not None and ("judge", "judge-model") in {(x.purpose, x.model) for x in report.llm.usage}


def test_an_evaluator_that_is_down_leaves_the_rules_verdict(make_target: Any, chat_server: Any) -> None:
    plan = list(SCRIPT)

    def respond(body: dict[str, Any]) -> Reply:
        if "response_format" in body:
            return error_reply(503)
        return plan.pop(0) if plan else tool_reply("conclude", {})

    report = _audit(make_target(DOCS), chat_server(respond), evaluators="balanced")
    assert report.outcome == "succeeded" and len(report.findings) == 1
    finding_gate = next(e for e in report.evaluations if e.gate == "finding")
    assert finding_gate.verdict == "WARN" and "self_eval skipped" in finding_gate.rules[-1].message


@pytest.mark.parametrize("kind", ["llm", "hybrid"])
def test_persistent_patterns_are_replayed_without_a_model_call(kind: str, make_target: Any, chat_server: Any) -> None:
    from datetime import UTC, datetime
    from uuid import uuid4

    from argus.agent.findings import Category, Severity
    from argus.agent.history import PastFinding, PastRun, build_context, fingerprint

    fp = fingerprint("local", "testdb", "ages", "age", Category.OUTLIER_VALUE)
    past = PastFinding(fingerprint=fp, field="age", category=Category.OUTLIER_VALUE, severity=Severity.HIGH,
                       affected_count=1, affected_pct=0.0099, evidence_query=OUTLIERS)
    runs = [PastRun(run_id=uuid4(), started_at=datetime(2026, 1, d, tzinfo=UTC), outcome="succeeded",
                    findings=[past]) for d in (1, 2)]
    server = chat_server([], default=tool_reply("conclude", {}))
    settings = LLMOptions(model="gpt-4o-mini", base_url=server.base_url, max_retries=0)
    setup = make_planner(kind, llm=settings)  # type: ignore[arg-type]
    report = run_audit(make_target(DOCS, name="ages"), setup.planner, gates=setup.gates, llm=setup.account,
                       historical_context=build_context(runs, {}))
    assert [e.action for e in report.trace][:3] == ["schema_sample", "count_many", "write_finding"]
    assert report.trace[2].outcome == "committed"


def test_a_failed_answer_is_logged_without_its_values_even_in_full_privacy(make_target: Any, chat_server: Any,
                                                                            capsys: Any) -> None:
    leaky = text_reply('I would count "user7@mail.org" and the age 4417.25 next.')
    server = chat_server([leaky, *SCRIPT])
    report = _audit(make_target(DOCS), server, options=AuditOptions(privacy="full"))
    logged = capsys.readouterr().out
    # A number with a decimal point: a run id or timestamp in the log cannot hold it by chance ("999" could).
    assert "llm_answer_invalid" in logged and "user7@mail.org" not in logged and "4417.25" not in logged
    assert report.trace[1].failed_answers == ['I would count "user7@mail.org" and the age 4417.25 next.']


def test_an_endpoint_nothing_listens_on_is_given_up_at_once_without_retries(make_target: Any) -> None:
    """Connection refused cost ~23 s of retries and backoff before the heuristic planner took over."""
    from tests.daemon.process import free_port

    waits: list[float] = []
    settings = LLMOptions(model="m", base_url=f"http://127.0.0.1:{free_port()}/v1", timeout_s=5.0, max_retries=3)
    setup = make_planner("llm", llm=settings, sleep=waits.append)
    report = run_audit(make_target(DOCS), setup.planner, options=AuditOptions(), gates=setup.gates, llm=setup.account)

    assert report.outcome == "succeeded" and waits == []
    assert report.llm is not None and report.llm.fallback is not None
    assert "Connection refused; nothing answers at the base URL (check base_url" in report.llm.fallback
    assert report.llm.fallback_iteration == 1   # the first turn after the sample
