"""ReplayFirst: patterns of earlier runs are re-checked, and their growth is never narrowed away."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any
from uuid import uuid4

from argus.agent.findings import Category, Severity
from argus.agent.history import HistoricalContext, PastFinding, PastRun, build_context, fingerprint
from argus.agent.loop import run_audit
from argus.agent.planners.replay import ReplayFirst
from argus.agent.state import AgentAction, AgentState
from argus.agent.tools.target import AuditTarget
from tests.doubles.planner import ScriptedPlanner

NEGATIVE = {"amount": {"$lt": 0}}


def _docs(negatives: int) -> list[dict[str, Any]]:
    return [{"amount": -5.0 - i if i < negatives else 10.0 + i} for i in range(400)]


def _seen(target: AuditTarget, runs: int = 1) -> HistoricalContext:
    """History with ``runs`` earlier runs that committed negative amounts on 4 documents."""
    fp = fingerprint(target.connection_name, target.database, target.name, "amount", "outlier_value")
    past = PastFinding(fingerprint=fp, field="amount", category=Category.OUTLIER_VALUE, severity=Severity.MEDIUM,
                       affected_count=4, affected_pct=0.01, evidence_query=NEGATIVE)
    return build_context([PastRun(run_id=uuid4(), started_at=datetime(2026, 1, day, tzinfo=UTC), outcome="succeeded",
                                  findings=[past]) for day in range(1, runs + 1)], {})


def _write(query: dict[str, Any], count: int) -> Callable[[AgentState], AgentAction]:
    return lambda state: AgentAction(action="write_finding", action_input={
        "field": "amount", "category": "outlier_value", "severity": "medium", "description": "amount below the fence",
        "evidence_query": query, "affected_count": count, "affected_pct": round(count / state.collection_size, 6)})


def _inner(query: dict[str, Any], count: int) -> ScriptedPlanner:
    return ScriptedPlanner([AgentAction(action="schema_sample", action_input={"sample_size": 100}),
                            AgentAction(action="run_query", action_input={"filter": query, "limit": 0}),
                            _write(query, count)])


def test_a_pattern_seen_in_one_earlier_run_is_rechecked_with_todays_count(
        make_target: Callable[..., AuditTarget]) -> None:
    target = make_target(_docs(negatives=80))
    report = run_audit(target, ReplayFirst(ScriptedPlanner([AgentAction(action="schema_sample")])),
                       historical_context=_seen(target, runs=1))
    assert [(f.field, f.category.value, f.affected_count, f.evidence_query) for f in report.findings] == [
        ("amount", "outlier_value", 80, NEGATIVE)]


def test_a_narrower_finding_does_not_replace_the_replayed_one(make_target: Callable[..., AuditTarget]) -> None:
    target = make_target(_docs(negatives=80))
    narrow = {"amount": {"$lt": -60}}
    report = run_audit(target, ReplayFirst(_inner(narrow, 24)), historical_context=_seen(target, runs=2))
    assert [(f.affected_count, f.evidence_query) for f in report.findings] == [(80, NEGATIVE)]


def test_a_finding_matching_as_many_documents_replaces_the_replayed_one(
        make_target: Callable[..., AuditTarget]) -> None:
    target = make_target(_docs(negatives=80))
    wider = {"amount": {"$lte": 0}}
    report = run_audit(target, ReplayFirst(_inner(wider, 80)), historical_context=_seen(target, runs=2))
    assert [(f.affected_count, f.evidence_query) for f in report.findings] == [(80, wider)]
