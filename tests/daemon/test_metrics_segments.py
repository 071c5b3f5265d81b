"""Segments reach Prometheus with the cap: never more label values per schedule than top + 'other',
also when the top changes from one run to the next."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, generate_latest

from argus.agent.clock import ManualClock
from argus.agent.loop import run_audit
from argus.agent.options import AuditOptions
from argus.agent.planners.heuristic.planner import HeuristicPlanner
from argus.agent.report import AuditReport
from argus.agent.segments.models import SegmentOptions, metric_label
from argus.agent.tools.target import AuditTarget
from argus.daemon.metrics import Metrics
from tests.agent.segments.tenants import NOW, Tenants, count
from tests.conftest import memory_collection


def _audit(names: list[str], per_day: dict[str, int], top: int) -> tuple[AuditReport, list[dict]]:
    docs = Tenants(names, per_day, days=4).documents()
    clock = ManualClock(NOW)
    report = run_audit(AuditTarget(memory_collection(docs, "orders", database="shop")), HeuristicPlanner(clock=clock),
                       clock=clock, options=AuditOptions(segments=SegmentOptions(by="tenant", top=top)))
    return report, docs


def _segments(metrics: Metrics) -> dict[str, float]:
    return {s.labels["segment"]: s.value for family in metrics.registry.collect()
            if family.name == "argus_segment_documents" for s in family.samples}


def test_segment_documents_are_exported_for_the_top_and_other_only() -> None:
    names = [f"t{i:02d}" for i in range(40)]
    metrics = Metrics(CollectorRegistry())
    report, docs = _audit(names, {n: 5 + i for i, n in enumerate(names)}, top=3)

    metrics.observe_report("orders", report)

    exported = _segments(metrics)
    assert set(exported) == {metric_label(f"tenant={n}") for n in ("t39", "t38", "t37")} | {"other"}
    assert exported[metric_label("tenant=t39")] == count(docs, "t39")
    assert sum(exported.values()) == len(docs)
    text = generate_latest(metrics.registry).decode()
    assert not any(name in text for name in names)  # labels never carry a tenant's value


def test_a_segment_that_leaves_the_top_loses_its_series() -> None:
    names = [f"t{i:02d}" for i in range(10)]
    metrics = Metrics(CollectorRegistry())
    first, _ = _audit(names, {n: 5 + i for i, n in enumerate(names)}, top=2)
    second, _ = _audit(names, {n: 20 - i for i, n in enumerate(names)}, top=2)

    metrics.observe_report("orders", first)
    metrics.observe_report("orders", second)

    assert set(_segments(metrics)) == {metric_label("tenant=t00"), metric_label("tenant=t01"), "other"}
    text = generate_latest(metrics.registry).decode()
    assert text.count("argus_segment_documents{") == 3
