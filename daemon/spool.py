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

import structlog

from agent.report import AuditReport

__all__ = ["Spool"]

log = structlog.get_logger("argus.spool")


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
                handle.write(report.model_dump_json())
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
