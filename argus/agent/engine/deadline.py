"""A read's time limit, kept by the in-process engine itself, as a server keeps ``maxTimeMS``.

Loops over documents call ``check()`` every few hundred documents, and regular expressions run
under the ``regex`` module's ``timeout``, so one catastrophic pattern on one long string ends on
time too. That timeout counts the process's CPU time (C's ``clock()``), which on a busy machine
runs slower than the wall clock the limit is set in: ``regex_timeout_s`` scales the wall time left
by the share of a core the read has had. Past the limit the read ends in pymongo's ``ExecutionTimeout`` (code 50,
``MaxTimeMSExpired``), exactly what a server answers.
"""

from __future__ import annotations

import os
import time
from typing import Any

from pymongo.errors import ExecutionTimeout

__all__ = ["Deadline", "timed_out"]

_EXCEEDED = 50
_MEASURED_AFTER_S = 0.05  # a read's CPU share is measured once it has run this long
_SHARE_FLOOR = 0.05  # a read gets at least this share of a core (a timeout of 0 would be no limit)


def _load_share() -> float:
    """The share of a core a busy process can expect from the one-minute load average."""
    try:
        load = os.getloadavg()[0]
    except OSError:
        return 1.0
    return min(1.0, (os.cpu_count() or 1) / max(load, 1.0))


def timed_out(limit_ms: float | None) -> ExecutionTimeout:
    limit = f" ({limit_ms:.0f} ms)" if limit_ms is not None else ""
    message = f"operation exceeded time limit{limit}"
    return ExecutionTimeout(message, _EXCEEDED, {"ok": 0, "errmsg": message, "code": _EXCEEDED,
                                                 "codeName": "MaxTimeMSExpired"})


class Deadline:
    """The monotonic time a read must end by (``None``: no limit)."""

    def __init__(self, limit_ms: float | None, *, clock: Any = time.monotonic, cpu_clock: Any = time.process_time,
                 load: Any = None) -> None:
        self._clock = clock
        self._cpu_clock = cpu_clock
        self._load = load if load is not None else _load_share
        self.limit_ms = limit_ms
        self.at = clock() + limit_ms / 1000 if limit_ms is not None and limit_ms > 0 else None
        self._wall0 = clock()
        self._cpu0 = cpu_clock()

    def check(self) -> None:
        if self.at is not None and self._clock() > self.at:
            raise timed_out(self.limit_ms)

    def passed(self) -> bool:
        return self.at is not None and self._clock() >= self.at

    def remaining_s(self) -> float | None:
        """Seconds left (at least a millisecond, so a regex timeout is never 'no limit'), or None."""
        if self.at is None:
            return None
        return max(self.at - self._clock(), 0.001)

    def regex_timeout_s(self) -> float | None:
        """The ``regex`` module's ``timeout`` for the wall time left: that timeout counts CPU seconds,
        so the time left is scaled by the share of a core this read has had (until a share can be
        measured, the machine's load average says what to expect)."""
        left = self.remaining_s()
        if left is None:
            return None
        wall = self._clock() - self._wall0
        share = (self._cpu_clock() - self._cpu0) / wall if wall >= _MEASURED_AFTER_S else self._load()
        return max(left * min(max(share, _SHARE_FLOOR), 1.0), 0.001)

    def expired(self) -> ExecutionTimeout:
        return timed_out(self.limit_ms)
