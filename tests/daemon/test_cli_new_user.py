"""What a new user tripped over (issue 14), each as the user met it: bad input that said
"internal error", prefixes and collection names one command took and another refused, a diff
line missing from `argus run`, a false-positive label that read as a fix, and the displays
that misled (mutes without an end, fingerprints nowhere to copy, jitter shown as ±)."""

from __future__ import annotations

import json
import random
import textwrap
from pathlib import Path
from typing import Any

import pytest
import structlog
from bson import json_util
from prometheus_client import generate_latest
from typer.testing import CliRunner

from argus.config.schedules import load_schedules
from argus.config.settings import Settings
from argus.daemon.alerts.policy import AlertPolicy
from argus.daemon.cli import app
from argus.daemon.metrics import Metrics
from argus.daemon.runner import ScheduleRunner
from argus.daemon.service import Daemon
from argus.daemon.spool import Spool
from argus.daemon.store import PostgresStore

runner = CliRunner()


def _docs(*, missing_zip: int = 30, bad_ages: int = 10) -> list[dict[str, Any]]:
    rng = random.Random(9)
    docs = [{"customer_id": f"C{i:05d}", "age": rng.randint(18, 90), "tier": rng.choice(["bronze", "silver"]),
             "zip": f"{rng.randint(10000, 99999)}"} for i in range(600)]
    for d in docs[:missing_zip]:
        del d["zip"]
    for d in docs[100:100 + bad_ages]:
        d["age"] = 999
    return docs


class History:
    """`argus` against one history database, auditing one file."""

    def __init__(self, dsn: str, folder: Path) -> None:
        self.env = {"ARGUS_DATABASE_URL": dsn, "COLUMNS": "250"}
        self.file = folder / "customers.jsonl"

    def audit(self, docs: list[dict[str, Any]]) -> dict[str, Any]:
        self.file.write_text("\n".join(json_util.dumps(d) for d in docs))
        result = self.cli("audit", "--file", str(self.file), "--format", "json", "--fail-on", "none")
        assert result.exit_code == 0, result.output
        return json.loads(result.stdout)

    def cli(self, *args: str) -> Any:
        return runner.invoke(app, list(args), env=self.env)


@pytest.fixture
def history(pg_dsn: str, tmp_path: Path) -> History:
    return History(pg_dsn, tmp_path)


# --- bad input: one line naming what is wrong, never "internal error" ----------------------------

def test_a_bad_setting_names_the_variable_in_one_line(tmp_path: Path) -> None:
    (tmp_path / "c.jsonl").write_text('{"a": 1}\n')
    result = runner.invoke(app, ["audit", "--file", str(tmp_path / "c.jsonl")], env={"ARGUS_SAMPLE_SIZE": "abc"})
    assert result.exit_code == 2
    assert result.stderr.strip() == ("argus: error: invalid environment variable ARGUS_SAMPLE_SIZE: input should be "
                                     "a valid integer, unable to parse string as an integer")


def test_a_bad_setting_never_echoes_its_value() -> None:
    result = runner.invoke(app, ["runs"], env={"ARGUS_HISTORY_RUNS": "s3cret-token"})
    assert result.exit_code == 2 and "ARGUS_HISTORY_RUNS" in result.stderr and "s3cret" not in result.stderr


def test_an_invalid_object_id_names_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text('{"_id": {"$oid": "5f0c"}, "a": 1}\n{"_id": {"$oid": "zz"}, "a": 2}\n')
    result = runner.invoke(app, ["audit", "--file", str(path), "--no-store"])
    assert result.exit_code == 2
    assert result.stderr.strip() == (f"argus: error: {path}:1: not valid Extended JSON: an $oid must be "
                                     f"24 hexadecimal characters")


def test_a_directory_given_as_file_says_so(tmp_path: Path) -> None:
    """A folder is read as a mongodump folder; one without a dump says what it needs."""
    result = runner.invoke(app, ["audit", "--file", str(tmp_path), "--no-store"])
    assert result.exit_code == 2
    assert result.stderr.strip() == (f"argus: error: {tmp_path}: is a folder without a mongodump collection (.bson "
                                     f"or .bson.gz); give a file, or the folder mongodump wrote for one database")


def test_prune_refuses_a_negative_age_and_deletes_nothing(history: History) -> None:
    report = history.audit(_docs())
    result = history.cli("prune", "--older-than", "-5", "--yes")
    assert result.exit_code == 2 and "--older-than" in result.output and "e.g. 7d, 12h or 30m" in result.output
    assert report["run_id"][:8] in history.cli("runs").stdout


# --- prefixes and collection names accepted everywhere the same way ------------------------------

def test_runs_accepts_every_collection_form_history_and_diff_accept(history: History) -> None:
    run_id = history.audit(_docs())["run_id"]
    for name in ("customers", "files.customers", "file/files.customers"):
        listed = history.cli("runs", "--collection", name)
        assert listed.exit_code == 0 and run_id[:8] in listed.stdout, (name, listed.output)
        assert history.cli("history", name).exit_code == 0
    unknown = history.cli("runs", "--collection", "file/files.orders")
    assert unknown.exit_code == 2 and "no stored runs for collection 'file/files.orders'" in unknown.stderr


def test_the_run_page_takes_a_prefix_as_tables_print_it(store: PostgresStore, tmp_path: Path,
                                                        history: History) -> None:
    run_id = history.audit(_docs())["run_id"]
    service = Daemon(Settings(data_dir=tmp_path), schedules_path=tmp_path / "none.yaml", listen=("127.0.0.1", 0))
    service.store = store
    for given in (run_id, run_id[:8], run_id[:8].upper()):
        page = service.run_view(given)
        assert page is not None and page["run_id"] == run_id, given
    assert service.run_view(run_id[:4]) is None       # too short to name a run: no enumeration
    assert service.run_view("ffffffff") is None


# --- the diff, wherever a report is printed -------------------------------------------------------

def test_run_schedule_prints_the_changes_line_like_show(pg_dsn: str, tmp_path: Path) -> None:
    (tmp_path / "customers.jsonl").write_text("\n".join(json_util.dumps(d) for d in _docs()))
    (tmp_path / "schedules.yaml").write_text(textwrap.dedent("""\
        connections:
          files: {files: {customers: customers.jsonl}}
        schedules:
          - {name: customers, connection: files, database: crm, collection: customers, trigger: {every: 1h}}
    """))
    env = {"ARGUS_DATABASE_URL": pg_dsn, "ARGUS_DATA_DIR": str(tmp_path / "data")}
    args = ["run", "customers", "--schedules", str(tmp_path / "schedules.yaml")]
    first = runner.invoke(app, args, env=env)
    assert "changes first stored run of this collection" in first.stdout, first.output
    second = runner.invoke(app, args, env=env)
    run_id = json.loads(runner.invoke(app, ["show", _run_of(second.stdout), "--format", "json"], env=env).stdout)[
        "run_id"]
    shown = runner.invoke(app, ["show", run_id], env=env).stdout
    [line] = [x for x in second.stdout.splitlines() if x.startswith("changes ")]
    assert line in shown and "2 persisting" in line


def _run_of(text: str) -> str:
    return text.split(" run ", 1)[1].split()[0]


def test_a_false_positive_label_shows_as_suppressed_not_resolved(history: History) -> None:
    first = history.audit(_docs())
    zip_finding = next(f for f in first["findings"] if f["field"] == "zip")
    assert history.cli("label", first["run_id"][:8], zip_finding["id"][:8], "fp").exit_code == 0

    again = history.audit(_docs())
    statuses = {(e["field"], e["category"]): e["status"] for e in again["diff"]["entries"]}
    assert statuses == {("zip", "null_rate"): "suppressed", ("age", "outlier_value"): "persisting"}
    shown = history.cli("show", again["run_id"]).stdout
    assert "suppressed by a label: null_rate on zip" in shown
    assert "resolved:" not in shown and "1 suppressed" in shown
    diff = history.cli("diff", again["run_id"]).stdout
    assert "suppressed by a label" in diff and "resolved" not in diff
    listed = history.cli("runs", "--collection", "customers").stdout.splitlines()
    assert listed[4].split("│")[6].strip() == "0"      # the runs table's resolved column counts real fixes


def test_a_pattern_fixed_without_a_label_is_still_resolved(history: History) -> None:
    history.audit(_docs())
    fixed = history.audit(_docs(missing_zip=0))
    assert {(e["field"], e["status"]) for e in fixed["diff"]["entries"]} == {("zip", "resolved"),
                                                                             ("age", "persisting")}


# --- storing: a rule a user can predict, said when it happens ------------------------------------

def test_a_plain_audit_stores_only_when_a_history_database_is_configured(tmp_path: Path, pg_dsn: str) -> None:
    file = tmp_path / "customers.jsonl"
    file.write_text("\n".join(json_util.dumps(d) for d in _docs()))
    data = {"ARGUS_DATA_DIR": str(tmp_path / "data")}
    stored = runner.invoke(app, ["audit", "--file", str(file), "--store", "--fail-on", "none"], env=data)
    assert "stored as run" in stored.stdout and "(--store; --no-store skips)" in stored.stdout
    plain = runner.invoke(app, ["audit", "--file", str(file), "--fail-on", "none"], env=data)
    assert "stored" not in plain.output and "changes " not in plain.stdout   # the embedded database exists now
    configured = runner.invoke(app, ["audit", "--file", str(file), "--format", "json", "--fail-on", "none"],
                               env={**data, "ARGUS_DATABASE_URL": pg_dsn})
    assert "stored as run" in configured.stderr and "(ARGUS_DATABASE_URL is set; --no-store skips)" in \
        configured.stderr
    assert json.loads(configured.stdout)["diff"] is not None


# --- displays --------------------------------------------------------------------------------------

def test_mutes_without_an_end_say_no_end(history: History) -> None:
    added = history.cli("mute", "--collection", "files.customers", "--category", "null_rate")
    assert added.exit_code == 0 and "with no end (lift it with `argus unmute 1`)" in added.stdout
    listed = history.cli("mutes").stdout
    assert "no end" in listed and "unmuted" not in listed


def test_the_findings_table_shows_the_fingerprint_mute_takes(history: History) -> None:
    report = history.audit(_docs())
    entry = next(e for e in report["diff"]["entries"] if e["field"] == "zip")
    shown = history.cli("show", report["run_id"]).stdout
    assert "pattern" in shown and entry["fingerprint"][:12] in shown
    muted = history.cli("mute", "--fingerprint", entry["fingerprint"][:12])
    assert muted.exit_code == 0, muted.output


def test_alerts_show_the_pattern_fingerprint(pg_dsn: str, tmp_path: Path) -> None:
    (tmp_path / "customers.jsonl").write_text("\n".join(json_util.dumps(d) for d in _docs()))
    (tmp_path / "schedules.yaml").write_text(textwrap.dedent("""\
        connections:
          files: {files: {customers: customers.jsonl}}
        alerts:
          per: finding                     # one alert per pattern: each lists its fingerprint
          min_severity: low
          channels: {hook: {type: webhook, url_env: TEST_HOOK_URL}}
        schedules:
          - {name: customers, connection: files, database: crm, collection: customers, trigger: {every: 1h}}
    """))
    store = PostgresStore(pg_dsn)
    try:
        schedules = load_schedules(tmp_path / "schedules.yaml")
        run = ScheduleRunner(store=store, spool=Spool(tmp_path / "spool"), metrics=Metrics(),
                             settings=Settings(data_dir=tmp_path))
        run.alerts = AlertPolicy.of(schedules)
        report = run.run(schedules, "customers")
        assert report is not None
        stored = store.get_report(report.run_id)
    finally:
        store.close()
    listed = runner.invoke(app, ["alerts"], env={"ARGUS_DATABASE_URL": pg_dsn, "COLUMNS": "250"}).stdout
    assert "pattern" in listed
    assert stored.diff is not None and stored.diff.entries
    for entry in stored.diff.entries:
        assert entry.fingerprint[:12] in listed


def test_jitter_is_shown_as_the_delay_it_is(tmp_path: Path) -> None:
    (tmp_path / "s.yaml").write_text(textwrap.dedent("""\
        connections:
          files: {files: {c: c.jsonl}}
        schedules:
          - {name: c, connection: files, database: d, collection: c, trigger: {every: 10m, jitter: 30s}}
    """))
    checked = runner.invoke(app, ["schedules", "check", str(tmp_path / "s.yaml")], terminal_width=200)
    assert "every 10m +0\N{EN DASH}30s" in checked.stdout and "±" not in checked.stdout


def test_verbose_logs_every_step(tmp_path: Path) -> None:
    file = tmp_path / "customers.jsonl"
    file.write_text("\n".join(json_util.dumps(d) for d in _docs()))
    result = runner.invoke(app, ["audit", "--file", str(file), "--no-store", "--verbose", "--format", "json"])
    report = json.loads(result.stdout)
    steps = [line for line in result.stderr.splitlines() if "audit_step" in line]
    assert len(steps) == report["iterations"] == len(report["trace"])
    assert all("action=" in s and "outcome=" in s for s in steps)


def test_no_created_series_beside_counters() -> None:
    metrics = Metrics()
    metrics.runs.labels("s", "succeeded").inc()
    metrics.duration.labels("s").observe(2.0)
    text = generate_latest(metrics.registry).decode()
    assert "argus_audit_runs_total" in text and "_created" not in text


def test_a_failed_audit_logs_its_reason_without_credentials(store: PostgresStore, tmp_path: Path) -> None:
    (tmp_path / "s.yaml").write_text(textwrap.dedent("""\
        connections:
          live: {uri_env: TEST_ISSUE14_URI}
        schedules:
          - {name: live, connection: live, database: d, collection: c, trigger: {every: 1h}}
    """))
    schedules = load_schedules(tmp_path / "s.yaml")
    run = ScheduleRunner(store=store, spool=Spool(tmp_path / "spool"), metrics=Metrics(),
                         settings=Settings(data_dir=tmp_path))
    with structlog.testing.capture_logs() as logs:
        report = run.run(schedules, "live")
    assert report is not None and report.outcome == "failed" and report.error
    [failed] = [e for e in logs if e["event"] == "audit_failed"]
    assert failed["error"] == report.error and failed["log_level"] == "warning"
