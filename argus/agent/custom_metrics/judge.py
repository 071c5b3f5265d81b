"""A metric's value against what its spec expects, and a breach as a finding.

``anomaly: true`` learns its baseline with ``argus.agent.health.baseline.learn``, the engine collection
volume is judged by: robust centre and spread, seasonality, a floor under the spread. Values an
earlier run reported as anomalous, and values measured inside a ``health.exclude`` span, stay out
of it, as they do for volume.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from argus.agent.custom_metrics.models import BREACHES, MetricPoint, MetricResult, MetricSpec, MetricValue
from argus.agent.findings import Category, Finding, Severity
from argus.agent.health.baseline import learn
from argus.agent.health.models import HealthOptions

__all__ = ["breach_finding", "judge_value"]

_RELATIVE = 0.05   # the spread is at least 5% of the centre: a steady metric's wobble is not an anomaly
_FLOOR = 1e-6


def judge_value(spec: MetricSpec, value: MetricValue, history: Sequence[MetricPoint], at: datetime,
                options: HealthOptions) -> MetricValue:
    """``value`` with its verdict and what was expected."""
    if value.value is None:
        return value.model_copy(update={"verdict": "no_value"})
    v = value.value
    if spec.between is not None:
        low, high = spec.between
        return value.model_copy(update={"verdict": "ok" if low <= v <= high else "fail",
                                        "expected": f"between {low:g} and {high:g}"})
    if spec.fail is not None and spec.fail.crossed(v):
        return value.model_copy(update={"verdict": "fail", "expected": f"fails {spec.fail.describe()}"})
    if spec.warn is not None and spec.warn.crossed(v):
        return value.model_copy(update={"verdict": "warn", "expected": f"warns {spec.warn.describe()}"})
    if not spec.anomaly:
        bounds = [f"{word} {b.describe()}" for word, b in (("warns", spec.warn), ("fails", spec.fail)) if b]
        return value.model_copy(update={"verdict": "ok", "expected": "; ".join(bounds)})
    return _against_baseline(value, history, at, options)


def _against_baseline(value: MetricValue, history: Sequence[MetricPoint], at: datetime,
                      options: HealthOptions) -> MetricValue:
    assert value.value is not None
    if any(span.start <= at < span.end for span in options.exclude):
        return value.model_copy(update={"verdict": "excluded", "expected": "measured inside a health.exclude span"})
    points = sorted(((p.at, p.value) for p in history
                     if p.segment == value.segment and p.at < at and p.verdict not in BREACHES
                     and p.verdict != "excluded"), key=lambda p: p[0])[-options.window:]
    if len(points) < options.min_history:
        return value.model_copy(update={"verdict": "learning",
                                        "expected": f"a baseline after {options.min_history} runs ({len(points)} "
                                                    f"so far)"})
    base = learn(points, at, floor=_FLOOR, seasonality=options.seasonality, relative=_RELATIVE)
    assert base is not None
    z = base.z(value.value)
    season = f", {base.season}" if base.season else ""
    expected = f"about {base.centre:.4g} (spread {base.spread:.3g}, {base.points} earlier runs{season})"
    verdict = "anomaly" if abs(z) > options.sensitivity else "ok"
    return value.model_copy(update={"verdict": verdict, "expected": expected, "z": round(z, 2)})


def breach_finding(spec: MetricSpec, result: MetricResult) -> Finding | None:
    """One finding per metric with a breached value (each group that breached named in it), or None."""
    breached = [v for v in result.values if v.verdict in BREACHES]
    if not breached:
        return None
    worst = "fail" if any(v.verdict in ("fail", "anomaly") for v in breached) else "warn"
    total = max(len(result.values), 1)
    parts = [_describe(v) for v in breached[:5]]
    more = f"; and {len(breached) - 5} more groups" if len(breached) > 5 else ""
    grouped = f"{len(breached)} of {len(result.values)} groups: " if len(result.values) > 1 else ""
    return Finding(
        field=spec.field, category=Category.METRIC_BREACH,
        severity=Severity.HIGH if worst == "fail" else Severity.MEDIUM,
        description=f"metric {spec.name} {grouped}{'; '.join(parts)}{more}",
        hypothesis="the metric's own expectation in schedules.yaml (metrics:)",
        evidence_query=_evidence(spec.pipeline), affected_count=len(breached),
        affected_pct=round(len(breached) / total, 6), confirmed=spec.between is not None or not spec.anomaly)


def _describe(value: MetricValue) -> str:
    who = ""
    if value.segment is not None:
        who = f"{value.group} ({value.segment}) " if value.group is not None else f"{value.segment} "
    z = f", z {value.z:+.1f}" if value.z is not None else ""
    assert value.value is not None
    return f"{who}{value.verdict}: {value.value:.6g}, expected {value.expected}{z}"


def _evidence(pipeline: list[dict[str, Any]]) -> dict[str, Any]:
    """Where to look: the pipeline's leading ``$match``, else the whole collection."""
    first = pipeline[0] if pipeline else {}
    match = first.get("$match")
    return dict(match) if isinstance(match, dict) else {}
