"""One trigger of one schedule, from lock to stored report.

1. Take the schedule's advisory lock in PostgreSQL (another replica holds it: skip; the database
   cannot be reached: skip, never run without the lock).
2. Claim the trigger's slot, so a firing seen by several replicas runs once.
3. Audit with the schedule's settings and the collection's history.
4. Spool the report, then store it (in order, idempotently); metrics follow the stored diff.

Whatever fails inside an audit (Mongo unreachable, a bad file, a bug) becomes a failed run with
its error, counted and stored; nothing here raises into the scheduler.
"""

from __future__ import annotations

import os
import socket
import threading
import traceback
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any
from uuid import UUID, uuid4

import structlog

from agent.clock import Clock, SystemClock
from agent.errors import ArgusError
from agent.history import HistoricalContext, fingerprint
from agent.loop import run_audit
from agent.planners.factory import make_planner
from agent.privacy import has_masked
from agent.report import AuditReport, TerminationReason, TraceEntry
from agent.state import AgentState
from config.schedules import ResolvedSchedule, ScheduleSet
from config.settings import Settings
from daemon.alerts.policy import AlertPolicy
from daemon.metrics import Metrics
from daemon.sources import SourceCache
from daemon.spool import Spool
from daemon.store import CollectionRef, PostgresStore, StoreError, StoreUnavailable
from daemon.triggers import slot_of

__all__ = ["Progress", "ScheduleRunner", "replica_name"]

log = structlog.get_logger("argus.runner")


def replica_name() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


@dataclass
class Progress:
    """An audit in flight, for /status and for shutdown."""

    schedule: str
    run_id: UUID
    started_at: datetime
    iteration_budget: int
    time_budget_s: float
    collection: str
    iteration: int = 0
    findings: int = 0
    last_action: str | None = None
    stop: threading.Event = field(default_factory=threading.Event)

    def on_step(self, state: AgentState, entry: TraceEntry) -> None:
        self.iteration = state.iteration
        self.findings = len(state.findings)
        self.last_action = entry.action

    def as_json(self, now: datetime) -> dict[str, Any]:
        return {"schedule": self.schedule, "run_id": str(self.run_id), "collection": self.collection,
                "started_at": self.started_at.isoformat(),
                "elapsed_s": round((now - self.started_at).total_seconds(), 1),
                "iteration": self.iteration, "iteration_budget": self.iteration_budget,
                "time_budget_s": self.time_budget_s, "findings": self.findings, "last_action": self.last_action}


class ScheduleRunner:
    def __init__(self, *, store: PostgresStore, spool: Spool, metrics: Metrics, settings: Settings,
                 sources: SourceCache | None = None, clock: Clock | None = None, replica: str | None = None) -> None:
        self.store = store
        self.spool = spool
        self.metrics = metrics
        self.settings = settings
        self.sources = sources or SourceCache()
        self.clock = clock or SystemClock()
        self.replica = replica or replica_name()
        self.alerts: AlertPolicy | None = None  # set on each schedules (re)load
        self.stored = threading.Event()  # set whenever a report is stored: wakes the alert sender
        self.in_progress: dict[UUID, Progress] = {}
        self.last_reports: dict[str, AuditReport] = {}
        # fingerprint -> evidence query as run, where the privacy mode masked what was stored: in
        # memory only, so replay works within this process without a document value on disk
        self.replay_evidence: dict[str, dict[str, Any]] = {}
        self._lock = threading.Lock()
        self._drain_lock = threading.Lock()
        self._idle = threading.Condition(self._lock)

    # --- a trigger -----------------------------------------------------------------------------

    def run(self, schedules: ScheduleSet, name: str, *, scheduled_at: datetime | None = None) -> AuditReport | None:
        """Run schedule ``name`` now. With ``scheduled_at`` (the firing's time, after jitter) it is
        a trigger: it claims its slot and measures lateness; without, an ad-hoc run (`argus run`).
        Returns the report, or None when skipped."""
        schedule = schedules.schedules[name]
        now = self.clock.now()
        run_id = uuid4()
        bound = log.bind(schedule=name)
        try:
            with self.store.schedule_lock(name) as locked:
                if not locked:
                    self._skip(name, "locked", "another replica is running this schedule")
                    return None
                if scheduled_at is not None:
                    slot = slot_of(schedule.trigger, scheduled_at)
                    if not self.store.claim_trigger(name, slot, self.replica, run_id):
                        self._skip(name, "already_ran", "another replica ran this trigger")
                        return None
                    self.metrics.lateness.observe(max((now - scheduled_at).total_seconds(), 0.0))
                report = self._audit(schedules, schedule, scheduled_at, run_id)
        except StoreUnavailable as exc:
            self.metrics.store_errors.labels("lock").inc()
            self._skip(name, "store_unavailable", str(exc))
            return None
        bound.info("trigger_done", run_id=str(report.run_id), outcome=report.outcome, findings=len(report.findings))
        if report.outcome == "failed":  # the reason, as /status gives it (reports carry no secret)
            bound.warning("audit_failed", run_id=str(report.run_id),
                          error=(report.error or "")[:300])
        return report

    def _skip(self, name: str, reason: str, why: str) -> None:
        self.metrics.skipped.labels(name, reason).inc()
        log.info("trigger_skipped", schedule=name, reason=reason, detail=why)

    def _audit(self, schedules: ScheduleSet, schedule: ResolvedSchedule, scheduled_at: datetime | None,
               run_id: UUID) -> AuditReport:
        options = schedule.settings.audit_options()
        progress = Progress(schedule.name, run_id, self.clock.now(), options.max_iterations, options.time_budget_s,
                            f"{schedule.database}.{schedule.collection}")
        with self._lock:
            self.in_progress[run_id] = progress
            self.metrics.in_progress.set(len(self.in_progress))
        try:
            report = self._audit_or_fail(schedules, schedule, progress)
        finally:
            with self._lock:
                self.in_progress.pop(run_id, None)
                self.metrics.in_progress.set(len(self.in_progress))
                self._idle.notify_all()
        report = report.model_copy(update={"schedule": schedule.name, "scheduled_for": scheduled_at,
                                           "replica": self.replica})
        self.finish(schedule.name, report)
        return report

    def _audit_or_fail(self, schedules: ScheduleSet, schedule: ResolvedSchedule, progress: Progress) -> AuditReport:
        options = schedule.settings.audit_options()
        try:
            target = self.sources.target(schedule.connection, schedules.connections[schedule.connection],
                                         schedule.database, schedule.collection, max_time_ms=options.max_time_ms,
                                         where=schedules.connection_where(schedule.connection))
            context = None
            try:
                context = self.store.history(CollectionRef(schedule.connection, schedule.database, schedule.collection),
                                             runs=self.settings.history_runs,
                                             drift_tolerance=self.settings.drift_tolerance,
                                             growth_factor=self.settings.growth_factor,
                                             health_runs=options.health.window)
            except StoreError as exc:
                self.metrics.store_errors.labels("history").inc()
                log.warning("history_unavailable", schedule=schedule.name, error=str(exc))
            if context is not None:
                context = self._with_replay_evidence(context)
            kind = schedule.settings.planner
            setup = make_planner(kind, clock=self.clock,
                                 llm=None if kind == "heuristic" else self.settings.llm_options(schedule.settings.llm))
            report = run_audit(target, setup.planner, options=options, clock=self.clock,
                               historical_context=context, observer=progress, run_id=progress.run_id,
                               should_stop=progress.stop.is_set, gates=setup.gates, llm=setup.account)
            self._remember_replay_evidence(report)
            return report
        except ArgusError as exc:
            return self.failed_report(schedule, progress, str(exc))
        except Exception as exc:  # a bug must not stop the daemon: record it as a failed run
            log.error("audit_crashed", schedule=schedule.name, error=type(exc).__name__,
                      where=traceback.format_exc(limit=-1).strip().splitlines()[-1][:200])
            return self.failed_report(schedule, progress, f"internal error: {type(exc).__name__}: {exc}")

    def _with_replay_evidence(self, context: HistoricalContext) -> HistoricalContext:
        """Persistent patterns whose stored evidence was masked get back the query as it was run,
        when this process ran it; the others stay masked, and replay passes them by."""
        with self._lock:
            known = dict(self.replay_evidence)
        patterns = [p.model_copy(update={"last_evidence_query": known[p.fingerprint]})
                    if p.fingerprint in known and has_masked(p.last_evidence_query) else p for p in context.persistent]
        return context.model_copy(update={"persistent": patterns})

    def _remember_replay_evidence(self, report: AuditReport) -> None:
        with self._lock:
            for f in report.findings:
                fp = fingerprint(report.connection, report.database, report.collection, f.field, f.category)
                raw = report.replay_evidence.get(f.id)
                if raw is not None:
                    self.replay_evidence[fp] = raw
                else:
                    self.replay_evidence.pop(fp, None)

    def failed_report(self, schedule: ResolvedSchedule, progress: Progress, error: str, *,
                      reason: TerminationReason = "error") -> AuditReport:
        now = self.clock.now()
        return AuditReport(
            run_id=progress.run_id, connection=schedule.connection, database=schedule.database,
            collection=schedule.collection, schedule=schedule.name, planner=schedule.settings.planner,
            started_at=progress.started_at, finished_at=now,
            duration_s=max((now - progress.started_at).total_seconds(), 0.0),
            outcome="failed" if reason == "error" else "partial", termination_reason=reason,
            error=error, iterations=progress.iteration, options=schedule.settings.audit_options(),
            documents_sampled=0, collection_size=0, fields_total=0, fields_investigated=0, replica=self.replica)

    # --- reports -------------------------------------------------------------------------------

    def finish(self, schedule: str, report: AuditReport) -> None:
        """Spool the report durably, count it, and try to store everything spooled."""
        self.spool.put(report)
        self.metrics.observe_report(schedule, report)
        with self._lock:
            self.last_reports[schedule] = report
        self.drain()

    def drain(self) -> int:
        """Store spooled reports in order; stop at the first the database cannot take. Returns
        how many reports remain spooled."""
        if not self._drain_lock.acquire(blocking=False):
            return len(self.spool)  # another thread is draining; it will take ours too
        try:
            for path in self.spool.pending():
                report = self.spool.load(path)
                if report is None:
                    continue
                try:
                    stored = self.store.save_report(report, growth_factor=self.settings.growth_factor,
                                                    alerts=self.alerts, now=self.clock.now())
                except StoreUnavailable as exc:
                    self.metrics.spooled.inc()
                    self.metrics.store_errors.labels("save").inc()
                    log.warning("report_spooled", run_id=str(report.run_id), spooled=len(self.spool), error=str(exc))
                    break
                except StoreError as exc:
                    self.metrics.store_errors.labels("save").inc()
                    log.error("report_rejected", run_id=str(report.run_id), error=str(exc))
                    self.spool.set_aside(path)
                    continue
                self.spool.remove(path)
                self.stored.set()
                if stored.schedule:
                    self.metrics.observe_diff(stored.schedule, stored)
                    with self._lock:
                        if self.last_reports.get(stored.schedule, stored).run_id == stored.run_id:
                            self.last_reports[stored.schedule] = stored
            return len(self.spool)
        finally:
            self._drain_lock.release()

    # --- shutdown ------------------------------------------------------------------------------

    def running(self) -> list[Progress]:
        with self._lock:
            return list(self.in_progress.values())

    def wait_idle(self, timeout: float) -> bool:
        """Wait until no audit runs, for at most ``timeout`` seconds; True when idle."""
        with self._lock:
            return self._idle.wait_for(lambda: not self.in_progress, timeout=timeout)

    def interrupt_all(self) -> None:
        for progress in self.running():
            progress.stop.set()
