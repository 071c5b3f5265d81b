"""Prometheus metrics, all prefixed ``argus_``, on a registry passed in (tests use a fresh one).

Label sets stay bounded: schedule, collection, severity, outcome, model, kind, reason. Field
names and document values never become labels, but for the segments a schedule declares
(``segments.by``): their labels (hashed in strict privacy) are at most ``top`` plus ``other`` per
schedule, and a segment that leaves the top loses its series. Gauges that reflect the database or the
scheduler (open findings, next run time, spooled reports) are computed at scrape time by
custom collectors, so they are never stale.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, get_args

from prometheus_client import (
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    Info,
    ProcessCollector,
    disable_created_metrics,
)
from prometheus_client.core import GaugeMetricFamily, HistogramMetricFamily, Metric
from prometheus_client.metrics import MetricWrapperBase
from prometheus_client.registry import Collector

from argus.agent.contracts.model import RuleOutcome
from argus.agent.findings import Severity
from argus.agent.report import ARGUS_VERSION, AuditReport, Outcome

__all__ = ["INCIDENT_BUCKETS", "INCIDENT_STATUSES", "Family", "IncidentStats", "Metrics", "catalogue"]

_DURATION_BUCKETS = (0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600)
_ITERATION_BUCKETS = (1, 5, 10, 20, 50, 100, 200, 500, 1000)
_LATENESS_BUCKETS = (0.01, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 300)
HEALTH_KINDS = ("volume_anomaly", "freshness", "distribution_drift")  # the anomalies counted per schedule
INCIDENT_STATUSES = ("open", "acknowledged", "resolved", "expected", "false_positive")
INCIDENT_BUCKETS = (300.0, 900.0, 1800.0, 3600.0, 7200.0, 14400.0, 28800.0, 86400.0, 172800.0, 604800.0)


Rows = Callable[[], Iterable[tuple[dict[str, str], float]]]


class _Callback(Collector):
    """A gauge family computed at scrape time from ``produce()`` → [(labels, value)]."""

    def __init__(self, name: str, doc: str, labels: list[str], produce: Rows) -> None:
        self._name, self._doc, self._labels, self._produce = name, doc, labels, produce

    def collect(self) -> Iterable[GaugeMetricFamily]:
        family = GaugeMetricFamily(self._name, self._doc, labels=self._labels)
        try:
            rows = list(self._produce())
        except Exception:  # a scrape must never fail because a source is down
            rows = []
        for labels, value in rows:
            family.add_metric([labels.get(k, "") for k in self._labels], value)
        yield family


class Metrics:
    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        # No `*_created` series beside every counter and histogram: no dashboard or rule reads them,
        # and they double what Prometheus stores. (A process-wide switch, read as metrics are made.)
        disable_created_metrics()
        self.registry = registry if registry is not None else CollectorRegistry()
        r = self.registry
        Info("argus_build", "Argus version", registry=r).info({"version": ARGUS_VERSION})
        ProcessCollector(registry=r)  # process_start_time_seconds: the baseline of a schedule not yet succeeded
        self.runs = Counter("argus_audit_runs", "Audits finished, by outcome", ["schedule", "outcome"], registry=r)
        self.duration = Histogram("argus_audit_duration_seconds", "Wall-clock duration of an audit", ["schedule"],
                                  buckets=_DURATION_BUCKETS, registry=r)
        self.iterations = Histogram("argus_audit_iterations", "Planner iterations per audit", ["schedule"],
                                    buckets=_ITERATION_BUCKETS, registry=r)
        self.new_findings = Counter("argus_findings_new", "Findings new since the previous successful run",
                                    ["schedule", "severity"], registry=r)
        self.resolved_findings = Counter("argus_findings_resolved", "Findings gone since the previous successful run",
                                         ["schedule"], registry=r)
        self.new_persistent = Counter("argus_findings_new_persistent", "Patterns that became persistent",
                                      ["schedule"], registry=r)
        self.tokens = Counter("argus_llm_tokens", "LLM tokens used", ["schedule", "model", "kind"], registry=r)
        self.cost = Counter("argus_llm_cost_usd", "LLM cost in US dollars", ["schedule", "model"], registry=r)
        self.request_units = Counter("argus_db_request_units", "Cosmos DB request units charged for audits' reads",
                                     ["schedule"], registry=r)
        self.throttled = Counter("argus_db_throttled", "Reads the audited server throttled (16500) and Argus retried",
                                 ["schedule"], registry=r)
        self.db_passes = Counter("argus_db_passes", "Reads that visited the whole audited collection", ["schedule"],
                                 registry=r)
        self.db_queries = Counter("argus_db_queries", "Operations sent to the audited collection", ["schedule"],
                                  registry=r)
        self.db_documents = Counter("argus_db_documents_examined", "Documents the audits' reads visited, where known",
                                    ["schedule"], registry=r)
        self.last_success = Gauge("argus_last_success_timestamp_seconds", "When the schedule last succeeded",
                                  ["schedule"], registry=r)
        self.last_run = Gauge("argus_last_run_timestamp_seconds", "When the schedule last finished, any outcome",
                              ["schedule"], registry=r)
        self.interval = Gauge("argus_schedule_interval_seconds", "Seconds between two firings of each enabled "
                              "schedule (cron: the longest gap in the coming week)", ["schedule"], registry=r)
        self._scheduled: set[str] = set()
        self.in_progress = Gauge("argus_audits_in_progress", "Audits running now", registry=r)
        self.lateness = Histogram("argus_trigger_lateness_seconds", "Audit start minus its scheduled time",
                                  buckets=_LATENESS_BUCKETS, registry=r)
        self.skipped = Counter("argus_triggers_skipped", "Triggers not run, by reason", ["schedule", "reason"],
                               registry=r)
        self.reloads = Counter("argus_schedule_reloads", "Schedule file loads, by result", ["result"], registry=r)
        self.reload_errors = Counter("argus_schedule_reload_errors", "Schedule file edits rejected as invalid",
                                     registry=r)
        self.store_errors = Counter("argus_store_errors", "Operations the history database failed",
                                    ["operation"], registry=r)
        self.spooled = Counter("argus_reports_spooled", "Reports kept in the local spool because the history "
                                                        "database could not take them", registry=r)
        self.embedded_restarts = Counter("argus_embedded_database_restarts", "Times the daemon started the "
                                         "embedded PostgreSQL again after it died", registry=r)
        self.alerts_delivered = Counter("argus_alerts_delivered", "Alerts delivered, by channel", ["channel"],
                                        registry=r)
        self.alerts_failed = Counter("argus_alerts_failed", "Alert delivery attempts that failed, by channel",
                                     ["channel"], registry=r)
        self.alerts_pending = Gauge("argus_alerts_pending", "Alerts in the outbox waiting to be delivered",
                                    registry=r)
        where = ["connection", "database", "collection"]
        self.documents = Gauge("argus_collection_documents", "Documents in the collection at its last audit",
                               where, registry=r)
        self.freshness = Gauge("argus_collection_freshness_seconds", "Age of the newest document at the last audit",
                               where, registry=r)
        self.newest = Gauge("argus_collection_newest_document_timestamp_seconds", "When the newest document was "
                            "written, as of the last audit (time() minus this is its age now)", where, registry=r)
        self.usual_age = Gauge("argus_collection_usual_age_seconds", "The oldest the newest document usually is, "
                               "learned from earlier runs", where, registry=r)
        self.anomalies = Counter("argus_health_anomalies", "Health anomalies found (volume, freshness, drift)",
                                 ["schedule", "kind"], registry=r)
        self.contract_rules = Gauge("argus_contract_rules", "Declared rules of the schedule's contract at its last "
                                    "audit, by result (passed, warned, failed, unchecked, unmatched)",
                                    ["schedule", "result"], registry=r)
        self.field_nulls = Gauge("argus_field_null_share", "Null or missing share of a field in the last sample "
                                 "(only for schedules with health.field_metrics)", [*where, "field"], registry=r)
        self.metric_values = Gauge("argus_metric_value", "Each of a schedule's own metrics (metrics:) at its last "
                                   "run; segment: a digest of the group for a grouped pipeline (never its value), "
                                   "'other' past the cap, empty for a single value", ["schedule", "metric", "segment"],
                                   registry=r)
        self._metric_series: dict[str, set[tuple[str, str]]] = {}
        self.segment_documents = Gauge("argus_segment_documents", "Documents per segment at the last audit (the "
                                       "schedule's segments: top by documents, the rest as 'other')",
                                       ["schedule", "segment"], registry=r)
        self.segment_anomalies = Gauge("argus_segment_anomalies", "Findings on each segment at the last audit "
                                       "(volume, freshness, appeared or disappeared)", ["schedule", "segment"],
                                       registry=r)
        self._segments: dict[str, set[str]] = {}  # schedule -> segment labels exported: stale ones are removed

    def gauge_from(self, name: str, doc: str, labels: list[str], produce: Rows) -> None:
        """Register a gauge computed at scrape time."""
        self.registry.register(_Callback(name, doc, labels, produce))

    def daemon_gauges(self, *, open_findings: Rows, next_runs: Rows, schedules: Rows, spooled: Callable[[], int],
                      embedded_up: Callable[[], bool] | None,
                      incidents: Callable[[], IncidentStats] = lambda: IncidentStats()) -> None:
        """The daemon's gauges read at scrape time from the store, the scheduler and the spool
        (``embedded_up`` only when the daemon started the embedded PostgreSQL), and the incident
        families (``_IncidentCollector``)."""
        self.registry.register(_IncidentCollector(incidents))
        self.gauge_from("argus_open_findings", "Findings in each collection's latest stored run",
                        ["connection", "database", "collection", "severity"], open_findings)
        self.gauge_from("argus_next_run_timestamp_seconds", "When each schedule fires next", ["schedule"], next_runs)
        self.gauge_from("argus_schedules", "Schedules loaded", ["state"], schedules)
        if embedded_up is not None:
            up = embedded_up
            self.gauge_from("argus_embedded_database_up", "1 while the embedded PostgreSQL the daemon started is "
                            "running", [], lambda: [({}, float(up()))])
        self.gauge_from("argus_spool_reports", "Reports waiting in the local spool for the database", [],
                        lambda: [({}, float(spooled()))])

    def set_schedules(self, intervals: Mapping[str, float]) -> None:
        """Per-schedule series that must exist before a schedule first runs: its interval (for the
        "no success in twice the interval" alert), its run counters at zero (so Prometheus sees
        the first failure as an increase; the same for findings, anomalies and reads) and its
        histograms empty (a rate needs two scrapes of a
        series, so one born at the first run would be missing from the duration panel until the
        next scrape). Schedules no longer enabled lose their interval."""
        for name in self._scheduled - intervals.keys():
            self.interval.remove(name)
        for name, seconds in intervals.items():
            self.interval.labels(name).set(seconds)
            for outcome in get_args(Outcome):
                self.runs.labels(name, outcome)
            self.duration.labels(name)
            self.iterations.labels(name)
            for severity in Severity:
                self.new_findings.labels(name, severity.value)
            for counter in (self.resolved_findings, self.new_persistent, self.request_units, self.throttled,
                            self.db_passes, self.db_queries, self.db_documents):
                counter.labels(name)
            for kind in HEALTH_KINDS:
                self.anomalies.labels(name, kind)
            for result in get_args(RuleOutcome):
                self.contract_rules.labels(name, result)
        self._scheduled = set(intervals)

    def observe_report(self, schedule: str, report: AuditReport) -> None:
        self.runs.labels(schedule, report.outcome).inc()
        self.duration.labels(schedule).observe(report.duration_s)
        self.iterations.labels(schedule).observe(report.iterations)
        finished = report.finished_at.timestamp()
        self.last_run.labels(schedule).set(finished)
        if report.outcome == "succeeded":
            self.last_success.labels(schedule).set(finished)
        # Per model when the report says which model spent what (a judge may be another model).
        lines = [(x.model, x.input_tokens, x.output_tokens, x.cached_tokens, x.cost_usd)
                 for x in report.llm.usage] if report.llm is not None else \
            [(report.model or "none", report.token_usage.input_tokens, report.token_usage.output_tokens,
              report.token_usage.cached_tokens, report.cost_usd)]
        for model, input_tokens, output_tokens, cached_tokens, cost in lines:
            for kind, value in (("input", input_tokens), ("output", output_tokens), ("cached", cached_tokens)):
                if value:
                    self.tokens.labels(schedule, model, kind).inc(value)
            if cost:
                self.cost.labels(schedule, model).inc(cost)
        db = report.database_cost
        for counter, amount in ((self.request_units, db.request_units or 0.0), (self.throttled, db.throttled),
                                (self.db_passes, db.passes), (self.db_queries, db.queries_sent),
                                (self.db_documents, db.documents_examined)):
            counter.labels(schedule).inc(amount)

        self._observe_health(schedule, report)
        self._observe_metrics(schedule, report)
        if report.contract is not None:
            for result in get_args(RuleOutcome):
                self.contract_rules.labels(schedule, result).set(report.contract.count(result))

    def _observe_health(self, schedule: str, report: AuditReport) -> None:
        health = report.health
        if health is None:
            return
        where = (report.connection, report.database, report.collection)
        self.documents.labels(*where).set(health.documents)
        if health.freshness_s is not None and health.newest_at is not None:
            self.freshness.labels(*where).set(health.freshness_s)
            self.newest.labels(*where).set(health.newest_at.timestamp())
        if health.usual_age_s is not None:
            self.usual_age.labels(*where).set(health.usual_age_s)
        for kind in HEALTH_KINDS:
            found = sum(1 for f in report.findings if f.category.value == kind)
            self.anomalies.labels(schedule, kind).inc(found)
        if report.options.health.field_metrics:
            for f in health.fields:
                self.field_nulls.labels(*where, f.path).set(f.null_share)
        self._observe_segments(schedule, report)

    def _observe_segments(self, schedule: str, report: AuditReport) -> None:
        """Per-segment gauges of the last run; a segment no longer among them loses its series, so a
        schedule never has more than ``top + 1`` (its named segments and 'other')."""
        health = report.health
        if health is None:
            return
        labels = {s.metric_label for s in health.segments}
        for gone in self._segments.get(schedule, set()) - labels:
            for gauge in (self.segment_documents, self.segment_anomalies):
                with contextlib.suppress(KeyError):  # a segment whose documents were not counted has no series
                    gauge.remove(schedule, gone)
        self._segments[schedule] = labels
        for seg in health.segments:
            if seg.documents is not None:
                self.segment_documents.labels(schedule, seg.metric_label).set(seg.documents)
            subject = f"(segment {seg.segment})"
            self.segment_anomalies.labels(schedule, seg.metric_label).set(
                sum(1 for f in report.findings if f.field == subject))

    def _observe_metrics(self, schedule: str, report: AuditReport) -> None:
        """The last run's values; a series the run did not measure (a segment gone, a metric not
        read) is removed, so a dashboard never shows an old value as today's."""
        if report.outcome == "failed":
            return
        now = {(m.name, v.segment or ""): v.value for m in report.metrics for v in m.values if v.value is not None}
        for gone in self._metric_series.get(schedule, set()) - now.keys():
            self.metric_values.remove(schedule, *gone)
        for (metric, segment), value in now.items():
            self.metric_values.labels(schedule, metric, segment).set(value)
        self._metric_series[schedule] = set(now)

    def observe_diff(self, schedule: str, report: AuditReport) -> None:
        if report.diff is None:
            return
        for entry in report.diff.entries:
            if entry.status == "new":
                self.new_findings.labels(schedule, entry.severity.value).inc()
            elif entry.status == "resolved":
                self.resolved_findings.labels(schedule).inc()
            if entry.new_persistent:
                self.new_persistent.labels(schedule).inc()

    def sample(self, name: str, labels: dict[str, Any] | None = None) -> float | None:
        return self.registry.get_sample_value(name, labels or {})


@dataclass
class IncidentStats:
    """What the incident families show, read from the store at scrape time (every replica reports
    the same numbers: dashboards and rules take ``max`` across instances)."""

    counts: dict[tuple[str, str], int] = field(default_factory=dict)  # (status, severity) -> incidents
    oldest_open: dict[str, float] = field(default_factory=dict)       # severity -> epoch seconds
    # severity -> (cumulative counts per bucket of INCIDENT_BUCKETS then +Inf, sum of seconds)
    to_acknowledge: dict[str, tuple[list[int], float]] = field(default_factory=dict)
    to_resolve: dict[str, tuple[list[int], float]] = field(default_factory=dict)


class _IncidentCollector(Collector):
    """``argus_incidents{status,severity}`` (incidents in each status now, every pair, zeros too),
    ``argus_incident_oldest_open_timestamp_seconds{severity}`` (when the oldest incident nobody
    acknowledged became open), and the histograms ``argus_incident_time_to_acknowledge_seconds``
    and ``argus_incident_time_to_resolve_seconds`` by severity, over the stored incidents."""

    FAMILIES = (("argus_incidents", "gauge", ("status", "severity"), "Incidents in each status now, by severity"),
                ("argus_incident_oldest_open_timestamp_seconds", "gauge", ("severity",),
                 "When the oldest incident still open (nobody acknowledged it) became open, by severity"),
                ("argus_incident_time_to_acknowledge_seconds", "histogram", ("severity",),
                 "Time from opening to the first acknowledgement of stored incidents"),
                ("argus_incident_time_to_resolve_seconds", "histogram", ("severity",),
                 "Time from opening to resolution of stored resolved incidents"))

    def __init__(self, stats: Callable[[], IncidentStats]) -> None:
        self._stats = stats

    def describe(self) -> Iterable[Metric]:
        return self._families(IncidentStats())

    def collect(self) -> Iterable[Metric]:
        try:
            stats = self._stats()
        except Exception:  # a scrape must never fail because the database is down
            stats = IncidentStats()
        return self._families(stats)

    @classmethod
    def _families(cls, stats: IncidentStats) -> list[Metric]:
        (gauge_name, _, gauge_labels, gauge_doc), (oldest_name, _, _, oldest_doc) = cls.FAMILIES[:2]
        gauge = GaugeMetricFamily(gauge_name, gauge_doc, labels=list(gauge_labels))
        for status in INCIDENT_STATUSES:
            for severity in Severity:
                gauge.add_metric([status, severity.value], float(stats.counts.get((status, severity.value), 0)))
        oldest = GaugeMetricFamily(oldest_name, oldest_doc, labels=["severity"])
        for name, at in sorted(stats.oldest_open.items()):
            oldest.add_metric([name], at)
        out: list[Metric] = [gauge, oldest]
        for (name, _, _, doc), values in zip(cls.FAMILIES[2:], (stats.to_acknowledge, stats.to_resolve),
                                             strict=True):
            family = HistogramMetricFamily(name, doc, labels=["severity"])
            for severity in Severity:
                counts, total = values.get(severity.value, ([0] * (len(INCIDENT_BUCKETS) + 1), 0.0))
                bounds = [f"{b:g}" for b in INCIDENT_BUCKETS] + ["+Inf"]
                family.add_metric([severity.value], [(b, float(c)) for b, c in zip(bounds, counts, strict=True)],
                                  total)
            out.append(family)
        return out


@dataclass(frozen=True)
class Family:
    """A metric family as Prometheus scrapes it: the exposed name (``_total`` on counters), its type,
    label names and help."""

    name: str
    type: str
    labels: tuple[str, ...]
    help: str


def catalogue(registry: CollectorRegistry) -> list[Family]:
    """Every family ``registry`` exposes, with its labels, also before any series exists (the
    metrics reference is generated from it)."""
    found: dict[str, Family] = {}
    for collector in list(registry._collector_to_names):  # prometheus_client keeps no public list
        if isinstance(collector, _Callback):
            found[collector._name] = Family(collector._name, "gauge", tuple(collector._labels), collector._doc)
            continue
        if isinstance(collector, _IncidentCollector):
            found.update({name: Family(name, kind, labels, doc) for name, kind, labels, doc in collector.FAMILIES})
            continue
        names = tuple(collector._labelnames) if isinstance(collector, MetricWrapperBase) else ()
        for family in collector.collect():  # labels of the series that exist already (an Info's version)
            seen = [k for sample in family.samples for k in sample.labels if k not in names and k != "le"]
            name = family.name + {"counter": "_total", "info": "_info"}.get(family.type, "")
            found[name] = Family(name, family.type, names + tuple(dict.fromkeys(seen)), family.documentation)
    return [found[name] for name in sorted(found)]
