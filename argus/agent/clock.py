"""Time as an argument: the loop and gates read time only through a ``Clock``."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from typing import Protocol

__all__ = ["Clock", "ManualClock", "SystemClock", "epoch_seconds"]


class Clock(Protocol):
    def now(self) -> datetime:
        """Current wall-clock time, timezone-aware UTC."""
        ...

    def monotonic(self) -> float:
        """Seconds from an arbitrary origin that never goes backwards (for budgets)."""
        ...


class SystemClock:
    def now(self) -> datetime:
        return datetime.now(UTC)

    def monotonic(self) -> float:
        return time.monotonic()


class ManualClock:
    """A clock that moves only when told to; ``tick`` advances it on every ``monotonic`` read."""

    def __init__(self, start: datetime | None = None, *, tick: float = 0.0) -> None:
        self._now = start or datetime(2026, 1, 1, tzinfo=UTC)
        self._mono = 0.0
        self._tick = tick

    def now(self) -> datetime:
        return self._now

    def monotonic(self) -> float:
        self._mono += self._tick
        return self._mono

    def advance(self, seconds: float) -> None:
        self._now += timedelta(seconds=seconds)
        self._mono += seconds


def epoch_seconds(moment: datetime) -> float:
    """Seconds since the Unix epoch; a naive datetime (as BSON decodes them) is UTC."""
    return (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).timestamp()
