"""A statistic the server did not answer decides nothing: a fence's gap is measured by two statistics
(the values beyond it, the values inside it), and when the one inside timed out, products' live audit
on DocumentDB reported a clean field as outliers (a batched pass of statistics had timed out and been
split until that statistic stood alone, and it timed out there too). No answer is not "no value
inside the fence": the fence gets no verdict, and the run is partial, naming the field."""

from __future__ import annotations

import random
from typing import Any

from argus.agent.clock import ManualClock
from argus.agent.loop import run_audit
from argus.agent.planners.heuristic import HeuristicPlanner
from argus.agent.tools.target import AuditTarget
from tests.agent.planners.heuristic.growing import NOW
from tests.agent.tools.engine_server import EngineServer, Refusal, uses
from tests.conftest import memory_collection


def _gauges() -> list[dict[str, Any]]:
    """Clean readings with tails that thin out gradually (no gap): whatever the sample, some values lie
    beyond the fences its bulk sets, so each fence's gap is measured."""
    rng = random.Random(5)
    return [{"_id": i, "level": round(50 + rng.choice((-1, 1)) * rng.expovariate(0.2), 3)} for i in range(3000)]


def _inside_the_fences_times_out(name: str, doc: dict[str, Any]) -> Refusal | None:
    """The values inside a fence (the smallest at or above a lower one, the largest at or below an upper
    one), wherever they are asked (in a batch or alone), run past the time limit: error 50, as DocumentDB
    answers a query stopped at its maxTimeMS."""
    if name == "aggregate" and ((uses(doc, "$min") and uses(doc, "$gte")) or (uses(doc, "$max") and uses(doc, "$lte"))):
        return Refusal("operation exceeded time limit", 50)
    return None


def test_a_fence_whose_inside_statistic_timed_out_finds_no_outlier() -> None:
    server = EngineServer(_gauges(), database="plant", collection="gauges",
                          refusals=[_inside_the_fences_times_out])
    server.start()
    try:
        target = server.target()
        report = run_audit(target, HeuristicPlanner(clock=ManualClock(NOW)), clock=ManualClock(NOW))
    finally:
        server.close()

    timed_out = [o for o in report.database_cost.operations if o.error == "QueryTimeout"]
    assert len(timed_out) >= 2  # the batch of statistics, split until the one that timed out stood alone
    assert [(f.field, f.category.value) for f in report.findings] == []
    assert report.outcome == "partial"
    assert any("level (timed out)" in note for note in report.notes), report.notes


def test_the_same_readings_audited_in_process_are_clean() -> None:
    coll = memory_collection(_gauges(), "gauges", database="plant")
    report = run_audit(AuditTarget(coll), HeuristicPlanner(clock=ManualClock(NOW)), clock=ManualClock(NOW))

    assert (report.outcome, report.findings) == ("succeeded", [])
