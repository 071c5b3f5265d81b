"""A check the engine cannot run costs only itself: the in-memory engine cannot compare Decimal128
values, and that once dropped every check of the collection while the run said 'succeeded'. The
run is partial: absence proves nothing for the checks that did not run."""

from __future__ import annotations

from decimal import Decimal

import mongomock
from bson import Decimal128

from agent.clock import ManualClock
from agent.loop import run_audit
from agent.planners.heuristic import HeuristicPlanner
from agent.tools.target import AuditTarget
from tests.agent.planners.heuristic.growing import NOW


def test_a_decimal_field_the_engine_cannot_compare_leaves_the_other_checks_standing() -> None:
    docs = [{"sku": f"SKU-{i:05d}", "name": f"Garden chair model {i}",
             "unit_price": Decimal128(Decimal(f"{1 + (i * 37) % 4900 / 100:.2f}"))} for i in range(600)]
    for i in range(0, 600, 50):
        docs[i]["name"] = "N/A"
    coll = mongomock.MongoClient()["shop"]["catalog"]
    coll.insert_many(docs)
    report = run_audit(AuditTarget(coll), HeuristicPlanner(clock=ManualClock(NOW)), clock=ManualClock(NOW))

    found = {f.field: f.affected_count for f in report.findings}
    assert found.get("name") == 12, found     # the placeholders, whether as placeholders or off-format
    refused = [t.observation for t in report.trace if "refused" in t.observation]
    assert refused and all("unit_price" in note for note in refused)
    # not every check ran, so this run must not resolve earlier findings of unit_price
    assert report.outcome == "partial" and report.termination_reason == "concluded"
    assert any("refused" in n and "unit_price" in n for n in report.notes)
