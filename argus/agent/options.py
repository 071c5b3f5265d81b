"""Knobs for one audit. ``config.Settings`` and schedules build these; the agent only reads them."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from argus.agent.custom_metrics.models import MetricSpec
from argus.agent.failing_bounds import FAILING_DEFAULT, FAILING_MAX, FAILING_PER_RUN
from argus.agent.findings import Severity
from argus.agent.health.models import HealthOptions
from argus.agent.segments.models import SegmentOptions

__all__ = ["FAILING_DEFAULT", "FAILING_MAX", "FAILING_PER_RUN", "AuditOptions", "PrivacyMode", "ScopeOptions"]

PrivacyMode = Literal["strict", "shapes", "full"]



class ScopeOptions(BaseModel):
    """A scoped audit reads documents ``since_s`` back from its start, on ``field`` (None: ``_id``'s
    ObjectId time); see ``argus.agent.window``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    field: str | None = Field(None, description="a date field recording when a document arrived; default: the "
                                                "ObjectId time of _id")
    since_s: float = Field(gt=0, description="the window reaches this many seconds back from the run's start")


class AuditOptions(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    sample_size: int = Field(1000, ge=1, le=10_000, description="documents schema_sample reads")
    max_iterations: int = Field(200, ge=1, description="planner actions before the run ends as partial")
    time_budget_s: float = Field(300.0, gt=0, description="wall-clock seconds before the run ends as partial")
    max_time_ms: int = Field(10_000, ge=1, description="server time limit of every query")
    min_field_coverage: float = Field(0.8, ge=0.0, le=1.0,
                                      description="share of sampled fields a query must touch before conclude")
    critical_min_share: float = Field(0.01, ge=0.0, le=1.0, description="critical needs at least this share affected")
    privacy: PrivacyMode = "shapes"
    failing_documents: int = Field(FAILING_DEFAULT, ge=0, le=FAILING_MAX,
                                   description="_ids of failing documents each finding keeps (read in the "
                                               "evidence pass); 0: none")
    ru_budget: float | None = Field(None, gt=0, description="Cosmos DB request units per run before it ends as "
                                                             "partial (reason ru_budget); None: unlimited")
    fail_on: Severity | None = Severity.HIGH
    health: HealthOptions = Field(default_factory=HealthOptions)
    scope: ScopeOptions | None = Field(None, description="read only recent documents; None: the whole collection")
    metrics: tuple[MetricSpec, ...] = Field((), description="the schedule's own metrics: one read each, judged "
                                                            "(argus.agent.custom_metrics)")
    segments: SegmentOptions | None = Field(None, description="count, judge and break findings down by these "
                                                              "fields' values; None: the collection as one")
