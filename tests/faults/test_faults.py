"""Faults on real processes: `argus daemon` killed and restarted, its embedded PostgreSQL killed
under it, SIGTERM mid-audit, broken schedules files written while it runs, a query the in-memory
engine cannot stop. Each asserts what an operator would see: the run stored once with the right
outcome, the alert delivered once, the edit applied, the run ended within its budget."""

from __future__ import annotations

import signal
import socket
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psycopg
import pytest

from argus.daemon.store.embedded import start_embedded
from tests.daemon.alerts.receiver import Receiver
from tests.daemon.process import DaemonProcess
from tests.doubles.model_server import tool_reply
from tests.faults.scenarios import BAD_SCHEDULES, kill_postmaster, slow_collection, stored_runs, write_schedules


def _env(tmp_path: Path, dsn: str | None, **extra: str) -> dict[str, str]:
    env = {"ARGUS_DATA_DIR": str(tmp_path / "data"), "ARGUS_RELOAD_POLL_S": "0.2", **extra}
    if dsn:
        env["ARGUS_DATABASE_URL"] = dsn
    return env


@pytest.mark.slow
def test_a_daemon_killed_mid_audit_records_the_lost_run_and_runs_the_trigger_again(
        pg_dsn: str, tmp_path: Path) -> None:
    receiver = Receiver().start()
    path = tmp_path / "schedules.yaml"
    write_schedules(path, {"orders": slow_collection(tmp_path)}, extra={"alerts": {
        "failed_runs": 1, "min_severity": "critical", "new_persistent": False,
        "channels": {"hook": {"type": "webhook", "url_env": "FAULT_HOOK_URL"}}}})
    env = _env(tmp_path, pg_dsn, FAULT_HOOK_URL=f"{receiver.url}/hook")
    first = DaemonProcess(path, env, tmp_path / "first.log")
    try:
        first.wait_until("the audit under way", lambda: bool(first.status()["in_progress"]))
    finally:
        first.kill()                                                    # SIGKILL mid-audit
    assert stored_runs(pg_dsn) == []
    second = DaemonProcess(path, env, tmp_path / "second.log")
    try:
        second.wait_until("the trigger run again", lambda: any(
            r["outcome"] == "succeeded" for r in stored_runs(pg_dsn)), timeout=90)
        second.wait_until("the alert delivered", lambda: len(receiver.requests) >= 1)
        time.sleep(1.5)                                                 # a second delivery would come by now
        last = next(s for s in second.status()["schedules"] if s["name"] == "orders")["last_run"]
    finally:
        assert second.stop() == 0, second.tail()
        receiver.stop()
    lost, rerun = stored_runs(pg_dsn)
    assert (lost["outcome"], rerun["outcome"]) == ("failed", "succeeded")
    assert lost["error"].startswith("lost: the run started at ") and "stopped (killed or crashed)" in lost["error"]
    with psycopg.connect(pg_dsn) as conn:
        claims = conn.execute("select run_id from schedule_triggers").fetchall()
    assert claims == [(rerun["id"],)]
    assert last["outcome"] == "succeeded"
    assert [r.json()["kind"] for r in receiver.requests] == ["failed_runs"]    # the lost run, alerted once
    details = [e.get("detail", "") for e in second.events() if e["event"] == "trigger_skipped"]
    assert not any("another replica" in d for d in details)


@pytest.mark.slow
def test_the_embedded_database_killed_under_the_daemon_is_started_again(tmp_path: Path) -> None:
    path = tmp_path / "schedules.yaml"
    write_schedules(path, {"orders": slow_collection(tmp_path, documents=300)}, every="2s")
    daemon = DaemonProcess(path, _env(tmp_path, None), tmp_path / "daemon.log")
    pgdata = tmp_path / "data" / "pgdata"
    try:
        daemon.wait_until("a stored run", lambda: daemon.metric("argus_audit_runs_total") >= 1
                          and daemon.metric("argus_spool_reports") == 0 and daemon.get("/readyz")[0] == 200)
        kill_postmaster(pgdata)
        daemon.wait_until("the restart", lambda: daemon.metric("argus_embedded_database_restarts_total") == 1,
                          timeout=90)
        before = daemon.metric("argus_audit_runs_total")
        daemon.wait_until("runs stored again", lambda: daemon.metric("argus_audit_runs_total") >= before + 2
                          and daemon.metric("argus_spool_reports") == 0 and daemon.get("/readyz")[0] == 200
                          and daemon.metric("argus_embedded_database_up") == 1, timeout=90)
    finally:
        assert daemon.stop() == 0, daemon.tail()
    events = daemon.events()
    assert [e["event"] for e in events if e["event"].startswith("embedded_database_")].count(
        "embedded_database_died") == 1
    assert any(e["event"] == "embedded_database_restarted" for e in events)
    finished = [e["run_id"] for e in events if e["event"] == "audit_finished"]
    db = start_embedded(tmp_path / "data")
    try:
        stored = [str(r["id"]) for r in stored_runs(db.uri)]
    finally:
        db.server.cleanup()
    assert len(stored) == len(set(stored)) and set(finished) <= set(stored)   # every run stored, none twice


def _stuck_in_a_query(tmp_path: Path, chat_server: Any, *, time_budget: str = "30s",
                      every: str = "1d") -> tuple[Path, Any]:
    """A schedule whose audit sits in one in-memory query that nothing in the process can end
    before the run's budget. A search the guard lets through (it judges a pattern's cost per
    starting position, and \\s+[xy] is linear there) that the engine's regex restarts at every one
    of 60,000 blanks: half a minute per value, in C, holding the interpreter lock. Each value
    differs: the engine memoises a pattern's verdict per value within a read."""
    server = chat_server([tool_reply("run_query", {"filter": {"email": {"$regex": "\\s+[xy]"}}, "limit": 0})],
                         default=tool_reply("conclude", {}))
    data = tmp_path / "orders.jsonl"
    data.write_text("".join(f'{{"order_no": "O-{i}", "email": "{" " * 60_000}!{i}"}}\n' for i in range(20)))
    path = tmp_path / "schedules.yaml"
    write_schedules(path, {"orders": data}, every=every, time_budget=time_budget, max_time_ms=600000, planner="llm",
                    llm={"model": "m", "base_url": server.base_url, "max_retries": 0})
    return path, server


def _sigterm_when(daemon: DaemonProcess, what: str, ready: Callable[[], bool]) -> float:
    """SIGTERM once ``ready()``; asserts the daemon exited 0 and returns how long it took."""
    try:
        daemon.wait_until(what, ready)
    finally:
        daemon.proc.send_signal(signal.SIGTERM)
        sent = time.monotonic()
        code = daemon.stop()
        took = time.monotonic() - sent
    assert code == 0, daemon.tail()
    return took


def _sigterm_in_the_query(daemon: DaemonProcess, server: Any) -> float:
    """SIGTERM once the planner has asked for the query."""
    return _sigterm_when(daemon, "the query under way", lambda: len(server.requests) >= 1
                         and bool(daemon.status()["in_progress"]))


def test_sigterm_mid_audit_stores_the_run_once_as_interrupted_within_the_grace_period(
        pg_dsn: str, tmp_path: Path) -> None:
    path = tmp_path / "schedules.yaml"
    write_schedules(path, {"orders": slow_collection(tmp_path, documents=20000)})
    daemon = DaemonProcess(path, _env(tmp_path, pg_dsn, ARGUS_SHUTDOWN_GRACE_S="2"), tmp_path / "daemon.log")
    took = _sigterm_when(daemon, "the audit under way", lambda: bool(daemon.status()["in_progress"]))
    assert took <= 2 + 10
    [run] = stored_runs(pg_dsn)
    assert (run["outcome"], run["termination_reason"]) == ("partial", "interrupted")


def test_sigterm_during_a_query_nothing_can_stop_exits_within_the_grace_period(
        pg_dsn: str, tmp_path: Path, chat_server: Any) -> None:
    path, server = _stuck_in_a_query(tmp_path, chat_server)
    daemon = DaemonProcess(path, _env(tmp_path, pg_dsn, ARGUS_SHUTDOWN_GRACE_S="2"), tmp_path / "daemon.log")
    took = _sigterm_in_the_query(daemon, server)
    assert took <= 2 + 10, daemon.tail()                                 # not the 30 s the query would hold it
    [run] = stored_runs(pg_dsn)
    assert (run["outcome"], run["termination_reason"]) == ("partial", "interrupted")


@pytest.mark.slow
def test_sigterm_during_a_stuck_query_stops_the_embedded_database_the_daemon_started(
        tmp_path: Path, chat_server: Any) -> None:
    # fires again soon: the first firing may find the database the daemon is starting not yet open
    path, server = _stuck_in_a_query(tmp_path, chat_server, every="2s")
    daemon = DaemonProcess(path, _env(tmp_path, None, ARGUS_SHUTDOWN_GRACE_S="2"), tmp_path / "daemon.log")
    took = _sigterm_in_the_query(daemon, server)
    assert took <= 2 + 10, daemon.tail()
    left_running = (tmp_path / "data" / "pgdata" / "postmaster.pid").exists()
    db = start_embedded(tmp_path / "data")
    try:
        [run] = stored_runs(db.uri)
    finally:
        db.server.cleanup()
    assert not left_running, daemon.tail()                               # no server left behind
    assert (run["outcome"], run["termination_reason"]) == ("partial", "interrupted")


@pytest.mark.slow
def test_a_run_interrupted_at_shutdown_is_not_stored_or_replayed_again_after_a_restart(
        pg_dsn: str, tmp_path: Path, chat_server: Any) -> None:
    path, server = _stuck_in_a_query(tmp_path, chat_server)
    env = _env(tmp_path, pg_dsn, ARGUS_SHUTDOWN_GRACE_S="2")
    first = DaemonProcess(path, env, tmp_path / "first.log")
    _sigterm_in_the_query(first, server)
    [run] = stored_runs(pg_dsn)
    assert sorted(p.name for p in (tmp_path / "data" / "spool").glob("*.json")) == []   # nothing left to replay
    write_schedules(path, {"orders": tmp_path / "orders.jsonl"}, run_at_start=False)
    second = DaemonProcess(path, env, tmp_path / "second.log")
    try:
        second.wait_until("the restarted daemon ready", lambda: second.get("/readyz")[0] == 200)
    finally:
        assert second.stop() == 0, second.tail()
    assert stored_runs(pg_dsn) == [run]                                   # one row, its outcome untouched
    assert (run["outcome"], run["termination_reason"]) == ("partial", "interrupted")
    with psycopg.connect(pg_dsn) as conn:                                 # its firing ran: no sweep takes it for lost
        claims = conn.execute("select run_id from schedule_triggers").fetchall()
    assert claims == [(run["id"],)]
    assert [e["event"] for e in second.events() if e.get("run_id") == str(run["id"])] == []


@pytest.mark.slow
def test_sigterm_while_the_daemon_starts_is_a_clean_stop(tmp_path: Path) -> None:
    path = tmp_path / "schedules.yaml"
    write_schedules(path, {"orders": slow_collection(tmp_path, documents=50)})
    daemon = DaemonProcess(path, _env(tmp_path, None), tmp_path / "daemon.log")
    pgdata = tmp_path / "data" / "pgdata"
    took = _sigterm_when(daemon, "the embedded database being created", pgdata.exists)
    assert took <= 30 + 10, daemon.tail()
    assert [e["event"] for e in daemon.events()][-1] == "daemon_stopped"
    assert not (pgdata / "postmaster.pid").exists()


def _replace(path: Path, content: bytes) -> None:
    """Write as editors and config management do: whole, so the watcher never sees half a file."""
    tmp = path.with_suffix(".tmp")
    tmp.write_bytes(content)
    tmp.replace(path)


def test_every_broken_schedules_file_is_reported_and_the_next_good_edit_applies(pg_dsn: str, tmp_path: Path) -> None:
    path = tmp_path / "schedules.yaml"
    files = {"orders": slow_collection(tmp_path, documents=50)}
    write_schedules(path, files, run_at_start=False)
    good = path.read_bytes()
    daemon = DaemonProcess(path, _env(tmp_path, pg_dsn), tmp_path / "daemon.log")
    try:
        daemon.wait_until("/readyz", lambda: daemon.get("/readyz")[0] == 200)
        for count, (name, breaking) in enumerate(BAD_SCHEDULES.items(), 1):
            _replace(path, breaking(good))
            started = time.monotonic()
            daemon.wait_until(f"the {name} reported", lambda count=count: daemon.metric(
                "argus_schedule_reload_errors_total") == count, timeout=30)
            assert time.monotonic() - started < 10, name                # an alias bomb is refused quickly
            error = daemon.status()["reload"]["error"]
            assert error and error[0].startswith(f"{path}:"), (name, error)
            assert [s["name"] for s in daemon.status()["schedules"]] == ["orders"], name
            _replace(path, good)                                         # reverted: the error is over
            daemon.wait_until(f"the revert after the {name}", lambda: daemon.status()["reload"]["error"] is None)
        _replace(path, BAD_SCHEDULES["empty file"](good))
        daemon.wait_until("one more error", lambda: daemon.status()["reload"]["error"] is not None)
        _replace(path, good)
        daemon.proc.send_signal(signal.SIGHUP)
        daemon.wait_until("the revert seen after SIGHUP", lambda: daemon.status()["reload"]["error"] is None)
        files["customers"] = slow_collection(tmp_path, "customers", documents=50)
        write_schedules(path, files, run_at_start=False)                 # a good edit takes effect
        daemon.wait_until("the added schedule", lambda: [s["name"] for s in daemon.status()["schedules"]] == [
            "customers", "orders"])
    finally:
        assert daemon.stop() == 0, daemon.tail()
    invalid = [e for e in daemon.events() if e["event"] == "schedules_invalid"]
    assert len(invalid) == len(BAD_SCHEDULES) + 1 and all(e["problems"] for e in invalid)


def test_a_catastrophic_regex_in_memory_ends_within_the_run_budget(pg_dsn: str, tmp_path: Path,
                                                                   chat_server: Any) -> None:
    path, _ = _stuck_in_a_query(tmp_path, chat_server, time_budget="4s")
    daemon = DaemonProcess(path, _env(tmp_path, pg_dsn), tmp_path / "daemon.log")
    try:
        daemon.wait_until("the run stored", lambda: len(stored_runs(pg_dsn)) == 1, timeout=60)
    finally:
        assert daemon.stop() == 0, daemon.tail()
    [run] = stored_runs(pg_dsn)
    assert run["outcome"] == "partial" and run["termination_reason"] == "time_budget"
    assert run["duration_s"] <= 4 + 10


def test_a_port_in_use_fails_naming_the_address_before_anything_runs(pg_dsn: str, tmp_path: Path) -> None:
    path = tmp_path / "schedules.yaml"
    write_schedules(path, {"orders": slow_collection(tmp_path, documents=50)})
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        daemon = DaemonProcess(path, _env(tmp_path, pg_dsn), tmp_path / "daemon.log", port=port)
        code = daemon.proc.wait(60)
    assert code == 2
    assert f"cannot listen on 127.0.0.1:{port}: Address already in use" in " ".join(daemon.tail().split())
    assert stored_runs(pg_dsn) == []
