"""A schedule's own metrics, run by the runner on the in-process engine and stored in a real
PostgreSQL: a fixed range and a learned baseline each stay quiet on ordinary runs and raise a
``metric_breach`` finding (and an incident) when broken; every value is stored per run, exported
to Prometheus without a document value in its labels, and counted as one read."""

from __future__ import annotations

import json
import os
import random
import re
import textwrap
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import psycopg
import pytest
from bson import json_util
from prometheus_client import CollectorRegistry, generate_latest
from typer.testing import CliRunner

from argus.agent.clock import ManualClock
from argus.agent.findings import Category
from argus.agent.report import AuditReport
from argus.config.alerts import AlertsConfig
from argus.config.schedules import load_schedules
from argus.config.settings import Settings
from argus.daemon.alerts.policy import AlertPolicy
from argus.daemon.cli import app
from argus.daemon.metrics import Metrics
from argus.daemon.runner import ScheduleRunner
from argus.daemon.service import Daemon
from argus.daemon.spool import Spool
from argus.daemon.store import PostgresStore
from argus.daemon.store.incidents import IncidentBook
from argus.daemon.store.metric_values import MetricBook

START = datetime(2026, 3, 2, 6, 0, tzinfo=UTC)
REGIONS = ("EU", "US", "APAC")
SCHEDULES = """\
    connections:
      files: {files: {orders: orders.jsonl}}
    defaults: {trigger: {every: 1d}, sample_size: 200, health: {enabled: false, min_history: 3, seasonality: off}}
    schedules:
      - name: orders
        connection: files
        database: shop
        collection: orders
        metrics:
          - name: avg_qty
            pipeline: [{$group: {_id: null, v: {$avg: "$qty"}}}]
            between: [1, 5]
          - name: per_region
            pipeline: [{$group: {_id: "$region", v: {$sum: 1}}}]
            anomaly: true
"""


def write_orders(path: Path, rng: random.Random, *, eu: int | None = None, qty: int | None = None) -> None:
    docs: list[dict[str, Any]] = []
    for region in REGIONS:
        count = eu if region == "EU" and eu is not None else rng.randint(95, 105)
        docs += [{"order_no": f"{region}-{i}", "region": region, "qty": qty or rng.randint(1, 5)}
                 for i in range(count)]
    tmp = path.with_suffix(".tmp")
    tmp.write_text("\n".join(json_util.dumps(d) for d in docs))
    os.replace(tmp, path)  # a new file: the source cache loads it again


def breaches(report: AuditReport) -> list[str]:
    return sorted(f.field for f in report.findings if f.category == Category.METRIC_BREACH)


def test_a_fixed_range_and_a_learned_baseline_stay_quiet_then_breach_then_resolve(
        store: PostgresStore, pg_dsn: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "schedules.yaml").write_text(textwrap.dedent(SCHEDULES))
    schedules = load_schedules(tmp_path / "schedules.yaml")
    clock = ManualClock(START)
    runner = ScheduleRunner(store=store, spool=Spool(tmp_path / "spool"), metrics=Metrics(),
                            settings=Settings(data_dir=tmp_path), clock=clock, replica="r1")
    monkeypatch.setenv("TEST_HOOK_URL", "http://127.0.0.1:9/hook")
    hook = {"type": "webhook", "url_env": "TEST_HOOK_URL"}
    runner.alerts = AlertPolicy(AlertsConfig.model_validate({"min_severity": "high", "channels": {"hook": hook}}),
                                {"orders": {}})
    rng = random.Random(3)
    reports: list[AuditReport] = []
    for day in range(9):
        clock._now = START + timedelta(days=day)
        if day == 6:  # the EU pipeline stops sending and a bad deploy writes qty 9
            write_orders(tmp_path / "orders.jsonl", rng, eu=4, qty=9)
        else:
            write_orders(tmp_path / "orders.jsonl", rng)
        report = runner.run(schedules, "orders")
        assert report is not None and report.outcome == "succeeded", report.notes
        reports.append(report)

    assert [breaches(r) for r in reports[:6]] == [[]] * 6
    assert breaches(reports[6]) == ["metric:avg_qty", "metric:per_region"]
    assert breaches(reports[7]) == breaches(reports[8]) == []
    broken = {f.field: f for f in reports[6].findings}
    assert broken["metric:avg_qty"].description == "metric avg_qty fail: 9, expected between 1 and 5"
    assert broken["metric:per_region"].description.startswith("metric per_region 1 of 3 groups: EU (seg_")
    assert "anomaly: 4, expected about " in broken["metric:per_region"].description
    assert "(spread " in broken["metric:per_region"].description and "6 earlier runs" in \
        broken["metric:per_region"].description
    first = {m.name: {v.group: v.verdict for v in m.values} for m in reports[0].metrics}
    assert first == {"avg_qty": {None: "ok"}, "per_region": {r: "learning" for r in REGIONS}}
    assert {v.group: v.verdict for v in reports[5].metrics[1].values} == {r: "ok" for r in REGIONS}

    with psycopg.connect(pg_dsn) as conn:
        stored = conn.execute("""select metric, grp, value, verdict from metric_values where run_id = %s
                                 order by metric, grp""", (reports[6].run_id,)).fetchall()
        incidents = conn.execute("select status, severity from incidents").fetchall()
        alerts = conn.execute("select run_id, kind, channel from alert_outbox order by id").fetchall()
    assert stored == [("avg_qty", None, 9.0, "fail"), ("per_region", "APAC", pytest.approx(stored[1][2]), "ok"),
                      ("per_region", "EU", 4.0, "anomaly"), ("per_region", "US", pytest.approx(stored[3][2]), "ok")]
    assert incidents == [("resolved", "high")]  # opened on day 6, resolved after two clean runs
    assert alerts == [(reports[6].run_id, "incident_opened", "hook"), (reports[8].run_id, "incident_resolved", "hook")]
    opened = IncidentBook(store).list(statuses=None)[0]
    assert sorted(f.field for f in opened.findings) == ["metric:avg_qty", "metric:per_region"]

    # The anomalous value stays out of the baseline: later runs' EU values are judged without it.
    assert [p.value for p in MetricBook(store).history("orders", ["per_region"], window=30)["per_region"]
            if p.verdict == "anomaly"] == [4.0]


def test_each_metric_is_one_read_and_its_labels_hold_no_document_value(store: PostgresStore,
                                                                        tmp_path: Path) -> None:
    (tmp_path / "schedules.yaml").write_text(textwrap.dedent(SCHEDULES))
    write_orders(tmp_path / "orders.jsonl", random.Random(1))
    runner = ScheduleRunner(store=store, spool=Spool(tmp_path / "spool"), metrics=Metrics(),
                            settings=Settings(data_dir=tmp_path), clock=ManualClock(START), replica="r1")
    report = runner.run(load_schedules(tmp_path / "schedules.yaml"), "orders")
    assert report is not None
    metric_reads = [op for op in report.database_cost.operations if op.kind == "metric"]
    assert len(metric_reads) == 2 and report.database_cost.metric_reads == 2
    assert all(op.full_pass for op in metric_reads)  # a $group over the collection is a pass, and counted as one

    exported = generate_latest(runner.metrics.registry).decode()
    lines = [line for line in exported.splitlines() if line.startswith("argus_metric_value{")]
    assert len(lines) == 4  # avg_qty, and one per region
    assert 'argus_metric_value{metric="avg_qty",schedule="orders",segment=""}' in exported
    for region in REGIONS:
        assert region not in "\n".join(lines)
    segments = {v.segment for v in report.metrics[1].values}
    assert all(s is not None and s.startswith("seg_") for s in segments)
    assert runner.metrics.sample("argus_metric_value", {"schedule": "orders", "metric": "per_region",
                                                        "segment": next(iter(segments))}) is not None


def test_an_edit_adding_a_refused_pipeline_keeps_the_last_good_metrics(pg_dsn: str, tmp_path: Path) -> None:
    path = tmp_path / "schedules.yaml"
    path.write_text(textwrap.dedent(SCHEDULES))
    write_orders(tmp_path / "orders.jsonl", random.Random(1))
    daemon = Daemon(Settings(database_url=pg_dsn, data_dir=tmp_path / "data"), schedules_path=path,
                    listen=("127.0.0.1", 0), registry=CollectorRegistry())
    daemon.start()
    try:
        path.write_text(textwrap.dedent(SCHEDULES).replace('[{$group: {_id: null, v: {$avg: "$qty"}}}]',
                                                           '[{$group: {_id: null, v: {$avg: "$qty"}}}, {$out: x}]'))
        assert daemon.reload("test") is False
        assert daemon.status()["reload"]["error"] == [
            f"{path}:11 schedules[0].metrics[0].pipeline[1]: refused by the read-only guard: operator $out is "
            f"refused in a pipeline: it writes to a collection; Argus is read-only"]
        kept = daemon._current().schedules["orders"].settings.audit_options().metrics
        assert [(m.name, len(m.pipeline)) for m in kept] == [("avg_qty", 1), ("per_region", 1)]
    finally:
        daemon.request_stop()
        daemon.shutdown()


def test_argus_run_prints_each_value_and_verdict_and_argus_metrics_prints_the_history(pg_dsn: str,
                                                                                       tmp_path: Path) -> None:
    cli = CliRunner()
    (tmp_path / "schedules.yaml").write_text(textwrap.dedent(SCHEDULES))
    env = {"ARGUS_DATABASE_URL": pg_dsn, "ARGUS_DATA_DIR": str(tmp_path / "data"), "COLUMNS": "200"}
    rng = random.Random(5)
    args = ["run", "orders", "--schedules", str(tmp_path / "schedules.yaml")]
    write_orders(tmp_path / "orders.jsonl", rng)
    first = cli.invoke(app, args, env=env)
    assert first.exit_code == 0, first.output
    assert "metrics 2 read (one read each), 0 breached" in first.output
    assert re.search(r"ok\s+│ avg_qty\s+│\s+│ 3\.\d+\s+│ between 1 and 5", first.output), first.output
    assert re.search(r"learning │ per_region │ EU \(seg_[0-9a-f]{10}\)", first.output), first.output
    assert re.search(r"database \d+ queries \(2 for metrics\) · \d+ passes", first.output), first.output

    write_orders(tmp_path / "orders.jsonl", rng, qty=9)
    second = cli.invoke(app, [*args, "--format", "json"], env=env)
    assert second.exit_code == 1, second.output  # a high finding, at the schedule's fail_on
    report = json.loads(second.output)
    assert [(m["name"], [v["verdict"] for v in m["values"]]) for m in report["metrics"]] == [
        ("avg_qty", ["fail"]), ("per_region", ["learning"] * 3)]
    assert [f["field"] for f in report["findings"] if f["category"] == "metric_breach"] == ["metric:avg_qty"]

    listed = cli.invoke(app, ["metrics", "ls"], env=env)
    assert listed.exit_code == 0, listed.output
    assert re.search(r"orders\s+avg_qty\s+2\s+\S+\s+9\s+fail", listed.output), listed.output
    assert re.search(r"orders\s+per_region\s+2\s+\S+\s+3 segments\s+learning", listed.output), listed.output
    shown = cli.invoke(app, ["metrics", "show", "avg_qty", "--format", "json"], env=env)
    assert shown.exit_code == 0, shown.output
    history = json.loads(shown.output)
    assert history["schedule"] == "orders"
    assert (history["values"][0]["value"], history["values"][0]["verdict"]) == (9.0, "fail")
    assert [v["verdict"] for v in history["values"]] == ["fail", "ok"]
    table = cli.invoke(app, ["metrics", "show", "per_region"], env=env)
    assert "metric per_region of schedule orders: 2 runs" in table.output
    assert len(re.findall(r"EU \(seg_", table.output)) == 2
    unknown = cli.invoke(app, ["metrics", "show", "nope"], env=env)
    assert unknown.exit_code == 2 and "no stored values of a metric 'nope' (see `argus metrics ls`)" in unknown.output
