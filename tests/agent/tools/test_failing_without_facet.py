"""A server that refuses ``$facet``: each evidence check is asked with ``find``, and the failing
documents come from that same ``find`` (the examples' read), not from one more."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from argus.agent.clock import ManualClock
from argus.agent.health.models import HealthOptions
from argus.agent.loop import run_audit
from argus.agent.options import AuditOptions
from argus.agent.planners.heuristic import HeuristicPlanner
from argus.agent.report import AuditReport
from tests.agent.tools.engine_server import EngineServer, refuse
from tests.agent.tools.refusing_data import DOCS, NOW

FACET = ("$facet", "Unrecognized pipeline stage name: '$facet'", 40324)


@pytest.fixture
def servers() -> Iterator[list[EngineServer]]:
    started: list[EngineServer] = []
    yield started
    for server in started:
        server.close()


def _audit(servers: list[EngineServer], failing: int, refused: bool) -> tuple[AuditReport, EngineServer]:
    server = EngineServer(DOCS, collection="orders", refusals=[refuse(*FACET)] if refused else [])
    server.start()
    servers.append(server)
    target = server.target()
    clock = ManualClock(NOW)
    options = AuditOptions(time_budget_s=60.0, privacy="full", failing_documents=failing,
                           health=HealthOptions(backfill=False))
    return run_audit(target, HeuristicPlanner(clock=clock), clock=clock, options=options), server


def _ids(report: AuditReport) -> dict[tuple[str, str], list[object]]:
    return {(f.field, f.category.value): [d.id for d in f.failing.documents] for f in report.findings if f.failing}


def test_without_facet_the_failing_documents_ride_in_the_examples_find(servers: list[EngineServer]) -> None:
    batched, _ = _audit(servers, 20, refused=False)
    alone, server = _audit(servers, 20, refused=True)
    none, server_without = _audit(servers, 0, refused=True)
    assert _ids(alone) == _ids(batched) and _ids(alone) and not _ids(none)
    assert all(len(f.failing.documents) == min(20, f.affected_count) for f in alone.findings if f.failing)
    assert len(server.commands("find")) == len(server_without.commands("find"))
