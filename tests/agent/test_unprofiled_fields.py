"""Fields the profiler did not record were never checked: a run that left some out says where and ends
partial. Before, a collection of 3,001 field paths reported 'fields 1999/1999' and succeeded."""

from __future__ import annotations

from typing import Any

from argus.agent.loop import run_audit
from argus.agent.options import AuditOptions
from argus.agent.planners.heuristic import HeuristicPlanner
from argus.agent.state import AgentAction
from tests.doubles.planner import ScriptedPlanner


def test_paths_past_two_thousand_are_named_and_the_run_is_partial(make_target: Any) -> None:
    # dynamic keys under one parent, whatever order the sample walks the documents in
    docs: list[dict[str, Any]] = [{"attrs": {f"k{j}": j for j in range(i * 1000, i * 1000 + 1000)}} for i in range(3)]
    report = run_audit(make_target(docs), ScriptedPlanner([AgentAction(action="schema_sample")]),
                       options=AuditOptions(min_field_coverage=0.0))

    assert (report.outcome, report.termination_reason) == ("partial", "concluded")
    assert report.fields_total == 1999  # 2,000 paths with _id
    [note] = [n for n in report.notes if "field paths" in n]
    assert note == ("the sample holds more than 2,000 field paths: at least 1,002 more were not profiled (1,002 "
                    "under attrs): those fields were not checked, so the run is partial")


def test_paths_cut_at_twenty_levels_are_named_and_the_run_is_partial(make_target: Any) -> None:
    deep: dict[str, Any] = {"leaf": 1}
    for _ in range(25):
        deep = {"n": deep}
    report = run_audit(make_target([{"a": 1, "deep": deep}] * 3),
                       ScriptedPlanner([AgentAction(action="schema_sample")]),
                       options=AuditOptions(min_field_coverage=0))

    assert report.outcome == "partial"
    assert any("1 paths are nested deeper than 20 levels and nothing below that depth was profiled (deep.n.n" in n
               for n in report.notes), report.notes


def test_a_collection_the_profiler_saw_whole_still_succeeds(make_target: Any) -> None:
    report = run_audit(make_target([{"a": i, "b": {"c": i}} for i in range(50)]), HeuristicPlanner())
    assert report.outcome == "succeeded" and not any("profiled" in n for n in report.notes)
