"""The real daemon as ops run it: a subprocess, its HTTP pages, its schedules file, its signals."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import psycopg
import pytest
import yaml
from bson import json_util

from argus.daemon.store.embedded import start_embedded
from tests.daemon.process import DaemonProcess

ROOT = Path(__file__).resolve().parents[2]


def _demo_schedules(every: str = "2s") -> dict[str, Any]:
    """The repository's schedules.yaml, firing every ``every``, with absolute file paths."""
    data = yaml.safe_load((ROOT / "schedules.yaml").read_text())
    files = data["connections"]["demo"]["files"]
    data["connections"]["demo"]["files"] = {k: str(ROOT / v) for k, v in files.items()}
    for s in data["schedules"]:
        s["trigger"] = {"every": every}
    return data


def _write(path: Path, data: dict[str, Any]) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text(yaml.safe_dump(data, sort_keys=False))
    tmp.replace(path)


@pytest.fixture
def env(pg_dsn: str, tmp_path: Path) -> dict[str, str]:
    return {"ARGUS_DATABASE_URL": pg_dsn, "ARGUS_DATA_DIR": str(tmp_path / "data"), "ARGUS_RELOAD_POLL_S": "0.2",
            "ARGUS_SHUTDOWN_GRACE_S": "20"}


def test_daemon_runs_reloads_and_stops_cleanly(env: dict[str, str], tmp_path: Path) -> None:
    path = tmp_path / "schedules.yaml"
    data = _demo_schedules()
    _write(path, data)
    daemon = DaemonProcess(path, env, tmp_path / "daemon.log")
    try:
        daemon.wait_until("/readyz", lambda: daemon.get("/readyz")[0] == 200)
        daemon.wait_until("a successful run of each schedule", lambda: all(
            daemon.metric("argus_audit_runs_total", schedule=s, outcome="succeeded") >= 1
            for s in ("demo-orders", "demo-customers")))
        status = daemon.status()
        orders = next(s for s in status["schedules"] if s["name"] == "demo-orders")
        assert orders["last_run"]["outcome"] == "succeeded" and orders["last_run"]["findings"] == 3
        assert orders["next_run_at"] and orders["trigger"] == "every 2s"
        daemon.wait_until("findings counted", lambda: daemon.metric("argus_open_findings") >= 6)
        assert daemon.metric("argus_findings_new_total", schedule="demo-orders") == 3

        # add a schedule: it is picked up without a restart
        data["schedules"].append({"name": "added", "connection": "demo", "database": "shop",
                                  "collection": "customers", "trigger": {"every": "2s"}, "run_at_start": True})
        _write(path, data)
        daemon.wait_until("the added schedule to run", lambda: daemon.metric(
            "argus_audit_runs_total", schedule="added") >= 1)
        assert {s["name"] for s in daemon.status()["schedules"]} == {"demo-orders", "demo-customers", "added"}

        # break it: the error is reported and counted, the last good schedules keep running
        data["schedules"][-1]["trigger"] = {"cron": "every monday"}
        _write(path, data)
        daemon.wait_until("the reload error", lambda: daemon.metric("argus_schedule_reload_errors_total") == 1)
        error = daemon.status()["reload"]["error"]
        line = next(i for i, text in enumerate(path.read_text().splitlines(), 1) if "every monday" in text)
        assert error == [f"{path}:{line} schedules[2].trigger.cron: 'every monday' is not a cron expression "
                         f"(five fields, e.g. '0 6 * * 1')"]
        before = daemon.metric("argus_audit_runs_total", schedule="added")
        daemon.wait_until("the added schedule to keep running", lambda: daemon.metric(
            "argus_audit_runs_total", schedule="added") > before)

        # fix it by removing the schedule: the job goes away
        data["schedules"].pop()
        _write(path, data)
        daemon.wait_until("the reload", lambda: daemon.status()["reload"]["error"] is None)
        assert {s["name"] for s in daemon.status()["schedules"]} == {"demo-orders", "demo-customers"}
        daemon.wait_until("the removed job gone", lambda: daemon.metric(
            "argus_next_run_timestamp_seconds", schedule="added") == 0)
    finally:
        code = daemon.stop()
    assert code == 0, daemon.tail()
    events = [e["event"] for e in daemon.events()]
    assert "shutdown_requested" in events and events[-1] == "daemon_stopped"


def _small_files(tmp_path: Path, names: list[str]) -> dict[str, str]:
    out = {}
    for name in names:
        docs = [{"key": f"{name}-{i}", "qty": 1 + i % 5, "tier": ["a", "b"][i % 2]} for i in range(150)]
        path = tmp_path / f"{name}.jsonl"
        path.write_text("\n".join(json_util.dumps(d) for d in docs))
        out[name] = str(path)
    return out


def test_two_replicas_run_each_trigger_exactly_once(pg_dsn: str, tmp_path: Path) -> None:
    names = ["alpha", "beta", "gamma"]
    data = {"connections": {"files": {"files": _small_files(tmp_path, names)}},
            "defaults": {"trigger": {"every": "2s"}},
            "schedules": [{"name": n, "connection": "files", "database": "shop", "collection": n} for n in names]}
    path = tmp_path / "schedules.yaml"
    _write(path, data)
    replicas = [DaemonProcess(path, {"ARGUS_DATABASE_URL": pg_dsn, "ARGUS_DATA_DIR": str(tmp_path / f"r{i}")},
                              tmp_path / f"r{i}.log") for i in range(2)]
    try:
        for r in replicas:
            r.wait_until("/readyz", lambda r=r: r.get("/readyz")[0] == 200)
        # waits for what it asserts: a dozen firings, and each replica running some (under load one
        # replica could win the first dozen alone)
        replicas[0].wait_until("a dozen triggers, each replica running some", lambda: sum(
            r.metric("argus_audit_runs_total") for r in replicas) >= 12
            and all(r.metric("argus_audit_runs_total") >= 1 for r in replicas), timeout=120)
        skipped = sum(r.metric("argus_triggers_skipped_total", reason="already_ran")
                      + r.metric("argus_triggers_skipped_total", reason="locked") for r in replicas)
    finally:
        codes = [r.stop() for r in replicas]
    assert codes == [0, 0]
    with psycopg.connect(pg_dsn) as conn:
        claims = conn.execute("select schedule, slot, replica, run_id from schedule_triggers").fetchall()
        runs = [r[0] for r in conn.execute("select id from runs").fetchall()]
    assert len({c[2] for c in claims}) == 2                          # both replicas took triggers
    assert len(runs) == len(set(runs)) == len(claims)               # every claimed firing ran once, none twice
    assert set(runs) == {c[3] for c in claims}
    assert skipped >= 1                                              # and they did compete for the same firings


def test_database_outage_loses_no_report(tmp_path: Path) -> None:
    pg = start_embedded(tmp_path / "pg")
    dsn = pg.uri
    path = tmp_path / "schedules.yaml"
    data = _demo_schedules("2s")
    data["schedules"] = [s for s in data["schedules"] if s["name"] == "demo-orders"]
    # An audit long enough (200,000 documents, seconds) that PostgreSQL is gone before it ends: with the
    # 2,000 demo orders the audit could finish and store its report while the server was still stopping,
    # and the daemon skips triggers while its store is down, so nothing was ever spooled.
    orders = tmp_path / "orders.jsonl"
    orders.write_text("".join(f'{{"_id": {i}, "total": {i % 997 + 0.5}, "status": "{("paid", "open")[i % 2]}", '
                              f'"customer": {{"id": "C{i % 5000}", "tier": {i % 3}}}}}\n' for i in range(200_000)))
    data["connections"]["demo"]["files"]["orders"] = str(orders)
    _write(path, data)
    daemon = DaemonProcess(path, {"ARGUS_DATABASE_URL": dsn, "ARGUS_DATA_DIR": str(tmp_path / "data")},
                           tmp_path / "daemon.log")
    try:
        daemon.wait_until("a stored run", lambda: daemon.metric("argus_audit_runs_total") >= 1
                          and daemon.metric("argus_spool_reports") == 0 and daemon.get("/readyz")[0] == 200)
        daemon.wait_until("an audit in progress", lambda: bool(daemon.status()["in_progress"]))
        pg.server.cleanup()                                          # PostgreSQL goes away mid-audit
        daemon.wait_until("the report spooled", lambda: daemon.metric("argus_reports_spooled_total") >= 1,
                          timeout=60)
        assert daemon.metric("argus_spool_reports") >= 1
        assert daemon.get("/readyz")[0] == 503
        assert "waiting in the spool" in daemon.get("/readyz")[1]
        pg = start_embedded(tmp_path / "pg")                         # and comes back
        daemon.wait_until("the spool drained", lambda: daemon.metric("argus_spool_reports") == 0
                          and daemon.get("/readyz")[0] == 200, timeout=60)
    finally:
        code = daemon.stop()
    assert code == 0, daemon.tail()
    finished = {e["run_id"] for e in daemon.events() if e["event"] == "audit_finished"}
    with psycopg.connect(pg.uri) as conn:
        stored = [str(r[0]) for r in conn.execute("select id from runs").fetchall()]
    pg.server.cleanup()
    assert len(stored) == len(set(stored))                            # nothing twice
    assert finished <= set(stored)                                    # every finished audit stored
    assert any(e["event"] == "report_spooled" for e in daemon.events())
