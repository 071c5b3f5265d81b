"""What one run measures of a collection's health, and the knobs of its baselines."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from argus.agent.segments.models import SegmentHealth

__all__ = ["ExcludedSpan", "FieldHealth", "HealthOptions", "HealthSnapshot", "age_text"]


class ExcludedSpan(BaseModel):
    """A span of time that neither raises anomalies nor enters a baseline: planned maintenance, a holiday."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    start: datetime
    end: datetime
    reason: str | None = None

    def overlaps(self, start: datetime, end: datetime) -> bool:
        return self.start < end and start < self.end


class HealthOptions(BaseModel):
    """Per schedule (``health:``); every key has a default that suits a collection written to daily."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    enabled: bool = True
    time_field: str | None = Field(None, description="a date field that records when a document arrived; "
                                                     "default: the ObjectId time of _id")
    cadence_s: float | None = Field(None, gt=0, description="new documents are expected at least this often; "
                                                            "longer without one is a freshness finding at once")
    window: int = Field(30, ge=3, le=365, description="earlier runs the baseline is learned from")
    min_history: int = Field(7, ge=3, description="earlier runs needed before a baseline may raise a finding")
    sensitivity: float = Field(3.0, gt=0, description="robust z-score (median and MAD) beyond which a value "
                                                      "is an anomaly; higher is quieter")
    seasonality: Literal["auto", "off"] = Field("auto", description="auto: compare with the same weekday when "
                                                                     "the window holds 3 or more of them")
    max_fields: int = Field(100, ge=0, le=1000, description="fields whose shares and quantiles are kept per run")
    field_metrics: bool = Field(False, description="export per-field null shares as metrics (a field label)")
    backfill: bool = Field(True, description="the first run builds the volume and freshness baselines from the time "
                                             "field's own history (one bucketing aggregation)")
    run_every_s: float | None = Field(None, gt=0, description="how often the audit runs (the schedule's trigger): "
                                                              "the spacing of the first run's baseline; None: daily")
    exclude: list[ExcludedSpan] = Field(default_factory=list, description="spans that neither raise anomalies nor "
                                                                          "enter a baseline")


class FieldHealth(BaseModel):
    path: str
    null_share: float = Field(description="null or missing, of documents sampled")
    types: dict[str, float] = Field(default_factory=dict, description="BSON type -> share of present values")
    distinct_share: float = Field(description="distinct / present values in the sample")
    quantiles: dict[str, float] = Field(default_factory=dict, description="p05, p50, p95 of a numeric field that is "
                                                                         "not identifier-like; absent in strict")


class HealthSnapshot(BaseModel):
    """One run's measurements. ``at`` is the audit's start; everything else was read during it."""

    at: datetime
    documents: int = Field(description="the server's (estimated) document count")
    inserts: int | None = Field(None, description="documents inserted since the previous snapshot, where the "
                                                  "ObjectId time of _id or an indexed time field tells")
    inserts_since: datetime | None = Field(None, description="what the previous snapshot counted arrivals up to: its "
                                                          "newest document time (in strict, the end of its minute)")
    newest_at: datetime | None = Field(None, description="time of the newest document (minute precision in strict)")
    freshness_s: float | None = Field(None, description="age of the newest document at ``at``")
    time_source: str | None = Field(None, description="where newest_at came from: '_id', an indexed field, or "
                                                      "'sample:<field>' when only the sample had it")
    usual_age_s: float | None = Field(None, description="the oldest the newest document usually is, from the "
                                                        "baseline (None before its minimum history)")
    documents_sampled: int = 0
    fields: list[FieldHealth] = Field(default_factory=list)
    scope: str | None = Field(None, description="a scoped run's window key: its field shares are of the window, "
                                                "compared only with runs of the same window")
    anomalies: list[str] = Field(default_factory=list, description="what this run reported as anomalous "
                                                                    "(volume_anomaly, freshness, "
                                                                    "distribution_drift:<field>): kept out of "
                                                                    "the baselines later runs are judged against")
    backfilled: bool = Field(False, description="built by a first run from the time field's history, not measured")
    segment_by: list[str] | None = Field(None, description="the fields naming this snapshot's segments")
    segments: list[SegmentHealth] = Field(default_factory=list, description="arrivals, newest document and "
                                                                            "documents per segment (top, then "
                                                                            "'other')")
    baseline_points: list[HealthSnapshot] = Field(
        default_factory=list, description="a first run: the earlier runs' measurements rebuilt from the time "
                                          "field's hourly counts, one per usual interval between runs")

    def field(self, path: str) -> FieldHealth | None:
        return next((f for f in self.fields if f.path == path), None)


def age_text(seconds: float) -> str:
    """``90`` → ``1.5m``: an age as people read it in reports and alerts."""
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds / size:.1f}{unit}"
    return f"{seconds:.0f}s"
