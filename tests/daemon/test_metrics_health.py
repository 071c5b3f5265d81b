"""Collection health reaches Prometheus with bounded labels: no field label unless a schedule asks."""

from __future__ import annotations

import struct
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

from bson import ObjectId
from prometheus_client import generate_latest

from argus.agent.clock import ManualClock
from argus.agent.health.models import HealthOptions
from argus.agent.loop import run_audit
from argus.agent.options import AuditOptions
from argus.agent.planners.heuristic import HeuristicPlanner
from argus.agent.report import AuditReport
from argus.agent.tools.target import AuditTarget
from argus.daemon.metrics import Metrics

NOW = datetime(2026, 3, 4, 12, 0, tzinfo=UTC)
WHERE = {"connection": "default", "database": "testdb", "collection": "events"}


def audit(make_collection: Callable[..., Any], **health: Any) -> AuditReport:
    docs = [{"_id": ObjectId(struct.pack(">I", int((NOW - timedelta(minutes=10 + i)).timestamp())) + bytes(8)),
             "kind": "click" if i % 3 else "view", "ms": 100 + i % 50} for i in range(200)]
    clock = ManualClock(NOW)
    return run_audit(AuditTarget(make_collection(docs, "events")), HeuristicPlanner(clock=clock), clock=clock,
                     options=AuditOptions(health=HealthOptions(**health)))


def test_documents_and_the_newest_documents_time_are_exported_per_collection(
        make_collection: Callable[..., Any]) -> None:
    metrics = Metrics()
    metrics.observe_report("events", audit(make_collection))
    assert metrics.sample("argus_collection_documents", WHERE) == 200
    assert metrics.sample("argus_collection_freshness_seconds", WHERE) == 600
    assert metrics.sample("argus_collection_newest_document_timestamp_seconds", WHERE) == (
        NOW - timedelta(minutes=10)).timestamp()


def test_field_names_become_labels_only_for_a_schedule_that_opts_in(make_collection: Callable[..., Any]) -> None:
    quiet, opted = Metrics(), Metrics()
    quiet.observe_report("events", audit(make_collection))
    opted.observe_report("events", audit(make_collection, field_metrics=True))
    assert 'field="kind"' not in generate_latest(quiet.registry).decode()
    assert opted.sample("argus_field_null_share", {**WHERE, "field": "kind"}) == 0.0


def test_the_audit_report_shows_the_collections_health(make_collection: Callable[..., Any]) -> None:
    report = audit(make_collection)
    assert report.health is not None
    assert (report.health.documents, report.health.freshness_s, report.health.time_source) == (200, 600.0, "_id")
    assert report.health.inserts is None  # nothing to count from without an earlier run


def test_object_ids_from_the_future_leave_freshness_unknown_rather_than_negative(
        make_collection: Callable[..., Any]) -> None:
    docs = [{"_id": ObjectId(struct.pack(">I", int((NOW + timedelta(days=3650)).timestamp())) + bytes([0] * 7 + [i])),
             "kind": "click"} for i in range(50)]
    clock = ManualClock(NOW)
    report = run_audit(AuditTarget(make_collection(docs, "random_ids")), HeuristicPlanner(clock=clock), clock=clock)
    assert report.health is not None
    assert (report.health.documents, report.health.newest_at, report.health.freshness_s) == (50, None, None)
