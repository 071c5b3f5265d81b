"""A scoped audit over real pymongo and TCP: what goes on the wire carries the window first (a
``$match`` leading every pipeline, the filter of every ``find`` and count), also in the fallbacks of
a server that refuses ``$facet`` and ``$sample``; ``listIndexes`` is asked once; the findings are
the in-memory scoped run's on the same documents."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest

from argus.agent.clock import ManualClock
from argus.agent.health.models import HealthOptions
from argus.agent.loop import run_audit
from argus.agent.options import AuditOptions, ScopeOptions
from argus.agent.planners.heuristic import HeuristicPlanner
from argus.agent.report import AuditReport
from argus.agent.tools.target import AuditTarget
from argus.agent.window import unusable_filters
from tests.agent.tools.engine_server import EngineServer, refuse
from tests.agent.tools.refusing_data import DOCS, NOW
from tests.conftest import memory_collection

SCOPE = ScopeOptions(field="created_at", since_s=25 * 86400.0)  # the last 300 of the 600 orders
WINDOW = {"created_at": {"$gte": (NOW - timedelta(days=25)).replace(tzinfo=None)}}  # as the server decodes it
REFUSALS = {
    "none": [],
    "$facet and $sample": [refuse("$facet", "Unrecognized pipeline stage name: '$facet'", 40324),
                           refuse("$sample", "Unrecognized pipeline stage name: '$sample'", 40324)],
}


@pytest.fixture
def servers() -> Iterator[list[EngineServer]]:
    started: list[EngineServer] = []
    yield started
    for server in started:
        server.close()


def _run(target: AuditTarget) -> AuditReport:
    clock = ManualClock(NOW)
    return run_audit(target, HeuristicPlanner(clock=clock), clock=clock,
                     options=AuditOptions(scope=SCOPE, time_budget_s=60.0, health=HealthOptions(enabled=False)))


def _found(report: AuditReport) -> dict[tuple[str, str], int]:
    return {(f.field, f.category.value): f.affected_count for f in report.findings}


def _in_memory() -> AuditReport:
    coll = memory_collection([dict(d) for d in DOCS], "orders", database="db", indexes=["created_at"])
    return _run(AuditTarget(coll, in_memory=True))


def _leads_with_window(value: Any) -> bool:
    value = dict(value or {})
    return value == WINDOW or (list(value) == ["$and"] and value["$and"][0] == WINDOW)


@pytest.mark.parametrize("refused", list(REFUSALS))
def test_every_read_on_the_wire_leads_with_the_window_and_finds_what_the_in_memory_run_finds(
        servers: list[EngineServer], refused: str) -> None:
    server = EngineServer(DOCS, collection="orders", indexes=["created_at"], refusals=REFUSALS[refused])
    server.start()
    servers.append(server)
    target = server.target()
    report = _run(target)
    expected = _in_memory()

    assert report.outcome == "succeeded", report.notes
    assert _found(report) == _found(expected)
    assert _found(report)[("qty", "type_mismatch")] == 3 and _found(report)[("price", "outlier_value")] == 2
    assert ("order_no", "duplicate_value") not in _found(report)  # the duplicate is older than the window
    assert report.window is not None and (report.window.documents, report.window.indexed) == (300, True)
    assert len(server.commands("listIndexes")) == 1

    # Two counts of the whole collection, by design: the documents no window holds (argus.agent.tools.window).
    outside = [[{"$match": f}] for f in unusable_filters("created_at")]
    pipelines = [doc["pipeline"] for doc in server.commands("aggregate")]
    assert [p[:1] for p in pipelines if p[:1] in outside] == outside
    pipelines = [p for p in pipelines if p[:1] not in outside]
    finds = server.commands("find")
    assert pipelines and all(p and list(p[0]) == ["$match"] and _leads_with_window(p[0]["$match"])
                             for p in pipelines), [p[:1] for p in pipelines if not _leads_with_window(p[0]["$match"])]
    assert all(_leads_with_window(doc.get("filter")) for doc in finds)
    if refused != "none":
        assert sum(1 for p in pipelines if any("$facet" in stage for stage in p)) == 1  # learned once
        assert any(doc.get("sort") == {"_id": 1} for doc in finds)  # the find-based sample, windowed too
