"""``AgentState``: the mutable record of one run. Only the loop writes to it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal
from uuid import UUID, uuid4

from pydantic import BaseModel, ConfigDict, Field

from argus.agent.contracts.compile import Declared
from argus.agent.contracts.model import Contract
from argus.agent.contracts.results import Recorded
from argus.agent.findings import Finding
from argus.agent.options import AuditOptions
from argus.agent.shapes.models import ShapeCounts
from argus.agent.tools.models import LookupResult, SchemaSampleResult, StatsResult
from argus.agent.tools.registry import ActionName
from argus.agent.tools.write_finding import FindingsCollector
from argus.agent.window import AuditWindow

__all__ = [
    "AgentAction",
    "AgentState",
    "DismissedFinding",
    "EvaluationRecord",
    "Observation",
    "QueryRecord",
    "RuleResult",
    "TokenUsage",
    "UnansweredCheck",
    "Verdict",
]


class TokenUsage(BaseModel):
    model_config = ConfigDict(frozen=True)

    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    def __add__(self, other: TokenUsage) -> TokenUsage:
        return TokenUsage(input_tokens=self.input_tokens + other.input_tokens,
                          output_tokens=self.output_tokens + other.output_tokens,
                          cached_tokens=self.cached_tokens + other.cached_tokens)


class AgentAction(BaseModel):
    """One step a planner proposes: a tool name and its input, with the reason for it."""

    reasoning: str = ""
    action: ActionName
    action_input: dict[str, Any] = Field(default_factory=dict)
    confidence: float = Field(1.0, ge=0.0, le=1.0)
    proposed_by: str | None = Field(None, description="who proposed it: model, heuristic, replay (None: the planner)")
    failed_answers: list[str] = Field(default_factory=list, description="the model's answers before this one that "
                                                                        "were no valid action, masked and cut")


Verdict = Literal["PASS", "WARN", "FAIL"]


class RuleResult(BaseModel):
    rule: str
    verdict: Verdict
    message: str = ""


class EvaluationRecord(BaseModel):
    gate: Literal["action", "finding", "run"]
    iteration: int
    evaluator: str = "rules"
    verdict: Verdict
    rules: list[RuleResult] = Field(default_factory=list)

    @property
    def critique(self) -> str | None:
        failed = [r.message for r in self.rules if r.verdict == "FAIL"]
        return "; ".join(failed) if failed else None


class DismissedFinding(BaseModel):
    finding: Finding
    critique: str


class QueryRecord(BaseModel):
    """A read that ran: what it asked and what it found, for gates and planners."""

    iteration: int
    tool: ActionName
    key: str
    filter_key: str | None = None
    matched_count: int | None = None
    fields: list[str] = Field(default_factory=list)
    hints: list[str] = Field(default_factory=list, description="why a query that matched nothing may be wrong")


class UnansweredCheck(BaseModel):
    """A check a planner planned that got no answer (refused, timed out, not asked within the run's
    budgets): absence proves nothing for it, so the run is partial. Field names and a reason only."""

    tool: ActionName
    fields: list[str] = Field(default_factory=list)
    reason: str


@dataclass
class Observation:
    """What the last action produced, handed to the planner on its next turn."""

    kind: Literal["result", "error", "rejected", "finding_committed", "finding_dismissed", "run_rejected"]
    action: ActionName
    result: Any = None
    message: str = ""


@dataclass
class AgentState:
    connection_name: str
    database: str
    collection: str
    options: AuditOptions
    run_id: UUID = field(default_factory=uuid4)

    iteration: int = 0
    documents_sampled: int = 0
    collection_size: int = 0                     # the denominator of shares: the window's documents when scoped
    total_documents: int | None = None           # a scoped audit: the whole collection's
    window: AuditWindow | None = None
    schema: SchemaSampleResult | None = None

    queries_run: list[QueryRecord] = field(default_factory=list)
    executed_keys: dict[str, int] = field(default_factory=dict)
    evidence_counts: dict[str, int] = field(default_factory=dict)
    evidence_alone: set[str] = field(default_factory=set)  # ... of which counted by a query of its own
    failing_documents: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # key -> _id and field, read
    fields_investigated: set[str] = field(default_factory=set)
    unanswered: list[UnansweredCheck] = field(default_factory=list)  # planned checks that got no answer
    planner_notes: list[str] = field(default_factory=list)  # checks the planner left out, and why (its conclusion)
    shape_counts: ShapeCounts | None = None  # the planner's exact counts of the sample's shapes (its conclusion)

    history: list[AgentAction] = field(default_factory=list)
    last_observation: Observation | None = None
    last_critique: str | None = None

    findings: FindingsCollector = field(default_factory=FindingsCollector)
    dismissed_findings: list[DismissedFinding] = field(default_factory=list)
    evaluation_records: list[EvaluationRecord] = field(default_factory=list)

    total_usage: TokenUsage = field(default_factory=TokenUsage)
    usage_per_iteration: list[TokenUsage] = field(default_factory=list)
    historical_context: Any = None
    notes: list[str] = field(default_factory=list)  # for the report: what the run met on its way

    contract: Contract | None = None             # what the user declares of this collection
    declared: Declared | None = None             # ... compiled against the sample (set with it)
    statistics: dict[str, StatsResult] = field(default_factory=dict)  # stat key -> result, every statistic run
    lookups: dict[str, LookupResult] = field(default_factory=dict)    # "collection.field" -> reference lookups

    @property
    def iteration_budget(self) -> int:
        return self.options.max_iterations

    def recorded(self) -> Recorded:
        """What the run has counted so far, as a contract's verdicts read it."""
        return Recorded(counts=self.evidence_counts, statistics=self.statistics, lookups=self.lookups,
                        collection_size=self.collection_size, total_documents=self.total_documents)

    def unanswered_fields(self) -> set[str]:
        """Fields a planned check was about that got no answer: attempted, not covered."""
        return {path for check in self.unanswered for path in check.fields}

    def auditable_fields(self) -> list[str]:
        """Sampled paths a query can reach, without ``_id``: the denominator of field coverage."""
        if self.schema is None:
            return []
        return [f.path for f in self.schema.fields if f.queryable and f.path != "_id"]
