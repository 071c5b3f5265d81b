"""Audit one collection on the real server and the same documents on the in-process engine, alike."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from agent.clock import ManualClock
from agent.loop import run_audit
from agent.options import AuditOptions
from agent.planners.heuristic import HeuristicPlanner
from agent.report import AuditReport
from agent.tools.target import AuditTarget

NOW = datetime(2026, 11, 26, 12, tzinfo=UTC)


def audit(collection: Any, **target: Any) -> AuditReport:
    """The heuristic planner's audit of ``collection`` (a pymongo or an engine collection) at ``NOW``."""
    clock = ManualClock(NOW)
    return run_audit(AuditTarget(collection, connection_name="it", **target), HeuristicPlanner(clock=clock),
                     clock=clock, options=AuditOptions(time_budget_s=600, max_iterations=1000))


def findings(report: AuditReport) -> set[tuple[str, str, int]]:
    return {(f.field, f.category.value, f.affected_count) for f in report.findings}


def copy_into(documents: list[dict[str, Any]], collection: Any) -> None:
    """The test's own setup: write ``documents`` to the server (Argus itself never writes)."""
    collection.drop()
    for start in range(0, len(documents), 1000):
        collection.insert_many([dict(d) for d in documents[start:start + 1000]])
