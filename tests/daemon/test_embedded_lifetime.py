"""The embedded PostgreSQL a daemon started ends with the daemon (issue 36: after a clean SIGTERM
exit its server kept running)."""

from __future__ import annotations

import contextlib
import time
from pathlib import Path

import psutil
import yaml

from tests.daemon.process import DaemonProcess

ROOT = Path(__file__).resolve().parents[2]


def _postmaster(pgdata: Path) -> int | None:
    pidfile = pgdata / "postmaster.pid"
    with contextlib.suppress(OSError, ValueError, IndexError):
        return int(pidfile.read_text().splitlines()[0])
    return None


def _schedules(tmp_path: Path) -> Path:
    """One demo schedule that runs at start, then hourly: the daemon is up and idle."""
    schedules = tmp_path / "schedules.yaml"
    schedules.write_text(yaml.safe_dump({
        "connections": {"demo": {"files": {"orders": str(ROOT / "deploy/demo/orders.jsonl")}}},
        "schedules": [{"name": "orders", "connection": "demo", "database": "shop", "collection": "orders",
                       "trigger": {"every": "1h"}, "run_at_start": True}]}))
    return schedules


def _still_running(pid: int) -> bool:
    """Whether ``pid`` still runs 10 s on: the postmaster's own exit follows the daemon's fast shutdown request."""
    def alive() -> bool:
        return psutil.pid_exists(pid) and psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    deadline = time.monotonic() + 10
    while alive() and time.monotonic() < deadline:
        time.sleep(0.2)
    return alive()


def test_the_embedded_server_the_daemon_started_stops_with_it(tmp_path: Path) -> None:
    schedules = _schedules(tmp_path)
    data = tmp_path / "data"
    daemon = DaemonProcess(schedules, {"ARGUS_DATA_DIR": str(data), "ARGUS_DATABASE_URL": ""},
                           tmp_path / "daemon.log")
    try:
        daemon.wait_until("/readyz", lambda: daemon.get("/readyz")[0] == 200, timeout=120)
        pid = _postmaster(data / "pgdata")
        assert pid is not None and psutil.pid_exists(pid), daemon.tail()
    finally:
        code = daemon.stop()
    assert code == 0, daemon.tail()
    alive = _still_running(pid)
    assert not alive, f"postgres {pid} outlived the daemon:\n{daemon.tail()}"


def test_a_daemon_started_after_one_was_killed_stops_the_server_it_joined(tmp_path: Path) -> None:
    """A SIGKILLed daemon leaves its server running; the next daemon joins it and stops it at its own end."""
    schedules = _schedules(tmp_path)
    data = tmp_path / "data"
    env = {"ARGUS_DATA_DIR": str(data), "ARGUS_DATABASE_URL": ""}
    killed = DaemonProcess(schedules, env, tmp_path / "killed.log")
    killed.wait_until("/readyz", lambda: killed.get("/readyz")[0] == 200, timeout=120)
    killed.kill()
    daemon = DaemonProcess(schedules, env, tmp_path / "daemon.log")
    try:
        daemon.wait_until("/readyz", lambda: daemon.get("/readyz")[0] == 200, timeout=120)
        pid = _postmaster(data / "pgdata")
        assert pid is not None and psutil.pid_exists(pid), daemon.tail()
    finally:
        code = daemon.stop()
    assert code == 0, daemon.tail()
    alive = _still_running(pid)
    if alive:
        psutil.Process(pid).terminate()
    assert not alive, f"postgres {pid} outlived the daemon:\n{daemon.tail()}"
