"""``python -m tests.daemon.signal_at POINT SIGNAL -- argus daemon arguments``: the real daemon,
sending itself SIGNAL once, from inside POINT of its start-up (see ``POINTS``), as soon as
its handlers are installed (before, the default action ends the process)."""

from __future__ import annotations

import builtins
import os
import signal
import sys
from collections.abc import Callable
from typing import Any

import structlog._output

from argus.daemon import cli, service
from argus.daemon.http import HttpServer
from argus.daemon.scheduler import AuditScheduler

_sent = False


def _send(signum: int) -> None:
    global _sent
    if not _sent and signal.getsignal(signum) not in (signal.SIG_DFL, signal.default_int_handler):
        _sent = True
        os.kill(os.getpid(), signum)


def _inside(owner: Any, name: str, signum: int) -> None:
    original: Callable[..., Any] = getattr(owner, name)

    def wrapped(*args: Any, **kwargs: Any) -> Any:
        _send(signum)
        return original(*args, **kwargs)

    setattr(owner, name, wrapped)


def _mid_log_line(signum: int) -> None:
    """While a log line is being written: structlog holds its (non-reentrant) write lock."""
    def print_(*args: Any, **kwargs: Any) -> None:
        _send(signum)
        builtins.print(*args, **kwargs)

    structlog._output.print = print_  # type: ignore[attr-defined]


POINTS: dict[str, Callable[[int], None]] = {
    "load_schedules": lambda s: _inside(service, "load_schedules", s),
    "open_store": lambda s: _inside(service.Daemon, "_open_store", s),
    "scheduler_start": lambda s: _inside(AuditScheduler, "start", s),
    "http_start": lambda s: _inside(HttpServer, "start", s),
    "log_line": _mid_log_line,
}

if __name__ == "__main__":
    point, name = sys.argv[1], sys.argv[2]
    POINTS[point](int(signal.Signals[name]))
    sys.argv = ["argus", *sys.argv[sys.argv.index("--") + 1:]]
    cli.main()
