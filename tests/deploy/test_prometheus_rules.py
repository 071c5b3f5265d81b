"""The alert rules and the Prometheus and Alertmanager configurations, checked by the tools that
load them (promtool, amtool), and every alert unit-tested both ways."""

from __future__ import annotations

import subprocess
from pathlib import Path

import yaml

from tests.deploy.promql import RULES, RULES_TEST, require_binary

ROOT = Path(__file__).resolve().parents[2]


def _run(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, capture_output=True, text=True, timeout=120)


def test_the_rules_cover_what_ops_asked_for() -> None:
    alerts = {r["alert"]: r for g in yaml.safe_load(RULES.read_text())["groups"] for r in g["rules"] if "alert" in r}
    assert set(alerts) == {"ArgusScheduleNotSucceeding", "ArgusFailureRateRising", "ArgusScheduleReloadFailing",
                           "ArgusLLMSpendOverBudget", "ArgusLLMTokensOverBudget", "ArgusCollectionStale",
                           "ArgusIncidentUnacknowledged"}
    assert "3 * max by (connection, database, collection) (argus_collection_usual_age_seconds)" in \
        alerts["ArgusCollectionStale"]["expr"]
    assert "2 * max by (schedule) (argus_schedule_interval_seconds)" in alerts["ArgusScheduleNotSucceeding"]["expr"]
    assert "argus_schedule_reload_errors_total" in alerts["ArgusScheduleReloadFailing"]["expr"]
    assert 'argus_incident_oldest_open_timestamp_seconds{severity=~"high|critical"}' in \
        alerts["ArgusIncidentUnacknowledged"]["expr"]
    assert all(r["labels"]["severity"] and r["annotations"]["summary"] for r in alerts.values())


def test_every_alert_has_a_unit_test_that_fires_and_one_that_does_not() -> None:
    alerts = {r["alert"] for g in yaml.safe_load(RULES.read_text())["groups"] for r in g["rules"] if "alert" in r}
    cases = [case for test in yaml.safe_load(RULES_TEST.read_text())["tests"]
             for case in test.get("alert_rule_test", [])]
    fires = {c["alertname"] for c in cases if c["exp_alerts"]}
    quiet = {c["alertname"] for c in cases if not c["exp_alerts"]}
    assert alerts <= fires, f"never shown firing: {alerts - fires}"
    assert alerts <= quiet, f"never shown quiet: {alerts - quiet}"


def test_promtool_accepts_the_rules() -> None:
    result = _run(require_binary("promtool"), "check", "rules", str(RULES))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "SUCCESS: 12 rules found" in result.stdout


def test_the_rule_unit_tests_pass() -> None:
    result = _run(require_binary("promtool"), "test", "rules", str(RULES_TEST))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "SUCCESS" in result.stdout


def test_the_rule_unit_tests_can_fail(tmp_path: Path) -> None:
    """The same tests against rules whose threshold is off by one step must fail."""
    promtool = require_binary("promtool")
    stricter = RULES.read_text().replace("> on (schedule) 2 * max by", "> on (schedule) 3 * max by")
    (tmp_path / RULES.name).write_text(stricter)
    (tmp_path / RULES_TEST.name).write_text(RULES_TEST.read_text())
    result = _run(promtool, "test", "rules", str(tmp_path / RULES_TEST.name))
    assert result.returncode != 0 and "ArgusScheduleNotSucceeding" in result.stdout + result.stderr


def test_the_incident_rule_tests_can_fail(tmp_path: Path) -> None:
    """An hour later than the rule says, the firing case must fail."""
    promtool = require_binary("promtool")
    (tmp_path / RULES.name).write_text(RULES.read_text().replace("> 4 * 3600", "> 5 * 3600"))
    (tmp_path / RULES_TEST.name).write_text(RULES_TEST.read_text())
    result = _run(promtool, "test", "rules", str(tmp_path / RULES_TEST.name))
    assert result.returncode != 0 and "ArgusIncidentUnacknowledged" in result.stdout + result.stderr


def test_the_compose_prometheus_config_is_valid_and_loads_the_rules() -> None:
    result = _run(require_binary("promtool"), "check", "config", str(ROOT / "deploy/prometheus/prometheus.yml"))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "SUCCESS: 12 rules found" in result.stdout


def test_the_alertmanager_config_is_valid() -> None:
    result = _run(require_binary("amtool"), "check-config", str(ROOT / "deploy/alertmanager/alertmanager.yml"))
    assert result.returncode == 0, result.stdout + result.stderr
