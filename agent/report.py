"""``AuditReport``: the one model that is the report JSON, the stored record and the HTTP output."""

from __future__ import annotations

from datetime import datetime
from importlib.metadata import PackageNotFoundError, version
from typing import Any, Literal
from uuid import UUID

from pydantic import BaseModel, Field

from agent.findings import Finding, Severity, severity_at_least
from agent.history import FieldProfile, RunDiff
from agent.llm.usage import LLMSummary
from agent.options import AuditOptions
from agent.state import DismissedFinding, EvaluationRecord, TokenUsage, Verdict
from agent.tools.registry import ActionName

__all__ = ["ARGUS_VERSION", "AuditReport", "Outcome", "TerminationReason", "TraceEntry"]

try:
    ARGUS_VERSION = version("argus-dq")
except PackageNotFoundError:  # running from a source tree without installing
    ARGUS_VERSION = "0.0.0+source"

Outcome = Literal["succeeded", "partial", "failed"]
TerminationReason = Literal["concluded", "iteration_budget", "time_budget", "llm_budget", "interrupted", "error"]


class TraceEntry(BaseModel):
    """One iteration: what was proposed, how the gates judged it, and what came of it."""

    iteration: int
    action: ActionName
    reasoning: str = ""
    action_input: dict[str, Any] = Field(default_factory=dict)
    verdict: Verdict = Field(description="the action gate's verdict")
    critique: str | None = None
    outcome: Literal["ok", "error", "rejected", "committed", "dismissed", "concluded", "run_rejected"]
    observation: str = Field("", description="a summary without document values")
    finding_id: UUID | None = None
    duration_ms: float = 0.0


class AuditReport(BaseModel):
    run_id: UUID
    argus_version: str = ARGUS_VERSION
    connection: str
    database: str
    collection: str
    schedule: str | None = None
    scheduled_for: datetime | None = Field(None, description="when the trigger was due to fire (after jitter); "
                                                             "None for an ad-hoc run")
    replica: str | None = Field(None, description="the daemon process that ran it")
    planner: str
    model: str | None = None
    started_at: datetime
    finished_at: datetime
    duration_s: float
    outcome: Outcome
    termination_reason: TerminationReason
    error: str | None = None
    iterations: int
    options: AuditOptions
    documents_sampled: int
    collection_size: int
    fields_total: int
    fields_investigated: int
    findings: list[Finding] = Field(default_factory=list)
    dismissed_findings: list[DismissedFinding] = Field(default_factory=list)
    trace: list[TraceEntry] = Field(default_factory=list)
    evaluations: list[EvaluationRecord] = Field(default_factory=list)
    token_usage: TokenUsage = Field(default_factory=TokenUsage)
    cost_usd: float = 0.0
    llm: LLMSummary | None = Field(None, description="model calls per purpose and model, fallback, budgets; "
                                                     "None for a run without a language model")
    notes: list[str] = Field(default_factory=list)
    profiles: list[FieldProfile] = Field(default_factory=list, description="each sampled field's shape in this run "
                                                                          "(the next runs' healthy baselines)")
    diff: RunDiff | None = Field(None, description="against the previous successful run, once stored")

    def worst_severity(self) -> Severity | None:
        return max((f.severity for f in self.findings), key=lambda s: s.rank, default=None)

    def findings_at_or_above(self, threshold: Severity) -> list[Finding]:
        return [f for f in self.findings if severity_at_least(f.severity, threshold)]
