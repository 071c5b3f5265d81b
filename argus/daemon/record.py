"""Recording a finished run: what storing it decides, apart from the SQL that stores it.

``record_report`` opens one transaction under the collection's advisory lock (``storing``),
reads the history the run is judged against (``read_history``: the findings still tracked from
earlier runs, patterns about to turn persistent, users' labels, the incidents the run may touch,
notices waiting, the schedule's last outcomes), decides (``decide``, pure: the diff, what the
run does to incidents, the notices waiting to be routed, the failure streak), writes the rows,
then queues the alerts the policy asks for (``alerts_after``, pure) and commits. The alerts come after
the incident rows only because an incident notice names its incident's and its event's ids,
which the database gives; all of it is one transaction, so a run is never kept without its
findings, its incidents or its alerts, nor they without it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any
from uuid import UUID

import psycopg
import structlog

from argus.agent.history import HistoricalContext, LabelSummary, PastFinding, RunDiff
from argus.agent.report import AuditReport
from argus.config.alerts import IncidentsConfig
from argus.daemon.alerts.policy import AlertPolicy, RoutedAlert
from argus.daemon.diff import compared_runs, diff_report, tracked
from argus.daemon.incidents.models import Incident, IncidentEvent, IncidentNotice
from argus.daemon.incidents.tracker import Change, track
from argus.daemon.store import LOST_RUN, CollectionRef, PostgresStore, runs
from argus.daemon.store import incidents as incident_rows
from argus.daemon.store.outbox import enqueue
from argus.daemon.store.rows import kind_of

__all__ = ["Decision", "History", "alerts_after", "decide", "diff_runs", "failure_streak", "read_history",
           "record_report"]

log = structlog.get_logger("argus.store")


@dataclass
class History:
    """What a run is judged against, as read under its collection's lock before it is stored."""

    previous_run_id: UUID | None = None  # the latest earlier run of the same kind
    previous: list[PastFinding] | None = None  # patterns still tracked (None: no earlier run)
    newly_persistent: frozenset[str] = frozenset()  # patterns an earlier run saw too, not persistent yet
    suppressed: frozenset[str] = frozenset()  # patterns users judged false positives more often than not
    baseline: Mapping[str, float] = field(default_factory=dict)  # fingerprint -> smallest share in recent runs
    labels: Mapping[str, LabelSummary] = field(default_factory=dict)
    incidents: list[Incident] = field(default_factory=list)  # active, or resolved within reopen_within
    pending_ids: list[int] = field(default_factory=list)  # events whose notices wait to be queued
    pending: list[tuple[IncidentEvent, Incident]] = field(default_factory=list)
    outcomes: list[tuple[datetime, str]] = field(default_factory=list)  # the schedule's newest runs, newest first


@dataclass
class Decision:
    """What storing a run does: the report as stored (with its diff), its incidents' changes, the
    waiting notices routed, and how many runs of its schedule failed in a row with it."""

    report: AuditReport
    incidents: list[Change]
    pending: list[RoutedAlert]
    failure_streak: int


def failure_streak(report: AuditReport, outcomes: Sequence[tuple[datetime, str]], limit: int) -> int:
    """Failed runs in a row, newest first, among ``report`` and its schedule's earlier ``outcomes``
    (at most ``limit`` + 1 counted); 0 unless ``report`` failed and failures alert (``limit`` > 0)."""
    if report.outcome != "failed" or not report.schedule or not limit:
        return 0
    newest = sorted([*outcomes, (report.started_at, report.outcome)], key=lambda o: o[0], reverse=True)
    streak = 0
    for _, outcome in newest[:limit + 1]:
        if outcome != "failed":
            break
        streak += 1
    return streak


def decide(report: AuditReport, history: History, *, policy: AlertPolicy | None,
           growth_factor: float = 1.5) -> Decision:
    """Pure: the diff of ``report`` against ``history``, what it does to the incidents there
    (grouped as the policy's ``alerts.incidents`` says, or by default), and the waiting notices routed."""
    stored = report.model_copy(update={"diff": diff_report(
        report, history.previous, previous_run_id=history.previous_run_id, growth_factor=growth_factor,
        newly_persistent=history.newly_persistent, suppressed=history.suppressed, baseline=history.baseline)})
    changes: list[Change] = []
    pending: list[RoutedAlert] = []
    if stored.outcome != "failed":
        config = policy.config.incidents if policy is not None else IncidentsConfig()
        labels = policy.labels_of(stored.schedule) if policy is not None else None
        # the same rule planners follow (HistoricalContext.suppressed), at the share users judged
        context = HistoricalContext(labels=dict(history.labels), growth_factor=growth_factor)
        changes = track(stored, history.incidents, config=config, growth_factor=growth_factor,
                        held=lambda fp, share: context.suppressed(fp, share) is not None, labels=labels)
        pending = policy.incident_alerts(history.pending) if policy is not None else []
    streak = failure_streak(stored, history.outcomes, policy.failed_runs if policy is not None else 0)
    return Decision(report=stored, incidents=changes, pending=pending, failure_streak=streak)


def alerts_after(decision: Decision, policy: AlertPolicy) -> list[RoutedAlert]:
    """Pure: the alerts ``policy`` asks for after ``decision`` (incident notices carry the ids the
    incidents and their events were saved with)."""
    return policy.alerts_for(decision.report, failure_streak=decision.failure_streak, incidents=decision.incidents)


def read_history(conn: psycopg.Connection[Any], report: AuditReport, *, policy: AlertPolicy | None,
                 baseline_runs: int = 10) -> History:
    """Everything ``decide`` needs, read in the storing transaction (the incidents it may change
    and the waiting events locked)."""
    ref = CollectionRef(report.connection, report.database, report.collection)
    where = (ref.connection, ref.database, ref.collection)
    kind = kind_of(report)
    walked = compared_runs(runs.earlier_runs(conn, ref, report.started_at), kind)
    previous_id, previous = tracked(walked, runs.past_findings(conn, [r for r, _ in walked]) if walked else {})
    history = History(previous_run_id=previous_id, previous=previous,
                      newly_persistent=runs.newly_persistent(conn, report),
                      suppressed=runs.false_positives(conn, ref),
                      baseline=runs.smallest_shares(conn, ref, report.started_at, baseline_runs, kind))
    if report.outcome == "failed":
        if policy is not None and policy.failed_runs and report.schedule:
            history.outcomes = runs.recent_outcomes(conn, report.schedule, policy.failed_runs + 1)
        return history
    if policy is not None:  # waiting notices first, so channels hear of a resolution before of its reopening
        history.pending_ids, history.pending = incident_rows.pending_notices(conn, where=where)
    config = policy.config.incidents if policy is not None else IncidentsConfig()
    history.incidents = incident_rows.incidents_to_track(conn, where, report.finished_at - config.reopen_within)
    history.labels = runs.label_summaries(conn, ref)
    return history


def _write(conn: psycopg.Connection[Any], decision: Decision, history: History) -> None:
    report = decision.report
    runs.touch_patterns(conn, report)
    runs.insert_run(conn, report)
    if history.pending_ids:
        enqueue(conn, decision.pending, report.finished_at)
        incident_rows.mark_queued(conn, history.pending_ids)
        incident_rows.refreshed(conn, _noticed(decision.pending), report.finished_at)
    for change in decision.incidents:
        incident_rows.save_incident(conn, change.incident, change.events)
    if decision.incidents:
        log.info("incidents_tracked", run_id=str(report.run_id), touched=len(decision.incidents),
                 opened=sum(1 for c in decision.incidents if c.notice == "incident_opened"),
                 notices=sum(1 for c in decision.incidents if c.notice))


def _noticed(routed: Sequence[RoutedAlert]) -> list[int]:
    return [r.alert.incident.id for r in routed if isinstance(r.alert, IncidentNotice)]


def record_report(store: PostgresStore, report: AuditReport, *, growth_factor: float = 1.5,
                  alerts: AlertPolicy | None = None, now: datetime | None = None,
                  baseline_runs: int = 10) -> AuditReport:
    """Store ``report`` in one transaction and return it with its diff attached. With an alert
    policy, the alerts it asks for go into the outbox in the same transaction. A pattern's growth is
    also measured against its smallest share in the last ``baseline_runs`` successful runs. Storing
    a run already stored returns the stored one (a run recorded as lost gives way to its real report)."""
    policy = alerts
    ref = CollectionRef(report.connection, report.database, report.collection)
    log.info("report_storing", run_id=str(report.run_id), collection=str(ref), findings=len(report.findings))
    with store.storing(ref) as conn:
        existing = runs.stored_error(conn, report.run_id)
        if existing is not None:
            if str(existing[0] or "").startswith(LOST_RUN) and not (report.error or "").startswith(LOST_RUN):
                # recorded as lost while its replica was cut off from the database: the real report wins
                runs.delete_run(conn, report.run_id)
                log.info("lost_run_found", run_id=str(report.run_id))
            else:
                log.info("report_already_stored", run_id=str(report.run_id))
                return runs.load_report(conn, report.run_id)
        history = read_history(conn, report, policy=policy, baseline_runs=baseline_runs)
        decision = decide(report, history, policy=policy, growth_factor=growth_factor)
        _write(conn, decision, history)
        queued = 0
        if policy is not None:
            routed = alerts_after(decision, policy)
            when = now or report.finished_at
            incident_rows.refreshed(conn, _noticed(routed), when)
            queued = enqueue(conn, routed, when)
    log.info("report_stored", run_id=str(decision.report.run_id), collection=str(ref), outcome=report.outcome,
             alerts=queued)
    return decision.report


def diff_runs(store: PostgresStore, older: UUID, newer: UUID, *, growth_factor: float = 1.5) -> RunDiff:
    """``newer`` compared with ``older`` (any two stored runs of one collection)."""
    report, previous, suppressed = store.runs_to_diff(older, newer)
    return diff_report(report, previous, previous_run_id=older, growth_factor=growth_factor, suppressed=suppressed)
