"""Anomalies as findings, so they flow like any other: diff, alerts with routes and mutes, labels.

A health finding is judged against a baseline, not counted by an evidence query, so
``confirmed`` is False and its ``affected_pct`` is the size of the deviation (see
``Anomaly.magnitude``), which is what a user's label is compared with next time. Its evidence
query still says where to look: the documents inserted since the previous run, none newer than
the usual age, or the field's nulls.
"""

from __future__ import annotations

import math
from datetime import timedelta
from typing import Any

from bson import ObjectId

from argus.agent.findings import Category, Finding, Severity
from argus.agent.health.baseline import Anomaly
from argus.agent.health.models import HealthSnapshot, age_text
from argus.agent.history import HistoricalContext, fingerprint

__all__ = ["HEALTH_CATEGORIES", "anomaly_findings"]

HEALTH_CATEGORIES = frozenset({Category.VOLUME_ANOMALY, Category.FRESHNESS, Category.DISTRIBUTION_DRIFT,
                               Category.SEGMENT_CHANGE})


def anomaly_findings(anomalies: list[Anomaly], today: HealthSnapshot, *, where: tuple[str, str, str],
                     context: HistoricalContext | None) -> tuple[list[Finding], list[str]]:
    """Findings for ``anomalies``, and notes for those a user's label suppressed."""
    findings: list[Finding] = []
    notes: list[str] = []
    for anomaly in anomalies:
        category = Category(anomaly.kind)
        share = anomaly.magnitude
        fp = fingerprint(*where, anomaly.field, category)
        why = context.suppressed(fp, share) if context is not None else None
        if why is not None:
            notes.append(f"{category.value} on {anomaly.field} not reported: {why}")
            continue
        findings.append(Finding(
            field=anomaly.field, category=category, severity=_severity(anomaly),
            description=_describe(anomaly), hypothesis=_baseline_text(anomaly),
            evidence_query=_evidence(anomaly, today), affected_count=_affected(anomaly, today),
            affected_pct=share, confirmed=False))
    return findings, notes


def _severity(anomaly: Anomaly) -> Severity:
    if anomaly.kind == "distribution_drift" or anomaly.direction == "jump":
        return Severity.MEDIUM
    return Severity.HIGH


def _baseline_text(anomaly: Anomaly) -> str:
    if math.isinf(anomaly.z):
        return "the schedule's expected cadence"
    seasonal = {"weekday": " on the same weekday", "weekend": " on the same side of the weekend",
                "hour of day": " at the same hour of day", "day of month": " on the same day of the month"}.get(
        anomaly.season or "", " on the same weekday" if anomaly.seasonal else "")
    return (f"outside the baseline of {anomaly.baseline_runs} earlier runs{seasonal} "
            f"(robust z-score {anomaly.z:+.1f})")


def _describe(anomaly: Anomaly) -> str:
    if anomaly.kind == "volume_anomaly":
        return (f"{anomaly.direction}: {anomaly.value:.3g} documents per hour arrived since the previous run, "
                f"against a usual {anomaly.expected:.3g}")
    if anomaly.kind == "freshness":
        return (f"no new document for {age_text(anomaly.value)}; usually the newest is "
                f"{age_text(anomaly.expected)} old")
    return (f"{anomaly.field} {anomaly.metric} moved {anomaly.direction} to {anomaly.value:.3g} "
            f"from a usual {anomaly.expected:.3g}")



def _evidence(anomaly: Anomaly, today: HealthSnapshot) -> dict[str, Any]:
    source = today.time_source or "_id"
    field = source.removeprefix("sample:")
    if anomaly.kind == "volume_anomaly" and today.inserts_since is not None:
        return _newer_than(field, today.inserts_since.replace(microsecond=0) + timedelta(seconds=1))
    if anomaly.kind == "freshness":
        return _newer_than(field, today.at - timedelta(seconds=anomaly.expected))
    if anomaly.kind == "distribution_drift" and anomaly.metric == "null_share":
        return {anomaly.field: None}
    if anomaly.kind == "distribution_drift" and anomaly.metric.startswith("type:"):
        return {anomaly.field: {"$type": anomaly.metric.removeprefix("type:")}}
    return {}


def _newer_than(field: str, when: Any) -> dict[str, Any]:
    if field == "_id":
        return {"_id": {"$gte": {"$oid": str(ObjectId.from_datetime(when))}}}
    return {field: {"$gte": {"$date": when.isoformat().replace("+00:00", "Z")}}}


def _affected(anomaly: Anomaly, today: HealthSnapshot) -> int:
    if anomaly.kind == "volume_anomaly" and anomaly.span_h is not None:
        return round(abs(anomaly.value - anomaly.expected) * anomaly.span_h)
    if anomaly.kind == "distribution_drift" and not anomaly.metric.startswith("p"):
        return round(abs(anomaly.value - anomaly.expected) * today.documents)
    return 0
