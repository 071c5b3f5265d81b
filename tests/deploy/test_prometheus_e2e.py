"""A real Prometheus scraping a real daemon: every query of the dashboard and every rule runs
against what the daemon exports, and the ones a healthy daemon must answer do.

The daemon audits the demo collections every 4 s (history in an embedded PostgreSQL); Prometheus
scrapes it every second and evaluates argus-rules.yml every second.
"""

from __future__ import annotations

import json
import math
import subprocess
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from prometheus_client.parser import text_string_to_metric_families

from tests.daemon.process import DaemonProcess, free_port
from tests.deploy.promql import (
    ALERT_METRICS,
    RULES,
    Query,
    dashboard_queries,
    metric_names,
    require_binary,
    rule_queries,
    variable_queries,
)

ROOT = Path(__file__).resolve().parents[2]
SCHEDULES = ("e2e-orders", "e2e-customers")
# What Grafana sends for two selected schedules, all collections, a 5 minute range at 1 s scrapes.
VARIABLES = {"schedule": "(" + "|".join(SCHEDULES) + ")", "collection": ".*"}
WINDOWS = {"interval": "5s", "rate_interval": "20s", "range_": "5m"}


class Prometheus:
    def __init__(self, binary: str, target_port: int, directory: Path) -> None:
        self.port = free_port()
        config = directory / "prometheus.yml"
        config.write_text(yaml.safe_dump({
            "global": {"scrape_interval": "1s", "evaluation_interval": "1s"},
            "rule_files": [str(RULES)],
            "scrape_configs": [{"job_name": "argus", "static_configs": [{"targets": [f"127.0.0.1:{target_port}"]}]}],
        }))
        self.log_path = directory / "prometheus.log"
        self._log = self.log_path.open("w")
        self.proc = subprocess.Popen([binary, f"--config.file={config}", f"--storage.tsdb.path={directory / 'data'}",
                                      f"--web.listen-address=127.0.0.1:{self.port}"],
                                     stdout=self._log, stderr=subprocess.STDOUT)

    def api(self, path: str, **params: str) -> dict[str, Any]:
        url = f"http://127.0.0.1:{self.port}/api/v1/{path}"
        if params:
            url += "?" + urllib.parse.urlencode(params)
        try:
            with urllib.request.urlopen(url, timeout=10) as resp:
                return dict(json.load(resp))
        except urllib.error.HTTPError as exc:  # 400/422 carry the error as JSON
            return dict(json.load(exc))

    def query(self, expr: str) -> dict[str, Any]:
        return self.api("query", query=expr)

    def values(self, expr: str) -> dict[str, float]:
        """Instant-vector result as {label string: value}."""
        answer = self.query(expr)
        assert answer["status"] == "success", answer
        return {json.dumps(r["metric"], sort_keys=True): float(r["value"][1]) for r in answer["data"]["result"]}

    def wait_until(self, what: str, predicate: Any, timeout: float = 120) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            assert self.proc.poll() is None, f"prometheus exited:\n{self.log_path.read_text()[-3000:]}"
            try:
                if predicate():
                    return
            except (OSError, ValueError, KeyError):
                pass
            time.sleep(0.5)
        raise AssertionError(f"timed out waiting for {what}\n{self.log_path.read_text()[-3000:]}")

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)
        self._log.close()


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DaemonProcess]:
    directory = tmp_path_factory.mktemp("e2e-daemon")
    path = directory / "schedules.yaml"
    path.write_text(yaml.safe_dump({
        "connections": {"demo": {"files": {name: str(ROOT / f"deploy/demo/{name}.jsonl")
                                           for name in ("orders", "customers")}}},
        "defaults": {"trigger": {"every": "4s"}, "run_at_start": True},
        "schedules": [{"name": f"e2e-{name}", "connection": "demo", "database": "shop", "collection": name}
                      for name in ("orders", "customers")],
    }))
    started = DaemonProcess(path, {"ARGUS_DATA_DIR": str(directory / "data"), "ARGUS_DATABASE_URL": ""},
                            directory / "daemon.log")
    try:
        started.wait_until("/readyz", lambda: started.get("/readyz")[0] == 200, timeout=120)
        yield started
    finally:
        code = started.stop()
        assert code == 0, started.tail()


@pytest.fixture(scope="module")
def prometheus(daemon: DaemonProcess, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Prometheus]:
    binary = require_binary("prometheus")
    started_at = time.monotonic()
    server = Prometheus(binary, daemon.port, tmp_path_factory.mktemp("e2e-prometheus"))
    try:
        server.wait_until("the target up", lambda: server.values('up{job="argus"}') and all(
            v == 1 for v in server.values('up{job="argus"}').values()))
        server.wait_until("scraped runs of both schedules, with one between scrapes", lambda: len(server.values(
            f'increase(argus_audit_runs_total{{outcome="succeeded", schedule=~"{VARIABLES["schedule"]}"}}[20s]) > 0'
        )) == len(SCHEDULES))
        server.wait_until("open findings of both collections scraped", lambda: {
            (json.loads(k)["database"], json.loads(k)["collection"]) for k in server.values("argus_open_findings")
        } == {("shop", "orders"), ("shop", "customers")})
        server.wait_until("the recording rules evaluated", lambda: len(server.values(
            "argus:audit_failure_ratio:6h")) == len(SCHEDULES))
        server.ready_after_s = time.monotonic() - started_at  # type: ignore[attr-defined]
        yield server
    finally:
        server.stop()


_SUFFIXES = {"counter": ("_total",), "histogram": ("_bucket", "_sum", "_count"), "info": ("_info",)}


def _by(values: dict[str, float], label: str) -> dict[str, float]:
    return {json.loads(k).get(label, ""): v for k, v in values.items()}


def test_every_metric_the_dashboard_and_rules_read_is_exported(daemon: DaemonProcess) -> None:
    exported = set()
    for family in text_string_to_metric_families(daemon.get("/metrics")[1]):  # families are listed before
        suffixes = _SUFFIXES.get(family.type, ("",))                        # their first sample
        exported |= {family.name + suffix for suffix in suffixes}
    recorded = {q.where.removeprefix("rule ") for q in rule_queries() if q.where.startswith("rule argus:")}
    read = {m for q in dashboard_queries(VARIABLES, **WINDOWS) + rule_queries() for m in metric_names(q.expr)}
    assert read - exported - recorded - ALERT_METRICS == set()


def test_every_dashboard_and_rule_query_runs(prometheus: Prometheus) -> None:
    queries: list[Query] = dashboard_queries(VARIABLES, **WINDOWS) + rule_queries()
    failed = {q.where: (q.expr, answer.get("error")) for q in queries
              if (answer := prometheus.query(q.expr))["status"] != "success"}
    assert not failed
    assert len(queries) >= 30


def test_the_core_dashboard_queries_return_data(prometheus: Prometheus) -> None:
    by_panel: dict[str, list[str]] = {}
    for q in dashboard_queries(VARIABLES, **WINDOWS):
        by_panel.setdefault(q.where.rsplit(" target ", 1)[0].removeprefix("panel "), []).append(q.expr)

    runs = _by(prometheus.values(by_panel["'Runs by outcome'"][0]), "outcome")
    assert set(runs) == {"succeeded", "partial", "failed"} and runs["succeeded"] > 0 and runs["failed"] == 0

    findings = prometheus.values(by_panel["'Open findings by severity, per collection'"][0])
    assert {json.loads(k)["collection"] for k in findings} == {"orders", "customers"}
    assert sum(findings.values()) > 0

    ages = _by(prometheus.values(by_panel["'Last successful run age'"][0]), "schedule")
    assert set(ages) == set(SCHEDULES) and all(0 <= age < 60 for age in ages.values())

    mean = _by(prometheus.values(by_panel["'Run duration'"][0]), "schedule")
    assert set(mean) == set(SCHEDULES) and all(0 < d < 60 for d in mean.values() if not math.isnan(d))
    assert any(not math.isnan(d) for d in mean.values())

    in_intervals = _by(prometheus.values(by_panel["'Last successful run age, in intervals'"][0]), "schedule")
    assert set(in_intervals) == set(SCHEDULES)

    documents = prometheus.values(by_panel["'Documents per collection'"][0])
    assert {json.loads(k)["collection"]: v for k, v in documents.items()} == {"orders": 2000, "customers": 1500}


def test_the_incidents_row_shows_the_demo_collections_incidents(prometheus: Prometheus) -> None:
    by_panel: dict[str, list[str]] = {}
    for q in dashboard_queries(VARIABLES, **WINDOWS):
        by_panel.setdefault(q.where.rsplit(" target ", 1)[0].removeprefix("panel "), []).append(q.expr)
    prometheus.wait_until("incidents scraped", lambda: prometheus.values(
        by_panel["'Open and acknowledged incidents'"][0]))
    now = prometheus.values(by_panel["'Open and acknowledged incidents'"][0])
    assert {(json.loads(k)["status"], json.loads(k)["severity"]) for k, v in now.items() if v} == {("open", "high")}
    assert sum(now.values()) == 2, "one incident per demo collection, each opened by its first run"
    ages = _by(prometheus.values(by_panel["'Oldest unacknowledged incident'"][0]), "severity")
    assert set(ages) == {"high"} and 0 <= ages["high"] < 600
    quantiles = [prometheus.query(e) for e in by_panel["'Time to acknowledge and to resolve'"]]
    assert all(q["status"] == "success" for q in quantiles), "nobody acknowledged yet: no value, but no error"


def test_the_schedule_interval_reaches_prometheus(prometheus: Prometheus) -> None:
    assert _by(prometheus.values("argus_schedule_interval_seconds"), "schedule") == dict.fromkeys(SCHEDULES, 4.0)


def test_the_dashboard_variables_list_the_schedules_and_collections(prometheus: Prometheus) -> None:
    found = {name: set(prometheus.api(f"label/{label}/values", **{"match[]": metric})["data"])
             for name, metric, label in variable_queries()}
    assert found == {"schedule": set(SCHEDULES), "collection": {"orders", "customers"}}


def test_the_rules_load_and_evaluate_cleanly_on_a_healthy_daemon(prometheus: Prometheus) -> None:
    groups = prometheus.api("rules")["data"]["groups"]
    rules = [r for g in groups for r in g["rules"]]
    assert len(rules) == len(rule_queries())
    assert [(r["name"], r.get("lastError")) for r in rules if r["health"] != "ok"] == []
    failure_ratio = _by(prometheus.values("argus:audit_failure_ratio:6h"), "schedule")
    assert failure_ratio == dict.fromkeys(SCHEDULES, 0.0)
    assert prometheus.values('ALERTS{alertstate="firing"}') == {}
