"""Reports for store tests, built as the loop builds them."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any
from uuid import uuid4

from argus.agent.findings import Category, Finding, Severity
from argus.agent.options import AuditOptions
from argus.agent.report import AuditReport
from argus.agent.state import DismissedFinding, EvaluationRecord, RuleResult

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def finding(field: str, category: str = "null_rate", severity: str = "medium", count: int = 50,
            size: int = 5000) -> Finding:
    return Finding(field=field, category=Category(category), severity=Severity(severity), description=f"{field} bad",
                   hypothesis="h", evidence_query={field: None}, affected_count=count, affected_pct=count / size,
                   sample_values=["x"])


def report(findings: list[Finding] | None = None, *, minutes: int = 0, outcome: str = "succeeded",
           collection: str = "orders", dismissed: list[tuple[Finding, str]] | None = None, **over: Any) -> AuditReport:
    started = T0 + timedelta(minutes=minutes)
    reason = {"succeeded": "concluded", "partial": "iteration_budget", "failed": "error"}[outcome]
    return AuditReport(
        run_id=uuid4(), connection="main", database="shop", collection=collection, planner="heuristic",
        started_at=started, finished_at=started + timedelta(seconds=3), duration_s=3.0, outcome=outcome,
        termination_reason=reason, error="boom" if outcome == "failed" else None, iterations=10,
        options=AuditOptions(), documents_sampled=1000, collection_size=5000, fields_total=5, fields_investigated=5,
        findings=findings or [],
        dismissed_findings=[DismissedFinding(finding=f, critique=c) for f, c in dismissed or []],
        evaluations=[EvaluationRecord(gate="action", iteration=0, verdict="PASS",
                                      rules=[RuleResult(rule="known_field", verdict="WARN", message="m")])],
        **over)
