"""structlog configuration, done once per process: snake_case events with key-value context.

Every line goes through the same redaction (``argus.agent.secrets``), Argus's own events and the
standard-library loggers of the libraries alike (psycopg, psycopg_pool, apscheduler, pymongo,
httpx, openai): they are routed to one root handler with the same renderer, so Python's
last-resort handler never prints a library's raw message. Libraries log at WARNING and above
only: their INFO and DEBUG lines carry URLs and commands (with document values in them).
"""

from __future__ import annotations

import logging
import sys
from collections.abc import MutableMapping
from typing import Any

import structlog

from argus.agent.secrets import SECRETS

__all__ = ["LIBRARY_LEVEL", "configure_logging"]

LIBRARY_LEVEL = logging.WARNING


def _redact_fields(_logger: Any, _method: str, event: MutableMapping[str, Any]) -> MutableMapping[str, Any]:
    scrubbed: MutableMapping[str, Any] = SECRETS.scrub(dict(event))
    return scrubbed


def _redact_line(_logger: Any, _method: str, line: Any) -> Any:
    return SECRETS.redact(line) if isinstance(line, str) else line


class _StderrHandler(logging.Handler):
    """Writes to whatever ``sys.stderr`` is when the record comes (see the logger factory)."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            line = self.format(record)
            sys.stderr.write(line + "\n")
            sys.stderr.flush()
        except Exception:  # a closed stream or a broken formatter must not raise into a library
            pass


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
            _redact_fields,
            renderer,
            _redact_line,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(numeric),
        # Look stderr up when a logger is made, not now: whoever replaced sys.stderr since (a test
        # runner, a supervisor) gets the lines, and a closed stream is never written to.
        logger_factory=lambda *_: structlog.PrintLogger(sys.stderr),
        cache_logger_on_first_use=False,
    )
    handler = _StderrHandler()
    handler.setFormatter(structlog.stdlib.ProcessorFormatter(
        foreign_pre_chain=[structlog.stdlib.add_logger_name, structlog.processors.add_log_level,
                           structlog.processors.TimeStamper(fmt="iso", utc=True), _one_line],
        processors=[structlog.stdlib.ProcessorFormatter.remove_processors_meta, _redact_fields, renderer,
                    _redact_line]))
    root = logging.getLogger()
    for old in [h for h in root.handlers if isinstance(h, _StderrHandler)]:
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(max(numeric, LIBRARY_LEVEL))


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
