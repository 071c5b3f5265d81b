"""A scoped run's words add up (issue 36): a share is said with the count it is a share of, and a
run that no longer holds the previous run's finding does not say "no findings either time"."""

from __future__ import annotations

from uuid import uuid4

import pytest

from argus.agent.history import PastFinding, fingerprint
from argus.agent.window import AuditWindow
from argus.config.alerts import AlertsConfig
from argus.daemon.alerts.policy import AlertPolicy
from argus.daemon.diff import diff_report
from argus.daemon.incidents.notices import finding_line
from argus.daemon.incidents.tracker import track
from argus.daemon.render import _diff_line
from tests.daemon.store.reports import T0, finding, report

WINDOW = AuditWindow(field="created_at", since=T0, span_s=7 * 86400.0, documents=1019, indexed=True)


def _scoped(findings: list) -> object:
    return report(findings, window=WINDOW).model_copy(update={"collection_size": 3000})


def test_a_scoped_alert_says_the_window_its_share_is_of(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TEST_HOOK_URL", "http://hook.test")
    scoped = _scoped([finding("email", "format_violation", "high", count=40, size=1019)])
    scoped = scoped.model_copy(update={"diff": diff_report(scoped, None, previous_run_id=None)})
    config = AlertsConfig.model_validate({"per": "finding", "min_severity": "high",
                                          "channels": {"hook": {"type": "webhook", "url_env": "TEST_HOOK_URL"}}})
    [routed] = AlertPolicy(config, {}).alerts_for(scoped)
    assert routed.alert.text.startswith("40 of 1,019 documents in the window (3.93%; 3,000 in the collection)")


def test_a_scoped_incident_finding_counts_in_the_window() -> None:
    scoped = _scoped([finding("email", "format_violation", "high", count=40, size=1019)])
    [change] = track(scoped, [], config=AlertsConfig().incidents, growth_factor=1.5)
    assert finding_line(change.incident.findings[0]) == \
        "email format_violation: high, 40 of 1,019 documents (3.93%)"


def test_a_scoped_run_without_the_previous_runs_finding_does_not_say_none_either_time() -> None:
    before = PastFinding(fingerprint=fingerprint("main", "shop", "orders", "email", finding("email").category),
                         field="email", category=finding("email").category, severity=finding("email").severity,
                         affected_count=40, affected_pct=40 / 1019, evidence_query={})
    scoped = _scoped([])
    line = _diff_line(diff_report(scoped, [before], previous_run_id=uuid4()))
    assert "no findings either time" not in line
    assert "1 not found this time (not called resolved)" in line
