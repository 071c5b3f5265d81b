"""Scoped schedules as the daemon runs them: the window from schedules.yaml, a full audit on the
``full_every`` cadence (the last one's time kept in the store), and errors that name file and line."""

from __future__ import annotations

import re
import textwrap
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from bson import ObjectId, json_util

from argus.agent.clock import ManualClock
from argus.agent.report import AuditReport
from argus.config.schedules import ScheduleError, ScheduleSet, load_schedules
from argus.config.settings import Settings
from argus.daemon.metrics import Metrics
from argus.daemon.runner import ScheduleRunner
from argus.daemon.spool import Spool
from argus.daemon.store import CollectionRef, PostgresStore

NOW = datetime(2026, 5, 1, 10, 0, tzinfo=UTC)


def _orders(path: Path) -> None:
    """300 orders over the last 30 days; the 100 of the last day hold 4 quantities written as
    text, the older ones 10 more."""
    docs = []
    for i in range(300):
        created = NOW - timedelta(days=1) * (i / 100 if i < 100 else 1 + 29 * (i - 100) / 200)
        docs.append({"_id": ObjectId.from_datetime(created), "order_no": f"O-{i}", "qty": 1 + i % 5})
    for i in (5, 30, 55, 80, *range(110, 300, 21)):
        docs[i]["qty"] = str(docs[i]["qty"])
    path.write_text("\n".join(json_util.dumps(d) for d in docs))


def _schedules(tmp_path: Path, scope: str) -> ScheduleSet:
    _orders(tmp_path / "orders.jsonl")
    (tmp_path / "schedules.yaml").write_text(textwrap.dedent(f"""\
        connections:
          files: {{files: {{orders: orders.jsonl}}}}
        defaults:
          trigger: {{every: 1h}}
          scope: {{since: 24h}}
        schedules:
          - name: orders
            connection: files
            database: shop
            collection: orders
            scope: {scope}
    """))
    return load_schedules(tmp_path / "schedules.yaml")


def _runner(store: PostgresStore, tmp_path: Path, clock: ManualClock) -> ScheduleRunner:
    return ScheduleRunner(store=store, spool=Spool(tmp_path / "spool"), metrics=Metrics(),
                          settings=Settings(data_dir=tmp_path), clock=clock, replica="r1")


def _qty(report: AuditReport) -> int:
    return next(f.affected_count for f in report.findings if f.field == "qty")


def test_full_every_runs_a_full_audit_on_its_cadence_and_scoped_audits_between(store: PostgresStore,
                                                                                tmp_path: Path) -> None:
    schedules = _schedules(tmp_path, "{full_every: 7d}")
    clock = ManualClock(NOW)
    runner = _runner(store, tmp_path, clock)

    first = runner.run(schedules, "orders")
    clock.advance(3600)
    second = runner.run(schedules, "orders")
    clock.advance(7 * 86400)
    third = runner.run(schedules, "orders")

    assert first is not None and second is not None and third is not None
    assert first.window is None and _qty(first) == 4 + 10
    assert first.notes[0] == "a full audit (scope.full_every 7d): no full audit of this collection is stored yet"
    assert second.window is not None and second.window.field == "_id" and _qty(second) == 4
    stored = store.get_report(second.run_id)
    assert stored.diff is not None and stored.diff.scoped and stored.window == second.window
    assert third.window is None and third.notes[0] == "a full audit (scope.full_every 7d): the last was 7d1h ago"
    assert store.last_full_audit(_ref()) == NOW + timedelta(seconds=3600 + 7 * 86400)


def test_a_schedule_without_full_every_is_always_scoped(store: PostgresStore, tmp_path: Path) -> None:
    runner = _runner(store, tmp_path, ManualClock(NOW))
    report = runner.run(_schedules(tmp_path, "{field: null}"), "orders")

    assert report is not None and report.window is not None and _qty(report) == 4
    assert report.window.documents == 101 and report.window.indexed  # _id leads the _id index
    examined = runner.metrics.sample("argus_db_documents_examined_total", {"schedule": "orders"})
    assert examined == report.database_cost.documents_examined
    passes = [op for op in report.database_cost.operations if op.full_pass and op.documents_examined == 101]
    assert len(passes) >= 3  # the window's count and the audit's passes, each its 101 documents
    assert report.findings[0].window is not None
    assert report.findings[0].window.since == NOW - timedelta(days=1)


def test_a_scope_without_since_names_the_file_line_and_key(tmp_path: Path) -> None:
    (tmp_path / "schedules.yaml").write_text(textwrap.dedent("""\
        connections:
          files: {files: {orders: orders.jsonl}}
        defaults: {trigger: {every: 1h}}
        schedules:
          - name: orders
            connection: files
            database: shop
            collection: orders
            scope: {field: created_at, full_every: 7d}
    """))
    with pytest.raises(ScheduleError) as caught:
        load_schedules(tmp_path / "schedules.yaml")
    assert caught.value.problems == [f"{tmp_path / 'schedules.yaml'}:9 schedules[0].scope: a scope needs 'since' "
                                     f"(how far back the window reaches, e.g. since: 24h), here or in defaults"]


@pytest.mark.parametrize(("scope", "problem"), [
    ("{since: 0s}", "schedules[0].scope.since: must be longer than zero (e.g. 24h)"),
    ("{since: yesterday}", "schedules[0].scope.since: 'yesterday' is not a duration (e.g. 30s, 5m, 1h30m)"),
    ("{sinse: 24h}", "schedules[0].scope.sinse: unknown key (did you mean 'since'?)"),
    ("{since: 24h, field: $where}", "schedules[0].scope.field: '$where' is not a field path (dot notation, no '$')"),
])
def test_a_bad_scope_is_refused_naming_the_key(tmp_path: Path, scope: str, problem: str) -> None:
    (tmp_path / "schedules.yaml").write_text(textwrap.dedent(f"""\
        connections:
          files: {{files: {{orders: orders.jsonl}}}}
        defaults: {{trigger: {{every: 1h}}}}
        schedules:
          - {{name: orders, connection: files, database: shop, collection: orders, scope: {scope}}}
    """))
    with pytest.raises(ScheduleError) as caught:
        load_schedules(tmp_path / "schedules.yaml")
    assert caught.value.problems == [f"{tmp_path / 'schedules.yaml'}:5 {problem}"]


def _ref() -> CollectionRef:
    return CollectionRef("files", "shop", "orders")


def test_argus_audit_since_audits_the_window(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import json

    from typer.testing import CliRunner

    from argus.daemon.cli import app

    monkeypatch.delenv("ARGUS_DATABASE_URL", raising=False)
    _orders(tmp_path / "orders.jsonl")
    result = CliRunner().invoke(app, ["audit", "--file", str(tmp_path / "orders.jsonl"), "--since", "3650d",
                                      "--format", "json", "--fail-on", "none"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["window"]["field"] == "_id" and report["window"]["documents"] == 300
    assert report["window"]["indexed"] is True
    assert {f["field"]: f["affected_count"] for f in report["findings"]} == {"qty": 14}
    table = CliRunner().invoke(app, ["audit", "--file", str(tmp_path / "orders.jsonl"), "--since", "3650d",
                                     "--fail-on", "none"])
    assert re.search(r"window _id \(ObjectId time\) since \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC · 300 documents · "
                     r"an index leads with it \(shares are of the window\)", " ".join(table.stdout.split()))


@pytest.mark.parametrize(("args", "message"), [
    (["--scope-field", "created_at"], "argus: error: --scope-field needs --since (e.g. --since 24h)"),
    (["--since", "-5"], "argus: error: invalid option --since: '-5' is not a duration (e.g. 30s, 5m, 1h30m)"),
    (["--since", "24h", "--full-every", "7d", "--no-store"],
     "argus: error: --full-every needs the history of earlier audits: add --store (or set ARGUS_DATABASE_URL)"),
])
def test_argus_audit_refuses_a_bad_window_naming_the_option(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                            args: list[str], message: str) -> None:
    from typer.testing import CliRunner

    from argus.daemon.cli import app

    monkeypatch.delenv("ARGUS_DATABASE_URL", raising=False)
    _orders(tmp_path / "orders.jsonl")
    result = CliRunner().invoke(app, ["audit", "--file", str(tmp_path / "orders.jsonl"), *args])
    assert result.exit_code == 2
    assert result.output.strip() == message
