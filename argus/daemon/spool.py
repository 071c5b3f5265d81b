"""A local spool of finished reports: durable files, written atomically, stored in order.

Every report the daemon finishes is written here first and then stored; the file is deleted
once PostgreSQL has it. So a database outage, or a crash between the audit and the store, loses
nothing, and reports reach the database in the order they finished. Storing is idempotent on
the run id, so a report stored just before a crash (file not yet deleted) is not stored twice.
"""

from __future__ import annotations

import os
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import structlog
from pydantic import BaseModel

from argus.agent.report import AuditReport

__all__ = ["MAX_DEPTH", "Spool", "serialize", "storable"]

log = structlog.get_logger("argus.spool")


MAX_DEPTH = 48  # levels of free-form JSON (a filter, a sample value) kept below a report's own fields
_CLIPPED = "<nested too deeply to store>"


def serialize(report: AuditReport) -> str:
    """The report as JSON; one that cannot be serialized whole (a filter nested hundreds of levels
    deep) is stored with its free-form values cut at ``MAX_DEPTH`` levels rather than lost."""
    try:
        return report.model_dump_json()
    except (ValueError, RecursionError):
        log.warning("report_clipped", run_id=str(report.run_id), max_depth=MAX_DEPTH)
        return storable(report).model_dump_json()


def storable(report: AuditReport) -> AuditReport:
    """``report`` with every free-form value nested deeper than ``MAX_DEPTH`` replaced by a marker."""
    clipped = _clip_model(report)
    assert isinstance(clipped, AuditReport)
    return clipped


def _clip_model(model: BaseModel) -> BaseModel:
    update = {name: _clip_value(getattr(model, name), 0) for name in type(model).model_fields}
    return model.model_copy(update=update)


def _clip_value(value: Any, depth: int) -> Any:
    if isinstance(value, BaseModel):
        return _clip_model(value)
    if depth >= MAX_DEPTH and isinstance(value, dict | list | tuple):
        return _CLIPPED
    if isinstance(value, dict):
        return {k: _clip_value(v, depth + 1) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_clip_value(v, depth + 1) for v in value]
    return value


class Spool:
    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.directory.mkdir(parents=True, exist_ok=True)
        self._bad = directory / "unreadable"
        self._lock = threading.Lock()
        self._last = 0

    def put(self, report: AuditReport) -> Path:
        """Write ``report`` durably; the name orders reports by the time they were put here."""
        with self._lock:
            stamp = max(time.time_ns(), self._last + 1)
            self._last = stamp
        final = self.directory / f"{stamp:020d}-{report.run_id}.json"
        fd, tmp = tempfile.mkstemp(dir=self.directory, prefix=".tmp-", suffix=".json")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(serialize(report))
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(tmp, final)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        self._sync_directory()
        return final

    def pending(self) -> list[Path]:
        return sorted(p for p in self.directory.glob("*.json") if not p.name.startswith(".tmp-"))

    def __len__(self) -> int:
        return len(self.pending())

    def load(self, path: Path) -> AuditReport | None:
        """The report in ``path``; an unreadable file is moved aside (and logged) so it cannot block the queue."""
        try:
            return AuditReport.model_validate_json(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            self.set_aside(path)
            log.error("spooled_report_unreadable", file=path.name, error=type(exc).__name__)
            return None

    def set_aside(self, path: Path) -> None:
        """Move a report the database refuses out of the queue (kept for inspection, not retried)."""
        self._bad.mkdir(exist_ok=True)
        os.replace(path, self._bad / path.name)
        self._sync_directory()

    def remove(self, path: Path) -> None:
        path.unlink(missing_ok=True)
        self._sync_directory()

    def _sync_directory(self) -> None:
        fd = os.open(self.directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
