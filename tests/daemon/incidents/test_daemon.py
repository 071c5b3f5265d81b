"""The real daemon with an incident token from a mounted file: one person acknowledges an incident
with the CLI, another resolves it over HTTP, the channels hear of the resolution once, and the
token is in no output: no answer, no log, no stored row, no alert."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from pathlib import Path

import psycopg
from typer.testing import CliRunner

from argus.daemon.cli import app
from tests.daemon.alerts.receiver import Receiver
from tests.daemon.process import DaemonProcess
from tests.daemon.test_daemon_process import _demo_schedules, _write

TOKEN = "0f6c3e9b2a7d4e1f8c5b0a9d6e3f2c1b"


def _post(daemon: DaemonProcess, path: str, token: str | None, body: dict[str, str]) -> tuple[int, str]:
    request = urllib.request.Request(f"http://127.0.0.1:{daemon.port}{path}", data=json.dumps(body).encode(),
                                     method="POST", headers={"Content-Type": "application/json"})
    if token is not None:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=10) as resp:
            return resp.status, resp.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def test_acknowledged_by_cli_resolved_by_post_and_the_token_is_in_no_output(pg_dsn: str, tmp_path: Path,
                                                                           receiver: Receiver) -> None:
    secret = tmp_path / "incident-token"
    secret.write_text(TOKEN + "\n")
    path = tmp_path / "schedules.yaml"
    data = _demo_schedules(every="1h")
    data["schedules"] = [dict(s, run_at_start=True) for s in data["schedules"] if s["name"] == "demo-orders"]
    data["alerts"] = {"base_url": "http://argus.test", "min_severity": "high",
                      "channels": {"hook": {"type": "webhook", "url_env": "TEST_HOOK_URL"}}}
    _write(path, data)
    env = {"ARGUS_DATABASE_URL": pg_dsn, "ARGUS_DATA_DIR": str(tmp_path / "data"), "ARGUS_ALERT_POLL_S": "0.2",
           "ARGUS_INCIDENT_TOKEN_FILE": str(secret), "TEST_HOOK_URL": f"{receiver.url}/hook"}
    daemon = DaemonProcess(path, env, tmp_path / "daemon.log")
    outputs: list[str] = []
    try:
        daemon.wait_until("the incident's opening delivered", lambda: len(receiver.requests) == 1)
        listed = json.loads(daemon.get("/incidents")[1])["incidents"]
        assert [(i["id"], i["status"], i["collection"]) for i in listed] == [(1, "open", "orders")]

        cli = CliRunner().invoke(app, ["incident", "ack", "1", "--owner", "alice", "--note", "checking the import"],
                                 env={"ARGUS_DATABASE_URL": pg_dsn})
        assert cli.exit_code == 0, cli.output
        assert cli.stdout.startswith("incident 1 acknowledged by alice: shop.orders, 3 finding(s)")

        refused = _post(daemon, "/incidents/1/resolve", None, {"owner": "bob"})
        wrong = _post(daemon, "/incidents/1/resolve", TOKEN[::-1], {"owner": "bob"})
        assert (refused[0], wrong[0]) == (401, 401)
        done = _post(daemon, "/incidents/1/resolve", TOKEN, {"owner": "bob", "note": "importer fixed"})
        assert done[0] == 200 and json.loads(done[1])["status"] == "resolved"
        daemon.wait_until("the resolution delivered", lambda: len(receiver.requests) == 2)

        shown = json.loads(daemon.get("/incidents/1")[1])
        assert [(e["kind"], e["owner"], e["source"]) for e in shown["history"]] == [
            ("opened", None, "run"), ("acknowledged", "alice", "cli"), ("resolved", "bob", "http")]
        outputs += [cli.output, refused[1], wrong[1], done[1], daemon.get("/status")[1], daemon.get("/metrics")[1],
                    daemon.get("/incidents?status=all")[1], json.dumps(shown)]
    finally:
        assert daemon.stop() == 0
    bodies = [r.json() for r in receiver.requests]
    assert [b["kind"] for b in bodies] == ["incident_opened", "incident_resolved"]
    assert bodies[1]["text"].startswith("Open for ") and "resolved by bob: importer fixed" in bodies[1]["text"]
    with psycopg.connect(pg_dsn) as conn:
        stored = json.dumps(conn.execute("select * from incidents i join incident_events e on e.incident_id = i.id "
                                         "left join alert_outbox o on o.incident_id = i.id").fetchall(), default=str)
    outputs += [daemon.log_path.read_text(), stored, "".join(r.body.decode() for r in receiver.requests)]
    assert not [o for o in outputs if TOKEN in o or TOKEN[::-1] in o]
