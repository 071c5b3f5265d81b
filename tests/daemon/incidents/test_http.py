"""Incidents over the daemon's HTTP server, real requests on a local port: reading them needs
nothing; changing one needs the configured bearer token, and without a configured token the
POST routes do not exist. The token is in no answer and no log."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
import structlog
from prometheus_client import CollectorRegistry

from argus.agent.clock import ManualClock
from argus.config.settings import Settings
from argus.daemon.http import HttpServer
from argus.daemon.incidents.http import IncidentApi
from argus.daemon.record import record_report
from argus.daemon.store import PostgresStore
from argus.daemon.store.incidents import IncidentBook
from tests.daemon.store.reports import T0, finding, report

TOKEN = "s3cret-incident-token-0123456789"


def _serve(store: PostgresStore, settings: Settings) -> HttpServer:
    api = IncidentApi(book=lambda: IncidentBook(store), clock=ManualClock(T0 + timedelta(hours=2)),
                      token=settings.incident_token_value if settings.incidents_writable else None)
    server = HttpServer(("127.0.0.1", 0), registry=CollectorRegistry(), ready=lambda: (True, []),
                        status=lambda: {}, incidents=api)
    server.start()
    return server


@pytest.fixture
def opened(store: PostgresStore) -> PostgresStore:
    record_report(store, report([finding("total", "outlier_value", "high", count=100)]))
    record_report(store, report([finding("zip", "null_rate", "medium")], collection="customers"))
    return store


@pytest.fixture
def serve(opened: PostgresStore) -> Iterator[Any]:
    started: list[HttpServer] = []

    def start(**env: Any) -> httpx.Client:
        server = _serve(opened, Settings(**env))
        started.append(server)
        return httpx.Client(base_url=f"http://127.0.0.1:{server.address[1]}", timeout=10)

    yield start
    for server in started:
        server.stop()


def test_incidents_are_listed_and_shown_without_a_token(serve: Any) -> None:
    http = serve()
    listed = http.get("/incidents")
    assert listed.status_code == 200
    assert [(i["id"], i["collection"], i["status"]) for i in listed.json()["incidents"]] == [
        (2, "customers", "open"), (1, "orders", "open")]
    assert [i["id"] for i in http.get("/incidents?collection=shop.orders").json()["incidents"]] == [1]
    assert http.get("/incidents?status=resolved").json() == {"incidents": []}
    shown = http.get("/incidents/1").json()
    assert shown["findings"][0]["evidence_url"] == f"/runs/{shown['findings'][0]['last_run']}"
    assert [e["kind"] for e in shown["history"]] == ["opened"]
    assert http.get("/incidents/99").status_code == 404
    assert http.get("/incidents/nope").status_code == 404
    bad = http.get("/incidents?status=closed")
    assert bad.status_code == 400 and "status 'closed' is not one of open" in bad.json()["error"]


def test_without_a_configured_token_the_post_routes_do_not_exist(serve: Any, opened: PostgresStore) -> None:
    http = serve()
    answer = http.post("/incidents/1/ack", headers={"Authorization": f"Bearer {TOKEN}"}, json={"owner": "alice"})
    assert answer.status_code == 501, "the server stays read-only, as before incidents"
    assert IncidentBook(opened).get(1).status == "open"


def test_a_status_change_needs_the_bearer_token(serve: Any, opened: PostgresStore) -> None:
    http = serve(incident_token=TOKEN)
    with structlog.testing.capture_logs() as logs:
        missing = http.post("/incidents/1/ack", json={"owner": "alice"})
        wrong = http.post("/incidents/1/ack", json={"owner": "alice"}, headers={"Authorization": "Bearer guess"})
        other_scheme = http.post("/incidents/1/ack", headers={"Authorization": f"Basic {TOKEN}"})
        assert [r.status_code for r in (missing, wrong, other_scheme)] == [401, 401, 401]
        assert missing.headers["www-authenticate"] == 'Bearer realm="argus"'
        assert IncidentBook(opened).get(1).status == "open"
        assert http.post("/incidents/99/ack", headers={"Authorization": "Bearer x"}).status_code == 401, \
            "nothing about incidents before the token is right"

        auth = {"Authorization": f"Bearer {TOKEN}"}
        acked = http.post("/incidents/1/ack", headers=auth, json={"owner": "alice", "note": "on it"})
        assert acked.status_code == 200
        assert (acked.json()["status"], acked.json()["owner"], acked.json()["note"]) == ("acknowledged", "alice",
                                                                                         "on it")
        assert [(e["kind"], e["owner"], e["source"]) for e in acked.json()["history"]][-1] == (
            "acknowledged", "alice", "http")
        resolved = http.post("/incidents/1/resolve", headers=auth)
        assert resolved.status_code == 200 and resolved.json()["status"] == "resolved"
        again = http.post("/incidents/1/ack", headers=auth)
        assert again.status_code == 409 and again.json()["error"].startswith("incident 1 is resolved: only an")
        assert http.post("/incidents/1/close", headers=auth).status_code == 404
        assert http.post("/incidents/99/ack", headers=auth).status_code == 404
        assert http.post("/incidents/2/ack", headers=auth, content=b"{not json").status_code == 400
        assert http.post("/incidents/2/ack", headers=auth, json={"owner": 7}).status_code == 400
        assert http.post("/incidents/2/ack", headers=auth, json={"owner": "x" * 201}).json() == {
            "error": "owner is 201 characters long; at most 200"}
        assert http.post("/incidents/2/ack", headers=auth, content=b"x" * 20_000).status_code == 413
        closed = http.post("/incidents/2/false-positive", headers=auth, json={"note": "zip is optional"})
        assert closed.status_code == 200 and closed.json()["status"] == "false_positive"
    everything = json.dumps(logs, default=str) + "".join(
        r.text for r in (missing, wrong, other_scheme, acked, resolved, again, closed))
    assert TOKEN not in everything and "guess" not in everything


def test_a_status_change_answers_only_its_own_path_as_sent(serve: Any, opened: PostgresStore) -> None:
    import socket
    from urllib.parse import urlsplit

    port = urlsplit(str(serve(incident_token=TOKEN).base_url)).port
    for path in ("//incidents/1/ack", "/incidents/1/ack/", "/incidents//1/ack"):
        with socket.create_connection(("127.0.0.1", port), timeout=5) as conn:
            conn.sendall(f"POST {path} HTTP/1.0\r\nAuthorization: Bearer {TOKEN}\r\n"
                         f"Content-Length: 0\r\n\r\n".encode())
            answer = b""
            while chunk := conn.recv(65536):
                answer += chunk
        assert answer.startswith(b"HTTP/1.0 404 "), (path, answer[:80])
    assert IncidentBook(opened).get(1).status == "open"


def test_the_token_file_is_read_at_each_request(serve: Any, tmp_path: Path) -> None:
    secret = tmp_path / "incident-token"
    secret.write_text(TOKEN + "\n")
    http = serve(incident_token_file=secret)
    assert http.post("/incidents/1/ack", headers={"Authorization": f"Bearer {TOKEN}"}).status_code == 200
    rotated = "rotated-token-abcdefghijklmnop"
    secret.write_text(rotated)
    assert http.post("/incidents/1/ack", headers={"Authorization": f"Bearer {TOKEN}"}).status_code == 401
    assert http.post("/incidents/1/ack", headers={"Authorization": f"Bearer {rotated}"}).status_code == 200
    secret.unlink()
    gone = http.post("/incidents/1/ack", headers={"Authorization": f"Bearer {rotated}"})
    assert gone.status_code == 503 and rotated not in gone.text


@pytest.mark.parametrize(("env", "message"), [
    ({"ARGUS_INCIDENT_TOKEN": "short-token"},
     "ARGUS_INCIDENT_TOKEN: the token is too short: at least 16 characters (e.g. openssl rand -hex 32)"),
    ({"ARGUS_INCIDENT_TOKEN": TOKEN, "ARGUS_INCIDENT_TOKEN_FILE": "/run/secrets/token"},
     "ARGUS_INCIDENT_TOKEN_FILE: give ARGUS_INCIDENT_TOKEN or ARGUS_INCIDENT_TOKEN_FILE, not both")])
def test_a_short_or_doubled_token_setting_is_refused_naming_the_variable(env: dict[str, str], message: str,
                                                                         tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from argus.daemon.cli import app

    result = CliRunner().invoke(app, ["daemon", "--schedules", str(tmp_path / "none.yaml")], env=env)
    assert result.exit_code == 2
    assert result.stderr == f"argus: error: invalid environment variable {message}\n"
    assert env["ARGUS_INCIDENT_TOKEN"] not in result.output


def test_an_unreadable_token_file_stops_the_daemon_before_it_listens(tmp_path: Path, pg_dsn: str) -> None:
    import os
    import subprocess

    from tests.daemon.process import _CHECKOUT, ARGUS

    result = subprocess.run([ARGUS, "daemon", "--schedules", str(tmp_path / "none.yaml"), "--listen", "127.0.0.1:0"],
                            env={**os.environ, "ARGUS_INCIDENT_TOKEN_FILE": str(tmp_path / "missing"),
                                 "ARGUS_DATABASE_URL": pg_dsn, "PYTHONPATH": _CHECKOUT},
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 2
    assert result.stderr.strip() == (f"argus: error: cannot start: cannot read the incident token from "
                                     f"{tmp_path / 'missing'}: No such file or directory")
