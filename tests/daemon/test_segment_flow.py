"""A tenant that stops sending, end to end with the daemon's runner: schedules.yaml declares
``segments: {by: tenant}``, each daily trigger reloads the file, audits it, stores the run in a real
PostgreSQL, opens an incident and alerts a webhook; when the tenant resumes, the incident resolves
and the channel hears it once. The collection's own volume never leaves its baseline."""

from __future__ import annotations

import random
import struct
import textwrap
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from bson import ObjectId, json_util

from argus.agent.clock import ManualClock
from argus.agent.findings import Category
from argus.agent.segments.models import metric_label
from argus.config.schedules import load_schedules
from argus.config.settings import Settings
from argus.daemon.alerts.policy import AlertPolicy
from argus.daemon.alerts.sender import AlertSender
from argus.daemon.metrics import Metrics
from argus.daemon.runner import ScheduleRunner
from argus.daemon.spool import Spool
from argus.daemon.store import PostgresStore
from argus.daemon.store.incidents import IncidentBook
from argus.daemon.store.outbox import AlertOutbox
from tests.daemon.alerts.receiver import Receiver

pytestmark = pytest.mark.slow

MONDAY = datetime(2026, 3, 2, 6, 0, tzinfo=UTC)
TENANTS = ("acme", "beta", "gamma", "delta", "omega", "sigma")
STOPS, RESUMES = 12, 14  # acme sends nothing on days 12 and 13, then as usual again
SUBJECT = "(segment tenant=acme)"


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    r = Receiver().start()
    yield r
    r.stop()


def _day(day: int, now: datetime, rng: random.Random, serial: list[int]) -> list[dict[str, Any]]:
    docs = []
    for tenant in TENANTS:
        if tenant == "acme" and STOPS <= day < RESUMES:
            continue
        for _ in range(rng.randint(55, 65)):
            serial[0] += 1
            at = now - timedelta(seconds=rng.uniform(1, 86_399))
            docs.append({"_id": ObjectId(struct.pack(">I", int(at.timestamp())) + serial[0].to_bytes(8, "big")),
                         "tenant": tenant, "total": rng.randint(10, 500)})
    return docs


def test_a_tenant_that_stops_opens_an_incident_and_alerts_and_its_return_resolves_it(
        store: PostgresStore, receiver: Receiver, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TEST_HOOK_URL", f"{receiver.url}/hook")
    (tmp_path / "schedules.yaml").write_text(textwrap.dedent("""\
        connections:
          files: {files: {orders: orders.jsonl}}
        schedules:
          - name: orders
            connection: files
            database: shop
            collection: orders
            trigger: {every: 1d}
            segments: {by: tenant, top: 10}
        alerts:
          min_severity: high
          channels: {hook: {type: webhook, url_env: TEST_HOOK_URL}}
          incidents: {group_by: pattern}
        """))
    clock = ManualClock(MONDAY)
    runner = ScheduleRunner(store=store, spool=Spool(tmp_path / "spool"), metrics=Metrics(),
                            settings=Settings(data_dir=tmp_path), clock=clock, replica="r1")
    rng, serial = random.Random(11), [0]
    orders: list[dict[str, Any]] = []
    for ago in range(10, 0, -1):  # ten days of orders before the first run: its baseline, rebuilt
        orders += _day(-ago, MONDAY - timedelta(days=ago), rng, serial)
    findings: dict[int, set[tuple[str, str]]] = {}
    for day in range(18):
        now = MONDAY + timedelta(days=day)
        clock._now = now
        orders += _day(day, now, rng, serial)
        (tmp_path / "orders.jsonl").write_text("\n".join(json_util.dumps(d) for d in orders))
        schedules = load_schedules(tmp_path / "schedules.yaml")
        runner.alerts = AlertPolicy.of(schedules)
        report = runner.run(schedules, "orders", scheduled_at=now)
        assert report is not None and report.outcome == "succeeded", report and report.error
        findings[day] = {(f.category.value, f.field) for f in report.findings
                         if f.category in (Category.VOLUME_ANOMALY, Category.FRESHNESS, Category.SEGMENT_CHANGE)}
        AlertSender(outbox=AlertOutbox(store), config=lambda s=schedules: s.alerts, client=httpx.Client(),
                    metrics=Metrics(), clock=clock, retry_base_s=5, retry_max_s=60).deliver_due()

    assert findings[STOPS] == {("volume_anomaly", SUBJECT), ("freshness", SUBJECT)}
    assert ("freshness", SUBJECT) in findings[STOPS + 1]
    assert {d: f for d, f in findings.items() if not STOPS <= d < RESUMES and f} == {}
    incidents = IncidentBook(store).list(statuses=["open", "acknowledged", "resolved"])
    acme = [i for i in incidents if any(f.field == SUBJECT for f in i.findings)]
    assert len(acme) >= 1 and all(i.status == "resolved" for i in acme)
    bodies = [r.json() for r in receiver.at("/hook")]
    opened = [b for b in bodies if b["kind"] == "incident_opened" and SUBJECT in b["title"] + b["text"]]
    resolved = [b for b in bodies if b["kind"] == "incident_resolved" and SUBJECT in b["title"] + b["text"]]
    assert opened and resolved and len(resolved) == len(acme)
    label = {"schedule": "orders", "segment": metric_label("tenant=acme")}
    assert runner.metrics.sample("argus_segment_documents", label) == sum(1 for d in orders if d["tenant"] == "acme")
