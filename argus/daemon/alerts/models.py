"""``Alert``: one event worth telling a person about, as queued in the outbox and sent to channels."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, Any, Literal
from uuid import UUID

from pydantic import BaseModel, Field, SerializerFunctionWrapHandler, TypeAdapter, model_serializer

from argus.agent.findings import Category, Severity
from argus.agent.segments.models import SegmentBreakdown
from argus.daemon.incidents.models import IncidentNotice

__all__ = ["NOTIFICATION", "Alert", "AlertKind", "Notification", "RoutedAlert", "dedup_key"]

AlertKind = Literal["new_finding", "new_persistent", "failed_runs"]


def dedup_key(kind: AlertKind, run_id: UUID, fingerprint: str | None) -> str:
    """Stable per (pattern, run, kind): every retry of one alert carries the same key."""
    return hashlib.sha256(f"{kind}:{run_id}:{fingerprint or '-'}".encode()).hexdigest()[:32]


class Alert(BaseModel):
    """What every channel renders. Values from documents appear only when the schedule's privacy
    mode is ``full`` (``sample_values``, the raw evidence query and the planner's description)."""

    version: Literal[1] = 1
    dedup_key: str
    kind: AlertKind
    title: str
    text: str
    severity: Severity
    run_id: UUID
    run_url: str | None = None
    occurred_at: datetime
    schedule: str | None = None
    labels: dict[str, str] = Field(default_factory=dict, description="the schedule's labels, for routing")
    connection: str
    database: str
    collection: str
    fingerprint: str | None = None
    field: str | None = None
    category: Category | None = None
    previous_severity: Severity | None = None
    affected_count: int | None = None
    affected_share: float | None = None
    collection_size: int | None = None
    evidence_query: dict[str, Any] | None = None
    evidence_redacted: bool = False
    sample_values: list[Any] = Field(default_factory=list)
    finding_id: UUID | None = None
    documents_command: str | None = Field(None, description="the command listing the finding's failing documents")
    documents_url: str | None = Field(None, description="the same from the daemon's HTTP API (with base_url)")
    failed_runs: int | None = None
    error: str | None = None
    segments: SegmentBreakdown | None = Field(None, description="the finding's documents per segment (labels "
                                                                "hashed in strict privacy)")

    @model_serializer(mode="wrap")
    def _without_empty_segments(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """A run without segments sends the payload it always sent (receivers match it exactly)."""
        data: dict[str, Any] = handler(self)
        if data.get("segments", 0) is None:
            del data["segments"]
        return data

    @property
    def where(self) -> str:
        return f"{self.database}.{self.collection}"


# What the outbox holds and channels render: a per-finding or failing-schedule alert, or an incident notice.
Notification = Annotated[Alert | IncidentNotice, Field(discriminator="kind")]
NOTIFICATION: TypeAdapter[Alert | IncidentNotice] = TypeAdapter(Notification)


@dataclass(frozen=True)
class RoutedAlert:
    """An alert and the channels the policy chose for it (what the outbox queues)."""

    alert: Notification
    channels: tuple[str, ...]
