"""Triggers: crontab semantics, time zones, daylight saving changes, slots, and misfires after a pause."""

from __future__ import annotations

import threading
import time
from datetime import UTC, datetime, timedelta

import pytest
from freezegun import freeze_time

from argus.config.schedule_models import AuditSettings, CronTrigger, IntervalTrigger
from argus.config.schedules import ResolvedSchedule, ScheduleSet
from argus.daemon.metrics import Metrics
from argus.daemon.scheduler import AuditScheduler
from argus.daemon.triggers import aps_trigger, interval_of, next_fire_times, slot_of


def _times(cron: str, tz: str, start: datetime, n: int = 4) -> list[str]:
    return [t.isoformat() for t in next_fire_times(CronTrigger(cron=cron, timezone=tz), start, n)]


def test_monday_means_monday() -> None:
    # 2026-11-23 is a Monday; APScheduler's own from_crontab would read 1 as Tuesday
    assert _times("0 6 * * 1", "UTC", datetime(2026, 11, 22, tzinfo=UTC), 2) == [
        "2026-11-23T06:00:00+00:00", "2026-11-30T06:00:00+00:00"]


def test_day_of_month_or_day_of_week() -> None:
    got = [t[:10] for t in _times("0 0 1 * 1", "UTC", datetime(2026, 11, 24, tzinfo=UTC), 3)]
    assert got == ["2026-11-30", "2026-12-01", "2026-12-07"]


def test_time_zone_is_honoured() -> None:
    # 2025-12-31 12:00 UTC is 21:00 in Tokyo: the next 06:00 there is 21:00 UTC the same day
    assert _times("0 6 * * *", "Asia/Tokyo", datetime(2025, 12, 31, 12, tzinfo=UTC), 1) == [
        "2026-01-01T06:00:00+09:00"]


def test_dst_fall_back_fires_once_and_never_repeats_a_time() -> None:
    # Berlin 2026-10-25: 02:00-03:00 happens twice. APScheduler 3.11 alone returns 02:30 forever
    # (agronholm/apscheduler#1021), which would hang the scheduler.
    assert _times("30 2 * * *", "Europe/Berlin", datetime(2026, 10, 24, 12, tzinfo=UTC), 3) == [
        "2026-10-25T02:30:00+02:00", "2026-10-26T02:30:00+01:00", "2026-10-27T02:30:00+01:00"]


def test_dst_fall_back_every_half_hour_keeps_moving() -> None:
    got = _times("*/30 * * * *", "America/New_York", datetime(2026, 11, 1, 4, 50, tzinfo=UTC), 4)
    assert got == ["2026-11-01T01:00:00-04:00", "2026-11-01T01:30:00-04:00", "2026-11-01T02:00:00-05:00",
                   "2026-11-01T02:30:00-05:00"]


def test_dst_spring_forward_runs_the_missing_time_once() -> None:
    got = _times("30 2 * * *", "Europe/Berlin", datetime(2026, 3, 28, 12, tzinfo=UTC), 2)
    assert got == ["2026-03-29T02:30:00+01:00", "2026-03-30T02:30:00+02:00"]  # the first is 03:30 CEST


def test_interval_firings_are_the_same_in_every_replica() -> None:
    trigger = IntervalTrigger(every=timedelta(minutes=30))
    a = aps_trigger(trigger).get_next_fire_time(None, datetime(2026, 1, 1, 10, 7, tzinfo=UTC))
    b = aps_trigger(trigger).get_next_fire_time(None, datetime(2026, 1, 1, 10, 21, tzinfo=UTC))
    assert a == b == datetime(2026, 1, 1, 10, 30, tzinfo=UTC)


def test_a_jittered_interval_fires_once_in_every_slot_without_drifting() -> None:
    trigger = aps_trigger(IntervalTrigger(every=timedelta(seconds=30), jitter=timedelta(seconds=25)))
    now = datetime(2026, 1, 1, 10, 0, 1, tzinfo=UTC)
    previous, fired = None, []
    for _ in range(200):
        previous = trigger.get_next_fire_time(previous, now)
        fired.append(previous)
        now = previous
    slots = [slot_of(IntervalTrigger(every=timedelta(seconds=30)), t) for t in fired]
    assert slots == [datetime(2026, 1, 1, 10, 0, 30, tzinfo=UTC) + timedelta(seconds=30 * i) for i in range(200)]
    assert all(timedelta(0) <= t - s <= timedelta(seconds=25) for t, s in zip(fired, slots, strict=True))


@pytest.mark.parametrize(("trigger", "run", "slot"), [
    (IntervalTrigger(every=timedelta(minutes=30), jitter=timedelta(minutes=5)),
     datetime(2026, 1, 1, 10, 34, tzinfo=UTC), datetime(2026, 1, 1, 10, 30, tzinfo=UTC)),
    (CronTrigger(cron="*/15 * * * *", jitter=timedelta(seconds=60)),
     datetime(2026, 1, 1, 10, 45, 40, tzinfo=UTC), datetime(2026, 1, 1, 10, 45, tzinfo=UTC)),
    (CronTrigger(cron="0 6 * * *", timezone="Europe/Berlin"),
     datetime(2026, 7, 1, 4, 0, 3, tzinfo=UTC), datetime(2026, 7, 1, 4, 0, tzinfo=UTC)),
])
def test_slot_is_the_firing_before_jitter(trigger: CronTrigger | IntervalTrigger, run: datetime,
                                          slot: datetime) -> None:
    assert slot_of(trigger, run) == slot


def _set(every: float, grace_name: str = "s") -> ScheduleSet:
    from pathlib import Path

    schedule = ResolvedSchedule(grace_name, "c", "d", "x", IntervalTrigger(every=timedelta(seconds=every)),
                                AuditSettings())
    return ScheduleSet(path=Path("s.yaml"), connections={}, schedules={grace_name: schedule}, digest="1")


def _wait_for(predicate, timeout: float = 5.0) -> bool:  # type: ignore[no-untyped-def]
    for _ in range(int(timeout / 0.01)):   # counts sleeps: freezegun also freezes time.monotonic
        if predicate():
            return True
        time.sleep(0.01)
    return False


def test_a_pause_collapses_missed_firings_into_one_run() -> None:
    runs: list[datetime | None] = []
    with freeze_time("2026-01-01 00:00:01", tick=False) as frozen:  # not on a firing: no race with start()
        metrics = Metrics()
        scheduler = AuditScheduler(lambda name, at: runs.append(at), metrics, workers=1, misfire_grace_s=5)
        scheduler.apply(_set(10))
        scheduler.start()
        try:
            frozen.move_to("2026-01-01 00:00:10.5")
            scheduler._aps.wakeup()
            assert _wait_for(lambda: len(runs) == 1)
            frozen.move_to("2026-01-01 00:01:02")          # the process was paused for a minute
            scheduler._aps.wakeup()
            assert _wait_for(lambda: len(runs) == 2)
            time.sleep(0.2)
            assert len(runs) == 2                          # five missed firings ran once, not five times
            assert runs == [datetime(2026, 1, 1, 0, 0, 10, tzinfo=UTC),   # each run knows its firing
                            datetime(2026, 1, 1, 0, 1, 0, tzinfo=UTC)]
            frozen.move_to("2026-01-01 00:02:38")          # paused again, resuming 8 s after a firing
            scheduler._aps.wakeup()
            assert _wait_for(lambda: metrics.sample("argus_triggers_skipped_total",
                                                    {"schedule": "s", "reason": "missed"}) == 1.0)
            assert len(runs) == 2                          # later than the 5 s grace: skipped and counted
        finally:
            scheduler.stop_taking_triggers()


def test_a_slow_audit_never_overlaps_itself() -> None:
    release = threading.Event()
    started: list[int] = []
    with freeze_time("2026-01-01 00:00:01", tick=False) as frozen:
        metrics = Metrics()
        scheduler = AuditScheduler(lambda name, at: (started.append(1), release.wait(5)), metrics, workers=4)
        scheduler.apply(_set(10))
        scheduler.start()
        try:
            frozen.move_to("2026-01-01 00:00:10.1")
            scheduler._aps.wakeup()
            assert _wait_for(lambda: len(started) == 1)
            frozen.move_to("2026-01-01 00:00:20.1")
            scheduler._aps.wakeup()
            assert _wait_for(lambda: metrics.sample("argus_triggers_skipped_total",
                                                    {"schedule": "s", "reason": "still_running"}) == 1.0)
            assert len(started) == 1
        finally:
            release.set()
            scheduler.stop_taking_triggers()


def test_the_interval_of_every_is_its_step() -> None:
    assert interval_of(IntervalTrigger(every=timedelta(minutes=10), jitter=timedelta(seconds=30)),
                       datetime(2026, 1, 1, tzinfo=UTC)) == 600.0


@pytest.mark.parametrize(("cron", "tz", "seconds"), [
    ("*/15 * * * *", "UTC", 15 * 60),
    ("0 6 * * *", "UTC", 24 * 3600),
    ("0 6 * * 1-5", "Europe/Berlin", 3 * 24 * 3600),        # Friday to Monday: a weekend is not a missed run
    ("0 9-17 * * 1-5", "UTC", 64 * 3600),                  # Friday 17:00 to Monday 09:00
    ("0 0 1 * *", "UTC", 31 * 24 * 3600),                  # monthly: the longest month ahead
])
def test_the_interval_of_a_cron_is_its_longest_gap_in_the_coming_week(cron: str, tz: str, seconds: int) -> None:
    # 2026-11-25 is a Wednesday; the next two month starts are 31 days apart (Dec 1 to Jan 1)
    assert interval_of(CronTrigger(cron=cron, timezone=tz), datetime(2026, 11, 25, 12, tzinfo=UTC)) == seconds
