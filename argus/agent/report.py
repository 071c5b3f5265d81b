"""``AuditReport``: the one model that is the report JSON, the stored record and the HTTP output."""

from __future__ import annotations

from datetime import datetime
from importlib.metadata import PackageNotFoundError, version
from typing import Any, Literal
from uuid import UUID

from pydantic import BaseModel, Field, PrivateAttr, field_validator, model_validator

from argus.agent.contracts.model import ContractReport
from argus.agent.custom_metrics.models import MetricResult
from argus.agent.ejson import bounded
from argus.agent.findings import Finding, Severity, severity_at_least
from argus.agent.health.models import HealthSnapshot
from argus.agent.history import RunDiff
from argus.agent.llm.usage import LLMSummary
from argus.agent.options import AuditOptions
from argus.agent.secrets import SECRETS
from argus.agent.shapes.models import Shapes
from argus.agent.state import DismissedFinding, EvaluationRecord, TokenUsage, UnansweredCheck, Verdict
from argus.agent.tools.accounting import DatabaseCost
from argus.agent.tools.registry import ActionName
from argus.agent.window import AuditWindow

__all__ = ["ARGUS_VERSION", "AuditReport", "Outcome", "TerminationReason", "TraceEntry"]

try:
    ARGUS_VERSION = version("argus-dq")
except PackageNotFoundError:  # running from a source tree without installing
    ARGUS_VERSION = "0.0.0+source"

Outcome = Literal["succeeded", "partial", "failed"]
TerminationReason = Literal["concluded", "iteration_budget", "time_budget", "llm_budget", "ru_budget", "interrupted",
                            "error"]


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
    proposed_by: str | None = Field(None, description="model, heuristic or replay, when the planner mixes them")
    failed_answers: list[str] = Field(default_factory=list, description="model answers that were no valid action "
                                                                        "before this step (masked, cut)")

    @field_validator("action_input", mode="before")
    @classmethod
    def _bounded_depth(cls, value: Any) -> Any:
        """A planner's input is kept as proposed, but nesting past 100 levels is cut so the report serializes."""
        return bounded(value)


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
    window: AuditWindow | None = Field(None, description="a scoped audit: the documents it read (field, since, "
                                                         "count, whether an index leads with the field); None: "
                                                         "the whole collection")
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
    database_cost: DatabaseCost = Field(default_factory=DatabaseCost,
                                        description="operations sent to the audited database, passes, documents "
                                                    "examined, throttles, Cosmos DB request units")
    notes: list[str] = Field(default_factory=list)
    unanswered_checks: list[UnansweredCheck] = Field(
        default_factory=list, description="planned checks that got no answer (refused, timed out, not asked within "
                                          "the budgets): the run is partial and a baseline only for the others")
    diff: RunDiff | None = Field(None, description="against the previous successful run, once stored")
    health: HealthSnapshot | None = Field(None, description="the collection's volume, freshness and field shares, "
                                                            "measured during this run")
    contract: ContractReport | None = Field(None, description="each declared rule of the run's contract with its "
                                                              "result; None for a run without a contract")
    metrics: list[MetricResult] = Field(default_factory=list, description="the schedule's own metrics: each "
                                        "value (per segment for a grouped pipeline) and its verdict")
    shapes: Shapes | None = Field(None, description="the collection's shapes (discriminator, each shape's paths and "
                                                     "share), type mixes and renamed fields, from the sample")
    _replay_evidence: dict[UUID, dict[str, Any]] = PrivateAttr(default_factory=dict)

    @property
    def replay_evidence(self) -> dict[UUID, dict[str, Any]]:
        """Finding id -> the evidence query as run, for findings whose written evidence was masked by
        the privacy mode. Never serialized: it lives as long as this object (see the runner)."""
        return self._replay_evidence

    @model_validator(mode="before")
    @classmethod
    def _without_secrets(cls, data: Any) -> Any:
        """Configured secrets are masked in every report built or loaded: an error, a note or a
        trace observation may quote a connection string or an endpoint echoing a key."""
        return SECRETS.scrub(data)

    def worst_severity(self) -> Severity | None:
        return max((f.severity for f in self.findings), key=lambda s: s.rank, default=None)

    def findings_at_or_above(self, threshold: Severity) -> list[Finding]:
        return [f for f in self.findings if severity_at_least(f.severity, threshold)]
