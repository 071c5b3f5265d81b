"""What a new user still tripped over (issue 22), each as the user met it: exit codes that lied
(ARGUS_FAIL_ON=none refused, a closed pipe exiting 1), wording that hid an empty or failed audit,
pydantic dumps, waits past the URI's own timeout, a prune that deleted everything unasked, a mute
on a collection that does not exist, tables cut into fragments when piped, and noise on stderr."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from bson import json_util
from typer.testing import CliRunner

from argus.daemon.cli import app
from tests.daemon.process import free_port
from tests.daemon.test_cli_new_user import History, _docs

runner = CliRunner()
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def history(pg_dsn: str, tmp_path: Path) -> History:
    return History(pg_dsn, tmp_path)


@pytest.fixture
def customers(tmp_path: Path) -> Path:
    path = tmp_path / "customers.jsonl"
    path.write_text("\n".join(json_util.dumps(d) for d in _docs()))   # a high finding: exit 1 at --fail-on high
    return path


def _audit(*args: str, env: dict[str, str] | None = None) -> Any:
    return runner.invoke(app, ["audit", "--no-store", *args], env=env)


# --- exit codes -----------------------------------------------------------------------------------

def test_argus_fail_on_none_is_taken_like_the_option(customers: Path) -> None:
    assert _audit("--file", str(customers)).exit_code == 1
    assert _audit("--file", str(customers), env={"ARGUS_FAIL_ON": "none"}).exit_code == 0
    assert _audit("--file", str(customers), env={"ARGUS_FAIL_ON": "None"}).exit_code == 0


def test_a_reader_that_stops_early_leaves_the_audit_s_own_exit_code(customers: Path, tmp_path: Path) -> None:
    env = {**os.environ, "ARGUS_DATA_DIR": str(tmp_path / "data")}
    proc = subprocess.Popen([sys.executable, "-m", "argus.daemon.cli", "audit", "--no-store", "--file", str(customers),
                             "--format", "json", "--fail-on", "none"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            cwd=ROOT, env=env)
    assert proc.stdout is not None and proc.stderr is not None
    first = proc.stdout.readline()                     # `| head -1`: one line, then the reader is gone
    proc.stdout.close()
    code = proc.wait(timeout=120)
    assert first.strip() == b"{"
    assert code == 0 and proc.stderr.read() == b""    # click's EPIPE exit 1 read as "findings"


def test_a_negative_time_budget_is_one_line_naming_the_option(customers: Path) -> None:
    result = _audit("--file", str(customers), "--time-budget", "-5")
    assert result.exit_code == 2
    assert result.stderr.strip() == "argus: error: invalid option --time-budget: input should be greater than 0"


def test_version_and_one_suggestion_for_a_typo() -> None:
    version = runner.invoke(app, ["--version"])
    assert version.exit_code == 0 and version.stdout.strip().startswith("argus ")
    typo = runner.invoke(app, ["audt"])
    assert typo.exit_code == 2 and typo.output.count("Did you mean 'audit'?") == 1


# --- what a report says when there was nothing, or nothing could be checked ------------------------

def test_an_empty_collection_says_nothing_was_audited(tmp_path: Path) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    result = _audit("--file", str(empty))
    assert "0 documents: the collection is empty, nothing was audited." in result.stdout
    assert "No findings" not in result.stdout


def test_a_failed_audit_does_not_say_no_findings_and_waits_only_the_uri_s_selection_timeout() -> None:
    uri = f"mongodb://127.0.0.1:{free_port()}/?serverSelectionTimeoutMS=500"
    result = _audit("--uri", uri, "--database", "d", "--collection", "c", "--format", "json")
    report = json.loads(result.stdout)
    assert result.exit_code == 4 and report["outcome"] == "failed"
    assert "no server answered within the URI's serverSelectionTimeoutMS, 0.5 s" in report["error"]
    assert report["duration_s"] < 5           # not the 10 s query limit the driver's timeout would have used
    table = _audit("--uri", uri, "--database", "d", "--collection", "c").stdout
    assert "No findings: the audit failed before it could check the collection." in table
    assert "No findings." not in table


def test_a_mongodb_srv_name_that_does_not_resolve_says_so_without_the_host() -> None:
    result = _audit("--uri", "mongodb+srv://argus-no-such-host.invalid/db", "--database", "d", "--collection", "c")
    assert result.exit_code == 2
    assert result.stderr.startswith("argus: error: cannot use --uri: the mongodb+srv:// host has no DNS SRV record")
    assert "argus-no-such-host" not in result.stderr


# --- history commands -----------------------------------------------------------------------------

def test_runs_as_json_and_as_a_table_that_does_not_wrap_when_piped(history: History) -> None:
    report = history.audit(_docs())
    listed = json.loads(history.cli("runs", "--format", "json").stdout)
    assert [(r["id"], r["outcome"], r["collection"]) for r in listed] == [(report["run_id"], "succeeded",
                                                                          "customers")]
    narrow = runner.invoke(app, ["runs"], env={**history.env, "COLUMNS": None})  # shells do not export it
    [row] = [line for line in narrow.stdout.splitlines() if report["run_id"][:8] in line]
    assert "file/files.customers" in row and "succeeded" in row     # grep finds the run on one line
    assert narrow.stderr == ""                                        # no "history: embedded PostgreSQL in ..."


def test_the_report_shows_each_evidence_query_on_one_line(history: History) -> None:
    report = history.audit(_docs())
    shown = runner.invoke(app, ["show", report["run_id"]], env={**history.env, "COLUMNS": "60"}).stdout
    for finding in report["findings"]:
        line = f"evidence {finding['field']} {finding['category']}: " \
               f"{json.dumps(finding['evidence_query'], separators=(', ', ': '))}"
        assert line in shown.splitlines()


def test_prune_counts_first_asks_and_takes_durations(history: History) -> None:
    import time

    run_id = history.audit(_docs())["run_id"]
    time.sleep(1.1)                                                              # the run is older than 1s now
    assert history.cli("prune", "--older-than", "0", "--yes").exit_code == 2     # would delete every run
    dry = history.cli("prune", "--older-than", "1s", "--dry-run")
    assert dry.exit_code == 0 and "would delete 1 run(s) older than 1s" in dry.stdout
    unasked = history.cli("prune", "--older-than", "1s")                         # no terminal to ask on
    assert unasked.exit_code == 2 and "add --yes to delete them without asking" in unasked.stderr
    assert run_id[:8] in history.cli("runs").stdout
    assert "nothing to delete: 0 run(s) older than 7d" in history.cli("prune", "--older-than", "7d").stdout
    assert "pruned 1 run(s) older than 1s" in history.cli("prune", "--older-than", "1s", "--yes").stdout
    assert run_id[:8] not in history.cli("runs").stdout


def test_a_mute_on_a_collection_without_runs_says_so(history: History) -> None:
    history.audit(_docs())
    unknown = history.cli("mute", "--collection", "nosuch.coll")
    assert unknown.exit_code == 0   # kept: a mute may come before the collection's first run
    assert unknown.stderr.strip() == ("warning: no stored runs for collection 'nosuch.coll' (stored: "
                                      "files.customers); the mute applies once it is audited under that name")
    known = history.cli("mute", "--collection", "customers", "--for", "7d")
    assert known.exit_code == 0 and known.stderr == ""


# --- schedules ------------------------------------------------------------------------------------

def test_schedules_check_fails_on_a_data_file_that_does_not_exist(tmp_path: Path) -> None:
    path = tmp_path / "schedules.yaml"
    path.write_text(textwrap.dedent("""\
        connections:
          demo:
            files: {orders: missing.jsonl}
        schedules:
          - {name: orders, connection: demo, database: shop, collection: orders, trigger: {every: 1h}}
    """))
    result = runner.invoke(app, ["schedules", "check", str(path)])
    assert result.exit_code == 1
    assert f"schedules.yaml:3 connections.demo.files.orders: {tmp_path / 'missing.jsonl'} does not exist" in \
        result.stderr
