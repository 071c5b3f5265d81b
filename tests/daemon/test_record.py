"""The record step decides without a database: a report and the history read for it in, the diff,
the incident changes and the alerts out (argus.daemon.record.decide and alerts_after)."""

from __future__ import annotations

from typing import Any
from uuid import uuid4

from argus.agent.history import PastFinding, fingerprint
from argus.agent.options import AuditOptions
from argus.config.alerts import AlertsConfig
from argus.daemon.alerts.models import Alert
from argus.daemon.alerts.policy import AlertPolicy
from argus.daemon.record import History, alerts_after, decide
from tests.daemon.store.reports import finding, report


def _policy(**over: Any) -> AlertPolicy:
    config = AlertsConfig.model_validate({"channels": {"hook": {"type": "webhook", "url_env": "HOOK_URL"}},
                                          "min_severity": "high", **over})
    return AlertPolicy(config, {})


def _seen_before(field: str, category: str = "null_rate", severity: str = "medium", share: float = 0.01
                 ) -> PastFinding:
    f = finding(field, category, severity)
    return PastFinding(fingerprint=fingerprint("main", "shop", "orders", field, f.category), field=field,
                       category=f.category, severity=f.severity, affected_count=50, affected_pct=share,
                       evidence_query={})


def test_a_finding_seen_in_the_prior_run_is_persisting_and_an_unseen_one_new() -> None:
    previous = uuid4()
    history = History(previous_run_id=previous, previous=[_seen_before("email"), _seen_before("zip")])

    decision = decide(report([finding("email"), finding("phone")]), history, policy=None)

    assert decision.report.diff is not None and decision.report.diff.previous_run_id == previous
    status = {e.field: e.status for e in decision.report.diff.entries}
    assert status == {"email": "persisting", "phone": "new", "zip": "resolved"}


def test_a_new_critical_finding_yields_an_alert_and_a_persisting_one_none() -> None:
    history = History(previous_run_id=uuid4(), previous=[_seen_before("email", severity="critical")])
    policy = _policy(per="finding")

    decision = decide(report([finding("email", severity="critical"), finding("total", "outlier_value", "critical")]),
                      history, policy=policy)
    routed = alerts_after(decision, policy)

    assert [(r.alert.kind, r.alert.title, r.channels) for r in routed] == [
        ("new_finding", "New critical finding: shop.orders total (outlier_value)", ("hook",))]


def test_a_first_high_finding_opens_an_incident_that_asks_for_its_notice() -> None:
    decision = decide(report([finding("total", "outlier_value", "high")]), History(), policy=_policy())

    [change] = decision.incidents
    assert change.is_new and change.notice == "incident_opened"
    assert [f.field for f in change.incident.findings] == ["total"]
    assert [r.alert.kind for r in alerts_after(decision, _policy())] == ["incident_opened"]


def test_in_strict_privacy_neither_the_incident_nor_the_alert_carries_a_value() -> None:
    secret = finding("email", "format_violation", "critical").model_copy(update={
        "evidence_query": {"email": {"$in": ["ada@example.com"]}}, "sample_values": ["ada@example.com"]})
    policy = _policy(per="finding")
    strict = report([secret]).model_copy(update={"options": AuditOptions(privacy="strict")})

    decision = decide(strict, History(), policy=policy)
    [change] = decision.incidents
    [routed] = alerts_after(decision, policy)

    assert "ada@example.com" not in str(change.incident.findings[0].evidence_query)
    assert change.incident.findings[0].evidence_redacted
    assert isinstance(routed.alert, Alert)
    assert routed.alert.sample_values == [] and "ada@example.com" not in routed.alert.model_dump_json()


def test_the_third_failed_run_in_a_row_alerts_once() -> None:
    policy = _policy(failed_runs=3)
    failed = report(outcome="failed", schedule="nightly")
    earlier = [(failed.started_at.replace(hour=h), "failed") for h in (11, 10)] + [
        (failed.started_at.replace(hour=9), "succeeded")]

    decision = decide(failed, History(outcomes=earlier), policy=policy)

    assert decision.failure_streak == 3 and decision.incidents == []
    assert [r.alert.kind for r in alerts_after(decision, policy)] == ["failed_runs"]
    second = decide(failed, History(outcomes=earlier[1:]), policy=policy)
    assert second.failure_streak == 2 and alerts_after(second, policy) == []
