"""One trigger of one schedule, from lock to stored report.

1. Take the schedule's advisory lock in PostgreSQL (another replica holds it: skip; the database
   cannot be reached: skip, never run without the lock).
2. Claim the trigger's slot, so a firing seen by several replicas runs once. The claim is a
   lease the running audit renews (``heartbeat``); a claim whose run was never stored and whose
   owner is gone (its lease ran out, or its process on this host no longer exists) is a lost
   run: it is stored as failed, saying so, and the firing runs again.
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
from datetime import UTC, datetime
from typing import Any
from uuid import UUID, uuid4

import structlog

from argus.agent.clock import Clock, SystemClock
from argus.agent.errors import ArgusError
from argus.agent.history import HistoricalContext, fingerprint
from argus.agent.loop import run_audit
from argus.agent.options import AuditOptions
from argus.agent.planners.factory import make_planner
from argus.agent.privacy import has_masked
from argus.agent.report import AuditReport, TerminationReason, TraceEntry
from argus.agent.state import AgentState
from argus.config.schedules import ResolvedSchedule, ScheduleSet
from argus.config.settings import Settings
from argus.daemon.alerts.policy import AlertPolicy
from argus.daemon.files.reader import LoadDeadline
from argus.daemon.metrics import Metrics
from argus.daemon.record import record_report
from argus.daemon.sources import SourceCache
from argus.daemon.spool import Spool, storable
from argus.daemon.store import LOST_RUN, CollectionRef, PostgresStore, StoreError, StoreUnavailable, TriggerClaim
from argus.daemon.store.metric_values import MetricBook
from argus.daemon.triggers import interval_of, slot_of

__all__ = ["CLAIM_LEASE_S", "Progress", "ScheduleRunner", "replica_name"]

log = structlog.get_logger("argus.runner")


CLAIM_LEASE_S = 60.0  # a running audit renews its claim every few seconds; one not renewed this long is lost


def replica_name() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def _host(replica: str) -> str:
    return replica.rpartition(":")[0]


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
    resolved: ResolvedSchedule | None = field(default=None, repr=False)  # as the run began, whatever reloads do
    scheduled_for: datetime | None = None  # the firing it runs, None for an ad-hoc run
    finishing: bool = False  # its thread owns the final record: shutdown leaves the run to it

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
        self._lost_recorded: set[UUID] = set()
        # runs recorded as interrupted by shutdown while their thread was still inside the audit: the
        # thread, whenever it returns, drops its report (one record per run, one owner of it)
        self._abandoned: set[UUID] = set()
        self._counted_spooled: set[str] = set()  # spool files already counted as waiting for the database
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
                    held = self.store.claim_trigger(name, slot, self.replica, run_id, lease_s=CLAIM_LEASE_S)
                    if held is not None and not self._take_over(schedules, held, run_id):
                        return None
                    self.metrics.lateness.observe(max((now - scheduled_at).total_seconds(), 0.0))
                report = self._audit(schedules, schedule, scheduled_at, run_id)
        except StoreUnavailable as exc:
            self.metrics.store_errors.labels("lock").inc()
            self._skip(name, "store_unavailable", str(exc))
            return None
        except Exception as exc:  # never into the scheduler: APScheduler would only print it
            log.error("trigger_crashed", schedule=name, run_id=str(run_id), error=type(exc).__name__,
                      where=traceback.format_exc(limit=-1).strip().splitlines()[-1][:200])
            return None
        if report is None:  # recorded as interrupted at shutdown while this thread could not stop
            return None
        bound.info("trigger_done", run_id=str(report.run_id), outcome=report.outcome, findings=len(report.findings))
        if report.outcome == "failed":  # the reason, as /status gives it (reports carry no secret)
            bound.warning("audit_failed", run_id=str(report.run_id),
                          error=(report.error or "")[:300])
        return report

    def _take_over(self, schedules: ScheduleSet, held: TriggerClaim, run_id: UUID) -> bool:
        """The firing is claimed already: run it anyway only if its run was lost (recorded here as
        failed); otherwise skip it, saying who has it."""
        if held.stored or not (held.expired or self._owner_gone(held)):
            self._skip(held.schedule, "already_ran", self._holder(held))
            return False
        self.record_lost(schedules, held)
        if not self.store.take_over_trigger(held, self.replica, run_id, lease_s=CLAIM_LEASE_S):
            self._skip(held.schedule, "already_ran", "another replica took over this trigger first")
            return False
        log.info("trigger_taken_over", schedule=held.schedule, lost_run_id=str(held.run_id), run_id=str(run_id))
        return True

    def _holder(self, held: TriggerClaim) -> str:
        when = held.claimed_at.astimezone(UTC).strftime("%H:%M:%S")
        if held.replica == self.replica:
            owner = "this daemon"
        elif _host(held.replica) == _host(self.replica):
            owner = f"an earlier run of this daemon ({held.replica})"
        else:
            owner = f"another replica ({held.replica})"
        done = "ran" if held.stored else "is running"
        return f"{owner} {done} this trigger (run {held.run_id}, claimed at {when} UTC)"

    def _owner_gone(self, held: TriggerClaim) -> bool:
        """The claiming process is known dead: it ran on this host and its pid is gone (or is ours,
        reused by a restart, without the run in progress here)."""
        host, _, pid_text = held.replica.rpartition(":")
        if host != _host(self.replica) or not pid_text.isdigit():
            return False  # another host: its lease tells
        pid = int(pid_text)
        if pid == os.getpid():
            return held.run_id not in self.in_progress
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        except PermissionError:
            return False
        return False

    def record_lost(self, schedules: ScheduleSet, held: TriggerClaim) -> bool:
        """Store the run of a claim whose owner died as failed, saying what happened; False when
        it was recorded already or its schedule is gone from the file (nothing to name it after)."""
        schedule = schedules.schedules.get(held.schedule)
        with self._lock:
            if held.run_id in self._lost_recorded or schedule is None:
                return False
            self._lost_recorded.add(held.run_id)
        options = schedule.settings.audit_options()
        progress = Progress(schedule.name, held.run_id, held.claimed_at, options.max_iterations,
                            options.time_budget_s, f"{schedule.database}.{schedule.collection}")
        when = held.claimed_at.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S")
        report = self.failed_report(schedule, progress, (
            f"{LOST_RUN}the run started at {when} UTC by {held.replica} never finished: that process stopped "
            f"(killed or crashed) during the audit, so nothing of it was kept"))
        report = report.model_copy(update={"scheduled_for": held.slot, "replica": held.replica})
        log.warning("run_lost", schedule=schedule.name, run_id=str(held.run_id), replica=held.replica)
        self.finish(schedule.name, report)
        return True

    def record_lost_claims(self, schedules: ScheduleSet) -> int:
        """Record every run lost by a replica that died (its claim's lease ran out); returns how many."""
        try:
            lost = self.store.lost_claims(sorted(schedules.schedules))
        except StoreError:
            return 0
        return sum(self.record_lost(schedules, held) for held in lost)

    def heartbeat(self) -> None:
        """Renew the claims of the audits running here, so no replica takes them for lost."""
        try:
            self.store.renew_claims([p.run_id for p in self.running()], lease_s=CLAIM_LEASE_S)
        except StoreError:
            self.metrics.store_errors.labels("heartbeat").inc()

    def _skip(self, name: str, reason: str, why: str) -> None:
        self.metrics.skipped.labels(name, reason).inc()
        log.info("trigger_skipped", schedule=name, reason=reason, detail=why)

    def _audit(self, schedules: ScheduleSet, schedule: ResolvedSchedule, scheduled_at: datetime | None,
               run_id: UUID) -> AuditReport | None:
        """The run's report, kept (spooled, then stored); None when shutdown recorded the run as
        interrupted before the audit returned, so the late report is dropped."""
        options = schedule.settings.audit_options()
        progress = Progress(schedule.name, run_id, self.clock.now(), options.max_iterations, options.time_budget_s,
                            f"{schedule.database}.{schedule.collection}", resolved=schedule,
                            scheduled_for=scheduled_at)
        with self._lock:
            self.in_progress[run_id] = progress
            self.metrics.in_progress.set(len(self.in_progress))
        try:
            report = self._audit_or_fail(schedules, schedule, progress)
            with self._lock:
                owned = run_id not in self._abandoned
                progress.finishing = owned
            if not owned:
                log.info("late_report_dropped", schedule=schedule.name, run_id=str(run_id), outcome=report.outcome)
                return None
            report = report.model_copy(update={"schedule": schedule.name, "scheduled_for": scheduled_at,
                                               "replica": self.replica})
            self._keep(schedule.name, report)  # spooled before "idle": a shutdown's final drain finds it
        finally:
            with self._lock:
                self.in_progress.pop(run_id, None)
                self._abandoned.discard(run_id)
                self.metrics.in_progress.set(len(self.in_progress))
                self._idle.notify_all()
        self._store_spooled()
        return report

    def _audit_or_fail(self, schedules: ScheduleSet, schedule: ResolvedSchedule, progress: Progress) -> AuditReport:
        options = schedule.settings.audit_options()
        try:
            loading = LoadDeadline.after(options.time_budget_s, self.clock.monotonic)
            target = self.sources.target(schedule.connection, schedules.connections[schedule.connection],
                                         schedule.database, schedule.collection, max_time_ms=options.max_time_ms,
                                         where=schedules.connection_where(schedule.connection), deadline=loading)
            # Loading a file (or a reload after it changed) counted against the run's budget.
            options = options.model_copy(update={"time_budget_s": max(round(loading.at - loading.clock(), 2), 0.01)})
            context = None
            try:
                context = self.store.history(CollectionRef(schedule.connection, schedule.database, schedule.collection),
                                             runs=self.settings.history_runs,
                                             drift_tolerance=self.settings.drift_tolerance,
                                             growth_factor=self.settings.growth_factor,
                                             health_runs=options.health.window)
                if options.metrics:  # the baselines of the schedule's own metrics
                    context = context.model_copy(update={"metrics": MetricBook(self.store).history(
                        schedule.name, [m.name for m in options.metrics], window=options.health.window)})
            except StoreError as exc:
                self.metrics.store_errors.labels("history").inc()
                log.warning("history_unavailable", schedule=schedule.name, error=str(exc))
            if context is not None:
                context = self._with_replay_evidence(context)
            options, why_full = self._scoped(schedule, options)
            if options.health.run_every_s is None:  # the first run's baseline is spaced as the runs will be
                options = options.model_copy(update={"health": options.health.model_copy(update={
                    "run_every_s": interval_of(schedule.trigger, self.clock.now())})})
            kind = schedule.settings.planner
            setup = make_planner(kind, clock=self.clock,
                                 llm=None if kind == "heuristic" else self.settings.llm_options(schedule.settings.llm))
            report = run_audit(target, setup.planner, options=options, clock=self.clock,
                               historical_context=context, observer=progress, run_id=progress.run_id,
                               should_stop=progress.stop.is_set, gates=setup.gates, llm=setup.account,
                               contract=schedule.contract)
            self._remember_replay_evidence(report)
            return report.model_copy(update={"notes": [why_full, *report.notes]}) if why_full else report
        except ArgusError as exc:
            return self.failed_report(schedule, progress, str(exc))
        except Exception as exc:  # a bug must not stop the daemon: record it as a failed run
            log.error("audit_crashed", schedule=schedule.name, error=type(exc).__name__,
                      where=traceback.format_exc(limit=-1).strip().splitlines()[-1][:200])
            return self.failed_report(schedule, progress, f"internal error: {type(exc).__name__}: {exc}")

    def _scoped(self, schedule: ResolvedSchedule, options: AuditOptions) -> tuple[AuditOptions, str | None]:
        """The run's options with its window (``scope``), unless ``scope.full_every`` makes this run a
        full audit (the note says why). Without the store's answer the run stays scoped: the cheap one."""
        scope = schedule.settings.scope
        if scope is None:
            return options, None
        last_full = None
        if scope.full_every is not None:
            try:
                last_full = self.store.last_full_audit(CollectionRef(schedule.connection, schedule.database,
                                                                     schedule.collection))
            except StoreError as exc:
                self.metrics.store_errors.labels("full_audit").inc()
                log.warning("last_full_audit_unknown", schedule=schedule.name, error=str(exc))
                window = scope.model_copy(update={"full_every": None}).for_run(None, self.clock.now())[0]
                return options.model_copy(update={"scope": window}), None
        window, why_full = scope.for_run(last_full, self.clock.now())
        return options.model_copy(update={"scope": window}), why_full

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
        """Count the report, spool it durably, and try to store everything spooled. Never raises:
        a report that cannot be spooled is stored directly, and a failure is logged, not lost."""
        self._keep(schedule, report)
        self._store_spooled()

    def _keep(self, schedule: str, report: AuditReport) -> None:
        with self._lock:
            self.last_reports[schedule] = report
        try:
            self.metrics.observe_report(schedule, report)
        except Exception as exc:  # metrics are not worth a report
            log.error("report_not_counted", run_id=str(report.run_id), error=type(exc).__name__)
        try:
            self.spool.put(report)
        except Exception as exc:  # a full or read-only disk: the database may still take it
            log.error("report_not_spooled", run_id=str(report.run_id), error=type(exc).__name__,
                      spool=str(self.spool.directory))
            self._store_unspooled(report)

    def _store_spooled(self) -> None:
        try:
            self.drain()
        except Exception as exc:
            log.error("spool_drain_failed", error=type(exc).__name__)

    def _store_unspooled(self, report: AuditReport) -> None:
        try:
            self._stored(record_report(self.store, storable(report), growth_factor=self.settings.growth_factor,
                                                alerts=self.alerts, now=self.clock.now()))
        except Exception as exc:
            log.error("report_lost", run_id=str(report.run_id), outcome=report.outcome, error=type(exc).__name__)

    def _stored(self, stored: AuditReport) -> None:
        self.stored.set()
        if stored.schedule:
            self.metrics.observe_diff(stored.schedule, stored)
            with self._lock:
                if self.last_reports.get(stored.schedule, stored).run_id == stored.run_id:
                    self.last_reports[stored.schedule] = stored

    def drain(self, *, wait_s: float = 0.0) -> int:
        """Store spooled reports in order; stop at the first the database cannot take. Returns
        how many reports remain spooled. With ``wait_s`` (shutdown), wait that long for a drain
        another thread is doing, then drain what is left."""
        got = self._drain_lock.acquire(timeout=wait_s) if wait_s > 0 else self._drain_lock.acquire(blocking=False)
        if not got:
            return len(self.spool)  # another thread is draining; it will take ours too
        try:
            while self._drain_once():  # again: a worker that found the lock taken left its report to us
                pass
            return len(self.spool)
        finally:
            self._drain_lock.release()

    def _drain_once(self) -> bool:
        """One pass over the spool; True when it stored or set aside everything it saw."""
        pending = self.spool.pending()
        for path in pending:
            report = self.spool.load(path)
            if report is None:
                continue
            try:
                stored = record_report(self.store, report, growth_factor=self.settings.growth_factor,
                                                alerts=self.alerts, now=self.clock.now())
            except StoreUnavailable as exc:
                self.metrics.store_errors.labels("save").inc()
                waiting = {p.name for p in pending}
                self.metrics.spooled.inc(len(waiting - self._counted_spooled))  # each report once, not per retry
                self._counted_spooled = waiting
                log.warning("report_spooled", run_id=str(report.run_id), spooled=len(self.spool), error=str(exc))
                return False
            except StoreError as exc:
                self.metrics.store_errors.labels("save").inc()
                log.error("report_rejected", run_id=str(report.run_id), error=str(exc))
                self.spool.set_aside(path)
                continue
            self.spool.remove(path)
            self._stored(stored)
        return bool(pending)

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

    def record_interrupted(self) -> list[str]:
        """Record every audit still running as interrupted, taking its final record from its thread
        (stuck in a query nothing can stop, it may return at any time, or never). Returns their
        schedules. An audit whose thread is already keeping its own report is left to it."""
        taken = []
        with self._lock:
            for progress in list(self.in_progress.values()):
                if not progress.finishing and progress.resolved is not None:
                    self.in_progress.pop(progress.run_id)
                    self._abandoned.add(progress.run_id)
                    taken.append(progress)
            self.metrics.in_progress.set(len(self.in_progress))
        for progress in taken:
            assert progress.resolved is not None
            report = self.failed_report(progress.resolved, progress,
                                        "interrupted at shutdown while a query was running", reason="interrupted")
            self.finish(progress.schedule, report.model_copy(update={"scheduled_for": progress.scheduled_for}))
        return [p.schedule for p in taken]

    def busy(self) -> bool:
        """True while an audit thread is still inside an audit, its run recorded or not."""
        with self._lock:
            return bool(self.in_progress or self._abandoned)
