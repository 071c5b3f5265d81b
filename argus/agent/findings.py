"""Findings: the vocabulary (categories, severities) and the model a report carries."""

from __future__ import annotations

from enum import StrEnum
from typing import Any, Literal
from uuid import UUID, uuid4

from pydantic import BaseModel, ConfigDict, Field

from argus.agent.segments.models import SegmentBreakdown
from argus.agent.window import Window

__all__ = ["Category", "FailingDocument", "FailingDocuments", "Finding", "Severity", "WriteFindingInput",
           "severity_at_least"]


class Category(StrEnum):
    NULL_RATE = "null_rate"
    TYPE_MISMATCH = "type_mismatch"
    OUTLIER_VALUE = "outlier_value"
    ENUM_VIOLATION = "enum_violation"
    FORMAT_VIOLATION = "format_violation"
    DUPLICATE_VALUE = "duplicate_value"
    EMPTY_VALUE = "empty_value"
    SCHEMA_DRIFT = "schema_drift"
    CROSS_FIELD = "cross_field"
    ORPHAN_REFERENCE = "orphan_reference"  # a value that names no document of the collection it references
    # Collection health against the baseline of earlier runs (argus.agent.health), not a document defect:
    VOLUME_ANOMALY = "volume_anomaly"
    FRESHNESS = "freshness"
    DISTRIBUTION_DRIFT = "distribution_drift"
    # A schedule's own metric (metrics:) outside what it declared to expect (argus.agent.custom_metrics):
    METRIC_BREACH = "metric_breach"
    SEGMENT_CHANGE = "segment_change"  # a segment (segments.by) appeared or disappeared


class Severity(StrEnum):
    """``critical`` needs at least 1% of documents affected (the finding gate enforces it)."""

    LOW = "low"
    MEDIUM = "medium"
    HIGH = "high"
    CRITICAL = "critical"

    @property
    def rank(self) -> int:
        return _RANK[self]


_RANK = {Severity.LOW: 0, Severity.MEDIUM: 1, Severity.HIGH: 2, Severity.CRITICAL: 3}


def severity_at_least(severity: Severity, threshold: Severity) -> bool:
    return severity.rank >= threshold.rank


class WriteFindingInput(BaseModel):
    """What a planner passes to ``write_finding``; the loop turns it into a ``Finding``."""

    model_config = ConfigDict(extra="forbid")

    field: str = Field(min_length=1)
    category: Category
    severity: Severity
    description: str = Field(min_length=1)
    hypothesis: str = ""
    evidence_query: dict[str, Any] = Field(
        description="MongoDB filter (Extended JSON) that matches the affected documents")
    affected_count: int = Field(ge=0)
    affected_pct: float = Field(ge=0.0, le=1.0, description="fraction of the collection, not a percentage")
    sample_values: list[Any] = Field(default_factory=list)
    confirmed: bool = True
    rule: str | None = Field(None, description="the declared rule(s) this finding reports, as 'file:line field "
                                               "rule' joined by '; '; None for an inferred finding")


class FailingDocument(BaseModel):
    """One document the finding's evidence query matched: its ``_id`` and the finding field's values
    in it, each as the privacy mode lets it be written (``None`` and ``[]`` where it withholds them)."""

    id: Any = None
    values: list[Any] = Field(default_factory=list)


class FailingDocuments(BaseModel):
    """The first documents the evidence query matched, read at audit time in the evidence pass
    (``argus.agent.tools.count_many``'s examples branch): what a user fixes the data from."""

    documents: list[FailingDocument] = Field(default_factory=list)
    read: int = Field(0, description="documents read (at most the run's failing_documents)")
    withheld: str | None = Field(None, description="why _ids or values are not shown (the privacy mode, the "
                                                   "run's bound)")


class Finding(WriteFindingInput):
    id: UUID = Field(default_factory=uuid4)
    window: Window | None = Field(None, description="a scoped audit: the documents it was counted in (its share "
                                                    "is of them); None: the whole collection")
    failing: FailingDocuments | None = Field(None, description="failing documents read with the evidence query; "
                                                               "None: none were read (see `finding show`)")
    masked_as: Literal["strict", "shapes", "full"] | None = Field(
        None, description="the privacy mode its evidence and values were written under by the run (which knew the "
                          "field's vocabulary); None: as found (a report stored before, masked again when shown)")
    segments: SegmentBreakdown | None = Field(None, description="the affected documents per segment, for a run "
                                                                "with segments (counted in the same pass)")
