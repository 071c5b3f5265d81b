"""Thirty daily runs of one collection on a controlled clock: the health baselines learned from the
stored runs raise volume, freshness and drift anomalies on the days they happen, stay quiet on an
ordinary weekend, obey an 'expected' label, and each anomaly reaches the alert receiver once."""

from __future__ import annotations

import math
import random
import struct
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest
from bson import ObjectId

from argus.agent.clock import ManualClock
from argus.agent.findings import Category
from argus.agent.health.findings import HEALTH_CATEGORIES
from argus.agent.loop import run_audit
from argus.agent.options import AuditOptions
from argus.agent.planners.heuristic import HeuristicPlanner
from argus.agent.report import AuditReport
from argus.agent.tools.target import AuditTarget
from argus.config.alerts import AlertsConfig
from argus.daemon.alerts.policy import AlertPolicy
from argus.daemon.alerts.sender import AlertSender
from argus.daemon.metrics import Metrics
from argus.daemon.record import record_report
from argus.daemon.store import CollectionRef, PostgresStore
from argus.daemon.store.outbox import AlertOutbox
from tests.conftest import memory_collection
from tests.daemon.alerts.receiver import Receiver

pytestmark = pytest.mark.slow

MONDAY = datetime(2026, 3, 2, 6, 0, tzinfo=UTC)
SCHEDULE = "orders-daily"
THIRD_OF_USUAL, SAME_AGAIN, STALL, NULLS_BACKFILLED = 14, 15, 18, 21


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    r = Receiver().start()
    yield r
    r.stop()


def object_id(at: datetime, rng: random.Random) -> ObjectId:
    return ObjectId(struct.pack(">I", int(at.timestamp())) + rng.randbytes(8))


def day_of_orders(day: int, now: datetime, rng: random.Random) -> list[dict[str, Any]]:
    usual = rng.randint(25, 35) if now.weekday() >= 5 else rng.randint(90, 110)
    count = {THIRD_OF_USUAL: usual // 3, SAME_AGAIN: usual // 3, STALL: 0}.get(day, usual)
    times = sorted(now - timedelta(seconds=rng.uniform(0, 86_400)) for _ in range(count))
    return [{"_id": object_id(t, rng), "amount": round(math.exp(rng.gauss(3.5, 0.8)), 2),
             "status": rng.choice(["paid", "paid", "paid", "shipped", "refunded"]),
             "coupon": None if rng.random() < 0.01 else rng.choice(["SPRING", "VIP", "WELCOME"])} for t in times]


def health_findings(report: AuditReport) -> list[tuple[str, str]]:
    return sorted((f.category.value, f.field) for f in report.findings if f.category in HEALTH_CATEGORIES)


def test_thirty_days_raise_each_anomaly_once_and_nothing_on_ordinary_days(store: PostgresStore,
                                                                          receiver: Receiver,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TEST_HOOK_URL", f"{receiver.url}/hook")
    config = AlertsConfig.model_validate({"channels": {"hook": {"type": "webhook", "url_env": "TEST_HOOK_URL"}},
                                          "routes": [{"channels": ["hook"], "min_severity": "medium"}],
                                          "per": "finding"})  # each anomaly's own alert, as it is counted below
    policy = AlertPolicy(config, {SCHEDULE: {}})
    clock = ManualClock(MONDAY)
    sender = AlertSender(outbox=AlertOutbox(store), config=lambda: config, client=httpx.Client(), metrics=Metrics(),
                         clock=clock, retry_base_s=5, retry_max_s=60)
    # The collection changes between runs (inserts, a faulty backfill): the documents are kept here, changed
    # as the shop's writes would change them, and each day's audit reads them on the in-process engine.
    orders: list[dict[str, Any]] = []
    rng = random.Random(7)
    orders.extend(day_of_orders(-1, MONDAY - timedelta(days=1), rng))
    ref = CollectionRef("main", "shop", "orders")
    by_day: dict[int, AuditReport] = {}
    for day in range(30):
        now = MONDAY + timedelta(days=day)
        clock._now = now
        docs = day_of_orders(day, now, rng)
        orders.extend(docs)
        if day == NULLS_BACKFILLED:  # a faulty backfill empties the coupon of 14% of the orders
            ids = [d["_id"] for d in orders if d.get("coupon") is not None]
            emptied = set(rng.sample(ids, int(0.14 * len(orders))))
            for doc in orders:
                if doc["_id"] in emptied:
                    doc["coupon"] = None
        context = store.history(ref, runs=10, health_runs=30)
        collection = memory_collection(orders, "orders", database="shop")
        report = run_audit(AuditTarget(collection, connection_name="main"), HeuristicPlanner(clock=clock),
                           options=AuditOptions(sample_size=400), clock=clock, historical_context=context)
        by_day[day] = record_report(store, report.model_copy(update={"schedule": SCHEDULE}), alerts=policy, now=now)
        sender.deliver_due()
        if day == THIRD_OF_USUAL:  # the team knew: a planned migration paused the shop for two days
            volume = next(f for f in by_day[day].findings if f.category == Category.VOLUME_ANOMALY)
            store.add_label(by_day[day].run_id, volume.id, "expected", "planned migration")

    anomalies = {day: found for day, report in by_day.items() if (found := health_findings(report))}
    assert anomalies[THIRD_OF_USUAL] == [("volume_anomaly", "(collection)")]
    assert ("freshness", "(collection)") in anomalies[STALL]
    assert anomalies[NULLS_BACKFILLED] == [("distribution_drift", "coupon")]
    weekends = [d for d in range(30) if (MONDAY + timedelta(days=d)).weekday() >= 5]
    quiet = set(range(30)) - {THIRD_OF_USUAL, STALL} - set(range(NULLS_BACKFILLED, 30))
    assert {d: anomalies[d] for d in quiet if d in anomalies} == {}, weekends
    assert SAME_AGAIN not in anomalies
    assert any("planned" in n or "false positive" in n or "expected" in n for n in by_day[SAME_AGAIN].notes)

    alerted = [(r.json()["kind"], r.json()["category"], r.json()["run_id"]) for r in receiver.at("/hook")
               if r.json()["category"] in {c.value for c in HEALTH_CATEGORIES}]
    assert len(alerted) == len(set(alerted)), "an alert was delivered twice"
    day_of = {str(report.run_id): day for day, report in by_day.items()}
    new = sorted((day_of[run], category) for kind, category, run in alerted if kind == "new_finding")
    assert new == sorted([(THIRD_OF_USUAL, "volume_anomaly"), *[(STALL, c) for c, _ in anomalies[STALL]],
                          (NULLS_BACKFILLED, "distribution_drift")])
    persistent = [(day_of[run], category) for kind, category, run in alerted if kind == "new_persistent"]
    # A second volume anomaly, and a drift that lasted a second day, are new persistent patterns: said once.
    assert persistent == [(STALL, "volume_anomaly"), (NULLS_BACKFILLED + 1, "distribution_drift")]
