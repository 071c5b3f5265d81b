"""``Incident``: findings of one collection grouped into one problem with a status, an owner and a
history. The same model is the stored state, the CLI's ``--format json``, the HTTP answer and what
a webhook receives inside an ``IncidentNotice``. Document values never enter it: findings carry
field names, counts and the evidence query masked by their run's privacy mode.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal
from uuid import UUID

from pydantic import BaseModel, Field

from argus.agent.findings import Category, Severity
from argus.config.alerts import Grouping

__all__ = [
    "ACTIVE",
    "EventKind",
    "Incident",
    "IncidentEvent",
    "IncidentFinding",
    "IncidentNotice",
    "IncidentStatus",
    "NoticeKind",
]

IncidentStatus = Literal["open", "acknowledged", "resolved", "expected", "false_positive"]
ACTIVE: tuple[IncidentStatus, ...] = ("open", "acknowledged")  # findings join these; they resolve by themselves
EventKind = Literal["opened", "joined", "escalated", "finding_resolved", "finding_back", "resolved", "reopened",
                    "acknowledged", "expected", "false_positive", "reminded", "updated"]
NoticeKind = Literal["incident_opened", "incident_escalated", "incident_resolved", "incident_reopened",
                     "incident_reminder", "incident_refresh", "incident_updated"]


class IncidentFinding(BaseModel):
    """One pattern (a category on a field) inside an incident, as last seen."""

    fingerprint: str
    field: str
    category: Category
    severity: Severity
    state: Literal["active", "resolved"] = "active"
    affected_count: int
    affected_share: float
    notified_share: float = Field(description="its share when the incident was last sent (or when it joined): "
                                              "growth past the growth factor from here escalates")
    collection_size: int = Field(description="the documents its share is of: a scoped run's window, else the "
                                             "collection")
    evidence_query: dict[str, Any] = Field(description="masked by the run's privacy mode")
    evidence_redacted: bool = False
    first_run: UUID
    last_run: UUID = Field(description="the last run that found it: its evidence is there")
    last_finding: UUID = Field(description="the finding's id in last_run (labels point at it)")
    first_seen_at: datetime
    last_seen_at: datetime
    resolved_at: datetime | None = None
    evidence_url: str | None = Field(None, description="the stored run with its evidence (not stored: given "
                                                       "where a base URL is known)")


class IncidentEvent(BaseModel):
    id: int = Field(0, description="0 until stored")
    at: datetime
    kind: EventKind
    status: IncidentStatus = Field(description="the incident's status after the event")
    owner: str | None = None
    note: str | None = None
    run_id: UUID | None = None
    source: Literal["run", "cli", "http", "daemon"] = "run"
    detail: str = ""
    notice: NoticeKind | None = Field(None, description="the notification this event sends")


class Incident(BaseModel):
    id: int = Field(0, description="0 until stored")
    connection: str
    database: str
    collection: str
    grouping: Grouping
    group_key: str = Field("", description="'' per collection, else the category or the pattern's fingerprint")
    status: IncidentStatus = "open"
    severity: Severity
    notified_severity: Severity
    owner: str | None = None
    note: str | None = None
    schedule: str | None = None
    labels: dict[str, str] = Field(default_factory=dict, description="the schedule's labels when it opened")
    opened_at: datetime
    open_since: datetime
    opened_run: UUID
    last_run: UUID
    last_seen_at: datetime
    updated_at: datetime
    acknowledged_at: datetime | None = None
    resolved_at: datetime | None = None
    clean_runs: int = 0
    reopened: int = 0
    reminders: int = 0
    findings: list[IncidentFinding] = Field(default_factory=list)
    history: list[IncidentEvent] = Field(default_factory=list, description="oldest first (loaded on request)")

    @property
    def where(self) -> str:
        return f"{self.database}.{self.collection}"

    @property
    def active_findings(self) -> list[IncidentFinding]:
        return [f for f in self.findings if f.state == "active"]

    def finding(self, fp: str) -> IncidentFinding | None:
        return next((f for f in self.findings if f.fingerprint == fp), None)


class IncidentNotice(BaseModel):
    """What channels get about an incident: it opened, escalated, resolved (or was closed as expected
    or a false positive), reopened, waits unacknowledged (a reminder), or, for Alertmanager only, is
    still firing (a refresh, so its alert does not lapse before the incident ends)."""

    version: Literal[1] = 1
    dedup_key: str
    kind: NoticeKind
    title: str
    text: str
    severity: Severity
    occurred_at: datetime
    run_id: UUID | None = Field(None, description="the run that caused it (none for reminders and status changes)")
    run_url: str | None = None
    incident_url: str | None = None
    changes: list[str] = Field(default_factory=list, description="what escalated it, in words")
    incident: Incident

    @property
    def connection(self) -> str:
        return self.incident.connection

    @property
    def database(self) -> str:
        return self.incident.database

    @property
    def collection(self) -> str:
        return self.incident.collection

    @property
    def where(self) -> str:
        return self.incident.where
