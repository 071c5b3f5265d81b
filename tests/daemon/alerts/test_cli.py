"""`argus mute`, `argus mutes`, `argus unmute`, and `argus run` delivering its alerts."""

from __future__ import annotations

import re
from pathlib import Path

from typer.testing import CliRunner

from argus.daemon.cli import app
from tests.daemon.alerts.receiver import Receiver
from tests.daemon.test_daemon_process import _demo_schedules, _write

runner = CliRunner()


def test_mute_list_and_unmute(pg_dsn: str) -> None:
    env = {"ARGUS_DATABASE_URL": pg_dsn, "COLUMNS": "200"}
    added = runner.invoke(app, ["mute", "--collection", "shop.orders", "--category", "null_rate", "--for", "2h",
                                "--reason", "backfill running"], env=env)
    assert added.exit_code == 0, added.output
    match = re.match(r"mute (\d+): database=shop collection=orders category=null_rate until \S+", added.stdout)
    assert match, added.stdout
    listed = runner.invoke(app, ["mutes"], env=env)
    assert "database=shop collection=orders category=null_rate" in listed.stdout
    assert "backfill running" in listed.stdout and "(in 1h)" in listed.stdout
    lifted = runner.invoke(app, ["unmute", match.group(1)], env=env)
    assert lifted.exit_code == 0 and lifted.stdout.startswith(f"unmuted {match.group(1)}:")
    assert "no mutes in force" in runner.invoke(app, ["mutes"], env=env).stdout
    again = runner.invoke(app, ["unmute", match.group(1)], env=env)
    assert again.exit_code != 0 and f"no mute with id {match.group(1)}" in again.stderr


def test_mute_needs_something_to_match(pg_dsn: str) -> None:
    env = {"ARGUS_DATABASE_URL": pg_dsn}
    result = runner.invoke(app, ["mute", "--for", "1h"], env=env)
    assert result.exit_code != 0 and "give --fingerprint, --collection or --category" in result.stderr
    short = runner.invoke(app, ["mute", "--fingerprint", "abc"], env=env)
    assert short.exit_code != 0 and "at least 8 characters" in short.stderr
    bad = runner.invoke(app, ["mute", "--category", "null_rate", "--for", "soon"], env=env)
    assert bad.exit_code != 0 and "--for:" in bad.stderr


def test_argus_run_delivers_its_alerts_before_exiting(pg_dsn: str, tmp_path: Path, receiver: Receiver) -> None:
    path = tmp_path / "schedules.yaml"
    data = _demo_schedules(every="1h")
    data["alerts"] = {"min_severity": "high", "channels": {"am": {"type": "alertmanager", "url": receiver.url}}}
    _write(path, data)
    env = {"ARGUS_DATABASE_URL": pg_dsn, "ARGUS_DATA_DIR": str(tmp_path / "data"), "COLUMNS": "200"}
    result = runner.invoke(app, ["run", "demo-orders", "--schedules", str(path)], env=env)
    assert result.exit_code == 1, result.output  # high findings and fail_on high
    assert "alerts: 1 delivered, 0 waiting in the outbox" in result.stderr  # one incident for its three findings
    [posted] = receiver.at("/api/v2/alerts")
    assert posted.json()[0]["labels"]["alertname"] == "ArgusIncident"
    listed = runner.invoke(app, ["alerts"], env=env)
    assert listed.stdout.count("delivered") == 1 and "incident_opened" in listed.stdout
