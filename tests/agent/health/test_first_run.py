"""A first run already knows the collection's rhythm: it rebuilds the volume and freshness baselines
from the time field's own history (one bucketing aggregation), so a drop yesterday is reported at
once; an excluded span raises nothing and does not widen the baseline."""

from __future__ import annotations

import random
import struct
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from bson import ObjectId

from argus.agent.clock import ManualClock
from argus.agent.findings import Category
from argus.agent.health.models import ExcludedSpan, HealthOptions
from argus.agent.loop import run_audit
from argus.agent.options import AuditOptions
from argus.agent.report import AuditReport
from argus.agent.state import AgentAction
from argus.agent.tools.target import AuditTarget
from tests.agent.tools.engine_server import EngineServer, refuse
from tests.conftest import memory_collection
from tests.doubles.planner import ScriptedPlanner

NOW = datetime(2026, 3, 2, 9, 30, tzinfo=UTC)  # a Monday


def orders(per_day: dict[int, int] | None = None, days: int = 35, usual: int = 120) -> list[dict[str, Any]]:
    """``usual`` orders a day for ``days`` days (``per_day``: days ago -> orders that day instead)."""
    rng = random.Random(3)
    docs = []
    for ago in range(days, 0, -1):
        count = (per_day or {}).get(ago, rng.randint(usual - usual // 12, usual + usual // 12))
        for _ in range(count):
            created = NOW - timedelta(days=ago - 1) - timedelta(seconds=rng.uniform(1, 86_399))
            oid = ObjectId(struct.pack(">I", int(created.timestamp())) + rng.randbytes(8))
            docs.append({"_id": oid, "created_at": created.replace(tzinfo=None),
                         "qty": rng.randint(1, 9)})
    return docs


def _audit(target: AuditTarget, **health: Any) -> AuditReport:
    clock = ManualClock(NOW)
    steps = [AgentAction(action="schema_sample", action_input={"sample_size": 200})]
    return run_audit(target, ScriptedPlanner(steps), clock=clock,
                     options=AuditOptions(min_field_coverage=0.0, health=HealthOptions(**health)))


def _volume(report: AuditReport) -> list[str]:
    return [f.description.split(":")[0] for f in report.findings if f.category == Category.VOLUME_ANOMALY]


def _collection(docs: list[dict[str, Any]], index: bool = True) -> Any:
    coll = memory_collection(docs, "orders", database="shop", indexes=["created_at"] if index else [])
    return coll


def test_a_first_run_reports_a_drop_yesterday_from_the_time_fields_history() -> None:
    report = _audit(AuditTarget(_collection(orders({1: 25}))), time_field="created_at")

    assert _volume(report) == ["drop"]
    assert report.health is not None and len(report.health.baseline_points) == 30
    assert report.health.baseline_points[-1].at == NOW.replace(minute=0) - timedelta(days=1)
    assert "no earlier run was stored: the volume and freshness baselines came from 30 intervals of the " \
           "collection's own history (created_at)" in report.notes
    # the in-memory engine reads the times once (a server groups them: see the wire tests below)
    reads = [op for op in report.database_cost.operations if op.kind == "find" and op.full_pass]
    assert len(reads) == 1


def test_a_first_run_over_an_ordinary_history_raises_nothing() -> None:
    report = _audit(AuditTarget(_collection(orders())), time_field="created_at")

    assert _volume(report) == [] and report.health is not None and report.health.baseline_points


def test_the_object_id_time_of_id_serves_when_no_time_field_is_named() -> None:
    report = _audit(AuditTarget(_collection(orders({1: 25}), index=False)))

    assert _volume(report) == ["drop"]
    assert report.health is not None and report.health.time_source == "_id"


def test_a_collection_younger_than_one_interval_has_no_history_to_learn_from() -> None:
    report = _audit(AuditTarget(_collection(orders(days=1))), time_field="created_at")

    assert report.health is not None and report.health.baseline_points == [] and _volume(report) == []


def test_an_excluded_span_raises_nothing() -> None:
    holiday = ExcludedSpan(start=NOW - timedelta(days=1, hours=2), end=NOW, reason="inventory")
    report = _audit(AuditTarget(_collection(orders({1: 25}))), time_field="created_at", exclude=[holiday])

    assert _volume(report) == []


def test_an_excluded_span_does_not_widen_the_baseline() -> None:
    """Ten quiet holiday days in the history would widen the spread until a real drop hides in it."""
    holidays = {ago: 40 for ago in range(12, 22)}
    docs = orders({**holidays, 1: 70})
    hour = NOW.replace(minute=0)
    span = ExcludedSpan(start=hour - timedelta(days=22), end=hour - timedelta(days=11), reason="holidays")

    assert _volume(_audit(AuditTarget(_collection(docs)), time_field="created_at")) == []
    excluded = _audit(AuditTarget(_collection(docs)), time_field="created_at", exclude=[span])
    assert _volume(excluded) == ["drop"]
    volume = next(f for f in excluded.findings if f.category == Category.VOLUME_ANOMALY)
    assert "outside the baseline of 18 earlier runs" in volume.hypothesis  # 29 rates, 11 touch the span


@pytest.fixture
def server() -> Iterator[EngineServer]:
    started = EngineServer(orders({1: 6}, usual=40), collection="orders", indexes=["created_at"])
    started.start()
    yield started
    started.close()


def test_over_the_wire_the_bucketing_is_one_aggregation(server: EngineServer) -> None:
    target = server.target()
    report = _audit(target, time_field="created_at")

    assert _volume(report) == ["drop"]
    bucketing = [doc for doc in server.commands("aggregate") if "$dateToString" in str(doc["pipeline"])]
    assert len(bucketing) == 1


def test_a_server_that_refuses_the_bucketing_is_asked_one_count_per_interval() -> None:
    """A server that cannot format an ObjectId's time (MongoDB can: $dateToString takes a date, a
    timestamp or an ObjectId): the refusal is noted, and the volume baseline comes from counts."""
    server = EngineServer(orders({1: 6}, usual=40), collection="orders", indexes=["created_at"], refusals=[
        refuse("$dateToString", "can't convert from BSON type objectId to Date", 2, commands=("aggregate",))])
    server.start()
    try:
        target = server.target()
        report = _audit(target)
    finally:
        server.close()

    assert _volume(report) == ["drop"]
    assert "the server refused the hourly bucketing of _id (code 2): the first run's volume baseline came from one " \
           "count per interval, and freshness has no baseline until 7 runs are stored" in report.notes
