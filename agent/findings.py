"""Findings: the vocabulary (categories, severities) and the model a report carries."""

from __future__ import annotations

from enum import StrEnum
from typing import Any
from uuid import UUID, uuid4

from pydantic import BaseModel, ConfigDict, Field

from agent.segments.models import SegmentBreakdown
from agent.window import Window

__all__ = ["Category", "Finding", "Severity", "WriteFindingInput", "severity_at_least"]


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
    # Collection health against the baseline of earlier runs (agent.health), not a document defect:
    VOLUME_ANOMALY = "volume_anomaly"
    FRESHNESS = "freshness"
    DISTRIBUTION_DRIFT = "distribution_drift"
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


class Finding(WriteFindingInput):
    id: UUID = Field(default_factory=uuid4)
    window: Window | None = Field(None, description="a scoped audit: the documents it was counted in (its share "
                                                    "is of them); None: the whole collection")
    segments: SegmentBreakdown | None = Field(None, description="the affected documents per segment, for a run "
                                                                "with segments (counted in the same pass)")
