"""The loop's termination paths, critique injection, and what reaches the report."""

from __future__ import annotations

from typing import Any

import openai
import pytest
from pymongo.errors import ServerSelectionTimeoutError

from argus.agent.clock import ManualClock
from argus.agent.llm.client import OpenAIChat
from argus.agent.llm.errors import LLMTimeout
from argus.agent.llm.options import LLMOptions
from argus.agent.llm.usage import LLMAccount
from argus.agent.loop import run_audit
from argus.agent.options import AuditOptions
from argus.agent.planners.heuristic import HeuristicPlanner
from argus.agent.state import AgentAction, AgentState
from argus.agent.tools.target import AuditTarget
from tests.doubles.planner import ScriptedPlanner

DOCS = [{"age": i % 90, "email": f"user{i}@mail.org"} for i in range(100)] + [{"age": 999, "email": "n/a"}]


def _act(action: str, **inp: Any) -> AgentAction:
    return AgentAction(action=action, action_input=inp)  # type: ignore[arg-type]


SAMPLE = _act("schema_sample", sample_size=200)
COVER = _act("run_query", filter={"$or": [{"age": {"$gt": 130}}, {"email": "n/a"}]}, limit=0)


def _finding(**over: Any) -> AgentAction:
    inp = dict(field="age", category="outlier_value", severity="high", description="impossible ages",
               evidence_query={"$or": [{"age": {"$gt": 130}}, {"email": "n/a"}]}, affected_count=1,
               affected_pct=round(1 / 101, 6), sample_values=[999]) | over
    return _act("write_finding", **inp)


def test_accepted_conclusion_succeeds(make_target) -> None:  # type: ignore[no-untyped-def]
    report = run_audit(make_target(DOCS), ScriptedPlanner([SAMPLE, COVER, _finding()]))
    assert (report.outcome, report.termination_reason, report.iterations) == ("succeeded", "concluded", 4)
    assert [f.field for f in report.findings] == ["age"] and report.findings[0].affected_count == 1
    assert report.fields_investigated == report.fields_total == 2


def test_iteration_budget_ends_partial_with_findings_kept(make_target) -> None:  # type: ignore[no-untyped-def]
    queries = [_act("run_query", filter={"age": i}, limit=0) for i in range(10)]
    report = run_audit(make_target(DOCS), ScriptedPlanner([SAMPLE, COVER, _finding(), *queries]),
                       options=AuditOptions(max_iterations=5))
    assert (report.outcome, report.termination_reason, report.iterations) == ("partial", "iteration_budget", 5)
    assert len(report.findings) == 1 and len(report.trace) == 5
    assert report.notes == ["iteration budget of 5 ran out before the audit concluded"]


def test_time_budget_ends_partial(make_target) -> None:  # type: ignore[no-untyped-def]
    queries = [_act("run_query", filter={"age": i}, limit=0) for i in range(50)]
    report = run_audit(make_target(DOCS), ScriptedPlanner([SAMPLE, *queries]),
                       options=AuditOptions(time_budget_s=10), clock=ManualClock(tick=1.0))
    assert (report.outcome, report.termination_reason) == ("partial", "time_budget")
    assert 0 < report.iterations < 10


class _Unreachable:
    def __init__(self) -> None:
        self.database = type("D", (), {"name": "db"})()
        self.name = "c"

    def aggregate(self, *a: Any, **k: Any) -> Any:
        raise ServerSelectionTimeoutError("no servers available")


def test_unreachable_database_fails_the_run_with_its_error() -> None:
    report = run_audit(AuditTarget(_Unreachable()), HeuristicPlanner())
    assert (report.outcome, report.termination_reason) == ("failed", "error")
    assert report.error == "aggregate could not reach the database: ServerSelectionTimeoutError"


def test_planner_crash_fails_the_run(make_target) -> None:  # type: ignore[no-untyped-def]
    def boom(state: AgentState) -> AgentAction:
        raise RuntimeError("bug in planner")

    report = run_audit(make_target(DOCS), ScriptedPlanner([SAMPLE, boom]))
    assert report.outcome == "failed" and report.error == "planner failed: RuntimeError: bug in planner"
    assert report.iterations == 1


def test_rejected_action_injects_a_critique_and_the_loop_goes_on(make_target) -> None:  # type: ignore[no-untyped-def]
    seen: list[str | None] = []

    def look(state: AgentState) -> AgentAction:
        seen.append(state.last_critique)
        return COVER

    report = run_audit(make_target(DOCS), ScriptedPlanner([_act("run_query", filter={}), SAMPLE,
                                                            _act("run_query", filter={"$where": "1"}), look]))
    assert report.outcome == "succeeded"
    assert [t.outcome for t in report.trace[:3]] == ["rejected", "ok", "rejected"]
    assert report.trace[0].critique == "schema_sample must run before any other action"
    assert seen and "$where is refused" in (seen[0] or "")


def test_tool_error_is_an_observation_not_a_failure(make_target) -> None:  # type: ignore[no-untyped-def]
    observed: list[str] = []

    def look(state: AgentState) -> AgentAction:
        assert state.last_observation is not None
        observed.append(state.last_observation.kind)
        return COVER

    # a division by zero MongoDB refuses (code 16608): the engine's refusal mid-audit, as a server's
    bad = _act("run_query", filter={"$expr": {"$gt": [{"$divide": ["$age", 0]}, 1]}}, limit=0)
    report = run_audit(make_target(DOCS), ScriptedPlanner([SAMPLE, bad, look]))
    assert report.trace[1].outcome == "error" and observed == ["error"]
    assert report.outcome == "succeeded"


def test_unconfirmed_finding_is_dismissed_with_its_critique(make_target) -> None:  # type: ignore[no-untyped-def]
    report = run_audit(make_target(DOCS), ScriptedPlanner([SAMPLE, COVER, _finding(affected_count=7,
                                                                                   affected_pct=round(7 / 101, 6))]))
    assert report.findings == []
    assert len(report.dismissed_findings) == 1
    assert "differs from the evidence query's matched_count 1" in report.dismissed_findings[0].critique


def test_rejected_conclusion_keeps_the_run_going(make_target) -> None:  # type: ignore[no-untyped-def]
    report = run_audit(make_target(DOCS), ScriptedPlanner([SAMPLE, _act("conclude"), COVER]))
    assert [t.outcome for t in report.trace] == ["ok", "run_rejected", "ok", "concluded"]


def test_rewriting_a_finding_keeps_one_finding_with_one_id(make_target) -> None:  # type: ignore[no-untyped-def]
    report = run_audit(make_target(DOCS), ScriptedPlanner([SAMPLE, COVER, _finding(),
                                                            _finding(description="restated")]))
    assert len(report.findings) == 1 and report.findings[0].description == "restated"
    assert report.trace[2].finding_id == report.trace[3].finding_id == report.findings[0].id


def test_sample_values_follow_the_privacy_mode(make_target) -> None:  # type: ignore[no-untyped-def]
    steps = [SAMPLE, COVER, _finding(field="email", category="format_violation", sample_values=["n/a"])]
    shapes = run_audit(make_target(DOCS), ScriptedPlanner(list(steps)))
    strict = run_audit(make_target(DOCS), ScriptedPlanner(list(steps)), options=AuditOptions(privacy="strict"))
    full = run_audit(make_target(DOCS), ScriptedPlanner(list(steps)), options=AuditOptions(privacy="full"))
    assert shapes.findings[0].sample_values == ["shape:a/a"]
    assert strict.findings[0].sample_values == []
    assert full.findings[0].sample_values == ["n/a"]


def test_empty_collection_concludes_with_nothing_to_report(make_target) -> None:  # type: ignore[no-untyped-def]
    report = run_audit(make_target([]), HeuristicPlanner())
    assert (report.outcome, report.findings, report.collection_size) == ("succeeded", [], 0)


def test_trace_sample_values_follow_the_privacy_mode(make_target) -> None:  # type: ignore[no-untyped-def]
    finding = _finding(field="email", category="empty_value", severity="low", sample_values=["n/a"],
                       evidence_query={"email": "n/a"})
    script = [SAMPLE, _act("run_query", filter={"email": "n/a"}, limit=0), COVER, finding]
    strict = run_audit(make_target(DOCS), ScriptedPlanner(script), options=AuditOptions(privacy="strict"))
    shapes = run_audit(make_target(DOCS), ScriptedPlanner(script), options=AuditOptions(privacy="shapes"))
    [s_entry] = [e for e in strict.trace if e.action == "write_finding"]
    [h_entry] = [e for e in shapes.trace if e.action == "write_finding"]
    assert s_entry.outcome == "committed" and s_entry.action_input["sample_values"] == []
    assert h_entry.action_input["sample_values"] == ["shape:a/a"]


def test_what_a_planner_left_unchecked_reaches_the_reports_notes(make_target) -> None:  # type: ignore[no-untyped-def]
    note = "duplicates of order_no were not counted: grouping 2,000,000 values would take about 217 MB"
    planner = ScriptedPlanner([SAMPLE, COVER, _act("conclude", notes=[note])])
    report = run_audit(make_target(DOCS), planner)
    assert (report.outcome, report.notes) == ("succeeded", [note])
def test_a_check_the_in_process_engine_refuses_in_a_batch_makes_the_run_partial_and_is_named() -> None:
    """Issue 22: a batched check the engine refused used to leave the run `succeeded` with only a
    failed action in the trace. The other checks of the batch are still answered."""
    from argus.agent.engine import MemoryCollection

    batch = _act("count_many", queries=[{"filter": {"age": {"$gt": 130}}}, {"filter": {"email": "n/a"}},
                                        {"filter": {"$expr": {"$gt": [{"$divide": ["$age", 0]}, 1]}}}])
    report = run_audit(AuditTarget(MemoryCollection.of(DOCS)), ScriptedPlanner([SAMPLE, batch, COVER, _finding()]),
                       clock=ManualClock(), options=AuditOptions(min_field_coverage=0.0))

    assert (report.outcome, report.termination_reason) == ("partial", "concluded")
    [step] = [t for t in report.trace if t.action == "count_many"]
    assert step.outcome == "ok", step.observation
    assert [(c.fields, c.reason) for c in report.unanswered_checks] == [(["age"], "the server refused $divide")]
    assert "1 planned check(s) went unanswered, so the run is partial and resolves no earlier finding: age (the " \
           "server refused $divide)" in report.notes
    assert [f.field for f in report.findings] == ["age"]


def test_a_model_call_may_wait_for_the_budget_less_the_runs_wrap_up(make_target) -> None:  # type: ignore[no-untyped-def]
    """A model that never answers is cut off early enough for the run to judge and report within its
    budget: under load, wrapping up after a call cut at the very end took the report 1.07 s past it."""
    account = LLMAccount()
    seen: list[float | None] = []

    def look(state: AgentState) -> AgentAction:
        seen.append(account.time_left())
        return SAMPLE

    run_audit(make_target(DOCS), ScriptedPlanner([look]), clock=ManualClock(), llm=account,
              options=AuditOptions(time_budget_s=30))
    assert seen == [30 - 1.5]


def test_a_model_call_cut_short_by_the_budget_ends_the_run_partial_however_the_planner_answers(
        make_target) -> None:  # type: ignore[no-untyped-def]
    """The wrap-up reserve leaves the run time after a model call the budget cut short; the planner then
    concludes, but the audit did not finish: the run is partial (time_budget), exit 3, not 'succeeded'."""
    account = LLMAccount()
    clock = ManualClock()
    chat = OpenAIChat(openai.OpenAI(base_url="http://127.0.0.1:9/v1", api_key="unused", max_retries=0), model="m",
                      options=LLMOptions(), account=account)

    def late(state: AgentState) -> AgentAction:
        clock.advance(29)  # 1 s of the budget left, less than the 1.5 s wrap-up reserve
        return SAMPLE

    def ask(state: AgentState) -> AgentAction:
        with pytest.raises(LLMTimeout):
            chat.complete([{"role": "user", "content": "next?"}])
        return _act("conclude")

    report = run_audit(make_target(DOCS), ScriptedPlanner([late, ask]), clock=clock, llm=account,
                       options=AuditOptions(time_budget_s=30))
    assert (report.outcome, report.termination_reason) == ("partial", "time_budget")
