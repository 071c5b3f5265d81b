"""``argus daemon``: schedules, audits, history, metrics and HTTP in one long-running process.

Signals: SIGHUP reloads the schedules now (the file is also polled). SIGTERM and SIGINT stop
taking triggers, give running audits ``ARGUS_SHUTDOWN_GRACE_S`` to finish, interrupt the rest
(they end as partial, termination ``interrupted``, and are stored), and exit 0, without waiting
for an audit thread stuck in a query (its late report is dropped: the run is recorded once).
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import threading
import time
from collections.abc import Callable
from datetime import datetime, timedelta
from functools import partial
from pathlib import Path
from typing import Any

import httpx
import structlog
from prometheus_client import CollectorRegistry

from argus.agent.clock import Clock, SystemClock
from argus.agent.evidence import written_evidence
from argus.agent.llm.extra import require_llm_extra_for
from argus.agent.privacy import has_masked
from argus.agent.report import ARGUS_VERSION
from argus.config.schedules import FileVersion, ScheduleError, ScheduleSet, file_version, load_schedules
from argus.config.settings import Settings
from argus.daemon.alerts.policy import AlertPolicy
from argus.daemon.alerts.sender import AlertSender
from argus.daemon.findings_view import stored_finding
from argus.daemon.healthcheck import LISTEN_FILE
from argus.daemon.http import HttpServer
from argus.daemon.incidents.chores import queue_due
from argus.daemon.incidents.http import IncidentApi
from argus.daemon.metrics import IncidentStats, Metrics
from argus.daemon.runner import ScheduleRunner
from argus.daemon.scheduler import AuditScheduler
from argus.daemon.sources import SourceCache
from argus.daemon.spool import Spool
from argus.daemon.store import PostgresStore, StoreError, describe_store, open_store
from argus.daemon.store.embedded import EmbeddedSupervisor, start_embedded
from argus.daemon.store.incidents import IncidentBook
from argus.daemon.store.outbox import AlertOutbox
from argus.daemon.triggers import interval_of

__all__ = ["Daemon"]

log = structlog.get_logger("argus.daemon")

_MAINTENANCE_S = 5.0
_PRUNE_EVERY_S = 3600.0
_SWEEP_EVERY_S = 30.0  # runs lost by replicas that died are recorded this often
_READY_CACHE_S = 2.0
_INTERRUPT_WAIT_S = 3.0
_FINAL_DRAIN_WAIT_S = 30.0  # a worker storing a big report holds the drain lock meanwhile
_EMBEDDED_STOP_WAIT_S = 5.0


class Daemon:
    def __init__(self, settings: Settings, *, schedules_path: Path, listen: tuple[str, int],
                 clock: Clock | None = None, registry: CollectorRegistry | None = None) -> None:
        self.settings = settings
        self.schedules_path = schedules_path
        self.listen = listen
        self.clock = clock or SystemClock()
        self.metrics = Metrics(registry)
        self.started_at = self.clock.now()
        self._stop = threading.Event()
        self._reload = threading.Event()
        self._file_version: tuple[FileVersion | None, ...] | None = None
        self._last_reload: dict[str, Any] = {"ok_at": None, "error": None, "error_at": None}
        self._ready_cache: tuple[float, bool, list[str]] = (0.0, False, ["starting"])
        self.store_where = ""
        self.http: HttpServer | None = None
        self.embedded: EmbeddedSupervisor | None = None
        self._threads: list[threading.Thread] = []
        self._supervisor: threading.Thread | None = None  # restarts the embedded server until the stop
        self._signals: tuple[int, int] | None = None  # (read, write) ends of the pipe the handlers write to

    # --- start -----------------------------------------------------------------------------------

    def start(self) -> None:
        """Bind the HTTP port (raises OSError naming the address), load the schedules (raises
        ScheduleError if invalid), open the store, start everything. Nothing runs before the bind.
        A configured incident token must be readable (ArgusError names its variable or file)."""
        settings = self.settings
        if settings.incidents_writable:
            settings.incident_token_value()
        incidents = IncidentApi(book=lambda: IncidentBook(self.store), clock=self.clock,
                                token=settings.incident_token_value if settings.incidents_writable else None,
                                changed=self.queue_incident_notices)
        self.http = HttpServer(self.listen, registry=self.metrics.registry, ready=self.ready, status=self.status,
                               run=self.run_view, finding=self.finding_view, incidents=incidents)
        try:
            self._start()
        except BaseException:
            self.http.stop()
            raise

    def _start(self) -> None:
        assert self.http is not None
        schedules = load_schedules(self.schedules_path)
        require_llm_extra_for({name: s.settings.planner for name, s in schedules.schedules.items()})
        self._file_version = self._stat(schedules, read=schedules.version)
        self.store = self._open_store()
        self.spool = Spool(self.settings.data_dir / "spool")
        self.sources = SourceCache()
        self.runner = ScheduleRunner(store=self.store, spool=self.spool, metrics=self.metrics, settings=self.settings,
                                     sources=self.sources, clock=self.clock)
        self.scheduler = AuditScheduler(self._run_schedule, self.metrics, workers=self.settings.workers,
                                        misfire_grace_s=self.settings.misfire_grace_s, clock=self.clock)
        self.outbox = AlertOutbox(self.store)
        self.sender = AlertSender(outbox=self.outbox, config=lambda: self._current().alerts,
                                  client=httpx.Client(follow_redirects=False), metrics=self.metrics,
                                  clock=self.clock, retry_base_s=self.settings.alert_retry_base_s,
                                  retry_max_s=self.settings.alert_retry_max_s, wake=self.runner.stored)
        self._register_gauges()
        changes = self._apply(schedules)
        self.metrics.reloads.labels("ok").inc()
        self._last_reload["ok_at"] = self.clock.now().isoformat()
        self.scheduler.start()
        self.http.start()
        self._record_listen()
        threads: list[tuple[str, Callable[[], None]]] = [
            ("argus-watch", self._watch), ("argus-maintenance", self._maintenance),
            ("argus-alerts", lambda: self.sender.run(self._stop, poll_s=self.settings.alert_poll_s))]
        if self.embedded is not None:
            threads.append(("argus-embedded-db", partial(self.embedded.run, self._stop)))
        for name, target in threads:
            thread = threading.Thread(target=target, name=name, daemon=True)
            thread.start()
            self._threads.append(thread)
            if name == "argus-embedded-db":
                self._supervisor = thread
        log.info("daemon_started", version=ARGUS_VERSION, schedules=str(self.schedules_path),
                 enabled=len(changes["added"]), store=self.store_where, listen=f"{self.listen[0]}:{self.listen[1]}",
                 workers=self.settings.workers)

    def _open_store(self) -> PostgresStore:
        self.store_where = describe_store(self.settings)
        if self.settings.database_url is None:  # the daemon started the server: it keeps it running
            self.embedded = EmbeddedSupervisor(start_embedded(self.settings.data_dir),
                                               on_restart=self.metrics.embedded_restarts.inc)
        # a lock connection per running audit, and room to store; wait=False: start even with the database down
        return open_store(self.settings, pool_size=self.settings.workers + 4, wait=False)

    def _run_schedule(self, name: str, at: datetime | None) -> None:
        current = self.scheduler.schedules
        if current is not None:
            self.runner.run(current, name, scheduled_at=at or self.clock.now())

    def _register_gauges(self) -> None:
        def open_findings() -> list[tuple[dict[str, str], float]]:
            try:
                rows = self.store.open_findings()
            except StoreError:
                self.metrics.store_errors.labels("scrape").inc()
                return []
            return [({"connection": c, "database": d, "collection": coll, "severity": s}, float(n))
                    for c, d, coll, s, n in rows]

        def next_runs() -> list[tuple[dict[str, str], float]]:
            return [({"schedule": n}, t.timestamp()) for n, t in self.scheduler.next_run_times().items() if t]

        def schedules() -> list[tuple[dict[str, str], float]]:
            current = self.scheduler.schedules
            if current is None:
                return []
            enabled = sum(1 for s in current.schedules.values() if s.enabled)
            return [({"state": "enabled"}, float(enabled)),
                    ({"state": "disabled"}, float(len(current.schedules) - enabled))]

        def incident_stats() -> IncidentStats:
            try:
                return IncidentBook(self.store).stats()
            except StoreError:
                self.metrics.store_errors.labels("scrape").inc()
                raise

        embedded = self.embedded
        self.metrics.daemon_gauges(open_findings=open_findings, next_runs=next_runs, schedules=schedules,
                                   spooled=lambda: len(self.spool),
                                   embedded_up=(lambda: embedded.up) if embedded is not None else None,
                                   incidents=incident_stats)

    def queue_incident_notices(self) -> None:
        """Queue reminders and the notices of status changes; wake the sender when there are any."""
        if queue_due(self.store, self.clock.now(), self.runner.alerts):
            self.sender.wake.set()

    def _record_listen(self) -> None:
        """Where /healthz answers, for the container's HEALTHCHECK (``argus.daemon.healthcheck``)."""
        assert self.http is not None
        record = self.settings.data_dir / LISTEN_FILE
        try:
            record.parent.mkdir(parents=True, exist_ok=True)
            partial_record = record.with_suffix(".tmp")
            host = self.http.address[0]
            partial_record.write_text(f"{host.decode() if isinstance(host, bytes) else host}:{self.http.address[1]}\n")
            partial_record.replace(record)
        except OSError as exc:
            log.warning("listen_not_recorded", error=exc.strerror)

    # --- reload ----------------------------------------------------------------------------------

    def _stat(self, schedules: ScheduleSet | None = None, *,
              read: FileVersion | None = None) -> tuple[FileVersion | None, ...]:
        """The schedules file's and its contract files' versions: an edit to any of them is a reload.
        ``read``: the schedules file's version as it was read (a later change is the next reload's)."""
        current = schedules or self.scheduler.schedules
        watched = current.watched if current is not None else ()
        return (read or file_version(self.schedules_path), *(file_version(path) for path in watched))

    def _watch(self) -> None:
        while not self._stop.is_set():
            woke = self._reload.wait(self.settings.reload_poll_s)
            if self._stop.is_set():
                return
            try:
                if woke:
                    self._reload.clear()
                    self.reload("SIGHUP")
                elif self._stat() != self._file_version:
                    self.reload("file changed")
            except Exception as exc:  # the watcher outlives any failure: the next edit or SIGHUP is still seen
                log.error("schedules_watch_failed", error=type(exc).__name__)

    def reload(self, why: str) -> bool:
        """Apply the schedules file if it is valid; otherwise keep the last good schedules. What is
        applied is what the file held when it was read (a later change is the next reload's)."""
        self._file_version = self._stat()
        try:
            new = load_schedules(self.schedules_path)
        except ScheduleError as exc:
            return self._reload_failed(why, exc.problems)
        except Exception as exc:  # a loader bug must not pass for "unchanged": report it like an invalid file
            return self._reload_failed(why, [f"{self.schedules_path}: cannot load: {type(exc).__name__}"])
        self._file_version = self._stat(new, read=new.version)
        if new.digest == self._current().digest:  # e.g. a broken edit reverted: the error is over
            if self._last_reload["error"] is not None:
                self._last_reload.update(ok_at=self.clock.now().isoformat(), error=None, error_at=None)
                log.info("schedules_loaded", why=why, unchanged=True)
            return True
        try:
            changes = self._apply(new)
        except Exception as exc:  # e.g. a trigger the scheduler cannot compute
            return self._reload_failed(why, [f"{self.schedules_path}: cannot apply: {type(exc).__name__}: {exc}"])
        self.metrics.reloads.labels("ok").inc()
        self._last_reload.update(ok_at=self.clock.now().isoformat(), error=None, error_at=None)
        log.info("schedules_loaded", why=why, **changes)
        return True

    def _reload_failed(self, why: str, problems: list[str]) -> bool:
        self.metrics.reload_errors.inc()
        self.metrics.reloads.labels("invalid").inc()
        self._last_reload.update(error=problems, error_at=self.clock.now().isoformat())
        log.error("schedules_invalid", why=why, problems=problems, kept=len(self._current().schedules))
        return False

    def _apply(self, schedules: ScheduleSet) -> dict[str, list[str]]:
        self.runner.alerts = AlertPolicy.of(schedules)
        changes = self.scheduler.apply(schedules)
        self._set_intervals(schedules)
        return changes

    def _set_intervals(self, schedules: ScheduleSet) -> None:
        now, by_trigger = self.clock.now(), {}
        for s in schedules.schedules.values():
            if s.enabled and s.trigger.describe() not in by_trigger:  # schedules often share a cron
                by_trigger[s.trigger.describe()] = interval_of(s.trigger, now)
        self.metrics.set_schedules({s.name: by_trigger[s.trigger.describe()]
                                    for s in schedules.schedules.values() if s.enabled})

    def _current(self) -> ScheduleSet:
        current = self.scheduler.schedules
        assert current is not None
        return current

    def request_reload(self) -> None:
        self._reload.set()

    # --- maintenance -----------------------------------------------------------------------------

    def _maintenance(self) -> None:
        last_prune = last_sweep = 0.0
        while not self._stop.wait(_MAINTENANCE_S):
            try:
                self._maintain(last_prune, last_sweep)
            except Exception as exc:  # a failing chore never stops the others
                log.error("maintenance_failed", error=type(exc).__name__)
            now = time.monotonic()
            last_sweep = now if now - last_sweep >= _SWEEP_EVERY_S else last_sweep
            last_prune = now if now - last_prune >= _PRUNE_EVERY_S else last_prune

    def _maintain(self, last_prune: float, last_sweep: float) -> None:
        self.runner.heartbeat()
        try:
            self.queue_incident_notices()
        except StoreError:
            self.metrics.store_errors.labels("incidents").inc()
        if time.monotonic() - last_sweep >= _SWEEP_EVERY_S and self.scheduler.schedules is not None:
            self.runner.record_lost_claims(self.scheduler.schedules)
        if len(self.spool) and not self.runner.drain():
            log.info("spool_drained")
        if time.monotonic() - last_prune >= _PRUNE_EVERY_S:
            try:
                now = self.clock.now()
                self.store.prune(now, self.settings.retention_days)
                self.outbox.prune(now - timedelta(days=self.settings.retention_days))
                IncidentBook(self.store).prune(now - timedelta(days=self.settings.retention_days))
            except StoreError:
                self.metrics.store_errors.labels("prune").inc()

    # --- health ----------------------------------------------------------------------------------

    def ready(self) -> tuple[bool, list[str]]:
        at, ok, reasons = self._ready_cache
        if time.monotonic() - at < _READY_CACHE_S:
            return ok, reasons
        reasons = []
        if self.scheduler.schedules is None:
            reasons.append("schedules not loaded")
        if self._stop.is_set():
            reasons.append("shutting down")
        down = self.embedded.describe() if self.embedded is not None else None
        if down:
            reasons.append(down)
        elif not self.store.ping():
            reasons.append(f"history database unreachable ({self.store_where})")
        spooled = len(self.spool)
        if spooled:
            reasons.append(f"{spooled} report(s) waiting in the spool for the database")
        self._ready_cache = (time.monotonic(), not reasons, reasons)
        return not reasons, reasons

    def status(self) -> dict[str, Any]:
        now = self.clock.now()
        current = self.scheduler.schedules
        next_runs = self.scheduler.next_run_times()
        try:
            stored = self.store.last_runs_by_schedule()
        except StoreError:
            stored = {}
        running = {p.schedule: p for p in self.runner.running()}
        rows = []
        for name, s in sorted((current.schedules if current else {}).items()):
            last = stored.get(name)
            mem = self.runner.last_reports.get(name)
            last_run: dict[str, Any] | None = None
            if mem is not None and (last is None or mem.started_at >= last.started_at):
                db = mem.database_cost
                last_run = {"run_id": str(mem.run_id), "outcome": mem.outcome, "started_at": mem.started_at.isoformat(),
                            "finished_at": mem.finished_at.isoformat(), "findings": len(mem.findings),
                            "error": mem.error,
                            "database_cost": {"queries_sent": db.queries_sent, "passes": db.passes,
                                              "documents_examined": db.documents_examined,
                                              "throttled": db.throttled, "request_units": db.request_units}}
            elif last is not None:
                last_run = {"run_id": str(last.id), "outcome": last.outcome, "started_at": last.started_at.isoformat(),
                            "findings": last.findings, "error": last.error,
                            "database_cost": {"queries_sent": last.queries_sent, "passes": last.passes,
                                              "documents_examined": last.documents_examined,
                                              "throttled": last.throttled, "request_units": last.request_units}}
            nxt = next_runs.get(name)
            rows.append({"name": name, "connection": s.connection, "database": s.database,
                         "collection": s.collection, "enabled": s.enabled, "trigger": s.trigger.describe(),
                         "labels": s.settings.labels, "next_run_at": nxt.isoformat() if nxt else None,
                         "last_run": last_run, "running": name in running})
        return {
            "version": ARGUS_VERSION, "started_at": self.started_at.isoformat(), "now": now.isoformat(),
            "schedules_file": str(self.schedules_path), "reload": self._last_reload,
            "store": {"where": self.store_where, "spooled_reports": len(self.spool)},
            "schedules": rows, "in_progress": [p.as_json(now) for p in self.runner.running()],
        }

    def run_view(self, run_id: str) -> dict[str, Any] | None:
        """A stored run as alerts link to it: outcome, diff and findings, with evidence queries
        masked by the run's privacy mode (the trace, which holds raw query inputs, is left out)."""
        if len(run_id) < 8:  # a prefix as tables print it, not a way to enumerate runs
            return None
        try:
            report = self.store.get_report(self.store.find_run(run_id))
        except StoreError:
            return None
        mode = report.options.privacy
        findings = []
        for f in report.findings:
            evidence = written_evidence(f, mode)  # a report stored before masking, too
            findings.append({**f.model_dump(mode="json", exclude={"evidence_query", "description", "hypothesis"}),
                             "evidence_query": evidence, "evidence_redacted": has_masked(evidence),
                             **({"description": f.description} if mode == "full" else {})})
        body = report.model_dump(mode="json", exclude={"trace", "findings", "dismissed_findings", "evaluations"})
        return {**body, "findings": findings}

    def finding_view(self, finding_id: str) -> dict[str, Any] | None:
        """A stored finding with its failing documents, as ``argus finding show --format json`` gives it
        (masked by its run's privacy mode, as the run stored it)."""
        return stored_finding(self.store, finding_id)

    # --- stop ------------------------------------------------------------------------------------

    def install_signal_handlers(self) -> None:
        """SIGTERM and SIGINT stop, SIGHUP reloads; ``wait`` acts on them in the main thread.

        A handler runs in the main thread between two bytecodes of whatever it interrupted, which
        may hold a lock the handler would need: structlog's write lock (mid log line) or the stop
        Event's condition (mid ``wait``). Both are plain locks, so a handler that logged or set the
        Event there waited on its own thread forever, and every later signal did the same. The
        handlers only write the signal's number to a pipe; ``wait`` reads it and does the rest."""
        read, write = os.pipe()
        os.set_blocking(read, False)
        os.set_blocking(write, False)
        self._signals = (read, write)
        for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            signal.signal(signum, self._on_signal)

    def _on_signal(self, signum: int, _frame: object) -> None:
        assert self._signals is not None
        with contextlib.suppress(OSError):  # a full pipe already holds a byte that will be read
            os.write(self._signals[1], bytes([signum]))

    def request_stop(self, why: str = "requested") -> None:
        """Stop from any thread (never from a signal handler: see ``install_signal_handlers``)."""
        if not self._stop.is_set():
            log.info("shutdown_requested", why=why)
        self._stop.set()
        self._reload.set()  # wake the watcher so it sees the stop
        if self._signals is not None:
            with contextlib.suppress(OSError):
                os.write(self._signals[1], b"\0")  # wake ``wait``

    def wait(self, timeout: float | None = None) -> bool:
        """Main thread: act on the signals that came, then wait up to ``timeout`` for a stop.
        True once a stop was requested."""
        if self._signals is None:
            return self._stop.wait(timeout)
        if not self._stop.is_set():
            select.select([self._signals[0]], [], [], timeout)
        try:
            received = os.read(self._signals[0], 512)
        except BlockingIOError:
            received = b""
        for signum in received:
            if signum in (signal.SIGTERM, signal.SIGINT):
                self.request_stop(signal.Signals(signum).name)
            elif signum == signal.SIGHUP:
                self.request_reload()
        return self._stop.is_set()

    def shutdown(self) -> list[str]:
        """Stop triggers, let audits finish within the grace period, interrupt the rest, store
        everything that can be stored. Returns the names of audits that had to be interrupted."""
        self._stop.set()
        self.scheduler.stop_taking_triggers()
        grace = self.settings.shutdown_grace_s
        # The grace period is the whole wait: audits get most of it, the rest is for an interrupted
        # audit to stop at its next iteration. One stuck in a query is recorded as interrupted anyway.
        reserve = min(_INTERRUPT_WAIT_S, grace / 4)
        interrupted: list[str] = []
        if not self.runner.wait_idle(grace - reserve):
            running = self.runner.running()
            interrupted = [p.schedule for p in running]
            log.warning("audits_interrupted", schedules=interrupted, grace_s=grace)
            self.runner.interrupt_all()
            if not self.runner.wait_idle(reserve):
                self.runner.record_interrupted()
                self.runner.wait_idle(_FINAL_DRAIN_WAIT_S)  # only audits keeping their own report are left
        left = self.runner.drain(wait_s=_FINAL_DRAIN_WAIT_S)
        if left:
            log.warning("shutdown_with_spooled_reports", spooled=left, spool=str(self.spool.directory))
        with contextlib.suppress(StoreError):
            self.sender.deliver_due()  # one last attempt; what is left waits in the outbox for the next start
        self.sender.client.close()
        if self.http is not None:
            self.http.stop()
            with contextlib.suppress(OSError):
                (self.settings.data_dir / LISTEN_FILE).unlink()
        self.store.close()
        self.sources.close()
        if self.embedded is not None:  # here, not at exit: an audit thread stuck in a query means no clean exit
            if self._supervisor is not None:
                self._supervisor.join(_INTERRUPT_WAIT_S)  # it saw the stop; it must not start the server again
            self.embedded.stop(_EMBEDDED_STOP_WAIT_S)
        log.info("daemon_stopped", interrupted=len(interrupted), spooled=left)
        return interrupted

    def must_exit_now(self) -> bool:
        """After ``shutdown``: True when an audit thread is still inside an audit nothing could stop
        (its run recorded as interrupted); the interpreter would wait for it at exit, so the process
        must end without waiting (``os._exit``)."""
        return self.runner.busy()
