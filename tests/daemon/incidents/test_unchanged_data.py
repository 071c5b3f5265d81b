"""A collection nobody writes to, audited every 20 seconds and across a daemon restart: a run twenty
seconds after the last expects half a document at the usual rate, so none arriving is no volume
anomaly, and no incident resolves or reopens while the data stays as it was (issue 36: three
notices in two minutes for a file nobody touched). Its newest document growing old is a freshness
finding once enough documents were due meanwhile; that one stays open, as the data does not change."""

from __future__ import annotations

import random
import struct
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from bson import ObjectId

from argus.agent.clock import ManualClock
from argus.agent.findings import Category
from argus.agent.health.findings import HEALTH_CATEGORIES
from argus.agent.health.models import HealthOptions
from argus.agent.loop import run_audit
from argus.agent.options import AuditOptions
from argus.agent.planners.heuristic import HeuristicPlanner
from argus.agent.tools.target import AuditTarget
from argus.daemon.record import record_report
from argus.daemon.store import CollectionRef, PostgresStore
from argus.daemon.store.incidents import IncidentBook
from tests.conftest import memory_collection

pytestmark = pytest.mark.slow

STARTED = datetime(2026, 3, 2, 9, 41, 7, tzinfo=UTC)


def _orders_until(now: datetime) -> list[dict[str, Any]]:
    """About a hundred orders an hour for the last thirty hours, the newest a few seconds old."""
    rng = random.Random(11)
    docs = []
    for i in range(3000):
        created = now - timedelta(seconds=5 + rng.uniform(0, 30 * 3600))
        oid = ObjectId(struct.pack(">I", int(created.timestamp())) + rng.randbytes(8))
        docs.append({"_id": oid, "order_id": f"O-{i:05d}", "total": round(rng.uniform(1, 300), 2),
                     "status": rng.choice(["paid", "shipped", "delivered"])})
    return docs


def test_a_collection_that_never_changes_opens_no_incident_even_across_a_restart(pg_dsn: str) -> None:
    orders = _orders_until(STARTED)
    clock = ManualClock(STARTED)
    ref = CollectionRef("demo", "shop", "orders")
    options = AuditOptions(sample_size=400, health=HealthOptions(run_every_s=20))
    found: list[tuple[int, str]] = []
    run = 0
    for daemon_life in range(2):  # the second life is the daemon restarted, with a new store connection
        if daemon_life:
            clock._now += timedelta(seconds=70)
        with PostgresStore(pg_dsn, pool_size=2) as store:
            for _ in range(6):
                collection = memory_collection(orders, "orders", database="shop")
                report = run_audit(AuditTarget(collection, connection_name="demo"), HeuristicPlanner(clock=clock),
                                   options=options, clock=clock,
                                   historical_context=store.history(ref, runs=10, health_runs=30))
                assert report.outcome == "succeeded", report.error
                record_report(store, report.model_copy(update={"schedule": "static"}), now=clock.now())
                found += [(run, f.category.value) for f in report.findings
                          if f.category in HEALTH_CATEGORIES - {Category.FRESHNESS}]
                run += 1
                clock._now += timedelta(seconds=20)
            book = IncidentBook(store)
            incidents = [book.get(i.id) for i in book.list()]

    assert found == []
    history = {i.id: [e.kind for e in i.history] for i in incidents}
    assert {i: kinds for i, kinds in history.items()
            if {"resolved", "reopened", "finding_resolved", "finding_back"} & set(kinds)} == {}
