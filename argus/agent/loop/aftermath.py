"""After the audit proper: the collection's health, the schedule's own metrics and the segments' null rates,
measured and committed as findings; none of them can undo the audit's report."""

from __future__ import annotations

from datetime import datetime

import structlog

from argus.agent.clock import Clock
from argus.agent.custom_metrics.measure import MeasuredMetrics, measure_metrics
from argus.agent.errors import EngineFault
from argus.agent.findings import Finding
from argus.agent.health.backfill import backfill
from argus.agent.health.baseline import anomaly_key, detect, timeline, usual_age
from argus.agent.health.collect import collect_health, newest_document
from argus.agent.health.findings import anomaly_findings
from argus.agent.health.models import HealthOptions, HealthSnapshot
from argus.agent.history import HistoricalContext, fingerprint
from argus.agent.segments.findings import hidden_null_rates, segment_health_findings
from argus.agent.segments.health import changes as segment_changes
from argus.agent.segments.health import judge as judge_segments
from argus.agent.segments.passes import SegmentPass
from argus.agent.state import AgentState
from argus.agent.tools.target import AuditTarget

__all__ = ["custom_metrics", "health_or_note", "segment_findings"]

log = structlog.get_logger("argus.agent")


def health_or_note(state: AgentState, target: AuditTarget,
                   clock: Clock) -> tuple[HealthSnapshot | None, list[str]]:
    """Health is measured after the audit proper: whatever breaks it leaves the audit's report whole."""
    try:
        return _health(state, target, clock)
    except EngineFault:
        raise
    except Exception as exc:
        log.warning("health_failed", error=type(exc).__name__)
        return None, [f"collection health was not measured: {type(exc).__name__}"]


def _health(state: AgentState, target: AuditTarget, clock: Clock) -> tuple[HealthSnapshot | None, list[str]]:
    """Measure the collection's health (the whole collection, whatever the audit's window) and commit
    the anomalies against earlier runs' baseline; a first run rebuilds that baseline from history."""
    options = state.options.health
    if not options.enabled or state.schema is None:
        return None, []
    context = state.historical_context if isinstance(state.historical_context, HistoricalContext) else None
    whole = target.whole_collection()
    now = clock.now()
    past = timeline(context.health if context is not None else [])
    points: list[HealthSnapshot] = []
    notes: list[str] = []
    newest = newest_document(whole, state.schema, options, now)
    if not past and options.backfill:
        points, notes = backfill(whole, state.schema, now, options, state.options.privacy, newest[1])
        past = points
    snapshot = collect_health(whole, state.schema, now=now, options=options, privacy=state.options.privacy,
                              previous=past[-1] if past else None, newest=newest)
    snapshot.usual_age_s = usual_age(past, snapshot.at, options)
    snapshot.scope = state.window.key if state.window is not None else None
    snapshot.baseline_points = points
    anomalies = detect(past, snapshot, options)
    snapshot.anomalies = [anomaly_key(a) for a in anomalies]  # out of the baselines of later runs
    findings, found_notes = anomaly_findings(anomalies, snapshot,
                                             where=(state.connection_name, state.database, state.collection),
                                             context=context)
    if whole.segments is not None:
        more, more_notes = _segment_health(state, whole.segments, past, snapshot, options, context)
        findings, found_notes = [*findings, *more], [*found_notes, *more_notes]
    for finding in findings:
        declared = state.findings.get(finding.field, finding.category)
        if declared is not None and declared.rule is not None:
            continue  # the contract's rule on the same (collection) category decided it: it stands
        state.findings.upsert(finding)
        # A segment's name is a document value: never logged (agent.segments).
        log.info("anomaly_committed", field="(segment)" if finding.field.startswith("(segment ") else finding.field,
                 category=finding.category.value, severity=finding.severity.value)
    if points:
        notes.append(f"no earlier run was stored: the volume and freshness baselines came from {len(points)} "
                     f"intervals of the collection's own history ({points[0].time_source})")
    return snapshot, [*notes, *found_notes]


def custom_metrics(state: AgentState, target: AuditTarget, started_at: datetime) -> MeasuredMetrics:
    """The schedule's own metrics, read after the audit proper (one read each) and judged as of the
    run's start, the time their values are stored under; their breaches are committed like health
    anomalies, unless users labelled the pattern a false positive."""
    context = state.historical_context if isinstance(state.historical_context, HistoricalContext) else None
    measured = measure_metrics(target, state.options.metrics, at=started_at,
                               history=context.metrics if context is not None else {},
                               options=state.options.health, privacy=state.options.privacy)
    for finding in measured.findings:
        fp = fingerprint(state.connection_name, state.database, state.collection, finding.field, finding.category)
        why = context.suppressed(fp, finding.affected_pct) if context is not None else None
        if why is not None:
            measured.notes.append(f"{finding.category.value} on {finding.field} not reported: {why}")
            continue
        state.findings.upsert(finding)
        log.info("metric_breach_committed", metric=finding.field, severity=finding.severity.value)
    return measured


def _segment_health(state: AgentState, segments: SegmentPass, past: list[HealthSnapshot], snapshot: HealthSnapshot,
                    options: HealthOptions, context: HistoricalContext | None) -> tuple[list[Finding], list[str]]:
    """Each segment's volume and freshness against its own baseline, and segments that came or went;
    what is reported is kept out of the segment's later baselines, as the collection's is."""
    if _excluded_now(options, snapshot):
        return [], []
    anomalies = judge_segments(past, snapshot, options)
    changes = segment_changes(past, snapshot)
    snapshot.anomalies += [f"{a.kind}@{a.field.removeprefix('(segment ').removesuffix(')')}" for a in anomalies]
    snapshot.anomalies += [c.key for c in changes]
    return segment_health_findings(anomalies, changes, snapshot, segments,
                                   where=(state.connection_name, state.database, state.collection), context=context)


def _excluded_now(options: HealthOptions, snapshot: HealthSnapshot) -> bool:
    return any(span.start <= snapshot.at < span.end for span in options.exclude)


def segment_findings(state: AgentState, segments: SegmentPass) -> None:
    """Null rates a segment hides in the collection's mix, from the totals the first batched pass counted."""
    context = state.historical_context if isinstance(state.historical_context, HistoricalContext) else None
    existing = {(f.field, f.category) for f in state.findings}
    for finding in hidden_null_rates(segments, where=(state.connection_name, state.database, state.collection),
                                     size=max(state.collection_size, 1), existing=existing, context=context):
        state.findings.upsert(finding)
        log.info("segment_finding_committed", field=finding.field, category=finding.category.value)


