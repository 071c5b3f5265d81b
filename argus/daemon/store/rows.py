"""What the store's tables hold, as the CLI, the HTTP API and the daemon read it: a stored
collection, a run's summary, a schedule firing's claim, a user's label."""

from __future__ import annotations

from datetime import datetime
from typing import NamedTuple
from uuid import UUID

from pydantic import BaseModel

from argus.agent.report import AuditReport

__all__ = ["LOST_RUN", "CollectionRef", "Label", "RunSummary", "TriggerClaim", "kind_of"]


class CollectionRef(NamedTuple):
    connection: str
    database: str
    collection: str

    def __str__(self) -> str:
        return f"{self.connection}/{self.database}.{self.collection}"


class RunSummary(BaseModel):
    id: UUID
    connection: str
    database: str
    collection: str
    schedule: str | None
    planner: str
    model: str | None
    started_at: datetime
    duration_s: float
    outcome: str
    termination_reason: str
    error: str | None
    findings: int
    new: int
    resolved: int
    queries_sent: int = 0
    passes: int = 0
    documents_examined: int = 0
    throttled: int = 0
    request_units: float | None = None


class TriggerClaim(BaseModel):
    """Who holds one firing of a schedule, and whether its run was stored or its lease ran out."""

    schedule: str
    slot: datetime
    replica: str
    run_id: UUID
    claimed_at: datetime
    stored: bool
    expired: bool


class Label(BaseModel):
    id: int
    fingerprint: str
    run_id: UUID
    finding_id: UUID
    field: str
    category: str
    verdict: str
    note: str | None
    affected_pct: float
    created_at: datetime


LOST_RUN = "lost: "  # how the error of a run recorded for a replica that died begins


def kind_of(report: AuditReport) -> str | None:
    """Which runs a run is compared with: the same window (its key), or None for the whole collection."""
    return report.window.key if report.window is not None else None
