"""The real daemon delivers alerts: an alert queued while the receiver was down arrives after
the receiver and the daemon come back, once. Alerts are per incident (the default): the demo's
two new high findings open one incident, and its opening is the one notice."""

from __future__ import annotations

import json
from pathlib import Path

from tests.daemon.alerts.receiver import Receiver
from tests.daemon.process import DaemonProcess
from tests.daemon.test_daemon_process import _demo_schedules, _write


def test_an_alert_queued_while_the_receiver_was_down_arrives_after_a_restart(pg_dsn: str, tmp_path: Path,
                                                                            receiver: Receiver) -> None:
    receiver.stop()
    path = tmp_path / "schedules.yaml"
    data = _demo_schedules(every="1h")
    data["schedules"] = [dict(s, run_at_start=True) for s in data["schedules"] if s["name"] == "demo-orders"]
    data["alerts"] = {"min_severity": "high", "new_persistent": False,
                      "channels": {"hook": {"type": "webhook", "url_env": "TEST_HOOK_URL"}}}
    _write(path, data)
    env = {"ARGUS_DATABASE_URL": pg_dsn, "ARGUS_DATA_DIR": str(tmp_path / "data"), "ARGUS_ALERT_POLL_S": "0.2",
           "ARGUS_ALERT_RETRY_BASE_S": "0.5", "ARGUS_ALERT_RETRY_MAX_S": "1", "TEST_HOOK_URL": f"{receiver.url}/hook"}

    first = DaemonProcess(path, env, tmp_path / "first.log")
    try:
        first.wait_until("a failed delivery", lambda: first.metric("argus_alerts_failed_total") >= 2)
        assert first.metric("argus_alerts_pending") == 1  # one incident for the demo's two high findings
        run_id = first.status()["schedules"][0]["last_run"]["run_id"]
    finally:
        assert first.stop() == 0

    receiver.start()
    second = DaemonProcess(path, env, tmp_path / "second.log")
    try:
        second.wait_until("the delivery", lambda: second.metric("argus_alerts_delivered_total") == 1)
        assert second.metric("argus_alerts_pending") == 0
        code, body = second.get(f"/runs/{run_id}")  # where alerts link to
        assert code == 200
        page = json.loads(body)
        assert page["run_id"] == run_id and len(page["findings"]) == 3 and "trace" not in page
        assert second.get("/runs/not-a-run")[0] == 404
    finally:
        assert second.stop() == 0
    bodies = [r.json() for r in receiver.requests]
    assert len(bodies) == 1, "the notice once: no retry of a delivered alert"
    assert [(b["run_id"], b["kind"], b["incident"]["id"]) for b in bodies] == [(run_id, "incident_opened", 1)]
    assert [f["severity"] for f in bodies[0]["incident"]["findings"]].count("high") == 2
    logs = (tmp_path / "first.log").read_text() + (tmp_path / "second.log").read_text()
    assert receiver.url not in logs and "/hook" not in logs
