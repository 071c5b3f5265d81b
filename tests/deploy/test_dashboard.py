"""The Grafana dashboard, read as Grafana would: valid JSON, one data source variable, no panels
on top of each other, and the panels ops asked for. tests/deploy/test_prometheus_e2e.py runs its
queries against a real Prometheus."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from tests.deploy.promql import ALERT_METRICS, DASHBOARD, dashboard_queries, metric_names, panels


@pytest.fixture(scope="module")
def dashboard() -> dict[str, Any]:
    return json.loads(DASHBOARD.read_text())


def _graph_panels(dashboard: dict[str, Any]) -> list[dict[str, Any]]:
    return [p for p in panels(dashboard) if p["type"] != "row"]


def _exprs(panel: dict[str, Any]) -> list[str]:
    return [t["expr"] for t in panel["targets"]]


def _find(dashboard: dict[str, Any], metric: str) -> list[dict[str, Any]]:
    return [p for p in _graph_panels(dashboard) if any(metric in metric_names(e) for e in _exprs(p))]


def test_the_dashboard_has_an_identity_and_its_variables(dashboard: dict[str, Any]) -> None:
    assert dashboard["uid"] == "argus" and dashboard["title"]
    variables = {v["name"]: v for v in dashboard["templating"]["list"]}
    assert variables["datasource"]["type"] == "datasource" and variables["datasource"]["query"] == "prometheus"
    assert variables["schedule"]["query"]["query"] == "label_values(argus_audit_runs_total, schedule)"
    assert variables["collection"]["query"]["query"] == "label_values(argus_open_findings, collection)"
    assert all(v["allValue"] == ".*" for k, v in variables.items() if k != "datasource")


def test_every_panel_queries_the_chosen_data_source(dashboard: dict[str, Any]) -> None:
    chosen = {"type": "prometheus", "uid": "${datasource}"}
    for panel in _graph_panels(dashboard):
        assert panel["datasource"] == chosen, panel["title"]
        refs = [t["refId"] for t in panel["targets"]]
        assert refs and len(refs) == len(set(refs)), panel["title"]
        assert all(t["datasource"] == chosen and t["expr"].strip() for t in panel["targets"]), panel["title"]


def test_every_variable_in_a_query_is_one_grafana_knows() -> None:
    queries = dashboard_queries({"schedule": ".*", "collection": ".*"})
    assert len(queries) >= 20
    assert not [q for q in queries if "$" in q.expr]


def test_no_two_panels_overlap(dashboard: dict[str, Any]) -> None:
    cells: dict[tuple[int, int], str] = {}
    for panel in panels(dashboard):
        pos = panel["gridPos"]
        assert pos["x"] + pos["w"] <= 24, panel["title"]
        for x in range(pos["x"], pos["x"] + pos["w"]):
            for y in range(pos["y"], pos["y"] + pos["h"]):
                assert (x, y) not in cells, f"{panel['title']!r} overlaps {cells[(x, y)]!r}"
                cells[(x, y)] = panel["title"]


def test_findings_by_severity_over_time_per_collection(dashboard: dict[str, Any]) -> None:
    [panel] = _find(dashboard, "argus_open_findings")
    assert panel["type"] == "timeseries"
    assert "sum by (collection, severity)" in panel["targets"][0]["expr"]


def test_new_and_resolved_findings_side_by_side_and_per_run(dashboard: dict[str, Any]) -> None:
    both = [p for p in _find(dashboard, "argus_findings_new_total")
            if p in _find(dashboard, "argus_findings_resolved_total")]
    assert any(p["type"] == "timeseries" for p in both)
    per_run = [p for p in both if p in _find(dashboard, "argus_audit_runs_total")]
    assert per_run and all("/ on (schedule)" in e for e in _exprs(per_run[0])[:2])


def test_runs_by_outcome_and_run_duration(dashboard: dict[str, Any]) -> None:
    runs = [p for p in _find(dashboard, "argus_audit_runs_total") if "sum by (outcome)" in _exprs(p)[0]]
    assert runs
    [duration] = _find(dashboard, "argus_audit_duration_seconds_bucket")
    assert duration["fieldConfig"]["defaults"]["unit"] == "s"
    assert any(e.startswith("histogram_quantile(0.95,") for e in _exprs(duration))


def test_tokens_and_cost_per_day_by_model(dashboard: dict[str, Any]) -> None:
    for metric in ("argus_llm_tokens_total", "argus_llm_cost_usd_total"):
        [panel] = _find(dashboard, metric)
        assert panel["interval"] == "1d"                                 # one bar per day
        assert re.search(r"sum by \(model\) \(increase\(\w+\{[^}]*\}\[\$__interval\]\)\)", _exprs(panel)[0])


def test_last_successful_run_age_per_schedule(dashboard: dict[str, Any]) -> None:
    ages = _find(dashboard, "argus_last_success_timestamp_seconds")
    assert any(e.startswith("time() - max by (schedule) (argus_last_success_timestamp_seconds")
               for p in ages for e in _exprs(p))
    assert any("argus_schedule_interval_seconds" in e for p in ages for e in _exprs(p))


def test_an_alerts_row_reads_the_alert_delivery_metrics(dashboard: dict[str, Any]) -> None:
    rows = [p for p in dashboard["panels"] if p["type"] == "row"]
    alerts_row = next(r for r in rows if r["title"] == "Alerts")
    below = [p for p in dashboard["panels"] if p["type"] != "row" and p["gridPos"]["y"] > alerts_row["gridPos"]["y"]
             and not any(r["gridPos"]["y"] > alerts_row["gridPos"]["y"] and r["gridPos"]["y"] < p["gridPos"]["y"]
                         for r in rows)]
    read = {m for p in below for e in _exprs(p) for m in metric_names(e)}
    assert read == ALERT_METRICS
    assert all("sum by (channel)" in e for p in below for e in _exprs(p) if "_total" in e)


def test_request_units_and_passes_per_day_per_schedule(dashboard: dict[str, Any]) -> None:
    [units] = _find(dashboard, "argus_db_request_units_total")
    assert units["interval"] == "1d"
    assert _exprs(units)[0].startswith("sum by (schedule) (increase(argus_db_request_units_total{")
    [cost] = _find(dashboard, "argus_db_passes_total")
    assert {m for e in _exprs(cost) for m in metric_names(e)} == {
        "argus_db_passes_total", "argus_db_documents_examined_total", "argus_db_throttled_total"}


def test_an_incidents_row_shows_incidents_now_their_age_and_how_fast_they_are_handled(
        dashboard: dict[str, Any]) -> None:
    rows = [p for p in dashboard["panels"] if p["type"] == "row"]
    row = next(r for r in rows if r["title"] == "Incidents")
    below = [p for p in dashboard["panels"] if p["type"] != "row" and p["gridPos"]["y"] == row["gridPos"]["y"] + 1]
    assert [p["title"] for p in below] == ["Open and acknowledged incidents", "Oldest unacknowledged incident",
                                           "Time to acknowledge and to resolve"]
    read = {m for p in below for e in _exprs(p) for m in metric_names(e)}
    assert read == {"argus_incidents", "argus_incident_oldest_open_timestamp_seconds",
                    "argus_incident_time_to_acknowledge_seconds_bucket",
                    "argus_incident_time_to_resolve_seconds_bucket"}
    assert all("max by" in e or "min by" in e for p in below for e in _exprs(p)), "replicas report the same numbers"
    assert below[1]["fieldConfig"]["defaults"]["unit"] == below[2]["fieldConfig"]["defaults"]["unit"] == "s"


def test_a_segments_row_shows_documents_and_findings_per_segment(dashboard: dict[str, Any]) -> None:
    [documents] = _find(dashboard, "argus_segment_documents")
    assert documents["type"] == "timeseries"
    assert _exprs(documents)[0].startswith("max by (schedule, segment) (argus_segment_documents{")
    [anomalies] = _find(dashboard, "argus_segment_anomalies")
    assert "sum by (segment)" in _exprs(anomalies)[0]
    rows = [p for p in dashboard["panels"] if p["type"] == "row"]
    segments_row = next(r for r in rows if r["title"] == "Segments")
    assert all(p["gridPos"]["y"] == segments_row["gridPos"]["y"] + 1 for p in (documents, anomalies))


def _family_labels() -> dict[str, tuple[str, ...]]:
    """Every series name the daemon exposes (histograms' _bucket, _sum and _count too) -> its labels."""
    from prometheus_client import CollectorRegistry

    from argus.daemon.metrics import Metrics, catalogue

    registry = CollectorRegistry()
    Metrics(registry).daemon_gauges(open_findings=list, next_runs=list, schedules=list, spooled=lambda: 0,
                                    embedded_up=lambda: True)
    out: dict[str, tuple[str, ...]] = {}
    for family in catalogue(registry):
        names = [family.name] + ([f"{family.name}{s}" for s in ("_bucket", "_sum", "_count")]
                                 if family.type == "histogram" else [])
        out.update({n: family.labels for n in names})
    return out


def _selectors(expr: str, metric: str) -> list[str]:
    """The label matchers of each place ``expr`` reads ``metric`` ('' where it reads it bare)."""
    return [m.group(1) or "" for m in re.finditer(rf"\b{re.escape(metric)}\b(?:\{{([^}}]*)\}})?", expr)]


def test_every_panel_honours_the_schedule_and_collection_filters(dashboard: dict[str, Any]) -> None:
    """A series that carries the label the dashboard filters on is filtered by it, in every panel
    (issue 36: the collection filter moved 1 of 33 panels)."""
    labels = _family_labels()
    ignored = []
    for panel in _graph_panels(dashboard):
        for expr in _exprs(panel):
            for metric in metric_names(expr):
                for label, variable in (("schedule", "$schedule"), ("collection", "$collection")):
                    if label in labels.get(metric, ()):
                        ignored += [(panel["title"], metric, label) for sel in _selectors(expr, metric)
                                    if f'{label}=~"{variable}"' not in sel]
    assert ignored == []


def test_collection_means_the_collection_name_beside_a_database_label_everywhere() -> None:
    labels = _family_labels()
    with_collection = {name: ls for name, ls in labels.items() if "collection" in ls}
    assert with_collection and all("database" in ls for ls in with_collection.values()), with_collection


def test_a_contract_panel_shows_each_schedules_rules_by_result(dashboard: dict[str, Any]) -> None:
    [panel] = _find(dashboard, "argus_contract_rules")
    assert any(e.startswith("sum by (schedule, result) (argus_contract_rules{") for e in _exprs(panel))
