"""structlog configuration, done once per process: snake_case events with key-value context."""

from __future__ import annotations

import contextlib
import logging
import sys

import structlog

__all__ = ["configure_logging"]


def configure_logging(level: str = "INFO", fmt: str = "console") -> None:
    numeric = logging.getLevelName(level.upper())
    if not isinstance(numeric, int):
        numeric = logging.INFO
    renderer: structlog.typing.Processor = (
        structlog.processors.JSONRenderer() if fmt == "json" else structlog.dev.ConsoleRenderer(colors=False))
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(numeric),
        # Look stderr up when a logger is made, not now: whoever replaced sys.stderr since (a test
        # runner, a supervisor) gets the lines, and a closed stream is never written to.
        logger_factory=lambda *_: structlog.PrintLogger(sys.stderr),
        cache_logger_on_first_use=False,
    )
    _route_library_logs(renderer, numeric)


class _Stderr(logging.Handler):
    def emit(self, record: logging.LogRecord) -> None:
        with contextlib.suppress(OSError, ValueError):  # a closed stream: nowhere to say it
            sys.stderr.write(self.format(record) + "\n")


def _one_line(_logger: object, _name: str, event: structlog.typing.EventDict) -> structlog.typing.EventDict:
    """A library's message (psycopg_pool, APScheduler) as one structured line: its first line, and the
    exception's type rather than a traceback."""
    record = event.get("_record")
    message = str(event.pop("event", "")).strip().splitlines()
    event["event"] = "library_log"
    event["logger"] = getattr(record, "name", "")
    event["message"] = message[0][:300] if message else ""
    exc = getattr(record, "exc_info", None)
    if exc and exc[0] is not None:
        event["error"] = exc[0].__name__
    event.pop("exc_info", None)
    return event


def _route_library_logs(renderer: structlog.typing.Processor, level: int) -> None:
    handler = _Stderr()
    handler.setFormatter(structlog.stdlib.ProcessorFormatter(
        processors=[structlog.stdlib.ProcessorFormatter.remove_processors_meta, renderer],
        foreign_pre_chain=[structlog.processors.add_log_level, structlog.processors.TimeStamper(fmt="iso", utc=True),
                           _one_line]))
    root = logging.getLogger()
    for old in [h for h in root.handlers if isinstance(h, _Stderr)]:  # configured again: replace, not add
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(max(level, logging.WARNING))  # libraries' info lines are not the daemon's business
