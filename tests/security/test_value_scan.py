"""Document values in everything Argus writes, per privacy mode.

A daemon (a real process, a real PostgreSQL) audits generated collections of personal data (18
and 300 documents: names, SSNs, phones, emails, card numbers, a status vocabulary with a typo,
duplicated keys) with the heuristic planner and with a scripted language model, alerting on every
finding. Then every value of the collections is looked for in: `argus audit --format json` (the
report and its trace), `argus show`, every row of every table of the store, `/runs/ID`, `/status`,
`/metrics`, the daemon's log (at DEBUG), every prompt the model received and every alert body.

- ``strict``: no value at all.
- ``shapes``: only the documented ones, the vocabulary of categorical fields (``status``: bronze,
  silver, platinum); never a personal value, however small the collection.
- ``full`` (the control): the same scan finds personal values, or it proves nothing.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from tests.daemon.alerts.receiver import Receiver
from tests.daemon.process import ARGUS, DaemonProcess
from tests.doubles.explorer import Explorer
from tests.doubles.model_server import LocalChatServer
from tests.security.people import PERSONAL, VOCABULARY, people, write_people

pytestmark = [pytest.mark.slow]

_CHECKOUT = str(Path(__file__).resolve().parents[2])
SIZES = (18, 300)


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ARGUS_", "OPENAI_"))}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (_CHECKOUT, os.environ.get("PYTHONPATH")) if p)
    return {**env, **extra}


def _values(sizes: tuple[int, ...]) -> dict[str, set[str]]:
    """field -> every string value the collections hold (``status`` included)."""
    out: dict[str, set[str]] = {}
    for n in sizes:
        for doc in people(n):
            for field in (*PERSONAL, "status"):
                out.setdefault(field, set()).add(str(doc[field]))
    return out


def _found(values: dict[str, set[str]], texts: dict[str, str]) -> Iterator[tuple[str, str, str]]:
    """(output, field, value) for each value found in an output, as written or as JSON escapes it."""
    for where, text in texts.items():
        for field, found in values.items():
            for value in found:
                if value in text or json.dumps(value)[1:-1] in text:
                    yield where, field, value


def _store(dsn: str) -> str:
    with psycopg.connect(dsn) as conn:
        tables = [r[0] for r in conn.execute("select table_name from information_schema.tables "
                                             "where table_schema = 'public'")]
        return "\n".join(row for t in tables for (row,) in conn.execute(f'select t::text from "{t}" t'))


def _outputs(mode: str, tmp_path: Path, dsn: str) -> dict[str, str]:
    """Every output of audits in ``mode``, by where it was written."""
    files = {n: write_people(tmp_path / f"people{n}.jsonl", n) for n in SIZES}
    texts: dict[str, str] = {}
    env = _env(ARGUS_DATABASE_URL=dsn, ARGUS_DATA_DIR=str(tmp_path / "data"), ARGUS_LOG_LEVEL="DEBUG")
    for n, file in files.items():
        done = subprocess.run([ARGUS, "audit", "--file", str(file), "--privacy", mode, "--format", "json",
                               "--no-store", "--verbose"], env=env, capture_output=True, text=True, timeout=120)
        assert done.returncode in (0, 1), done.stderr
        texts[f"argus audit --format json ({n} docs)"] = done.stdout
        texts[f"argus audit stderr ({n} docs)"] = done.stderr
    receiver = Receiver().start()
    servers = {n: LocalChatServer(Explorer(["name", "ssn", "phone", "email", "card", "status", "age"], steps=8))
               .start() for n in SIZES}
    schedules = tmp_path / "schedules.yaml"
    lines = [f"  - {{name: heuristic-{n}, connection: files, database: shop, collection: people{n}}}" for n in SIZES]
    lines += [f"  - {{name: llm-{n}, connection: files, database: shop, collection: people{n}, planner: llm,\n"
              f"     llm: {{base_url: '{servers[n].base_url}', evaluators: balanced}}}}" for n in SIZES]
    schedules.write_text(
        "connections:\n  files: {files: {" + ", ".join(f"people{n}: {f}" for n, f in files.items()) + "}}\n"
        f"defaults: {{trigger: {{every: 1h}}, run_at_start: true, privacy: {mode}}}\n"
        "schedules:\n" + "\n".join(lines) + "\n"
        "alerts:\n  min_severity: low\n  channels:\n    hook: {type: webhook, url_env: ARGUS_TEST_HOOK_URL}\n")
    daemon = DaemonProcess(schedules, {**env, "ARGUS_TEST_HOOK_URL": f"{receiver.url}/hook",
                                       "OPENAI_API_KEY": "sk-local-test-key"}, tmp_path / "daemon.log")
    try:
        daemon.wait_until("every schedule ran", lambda: all(
            s["last_run"] is not None for s in daemon.status()["schedules"]), timeout=180)
        status = daemon.status()
        assert all(s["last_run"]["outcome"] != "failed" for s in status["schedules"]), status
        texts["/status"] = daemon.get("/status")[1]
        texts["/metrics"] = daemon.get("/metrics")[1]
        for s in status["schedules"]:
            texts[f"/runs ({s['name']})"] = daemon.get(f"/runs/{s['last_run']['run_id']}")[1]
        run_id = status["schedules"][0]["last_run"]["run_id"]
    finally:
        daemon.stop()
        for server in servers.values():
            server.stop()
        receiver.stop()
    show = subprocess.run([ARGUS, "show", run_id, "--format", "json"], env=env, capture_output=True, text=True,
                          timeout=60)
    texts["argus show"] = show.stdout + show.stderr
    texts["daemon log"] = daemon.log_path.read_text()
    texts["store"] = _store(dsn)
    texts["alerts"] = "\n".join(r.body.decode() for r in receiver.requests)
    for n, server in servers.items():
        assert len(server.requests) > 8
        texts[f"prompts ({n} docs)"] = "\n".join(r.prompt_text() for r in server.requests)
    return texts


def test_strict_writes_no_document_value_anywhere(tmp_path: Path, pg_dsn: str) -> None:
    found = sorted(set(_found(_values(SIZES), _outputs("strict", tmp_path, pg_dsn))))
    assert found == [], found[:20]


def test_shapes_writes_only_the_vocabulary_of_categorical_fields(tmp_path: Path, pg_dsn: str) -> None:
    found = set(_found(_values(SIZES), _outputs("shapes", tmp_path, pg_dsn)))
    assert {(where, field, value) for where, field, value in found if field != "status"} == set()
    assert {value for _, _, value in found} <= {*VOCABULARY, "silvr"}
    assert {value for _, _, value in found} & set(VOCABULARY)  # the vocabulary does appear: the scan works


def test_the_scan_finds_values_in_full_mode(tmp_path: Path, pg_dsn: str) -> None:
    found = set(_found(_values(SIZES), _outputs("full", tmp_path, pg_dsn)))
    personal = {(field, value) for _, field, value in found if field != "status"}
    assert {field for field, _ in personal} == set(PERSONAL)
    assert len(personal) > 50
