"""Schedules' triggers as APScheduler triggers, and the slot that names one firing everywhere.

Interval triggers count from a fixed origin (2000-01-01 UTC), not from when a process started,
so every replica computes the same firing times. A firing's *slot* is its time before jitter:
replicas claim a slot in PostgreSQL, so one firing runs once however many replicas see it.

Cron triggers are wrapped in ``DstSafe``: at a daylight-saving fall-back APScheduler 3.11 can
return the same fire time again (agronholm/apscheduler#1021), and its scheduler loop would then
spin forever. The wrapper makes fire times strictly increasing, which gives crontab's own
behaviour: a wall-clock time in the repeated hour fires once (its first occurrence), and a time
the spring change skips fires once, an hour later.
"""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

from apscheduler.triggers.base import BaseTrigger
from apscheduler.triggers.combining import OrTrigger
from apscheduler.triggers.cron import CronTrigger as ApsCron
from apscheduler.triggers.interval import IntervalTrigger as ApsInterval

from argus.config.cron import parse_cron
from argus.config.schedule_models import CronTrigger, IntervalTrigger

__all__ = ["ORIGIN", "DstSafe", "GridInterval", "aps_trigger", "interval_of", "next_fire_times", "slot_of"]

ORIGIN = datetime(2000, 1, 1, tzinfo=UTC)
_PROBE = timedelta(minutes=1)
_PROBES = 3000  # a little over two days of minutes: past any DST change
_INTERVAL_HORIZON = timedelta(days=8)  # a whole week of a cron schedule, weekend included
_INTERVAL_MAX_FIRINGS = 1000


class DstSafe(BaseTrigger):
    """A trigger whose next fire time is always later than the previous one."""

    def __init__(self, inner: BaseTrigger) -> None:
        self.inner = inner

    def get_next_fire_time(self, previous_fire_time: datetime | None, now: datetime) -> datetime | None:
        nxt = self.inner.get_next_fire_time(previous_fire_time, now)
        if previous_fire_time is None:
            return nxt
        probe = previous_fire_time
        for _ in range(_PROBES):
            if nxt is None or nxt > previous_fire_time:
                return nxt
            probe += _PROBE
            nxt = self.inner.get_next_fire_time(None, probe)
        return self.inner.get_next_fire_time(None, max(now, previous_fire_time) + timedelta(days=1))

    def __str__(self) -> str:
        return str(self.inner)


class GridInterval(BaseTrigger):
    """Every ``step`` seconds on a fixed grid, each firing delayed by up to ``jitter`` seconds.

    APScheduler's own interval jitter adds to the previous, already jittered, firing, so an
    "every 30s, jitter 25s" schedule drifts to about every 42 s and skips slots. Here every
    firing stays within its own slot: [slot, slot + jitter].
    """

    def __init__(self, step: float, jitter: float | None = None) -> None:
        self.step = step
        self.jitter = jitter or 0.0
        self._grid = ApsInterval(seconds=step, start_date=ORIGIN, timezone=UTC)

    def _floor(self, at: datetime) -> datetime:
        index = int((at.astimezone(UTC) - ORIGIN).total_seconds() // self.step)
        return ORIGIN + timedelta(seconds=index * self.step)

    def get_next_fire_time(self, previous_fire_time: datetime | None, now: datetime) -> datetime | None:
        base_previous = None if previous_fire_time is None else self._floor(previous_fire_time)
        base = self._grid.get_next_fire_time(base_previous, now)
        if base is None or not self.jitter:
            return base
        return base + timedelta(seconds=random.uniform(0, self.jitter))

    def __str__(self) -> str:
        return f"every {self.step:g}s" + (f" +0\N{EN DASH}{self.jitter:g}s" if self.jitter else "")


def aps_trigger(trigger: CronTrigger | IntervalTrigger, *, with_jitter: bool = True) -> BaseTrigger:
    jitter = int(trigger.jitter.total_seconds()) if (with_jitter and trigger.jitter) else None
    if isinstance(trigger, IntervalTrigger):
        return GridInterval(trigger.every.total_seconds(), jitter)
    spec = parse_cron(trigger.cron)
    tz = ZoneInfo(trigger.timezone)
    common = {"minute": spec.minute, "hour": spec.hour, "month": spec.month, "timezone": tz}
    if spec.day_or_weekday:  # crontab: either the day of month or the day of week
        return DstSafe(OrTrigger([ApsCron(day=spec.day, **common), ApsCron(day_of_week=spec.day_of_week, **common)],
                                 jitter=jitter))
    return DstSafe(ApsCron(day=spec.day, day_of_week=spec.day_of_week, jitter=jitter, **common))


def next_fire_times(trigger: CronTrigger | IntervalTrigger, now: datetime, count: int = 3) -> list[datetime]:
    """The next ``count`` firing times after ``now`` (before jitter)."""
    aps = aps_trigger(trigger, with_jitter=False)
    out: list[datetime] = []
    previous = None
    current = now
    while len(out) < count:
        nxt = aps.get_next_fire_time(previous, current)
        if nxt is None:
            break
        out.append(nxt)
        previous, current = nxt, nxt + timedelta(microseconds=1)
    return out


def slot_of(trigger: CronTrigger | IntervalTrigger, run_time: datetime) -> datetime:
    """The firing ``run_time`` belongs to: the latest firing time at or before it, without jitter."""
    run_time = run_time.astimezone(UTC)
    if isinstance(trigger, IntervalTrigger):
        step = trigger.every.total_seconds()
        index = int((run_time - ORIGIN).total_seconds() // step)
        return ORIGIN + timedelta(seconds=index * step)
    aps = aps_trigger(trigger, with_jitter=False)
    lookback = (trigger.jitter or timedelta(0)) + timedelta(minutes=10)
    slot = None
    cursor = run_time - lookback
    previous = None
    while True:
        nxt = aps.get_next_fire_time(previous, cursor)
        if nxt is None or nxt > run_time:
            break
        slot, previous, cursor = nxt, nxt, nxt + timedelta(microseconds=1)
    return (slot or run_time.replace(microsecond=0)).astimezone(UTC)


def interval_of(trigger: CronTrigger | IntervalTrigger, now: datetime) -> float:
    """Seconds between two firings: ``every`` for intervals; for cron, the longest gap between
    consecutive firings in the coming week, so a weekday schedule's weekend is not mistaken for
    missed runs by an alert on "no success in twice the interval"."""
    if isinstance(trigger, IntervalTrigger):
        return trigger.every.total_seconds()
    aps = aps_trigger(trigger, with_jitter=False)
    longest = 0.0
    previous = aps.get_next_fire_time(None, now)
    for count in range(_INTERVAL_MAX_FIRINGS):
        if previous is None:
            break
        nxt = aps.get_next_fire_time(previous, previous + timedelta(microseconds=1))
        if nxt is None:
            break
        longest = max(longest, (nxt - previous).total_seconds())
        if count >= 1 and nxt - now > _INTERVAL_HORIZON:
            break
        previous = nxt
    return longest
