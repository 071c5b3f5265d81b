"""The daemon end to end on a ``mongodb`` connection to the real server: the schedule fires, the run
is stored with its diff, the alert reaches a local webhook and the incident opens."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
import yaml

from tests.daemon.alerts.receiver import Receiver
from tests.daemon.process import DaemonProcess
from tests.integration.audits import load_jsonl

pytestmark = [pytest.mark.live, pytest.mark.slow]

ORDERS = Path(__file__).resolve().parents[2] / "deploy" / "demo" / "orders.jsonl"


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    r = Receiver().start()
    yield r
    r.stop()


def test_daemon_audits_a_live_collection_stores_the_run_and_opens_an_incident(
        pg_dsn: str, tmp_path: Path, receiver: Receiver, live_db: Any, live_uri: str) -> None:
    load_jsonl(live_db.orders, ORDERS)
    path = tmp_path / "schedules.yaml"
    path.write_text(yaml.safe_dump({
        "connections": {"shop": {"uri_env": "ARGUS_MONGODB_URI"}},
        "alerts": {"base_url": "http://argus.test", "min_severity": "high",
                   "channels": {"hook": {"type": "webhook", "url_env": "TEST_HOOK_URL"}}},
        "schedules": [{"name": "live-orders", "connection": "shop", "database": live_db.name,
                       "collection": "orders", "trigger": {"every": "1h"}, "run_at_start": True}],
    }, sort_keys=False))
    env = {"ARGUS_DATABASE_URL": pg_dsn, "ARGUS_DATA_DIR": str(tmp_path / "data"), "ARGUS_ALERT_POLL_S": "0.2",
           "ARGUS_MONGODB_URI": live_uri, "TEST_HOOK_URL": f"{receiver.url}/hook"}
    daemon = DaemonProcess(path, env, tmp_path / "daemon.log")
    try:
        daemon.wait_until("the incident's opening delivered", lambda: len(receiver.requests) >= 1,
                          timeout=180)
        incidents = json.loads(daemon.get("/incidents")[1])["incidents"]
        assert [(i["status"], i["collection"]) for i in incidents] == [("open", "orders")]
    finally:
        assert daemon.stop() == 0
    assert [r.json()["kind"] for r in receiver.requests] == ["incident_opened"]
    with psycopg.connect(pg_dsn) as conn:
        rows = conn.execute("select connection, database, outcome, report from runs where collection = 'orders'"
                            ).fetchall()
    assert [(c, d, o) for c, d, o, _ in rows] == [("shop", live_db.name, "succeeded")]
    report = rows[0][3]
    assert report["database_cost"]["server"] != "memory"
    high = {(f["field"], f["category"]) for f in report["findings"] if f["severity"] in ("high", "critical")}
    assert high and {(e["field"], e["category"]) for e in report["diff"]["entries"]
                     if e["status"] == "new"} >= high
