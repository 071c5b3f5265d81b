"""The demo collections have a freshness: their ``_id``s carry insert times, as a server's do. Before,
the generator drew random ObjectIds (times up to 2100), Argus rightly read them as no insert times, and
the dashboard's freshness panels stayed empty for a newcomer's demo daemon."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from prometheus_client import CollectorRegistry

from argus.agent.loop import run_audit
from argus.agent.options import AuditOptions
from argus.agent.state import AgentAction
from argus.daemon.metrics import Metrics
from argus.daemon.sources import load_jsonl
from tests.doubles.planner import ScriptedPlanner

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("name", ["orders", "customers"])
def test_each_demo_collection_exports_its_freshness(name: str) -> None:
    report = run_audit(load_jsonl(ROOT / "deploy/demo" / f"{name}.jsonl", database="shop"),
                       ScriptedPlanner([AgentAction(action="schema_sample")]),
                       options=AuditOptions(min_field_coverage=0))
    assert report.health is not None and report.health.time_source == "_id"
    assert report.health.newest_at is not None and report.health.newest_at < datetime.now(UTC)

    registry = CollectorRegistry()
    Metrics(registry).observe_report("demo", report)
    labels = {"connection": "file", "database": "shop", "collection": name}
    assert registry.get_sample_value("argus_collection_documents", labels) == report.health.documents
    assert registry.get_sample_value("argus_collection_freshness_seconds", labels) == report.health.freshness_s
