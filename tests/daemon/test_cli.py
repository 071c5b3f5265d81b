"""argus audit: exit codes, output formats and one-line errors, as a user sees them."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from bson import json_util
from typer.testing import CliRunner

from argus.daemon.cli import app

runner = CliRunner()
CLEAN = [{"order_no": f"O-{i}", "qty": 1 + i % 5, "status": ["paid", "shipped"][i % 2]} for i in range(300)]


def _write(path: Path, docs: list[dict]) -> Path:
    path.write_text("\n".join(json_util.dumps(d) for d in docs) + "\n")
    return path


@pytest.fixture(autouse=True)
def _no_user_history(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An embedded history database in the user's data directory must not change what these print."""
    monkeypatch.setenv("ARGUS_DATA_DIR", str(tmp_path / "argus-data"))
    monkeypatch.delenv("ARGUS_DATABASE_URL", raising=False)


@pytest.fixture
def clean_file(tmp_path: Path) -> Path:
    return _write(tmp_path / "clean.jsonl", CLEAN)


@pytest.fixture
def defect_file(tmp_path: Path) -> Path:
    docs = [dict(d) for d in CLEAN]
    for d in docs[:12]:
        d["qty"] = str(d["qty"])          # 4% type mismatch: high
    return _write(tmp_path / "orders.jsonl", docs)


def test_clean_collection_exits_zero(clean_file: Path) -> None:
    result = runner.invoke(app, ["audit", "--file", str(clean_file)])
    assert result.exit_code == 0, result.output
    assert "No findings." in result.stdout
    assert "Argus audit of files.clean" in result.stdout


def test_finding_at_or_above_fail_on_exits_one(defect_file: Path) -> None:
    result = runner.invoke(app, ["audit", "--file", str(defect_file)])
    assert result.exit_code == 1
    assert "type_mismatch" in result.stdout and "qty" in result.stdout


def test_fail_on_threshold_above_the_findings_exits_zero(defect_file: Path) -> None:
    assert runner.invoke(app, ["audit", "--file", str(defect_file), "--fail-on", "critical"]).exit_code == 0
    assert runner.invoke(app, ["audit", "--file", str(defect_file), "--fail-on", "none"]).exit_code == 0


def test_json_format_prints_the_report(defect_file: Path) -> None:
    result = runner.invoke(app, ["audit", "--file", str(defect_file), "--format", "json", "--collection", "x"])
    report = json.loads(result.stdout)
    assert report["collection"] == "x" and report["outcome"] == "succeeded"
    assert [(f["field"], f["category"], f["affected_count"]) for f in report["findings"]] == [
        ("qty", "type_mismatch", 12)]
    assert report["token_usage"] == {"input_tokens": 0, "output_tokens": 0, "cached_tokens": 0}


def test_missing_file_is_a_one_line_error(tmp_path: Path) -> None:
    result = runner.invoke(app, ["audit", "--file", str(tmp_path / "nope.jsonl")])
    assert result.exit_code == 2
    assert result.stderr.strip() == f"argus: error: {tmp_path / 'nope.jsonl'}: no such file"


def test_bad_line_is_named(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text('{"a": 1}\n{"a": \n')
    result = runner.invoke(app, ["audit", "--file", str(path)])
    assert result.exit_code == 2
    assert f"{path}:2: not valid JSON: the file ends inside the document that starts on this line" in result.stderr
    assert "Traceback" not in result.output


@pytest.mark.parametrize("args", [[], ["--file", "a.jsonl", "--uri", "mongodb://h"]])
def test_exactly_one_source_is_required(args: list[str]) -> None:
    result = runner.invoke(app, ["audit", *args])
    assert result.exit_code == 2 and "give exactly one of --file PATH or --uri URI" in result.stderr


def test_uri_without_database_names_the_problem_without_the_password() -> None:
    result = runner.invoke(app, ["audit", "--uri", "mongodb://app:hunter2@db.example:27017"])
    assert result.exit_code == 2
    assert "argus: error: --uri needs --database and --collection" in result.stderr  # the URI is never echoed
    assert "hunter2" not in result.output


def test_unreachable_server_fails_with_exit_four_and_no_secret() -> None:
    uri = "mongodb://app:hunter2@127.0.0.1:1/?serverSelectionTimeoutMS=300&connectTimeoutMS=300"
    result = runner.invoke(app, ["audit", "--uri", uri, "--database", "shop", "--collection", "orders",
                                 "--format", "json"])
    assert result.exit_code == 4
    assert json.loads(result.stdout)["outcome"] == "failed"
    assert "argus: error: audit failed: aggregate could not reach the database" in result.stderr
    assert "hunter2" not in result.output


def test_console_script_runs_as_installed(defect_file: Path) -> None:
    argus = Path(sys.executable).with_name("argus")
    done = subprocess.run([str(argus), "audit", "--file", str(defect_file), "--format", "json"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1, done.stderr
    assert json.loads(done.stdout)["findings"][0]["field"] == "qty"
