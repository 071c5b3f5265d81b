"""A check the server refuses costs only itself: a server that refused the comparisons of a Decimal128
field once dropped every check of the collection while the run said 'succeeded'. The run is partial:
absence proves nothing for the checks that did not run. The in-process engine compares Decimal128
with every number, as MongoDB does (the manual: numeric types compare by value), so there every
check is answered."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from bson import Decimal128

from argus.agent.clock import ManualClock
from argus.agent.loop import run_audit
from argus.agent.planners.heuristic import HeuristicPlanner
from argus.agent.tools.target import AuditTarget
from tests.agent.planners.heuristic.growing import NOW
from tests.agent.tools.engine_server import EngineServer, Refusal
from tests.conftest import memory_collection


def _catalog() -> list[dict[str, Any]]:
    docs = [{"sku": f"SKU-{i:05d}", "name": f"Garden chair model {i}",
             "unit_price": Decimal128(Decimal(f"{1 + (i * 37) % 4900 / 100:.2f}"))} for i in range(600)]
    for i in range(0, 600, 50):
        docs[i]["name"] = "N/A"
    return docs


def _decimal_comparisons(name: str, doc: dict[str, Any]) -> Refusal | None:
    text = str(doc.get("pipeline") or doc.get("filter") or "")
    if "unit_price" in text and any(op in text for op in ("$gt", "$lt")):
        return Refusal("cannot compare values of type decimal", 2)
    return None


def test_a_decimal_field_the_server_cannot_compare_leaves_the_other_checks_standing() -> None:
    server = EngineServer(_catalog(), database="shop", collection="catalog", refusals=[_decimal_comparisons])
    server.start()
    try:
        target = server.target()
        report = run_audit(target, HeuristicPlanner(clock=ManualClock(NOW)), clock=ManualClock(NOW))
    finally:
        server.close()

    found = {f.field: f.affected_count for f in report.findings}
    assert found.get("name") == 12, found     # the placeholders, whether as placeholders or off-format
    refused = [t.observation for t in report.trace if "refused" in t.observation]
    assert refused and all("unit_price" in note for note in refused)
    # not every check ran, so this run must not resolve earlier findings of unit_price
    assert report.outcome == "partial" and report.termination_reason == "concluded"
    assert any("refused" in n and "unit_price" in n for n in report.notes)


def test_the_in_process_engine_answers_every_check_of_a_decimal_field() -> None:
    coll = memory_collection(_catalog(), "catalog", database="shop")
    report = run_audit(AuditTarget(coll), HeuristicPlanner(clock=ManualClock(NOW)), clock=ManualClock(NOW))

    assert {f.field: f.affected_count for f in report.findings}.get("name") == 12
    assert (report.outcome, report.unanswered_checks) == ("succeeded", [])
