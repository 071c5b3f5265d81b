"""A trigger whose owner died: its run is recorded as failed, saying so, and the firing runs again."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from uuid import uuid4

import psycopg
import structlog
from structlog.testing import capture_logs

from argus.config.schedules import ScheduleSet
from argus.daemon.store import PostgresStore
from tests.daemon.test_runner import AT, _runner, _runs


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def _claim(dsn: str, replica: str, *, expired: bool = False) -> str:
    run_id = uuid4()
    with psycopg.connect(dsn) as conn:
        conn.execute("insert into schedule_triggers (schedule, slot, replica, run_id, lease_until) values "
                     "('orders', '2026-05-01T10:00:00+00:00', %s, %s, now() + %s * interval '1 minute')",
                     (replica, run_id, -1 if expired else 1))
    return str(run_id)


def test_a_claim_of_a_dead_process_on_this_host_is_recorded_lost_and_run_again(
        store: PostgresStore, pg_dsn: str, schedules: ScheduleSet, tmp_path: Path) -> None:
    runner = _runner(store, tmp_path, replica=f"{_host()}:{_dead_pid()}")
    lost = _claim(pg_dsn, f"{_host()}:{_dead_pid()}")
    report = runner.run(schedules, "orders", scheduled_at=AT)
    assert report is not None and report.outcome == "succeeded"
    runs = sorted(_runs(pg_dsn), key=lambda r: r[1])
    assert [r[1] for r in runs] == ["failed", "succeeded"]
    assert runs[0][4].startswith("lost: the run started at ") and "never finished" in runs[0][4]
    with psycopg.connect(pg_dsn) as conn:
        assert conn.execute("select 1 from runs where id = %s", (lost,)).fetchone()
        [(owner,)] = conn.execute("select run_id from schedule_triggers").fetchall()
    assert owner == report.run_id


def test_a_claim_of_a_live_replica_elsewhere_is_left_alone_until_its_lease_runs_out(
        store: PostgresStore, pg_dsn: str, schedules: ScheduleSet, tmp_path: Path) -> None:
    runner = _runner(store, tmp_path, replica=f"{_host()}:{_dead_pid()}")
    _claim(pg_dsn, "other-host:1")
    structlog.reset_defaults()
    with capture_logs() as logs:
        assert runner.run(schedules, "orders", scheduled_at=AT) is None
    [skip] = [e for e in logs if e["event"] == "trigger_skipped"]
    assert skip["detail"].startswith("another replica (other-host:1) is running this trigger")
    assert _runs(pg_dsn) == []


def test_an_expired_lease_is_a_lost_run_whatever_host_held_it(
        store: PostgresStore, pg_dsn: str, schedules: ScheduleSet, tmp_path: Path) -> None:
    _claim(pg_dsn, "other-host:1", expired=True)
    runner = _runner(store, tmp_path)
    assert runner.record_lost_claims(schedules) == 1
    [(schedule, outcome, _, replica, error)] = _runs(pg_dsn)
    assert (schedule, outcome, replica) == ("orders", "failed", "other-host:1") and error.startswith("lost: ")
    assert runner.record_lost_claims(schedules) == 0                       # recorded once


def test_a_restarted_daemon_does_not_blame_another_replica(
        store: PostgresStore, pg_dsn: str, schedules: ScheduleSet, tmp_path: Path) -> None:
    first = _runner(store, tmp_path, replica=f"{_host()}:{_dead_pid()}")
    assert first.run(schedules, "orders", scheduled_at=AT) is not None
    again = _runner(store, tmp_path, replica=f"{_host()}:{_dead_pid()}")
    structlog.reset_defaults()
    with capture_logs() as logs:
        assert again.run(schedules, "orders", scheduled_at=AT) is None
    [skip] = [e for e in logs if e["event"] == "trigger_skipped"]
    assert skip["detail"].startswith("an earlier run of this daemon (") and " ran this trigger" in skip["detail"]


def _host() -> str:
    import socket

    return socket.gethostname()
