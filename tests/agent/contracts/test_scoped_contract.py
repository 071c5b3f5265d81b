"""A contract on a scoped audit: field rules speak of the window's documents, as findings do;
``documents`` speaks of the collection, which a window of recent documents is not."""

from __future__ import annotations

from pathlib import Path

from argus.agent.clock import ManualClock
from argus.agent.health.models import HealthOptions
from argus.agent.loop import run_audit
from argus.agent.options import AuditOptions, ScopeOptions
from argus.agent.planners.factory import make_planner
from argus.agent.report import AuditReport
from argus.agent.tools.target import AuditTarget
from argus.config.contracts import load_contract
from tests.agent.test_scope import DAY, NOW, orders
from tests.conftest import memory_collection


def _scoped(tmp_path: Path, contract: str) -> AuditReport:
    coll = memory_collection(orders(old=3000, recent=1000), "orders", database="shop")
    path = tmp_path / "orders.yaml"
    path.write_text(contract)
    setup = make_planner("heuristic")
    return run_audit(AuditTarget(coll, in_memory=True), setup.planner, gates=setup.gates, clock=ManualClock(NOW),
                     options=AuditOptions(scope=ScopeOptions(field="created_at", since_s=DAY),
                                          health=HealthOptions(backfill=False)),
                     contract=load_contract(path, shown_as="orders.yaml"))


def test_documents_is_judged_on_the_collection_and_field_rules_on_the_window(tmp_path: Path) -> None:
    report = _scoped(tmp_path, "documents: {min: 2000}\nfields:\n  price: {min: 0}\n")
    assert report.contract is not None
    results = {(r.field, r.rule): (r.result, r.count) for r in report.contract.rules}
    # 4,000 documents in the collection, 1,000 in the window: the collection meets its minimum
    assert results[("(collection)", "documents")] == ("passed", 0), results
    # the window's 5 negative prices, not the 30 older ones
    assert results[("price", "min")] == ("failed", 5), results
    assert {f.category.value for f in report.findings if f.field == "(collection)"} == set()
