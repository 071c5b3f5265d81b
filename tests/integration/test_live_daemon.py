"""The daemon end to end on a `mongodb` connection to the real server: a schedule fires, its run is
stored, an incident opens and its alert is delivered; the data is mended, the next runs find nothing,
and the incident resolves by itself, which the channel hears too."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import psycopg

from tests.daemon.alerts.receiver import Receiver
from tests.daemon.process import DaemonProcess
from tests.daemon.test_daemon_process import _write
from tests.integration.live_audit import copy_into


def _invoices(broken: bool) -> list[dict[str, Any]]:
    rng = random.Random(8)
    documents = [{"invoice_id": f"INV-{i:06d}", "amount": rng.randint(100, 90_000) / 100,
                  "currency": rng.choice(["EUR", "USD", "GBP"])} for i in range(2000)]
    if broken:
        for doc in documents[::50]:  # 40 amounts written as text by a broken importer
            doc["amount"] = f"{doc['amount']:.2f} EUR"
    return documents


def test_the_daemon_audits_a_live_collection_stores_alerts_and_resolves(live_db: Any, live_uri: str, pg_dsn: str,
                                                                       tmp_path: Path) -> None:
    live = live_db["invoices"]
    copy_into(_invoices(broken=True), live)
    receiver = Receiver().start()
    schedules = tmp_path / "schedules.yaml"
    _write(schedules, {
        "version": 1,
        "connections": {"billing": {"uri_env": "TEST_LIVE_URI"}},
        "defaults": {"planner": "heuristic", "time_budget": "2m", "privacy": "shapes"},
        "schedules": [{"name": "invoices", "connection": "billing", "database": live_db.name,
                       "collection": "invoices", "trigger": {"every": "2s"}, "run_at_start": True}],
        "alerts": {"min_severity": "high", "channels": {"hook": {"type": "webhook", "url_env": "TEST_HOOK_URL"}}},
    })
    env = {"ARGUS_DATABASE_URL": pg_dsn, "ARGUS_DATA_DIR": str(tmp_path / "data"), "ARGUS_ALERT_POLL_S": "0.2",
           "TEST_LIVE_URI": live_uri, "TEST_HOOK_URL": f"{receiver.url}/hook"}
    daemon = DaemonProcess(schedules, env, tmp_path / "daemon.log")
    try:
        daemon.wait_until("the incident's opening delivered", lambda: len(receiver.requests) >= 1, timeout=120)
        copy_into(_invoices(broken=False), live)  # the importer is mended
        daemon.wait_until("the resolution delivered", lambda: len(receiver.requests) >= 2, timeout=180)
    finally:
        assert daemon.stop() == 0
        receiver.stop()

    bodies = [r.json() for r in receiver.requests]
    assert [b["kind"] for b in bodies[:2]] == ["incident_opened", "incident_resolved"]
    with psycopg.connect(pg_dsn) as conn:
        runs = conn.execute("select report from runs where schedule = 'invoices' order by started_at").fetchall()
    reports = [r[0] if isinstance(r[0], dict) else json.loads(r[0]) for r in runs]
    first = reports[0]
    assert first["connection"] == "billing" and first["outcome"] == "succeeded"
    assert [(f["field"], f["category"], f["affected_count"]) for f in first["findings"]] == [
        ("amount", "type_mismatch", 40)]
    mended = next(r for r in reports if not r["findings"])
    assert [(e["field"], e["category"], e["status"]) for e in mended["diff"]["entries"]] == [
        ("amount", "type_mismatch", "resolved")]
