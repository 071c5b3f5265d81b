"""A schedule's own metrics on the real server: each pipeline is one aggregate on the wire, carrying
maxTimeMS, answering the same numbers the in-process engine gives, with groups past the cap folded."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from pymongo import monitoring

from argus.agent.custom_metrics.measure import MAX_SEGMENTS, measure_metrics
from argus.agent.custom_metrics.models import MetricSpec
from argus.agent.health.models import HealthOptions
from argus.agent.tools.target import AuditTarget
from tests.conftest import memory_collection

pytestmark = pytest.mark.live

DOCS = [{"tenant": f"t{i % 60:02d}", "total": 10.0 + i % 7} for i in range(600)]
SPECS = [MetricSpec(name="avg_total", pipeline=[{"$group": {"_id": None, "v": {"$avg": "$total"}}}], between=(0, 50)),
         MetricSpec(name="per_tenant", pipeline=[{"$group": {"_id": "$tenant", "v": {"$sum": 1}}}], anomaly=True)]


class _Commands(monitoring.CommandListener):
    def __init__(self) -> None:
        self.sent: list[dict[str, Any]] = []

    def started(self, event: monitoring.CommandStartedEvent) -> None:
        self.sent.append({"name": event.command_name, "maxTimeMS": event.command.get("maxTimeMS")})

    def succeeded(self, event: monitoring.CommandSucceededEvent) -> None:
        pass

    def failed(self, event: monitoring.CommandFailedEvent) -> None:
        pass


def _values(target: AuditTarget) -> list[list[tuple[str | None, float | None]]]:
    measured = measure_metrics(target, SPECS, at=datetime(2026, 3, 2, tzinfo=UTC), history={},
                               options=HealthOptions(), privacy="full")
    assert [r.error for r in measured.results] == [None, None]
    return [[(v.group, v.value) for v in r.values] for r in measured.results]


def test_each_metric_is_one_aggregate_with_max_time_ms_and_answers_as_the_engine_does(live_db: Any,
                                                                                      live_uri: str) -> None:
    import pymongo

    live_db["orders"].insert_many([dict(d) for d in DOCS])
    listener = _Commands()
    client: pymongo.MongoClient[dict[str, Any]] = pymongo.MongoClient(live_uri, event_listeners=[listener])
    try:
        target = AuditTarget(client[live_db.name]["orders"], max_time_ms=5000)
        live = _values(target)
    finally:
        client.close()
    aggregates = [c for c in listener.sent if c["name"] == "aggregate"]
    assert len(aggregates) == 2 and all(c["maxTimeMS"] is not None and c["maxTimeMS"] <= 5000 for c in aggregates)
    assert target.cost().metric_reads == 2
    engine = _values(AuditTarget(memory_collection(DOCS, "orders", database="shop")))
    assert live == engine
    assert live[0] == [(None, pytest.approx(sum(d["total"] for d in DOCS) / len(DOCS)))]
    assert len(live[1]) == MAX_SEGMENTS + 1 and live[1][-1] == ("other", 100.0)
