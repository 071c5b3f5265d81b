"""Audits of polymorphic collections: the report's shapes section, and rules judged per shape."""

from __future__ import annotations

import json
from typing import Any

from argus.agent.findings import Category
from argus.agent.loop import run_audit
from argus.agent.options import AuditOptions
from argus.agent.planners.heuristic import HeuristicPlanner
from argus.daemon.record import record_report
from argus.daemon.store import CollectionRef
from tests.agent.shapes.collections import payments


def test_the_report_names_the_shapes_with_their_exact_shares(make_target: Any) -> None:
    report = run_audit(make_target(payments(2000)), HeuristicPlanner())

    assert report.shapes is not None and report.shapes.discriminator == "method"
    assert [(s.label, s.count) for s in report.shapes.shapes] == [("card", 1200), ("iban", 740), ("cash", 60)]
    assert json.loads(report.model_dump_json())["shapes"]["shapes"][1]["specific"] == ["bic", "iban"]


def test_strict_privacy_names_shapes_by_index_and_writes_no_value(make_target: Any) -> None:
    report = run_audit(make_target(payments(2000, missing_iban=9)), HeuristicPlanner(),
                       options=AuditOptions(privacy="strict"))

    assert report.shapes is not None
    assert report.shapes.summary() == ("3 shapes by `method`: #1 60% (card, card.brand, card.last4), "
                                       "#2 37% (bic, iban), #3 3%")
    written = report.model_dump_json()
    assert '"cash"' not in written and '"method":"card"' not in written and '"label":"card"' not in written
    assert all(s.value is None for s in report.shapes.shapes) and report.shapes.masked


def test_a_missing_value_inside_its_shape_is_found_with_its_exact_count(make_target: Any) -> None:
    report = run_audit(make_target(payments(2000, missing_iban=9)), HeuristicPlanner())

    [finding] = [f for f in report.findings if f.category == Category.NULL_RATE]
    assert (finding.field, finding.affected_count) == ("iban", 9)
    assert finding.evidence_query == {"method": "iban", "iban": None}
    assert finding.description == ("9 of 740 documents of shape iban (by method) (1.22%) have no value for iban, "
                                   "which the shape's other documents carry")


def test_a_field_of_one_shape_is_not_reported_missing_in_the_others(make_target: Any) -> None:
    # 72 of each hundred pay by IBAN: without shapes, iban and bic are "missing" in the 28% that do not
    report = run_audit(make_target(payments(2000, cards=25, ibans=72)), HeuristicPlanner())

    assert [(f.field, f.category) for f in report.findings] == []


def test_shapes_ride_in_the_passes_an_audit_makes_anyway(make_target: Any) -> None:
    shaped = run_audit(make_target(payments(2000, missing_iban=9)), HeuristicPlanner())
    one_shape = payments(2000)
    for i, doc in enumerate(one_shape):
        if i % 200 == 3:
            del doc["amount"]  # one collection-wide finding instead of one inside a shape
    plain = run_audit(make_target(one_shape), HeuristicPlanner())

    assert len(shaped.findings) == len(plain.findings) == 1
    assert shaped.database_cost.passes == plain.database_cost.passes == 4


def test_the_stored_run_keeps_the_shapes(make_target: Any, store: Any) -> None:
    report = run_audit(make_target(payments(2000)), HeuristicPlanner())

    record_report(store, report)
    stored = store.get_report(report.run_id).shapes

    assert stored is not None and stored.summary() == ("3 shapes by `method`: card 60% (card, card.brand, "
                                                       "card.last4), iban 37% (bic, iban), cash 3%")
    assert [s.count for s in stored.shapes] == [1200, 740, 60]
    # the next audit of the collection compares its shapes with these
    history = store.history(CollectionRef(report.connection, report.database, report.collection))
    assert [h.summary() for h in history.shapes] == [stored.summary()]
