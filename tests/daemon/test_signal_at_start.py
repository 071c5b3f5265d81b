"""A SIGTERM or SIGINT ends the daemon wherever in its start-up it comes (issue 36: one that came
mid log line, as the first audit started, was lost and the process never exited)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.daemon.process import _CHECKOUT, DaemonProcess, free_port
from tests.daemon.signal_at import POINTS

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(("point", "signame"), [(p, "SIGTERM") for p in POINTS] + [("log_line", "SIGINT")])
def test_a_signal_at_any_point_of_start_up_stops_the_daemon(point: str, signame: str, pg_dsn: str,
                                                            tmp_path: Path) -> None:
    schedules = tmp_path / "schedules.yaml"
    schedules.write_text(yaml.safe_dump({
        "connections": {"demo": {"files": {"orders": str(ROOT / "deploy/demo/orders.jsonl")}}},
        "schedules": [{"name": "orders", "connection": "demo", "database": "shop", "collection": "orders",
                       "trigger": {"every": "1h"}, "run_at_start": True}]}))
    port = free_port()
    daemon = DaemonProcess(None, {"ARGUS_DATABASE_URL": pg_dsn, "ARGUS_DATA_DIR": str(tmp_path / "data"),
                                  "ARGUS_SHUTDOWN_GRACE_S": "20"}, tmp_path / "daemon.log", port=port,
                           argv=[sys.executable, "-m", "tests.daemon.signal_at", point, signame, "--", "daemon",
                                 "--schedules", str(schedules), "--listen", f"127.0.0.1:{port}"], cwd=Path(_CHECKOUT))
    try:
        code = daemon.proc.wait(90)  # the grace period, with room for start-up on a loaded machine
    except subprocess.TimeoutExpired:
        daemon.kill()
        raise AssertionError(f"the daemon ignored {signame} sent from {point}:\n{daemon.tail()}") from None
    daemon.kill()
    events = [e.get("event") for e in daemon.events()]
    assert code == 0, daemon.tail()
    assert "shutdown_requested" in events and "daemon_stopped" in events, daemon.tail()
