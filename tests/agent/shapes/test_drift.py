"""Shapes against the collection's history: a new shape is a finding, a vanished one a note."""

from __future__ import annotations

from typing import Any

from argus.agent.findings import Category
from argus.agent.history import HistoricalContext
from argus.agent.loop import run_audit
from argus.agent.options import AuditOptions
from argus.agent.planners.heuristic import HeuristicPlanner
from tests.agent.shapes.collections import payments


def _wallets_for_cash() -> list[dict[str, Any]]:
    docs = payments(2000)
    for doc in docs:
        if doc["method"] == "cash":
            doc["method"], doc["wallet"] = "wallet", {"provider": "pay-app"}
    return docs


def test_a_new_shape_is_schema_drift_naming_it_and_a_vanished_one_a_note(make_target: Any) -> None:
    before = run_audit(make_target(payments(2000)), HeuristicPlanner()).shapes
    assert before is not None

    report = run_audit(make_target(_wallets_for_cash()), HeuristicPlanner(),
                       historical_context=HistoricalContext(runs_considered=1, shapes=[before]))

    [finding] = [f for f in report.findings if f.category == Category.SCHEMA_DRIFT]
    assert (finding.field, finding.affected_count, finding.evidence_query) == ("method", 60, {"method": "wallet"})
    assert finding.description == ("60 of 2,000 documents (3.00%) are of shape wallet (by method), which none of "
                                   "the 1 earlier runs saw")
    assert "shape cash (by method), seen in each of the 1 earlier runs, is not in this run's sample" in report.notes


def test_shapes_are_matched_by_their_paths_when_strict_mode_stored_no_value(make_target: Any) -> None:
    strict = AuditOptions(privacy="strict")
    before = run_audit(make_target(payments(2000)), HeuristicPlanner(), options=strict).shapes
    assert before is not None and before.shapes[0].value is None

    same = run_audit(make_target(payments(2000, seed=8)), HeuristicPlanner(), options=strict,
                     historical_context=HistoricalContext(runs_considered=1, shapes=[before]))
    new = run_audit(make_target(_wallets_for_cash()), HeuristicPlanner(), options=strict,
                    historical_context=HistoricalContext(runs_considered=1, shapes=[before]))

    assert [f for f in same.findings if f.category == Category.SCHEMA_DRIFT] == []
    [finding] = [f for f in new.findings if f.category == Category.SCHEMA_DRIFT]
    assert finding.description == ("60 of 2,000 documents (3.00%) are of shape #3 (by method), which none of "
                                   "the 1 earlier runs saw")
