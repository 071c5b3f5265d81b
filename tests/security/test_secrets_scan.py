"""No secret in any output: malformed connection strings, DSNs and echoed keys, through every edge.

Real processes (``argus audit``, ``argus run``, ``argus show``, ``argus daemon``), a real
PostgreSQL, a local alert receiver and a local OpenAI-compatible server that answers 401 with
the key it was given. Every secret carries a ``SECRET<n>`` marker; the scan reads stdout,
stderr, the daemon's log, its HTTP bodies (``/status``, ``/metrics``, ``/runs/ID``, ``/readyz``),
every row of every table in the store and every alert body received, and finds no marker.
"""

from __future__ import annotations

import os
import re
import subprocess
import textwrap
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from tests.daemon.alerts.receiver import Receiver
from tests.daemon.process import ARGUS, DaemonProcess, free_port
from tests.doubles.model_server import LocalChatServer, error_reply

pytestmark = [pytest.mark.slow]

_CHECKOUT = str(Path(__file__).resolve().parents[2])
_CLOSED = free_port()  # nothing listens here: a well-formed URI that cannot connect
KEY_DOTS = "LOCALKEY.with.dots+slash/SECRET11=="
KEY_SHORT = "shortkey-SECRET9"
MONGO = {
    "scheme_typo": "mongodb:/argus:Mongo-SECRET1@db.example.internal/shop",
    "no_scheme": "argus:Mongo-SECRET2@db.example.internal/shop",
    "slash_in_password": "mongodb://argus:Mon/go-SECRET3@db.example.internal/shop",
    "at_in_password": "mongodb://argus:Mon@go-SECRET4@db.example.internal/shop",
    "token_in_options": f"mongodb://127.0.0.1:{_CLOSED}/shop?authMechanism=MONGODB-AWS&authMechanismProperties="
                        f"AWS_SESSION_TOKEN:Aws-SECRET5&serverSelectionTimeoutMS=300",
    "unreachable": f"mongodb://argus:Mongo-SECRET6@127.0.0.1:{_CLOSED}/shop?serverSelectionTimeoutMS=300",
}
BAD_DSN = "postgres:/argus:Pg-SECRET12@db.example.internal/argus"
HOOK_SECRET = "Hmac-SECRET10"
INCIDENT_TOKEN = "Incident-SECRET13-0123456789"
MARKER = re.compile(r"SECRET\d+|Secret==|LOCALKEY")


def _leaks(where: str, text: str) -> list[str]:
    return [f"{where}: {m.group(0)} in ...{text[max(m.start() - 60, 0):m.end() + 20]!r}"
            for m in MARKER.finditer(text)]


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ARGUS_", "OPENAI_"))}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (_CHECKOUT, os.environ.get("PYTHONPATH")) if p)
    return {**env, **extra}


def _argus(*args: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([ARGUS, *args], env=env, cwd=cwd, capture_output=True, text=True, timeout=180)


def _store_rows(dsn: str) -> Iterator[tuple[str, str]]:
    with psycopg.connect(dsn) as conn:
        tables = [r[0] for r in conn.execute("select table_name from information_schema.tables "
                                             "where table_schema = 'public'")]
        for table in tables:
            for (row,) in conn.execute(f'select t::text from "{table}" t'):
                yield table, row


@pytest.fixture
def people(tmp_path: Path) -> Path:
    from tests.security.people import write_people

    return write_people(tmp_path / "people.jsonl", 60)


def test_malformed_uris_are_refused_by_the_cli_naming_the_variable(people: Path, tmp_path: Path) -> None:
    leaks: list[str] = []
    for name, uri in MONGO.items():
        if name in ("token_in_options", "unreachable"):
            continue
        done = _argus("audit", "--database", "shop", "--collection", "people", "--no-store",
                      env=_env(ARGUS_MONGODB_URI=uri, ARGUS_DATA_DIR=str(tmp_path / "data")), cwd=tmp_path)
        assert done.returncode == 2, done.stderr
        assert "argus: error: ARGUS_MONGODB_URI is not a valid MongoDB URI: " in done.stderr
        leaks += _leaks(f"audit {name} stdout", done.stdout) + _leaks(f"audit {name} stderr", done.stderr)
    done = _argus("audit", "--uri", MONGO["scheme_typo"], "--database", "shop", "--collection", "people",
                  "--no-store", env=_env(ARGUS_DATA_DIR=str(tmp_path / "data")), cwd=tmp_path)
    assert "argus: error: --uri is not a valid MongoDB URI: the scheme must be mongodb:// or mongodb+srv://" \
        in done.stderr
    assert leaks + _leaks("audit --uri", done.stdout + done.stderr) == []


def test_a_malformed_database_url_is_refused_before_a_pool_sees_it(people: Path, tmp_path: Path) -> None:
    env = _env(ARGUS_DATABASE_URL=BAD_DSN, ARGUS_DATA_DIR=str(tmp_path / "data"))
    audit = _argus("audit", "--file", str(people), "--store", env=env, cwd=tmp_path)
    runs = _argus("runs", env=env, cwd=tmp_path)
    daemon = _argus("daemon", "--schedules", str(_schedules(tmp_path, people, alerts=False)), "--listen",
                    f"127.0.0.1:{free_port()}", env=env, cwd=tmp_path)
    for done in (audit, runs, daemon):
        assert done.returncode == 2
        assert "ARGUS_DATABASE_URL is not a valid PostgreSQL URL: the scheme must be postgresql:// or postgres://" \
            in done.stderr, done.stderr
        assert "psycopg" not in done.stderr and "Traceback" not in done.stderr
    text = "\n".join(d.stdout + d.stderr for d in (audit, runs, daemon))
    assert _leaks("bad DSN", text) == []


def _schedules(tmp_path: Path, people: Path, *, alerts: bool = True, base_url: str = "http://127.0.0.1:9") -> Path:
    connections = "\n".join(f"  {name}: {{uri_env: ARGUS_TEST_URI_{name.upper()}}}" for name in MONGO)
    schedules = "\n".join(f"  - {{name: {name}, connection: {name}, database: shop, collection: people}}"
                          for name in MONGO)
    alert_block = textwrap.dedent("""\
        alerts:
          failed_runs: 1
          channels:
            hook: {type: webhook, url_env: ARGUS_TEST_HOOK_URL, secret_env: ARGUS_TEST_HOOK_SECRET}
            slack: {type: slack, url_env: ARGUS_TEST_SLACK_URL}
        """) if alerts else ""
    path = tmp_path / "schedules.yaml"
    path.write_text(f"connections:\n{connections}\n  files: {{files: {{people: {people}}}}}\n"
                    f"defaults: {{trigger: {{every: 1h}}, run_at_start: true}}\n"
                    f"schedules:\n{schedules}\n"
                    f"  - {{name: llm-dots, connection: files, database: shop, collection: people, planner: llm,\n"
                    f"     llm: {{base_url: '{base_url}', api_key_env: ARGUS_TEST_KEY_DOTS, max_retries: 0}}}}\n"
                    f"  - {{name: llm-short, connection: files, database: shop, collection: people, planner: llm,\n"
                    f"     llm: {{base_url: '{base_url}', api_key_env: ARGUS_TEST_KEY_SHORT, max_retries: 0}}}}\n"
                    + alert_block)
    return path


def test_no_secret_in_any_output_of_the_cli_daemon_store_alerts_and_llm(people: Path, tmp_path: Path,
                                                                       pg_dsn: str) -> None:
    receiver = Receiver().start()
    echo = {KEY_DOTS: error_reply(401, f"Incorrect API key provided: {KEY_DOTS}. You can find your API key at "
                                       f"https://platform.openai.com/account/api-keys."),
            KEY_SHORT: error_reply(401, f"Incorrect API key provided: {KEY_SHORT}")}

    def answer(request: dict[str, object]) -> object:
        return echo[KEY_DOTS if "dots" in str(request.get("model", "")) else KEY_SHORT]

    server = LocalChatServer(answer).start()  # type: ignore[arg-type]
    env = _env(ARGUS_DATABASE_URL=pg_dsn, ARGUS_DATA_DIR=str(tmp_path / "data"), ARGUS_LOG_LEVEL="DEBUG",
               ARGUS_TEST_KEY_DOTS=KEY_DOTS, ARGUS_TEST_KEY_SHORT=KEY_SHORT, ARGUS_TEST_HOOK_SECRET=HOOK_SECRET,
               ARGUS_TEST_HOOK_URL=f"{receiver.url}/hook/Hook-SECRET7",
               ARGUS_TEST_SLACK_URL=f"{receiver.url}/slack/Slack-SECRET8",
               ARGUS_INCIDENT_TOKEN=INCIDENT_TOKEN,
               **{f"ARGUS_TEST_URI_{name.upper()}": uri for name, uri in MONGO.items()})
    leaks: list[str] = []
    try:
        schedules = _schedules(tmp_path, people, base_url=server.base_url)
        schedules.write_text(schedules.read_text().replace("llm: {base_url", "llm: {model: gpt-4o-mini-dots, "
                                                                              "base_url", 1))
        # the command line: `argus audit` with an echoed key, `argus run` of a malformed URI, `argus show`
        audit = _argus("audit", "--file", str(people), "--planner", "llm", "--base-url", server.base_url,
                       "--format", "json", "--store", env={**env, "OPENAI_API_KEY": KEY_SHORT}, cwd=tmp_path)
        assert audit.returncode in (0, 1, 2), audit.stderr
        run = _argus("run", "scheme_typo", "--schedules", str(schedules), env=env, cwd=tmp_path)
        assert run.returncode == 2  # as `argus audit` exits for the same URI; the run is recorded as failed
        assert f"schedules.yaml:{_line(schedules, 'scheme_typo')} connections.scheme_typo uri_env " \
               "ARGUS_TEST_URI_SCHEME_TYPO is not a valid MongoDB URI: the scheme must be mongodb:// or " \
               "mongodb+srv://" in " ".join((run.stdout + run.stderr).split()), run.stdout + run.stderr
        for done, what in ((audit, "audit"), (run, "run")):
            leaks += _leaks(f"{what} stdout", done.stdout) + _leaks(f"{what} stderr", done.stderr)

        daemon = DaemonProcess(schedules, env, tmp_path / "daemon.log")
        try:
            daemon.wait_until("every schedule ran", lambda: all(
                s["last_run"] is not None for s in daemon.status()["schedules"]), timeout=120)
            daemon.wait_until("failed-run alerts delivered", lambda: len(receiver.requests) >= 2 * len(MONGO),
                              timeout=60)
            status = daemon.status()
            errors = {s["name"]: s["last_run"]["error"] for s in status["schedules"]}
            assert all(errors[name] for name in MONGO), errors
            assert "is not a valid MongoDB URI" in errors["slash_in_password"]
            pages = [daemon.get(p)[1] for p in ("/status", "/metrics", "/readyz", "/incidents?status=all")]
            pages += [_post(daemon, "/incidents/1/ack", token) for token in (INCIDENT_TOKEN, "wrong-SECRET14-token")]
            pages += [daemon.get(f"/runs/{s['last_run']['run_id']}")[1] for s in status["schedules"]]
            leaks += [leak for page in pages for leak in _leaks("daemon http", page)]
            # the endpoint's 401 reached the report (a note or the error), with the key masked
            assert "Incorrect API key provided: ***" in "".join(pages), pages[-2:]
        finally:
            daemon.stop()
        leaks += _leaks("daemon log", daemon.log_path.read_text())
        run_ids = [row for table, row in _store_rows(pg_dsn) if table == "runs"]
        assert len(run_ids) >= len(MONGO) + 3
        first = re.search(r"[0-9a-f]{8}-[0-9a-f]{4}", run_ids[0])
        assert first is not None
        show = _argus("show", first.group(0), "--format", "json", env=env, cwd=tmp_path)
        leaks += _leaks("show", show.stdout + show.stderr)
        leaks += [leak for table, row in _store_rows(pg_dsn) for leak in _leaks(f"store {table}", row)]
        bodies = [r.body.decode() for r in receiver.requests]
        assert bodies and any("is not a valid MongoDB URI" in b for b in bodies)
        leaks += [leak for body in bodies for leak in _leaks("alert body", body)]
    finally:
        server.stop()
        receiver.stop()
    assert len(server.requests) >= 3  # the key really went out, and came back in a 401
    assert leaks == []


def _post(daemon: DaemonProcess, path: str, token: str) -> str:
    import urllib.error
    import urllib.request

    request = urllib.request.Request(f"http://127.0.0.1:{daemon.port}{path}", data=b"{}", method="POST",
                                     headers={"Authorization": f"Bearer {token}"})
    try:
        with urllib.request.urlopen(request, timeout=10) as resp:
            return str(resp.read().decode())
    except urllib.error.HTTPError as exc:
        return str(exc.read().decode())


def _line(path: Path, name: str) -> int:
    return next(i for i, line in enumerate(path.read_text().splitlines(), 1) if line.startswith(f"  {name}:"))
