"""A read's time limit, kept by the in-process engine itself, as a server keeps ``maxTimeMS``.

Loops over documents call ``check()`` every few hundred documents, and regular expressions run
under the ``regex`` module's ``timeout``, so one catastrophic pattern on one long string ends on
time too. Past the limit the read ends in pymongo's ``ExecutionTimeout`` (code 50,
``MaxTimeMSExpired``), exactly what a server answers.
"""

from __future__ import annotations

import time
from typing import Any

from pymongo.errors import ExecutionTimeout

__all__ = ["Deadline", "timed_out"]

_EXCEEDED = 50


def timed_out(limit_ms: float | None) -> ExecutionTimeout:
    limit = f" ({limit_ms:.0f} ms)" if limit_ms is not None else ""
    message = f"operation exceeded time limit{limit}"
    return ExecutionTimeout(message, _EXCEEDED, {"ok": 0, "errmsg": message, "code": _EXCEEDED,
                                                 "codeName": "MaxTimeMSExpired"})


class Deadline:
    """The monotonic time a read must end by (``None``: no limit)."""

    def __init__(self, limit_ms: float | None, *, clock: Any = time.monotonic) -> None:
        self._clock = clock
        self.limit_ms = limit_ms
        self.at = clock() + limit_ms / 1000 if limit_ms is not None and limit_ms > 0 else None

    def check(self) -> None:
        if self.at is not None and self._clock() > self.at:
            raise timed_out(self.limit_ms)

    def remaining_s(self) -> float | None:
        """Seconds left (at least a millisecond, so a regex timeout is never 'no limit'), or None."""
        if self.at is None:
            return None
        return max(self.at - self._clock(), 0.001)

    def expired(self) -> ExecutionTimeout:
        return timed_out(self.limit_ms)
