"""APScheduler 3.x, one job per enabled schedule, reconciled with each valid schedules file.

Jobs never overlap themselves (``max_instances=1``), missed firings collapse into one
(``coalesce``), a firing later than the misfire grace time is skipped and counted, and audits
run on a bounded thread pool. Applying a new schedule set adds, removes and reschedules jobs in
place: running audits are not disturbed, and changed settings apply from the next firing.
"""

from __future__ import annotations

import concurrent.futures
import threading
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import structlog
from apscheduler.events import EVENT_JOB_ERROR, EVENT_JOB_MAX_INSTANCES, EVENT_JOB_MISSED, JobEvent
from apscheduler.executors.pool import BasePoolExecutor
from apscheduler.schedulers.background import BackgroundScheduler

from argus.agent.clock import Clock, SystemClock
from argus.config.schedules import ResolvedSchedule, ScheduleSet
from argus.daemon.metrics import Metrics
from argus.daemon.triggers import aps_trigger

__all__ = ["AuditScheduler"]

log = structlog.get_logger("argus.scheduler")

_firing = threading.local()


def scheduled_time() -> datetime | None:
    """The time the firing running in this thread was scheduled for (after jitter)."""
    return getattr(_firing, "at", None)


def _with_scheduled_time(at: datetime | None, fn: Callable[..., Any], *args: Any) -> Any:
    _firing.at = at
    try:
        return fn(*args)
    finally:
        _firing.at = None


class _TimedPool(concurrent.futures.ThreadPoolExecutor):
    """APScheduler 3 calls ``run_job(job, jobstore_alias, run_times, logger_name)`` through its
    pool but does not pass the run time to the job function; this pool hands it over."""

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> concurrent.futures.Future[Any]:
        run_times = args[2] if len(args) > 2 else None
        at = run_times[-1] if run_times else None  # coalesced: the latest firing
        return super().submit(_with_scheduled_time, at, fn, *args, **kwargs)


class _AuditExecutor(BasePoolExecutor):
    def __init__(self, max_workers: int) -> None:
        super().__init__(_TimedPool(max_workers, thread_name_prefix="argus-audit"))


class AuditScheduler:
    def __init__(self, run: Callable[[str, datetime | None], object], metrics: Metrics, *, workers: int = 4,
                 misfire_grace_s: float = 60.0, clock: Clock | None = None) -> None:
        self._run = run
        self._metrics = metrics
        self._clock = clock or SystemClock()
        self._lock = threading.Lock()
        self._current: ScheduleSet | None = None
        self._stopping = threading.Event()
        self._aps = BackgroundScheduler(
            executors={"default": _AuditExecutor(workers)},
            job_defaults={"coalesce": True, "max_instances": 1, "misfire_grace_time": int(misfire_grace_s)},
            timezone=UTC)
        self._aps.add_listener(self._on_event, EVENT_JOB_MISSED | EVENT_JOB_MAX_INSTANCES | EVENT_JOB_ERROR)

    @property
    def schedules(self) -> ScheduleSet | None:
        return self._current

    def start(self) -> None:
        self._aps.start()

    def apply(self, new: ScheduleSet) -> dict[str, list[str]]:
        """Make the jobs match ``new``; returns the names added, removed and changed."""
        with self._lock:
            old = self._current.schedules if self._current else {}
            self._current = new
            want = {n: s for n, s in new.schedules.items() if s.enabled}
            have = {job.id for job in self._aps.get_jobs()}
            added = sorted(set(want) - have)
            removed = sorted(have - set(want))
            changed = sorted(n for n in set(want) & have if old.get(n) and old[n].trigger != want[n].trigger)
            for name in removed:
                self._aps.remove_job(name)
            for name in changed:
                self._aps.reschedule_job(name, trigger=aps_trigger(want[name].trigger))
            for name in added:
                self._add(want[name])
            settings_changed = sorted(n for n in set(want) & have if old.get(n) and old[n] != want[n]
                                      and n not in changed)
        return {"added": added, "removed": removed, "rescheduled": changed, "updated": settings_changed}

    def _add(self, schedule: ResolvedSchedule) -> None:
        extra = {"next_run_time": self._clock.now()} if schedule.settings.run_at_start else {}
        self._aps.add_job(self._job, trigger=aps_trigger(schedule.trigger), id=schedule.name, name=schedule.name,
                          args=[schedule.name], **extra)

    def _job(self, name: str) -> None:
        if self._stopping.is_set():
            self._metrics.skipped.labels(name, "shutting_down").inc()
            return
        current = self._current
        if current is None or name not in current.schedules or not current.schedules[name].enabled:
            return  # removed by a reload after this firing was queued
        self._run(name, scheduled_time())

    def _on_event(self, event: JobEvent) -> None:
        name = event.job_id
        if event.code == EVENT_JOB_MISSED:
            self._metrics.skipped.labels(name, "missed").inc()
            log.warning("trigger_missed", schedule=name, scheduled=str(getattr(event, "scheduled_run_time", "")))
        elif event.code == EVENT_JOB_MAX_INSTANCES:
            self._metrics.skipped.labels(name, "still_running").inc()
            log.info("trigger_skipped", schedule=name, reason="still_running")
        elif event.code == EVENT_JOB_ERROR:
            log.error("job_error", schedule=name, error=type(getattr(event, "exception", None)).__name__)

    def next_run_times(self) -> dict[str, datetime | None]:
        return {job.id: job.next_run_time for job in self._aps.get_jobs()}

    def stop_taking_triggers(self) -> None:
        """No new audit starts after this; running ones go on."""
        self._stopping.set()
        if self._aps.running:
            self._aps.shutdown(wait=False)
