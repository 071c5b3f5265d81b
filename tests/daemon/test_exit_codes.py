"""The exit-code table (docs/reference/exit-codes.md), row by row, for `argus audit` and `argus run` alike: each row's
situation set up once as a file or URI, audited by both commands, which must exit with the row's
code. Before, a bad file exited 2 through `audit` and 4 through `run`."""

from __future__ import annotations

import re
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from bson import json_util
from typer.testing import CliRunner

from argus.daemon.cli import app
from argus.daemon.exit_codes import ExitCode
from tests.daemon.process import free_port
from tests.daemon.test_cli_new_user import _docs

runner = CliRunner()
ROOT = Path(__file__).resolve().parents[2]


def _table() -> dict[int, str]:
    """The exit-code table users read (docs/reference/exit-codes.md, generated from argus/daemon/exit_codes.py)."""
    text = (ROOT / "docs/reference/exit-codes.md").read_text()
    rows = {int(code): meaning for code, meaning in re.findall(r"^\| (\d+) \| (.+) \|$", text, re.MULTILINE)}
    assert rows == {code.value: code.meaning for code in ExitCode}
    return {code: meaning for code, meaning in rows.items() if code != ExitCode.INTERRUPTED}


def _clean(folder: Path) -> dict[str, Any]:
    path = folder / "clean.jsonl"
    path.write_text("\n".join(json_util.dumps({"n": i, "code": f"C-{i:04d}"}) for i in range(200)))
    return {"source": {"files": {"clean": str(path)}}, "collection": "clean"}


def _findings(folder: Path) -> dict[str, Any]:
    path = folder / "customers.jsonl"
    path.write_text("\n".join(json_util.dumps(d) for d in _docs()))  # a high finding (ages of 999)
    return {"source": {"files": {"customers": str(path)}}, "collection": "customers"}


def _bad_file(folder: Path) -> dict[str, Any]:
    path = folder / "broken.jsonl"
    path.write_text('{"_id": 1}\n{"_id": {"$oid": "zz"}}\n')
    return {"source": {"files": {"broken": str(path)}}, "collection": "broken"}


def _partial(folder: Path) -> dict[str, Any]:
    return {**_findings(folder), "settings": {"max_iterations": 1}, "options": ["--max-iterations", "1"]}


def _unreachable(folder: Path) -> dict[str, Any]:
    uri = f"mongodb://127.0.0.1:{free_port()}/?serverSelectionTimeoutMS=300"
    return {"source": {"uri_env": "EXIT_TEST_URI"}, "uri": uri, "collection": "c"}


SITUATIONS: dict[int, Callable[[Path], dict[str, Any]]] = {
    0: _clean, 1: _findings, 2: _bad_file, 3: _partial, 4: _unreachable}


def test_every_row_of_the_table_has_a_situation() -> None:
    assert sorted(_table()) == sorted(SITUATIONS)


@pytest.mark.parametrize("code", sorted(SITUATIONS))
def test_audit_and_run_exit_with_the_row_s_code(code: int, tmp_path: Path, pg_dsn: str) -> None:
    case = SITUATIONS[code](tmp_path)
    env = {"ARGUS_DATABASE_URL": pg_dsn, "ARGUS_DATA_DIR": str(tmp_path / "data"), "EXIT_TEST_URI": case.get("uri", "")}
    source = case["source"]
    where = ["--file", next(iter(source["files"].values()))] if "files" in source else \
        ["--uri", case["uri"], "--database", "d", "--collection", case["collection"]]
    audit = runner.invoke(app, ["audit", *where, *case.get("options", [])], env=env)

    schedules = tmp_path / "schedules.yaml"
    settings = "".join(f", {k}: {v}" for k, v in case.get("settings", {}).items())
    schedule = f"name: it, connection: source, database: d, collection: {case['collection']}, trigger: {{every: 1h}}"
    schedules.write_text(textwrap.dedent(f"""\
        connections:
          source: {json_util.dumps(source)}
        schedules:
          - {{{schedule}{settings}}}
    """))
    run = runner.invoke(app, ["run", "it", "--schedules", str(schedules)], env=env)

    assert (audit.exit_code, run.exit_code) == (code, code), (_table()[code], audit.output, run.output)


_HANG_S = 300  # a process that has not reached the model, or not exited after SIGINT, by then is hung


@pytest.mark.slow
@pytest.mark.parametrize("command", ["audit", "run"])
def test_ctrl_c_exits_130_with_no_report_through_audit_and_run(command: str, tmp_path: Path, pg_dsn: str) -> None:
    """The table's last row, with a real SIGINT to a real process while its audit waits on the model."""
    import os
    import signal
    import subprocess
    import threading
    import time

    from tests.daemon.process import _CHECKOUT, ARGUS
    from tests.doubles.model_server import LocalChatServer, Reply, hang_reply

    data = tmp_path / "orders.jsonl"
    data.write_text("\n".join(json_util.dumps({"n": i}) for i in range(50)))
    asked = threading.Event()  # set when the model is asked: the audit is waiting on it

    def hang(_body: dict[str, object]) -> Reply:
        asked.set()
        return hang_reply()

    with LocalChatServer(hang) as chat:
        schedules = tmp_path / "schedules.yaml"
        schedules.write_text(textwrap.dedent(f"""\
            connections:
              source: {{files: {{orders: {json_util.dumps(str(data))}}}}}
            schedules:
              - {{name: it, connection: source, database: d, collection: orders, trigger: {{every: 1h}},
                  planner: llm, llm: {{model: m, base_url: "{chat.base_url}", max_retries: 0}}}}
        """))
        argv = [ARGUS, "audit", "--file", str(data), "--planner", "llm", "--model", "m", "--base-url",
                chat.base_url] if command == "audit" else [ARGUS, "run", "it", "--schedules", str(schedules)]
        started = time.monotonic()
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                env={**os.environ, "ARGUS_DATABASE_URL": pg_dsn, "ARGUS_DATA_DIR": str(tmp_path / "d"),
                                     "ARGUS_LLM_MAX_RETRIES": "0", "PYTHONPATH": _CHECKOUT})
        try:
            # Event-driven: the signal goes when the model has been asked (or the process ended early),
            # however long a loaded machine takes to start Python; the ceilings only stop a hang.
            while not asked.wait(0.1) and proc.poll() is None:
                if time.monotonic() - started > _HANG_S:
                    break
            assert proc.poll() is None and asked.is_set(), proc.communicate()
            proc.send_signal(signal.SIGINT)
            out, err = proc.communicate(timeout=_HANG_S)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    assert proc.returncode == ExitCode.INTERRUPTED == 130, err[-500:]
    assert out == ""                                                   # no report
    assert "Traceback" not in err
