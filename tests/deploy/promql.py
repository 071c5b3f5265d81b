"""PromQL found in the deployment files: every dashboard target and every rule, ready to send to a
real Prometheus, with Grafana's variables replaced the way Grafana would replace them."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

__all__ = ["DASHBOARD", "RULES", "RULES_TEST", "Query", "dashboard_queries", "metric_names", "panels",
           "require_binary", "rule_queries", "variable_queries"]

ROOT = Path(__file__).resolve().parents[2]
DASHBOARD = ROOT / "deploy/grafana/argus-dashboard.json"
RULES = ROOT / "deploy/prometheus/argus-rules.yml"
RULES_TEST = ROOT / "deploy/prometheus/argus-rules.test.yml"

# Metrics the alerts work adds to the daemon; the dashboard's Alerts row reads them already.
ALERT_METRICS = {"argus_alerts_delivered_total", "argus_alerts_failed_total", "argus_alerts_pending"}


@dataclass(frozen=True)
class Query:
    where: str      # "panel 'Runs by outcome' target A", "rule ArgusScheduleNotSucceeding"
    expr: str


def require_binary(name: str) -> str:
    """The path of ``name``, or skip: CI installs it from Debian (see .ci/run)."""
    path = shutil.which(name)
    if path is None:
        pytest.skip(f"{name} is not installed (Debian: apt-get install prometheus prometheus-alertmanager; "
                    f".ci/run does it)")
    return path


def panels(dashboard: dict[str, Any]) -> Iterator[dict[str, Any]]:
    for panel in dashboard["panels"]:
        yield panel
        yield from panel.get("panels", [])  # panels inside collapsed rows


def substitute(expr: str, variables: dict[str, str], *, interval: str = "1m", rate_interval: str = "1m",
               range_: str = "1h") -> str:
    """Grafana's substitution: template variables, then the built-in interval and range ones."""
    builtins = {"__rate_interval": rate_interval, "__interval": interval, "__range": range_}
    values = {**variables, **builtins}
    out = re.sub(r"\$\{(\w+)(?::\w+)?\}|\$(\w+)", lambda m: values.get(m[1] or m[2], m[0]), expr)
    if "$" in out:
        raise ValueError(f"unresolved variable in {out!r}")
    return out


def dashboard_queries(variables: dict[str, str], **kwargs: str) -> list[Query]:
    dashboard = json.loads(DASHBOARD.read_text())
    out = []
    for panel in panels(dashboard):
        for target in panel.get("targets", []):
            interval = panel.get("interval") or kwargs.get("interval", "1m")
            expr = substitute(target["expr"], variables, **{**kwargs, "interval": interval})
            out.append(Query(f"panel {panel['title']!r} target {target['refId']}", expr))
    return out


def variable_queries() -> list[tuple[str, str, str]]:
    """(variable, metric, label) of each ``label_values(metric, label)`` template variable."""
    dashboard = json.loads(DASHBOARD.read_text())
    out = []
    for var in dashboard["templating"]["list"]:
        if var["type"] == "query":
            match = re.fullmatch(r"label_values\((\w+),\s*(\w+)\)", var["query"]["query"])
            assert match, f"variable {var['name']}: {var['query']['query']!r} is not label_values(metric, label)"
            out.append((var["name"], match[1], match[2]))
    return out


def rule_queries() -> list[Query]:
    rules = yaml.safe_load(RULES.read_text())
    return [Query(f"rule {rule.get('alert') or rule.get('record')}", rule["expr"])
            for group in rules["groups"] for rule in group["rules"]]


def metric_names(expr: str) -> set[str]:
    """Metric names an expression reads (``argus_*``, recording rules ``argus:*``, ``process_*``)."""
    return set(re.findall(r"\b((?:argus|process)_[a-z_]+|argus:[a-z0-9_:]+)\b", expr))
