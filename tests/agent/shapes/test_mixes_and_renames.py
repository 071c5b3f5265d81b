"""Type mixes (a field written in two forms, an array of mixed elements) and renamed fields."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from argus.agent.findings import Category
from argus.agent.loop import run_audit
from argus.agent.options import AuditOptions
from argus.agent.planners.heuristic import HeuristicPlanner
from tests.agent.shapes.collections import START, customers, renamed_orders


def test_a_field_in_two_forms_is_reported_with_counts_and_when_each_was_last_written(make_target: Any) -> None:
    report = run_audit(make_target(customers(3000, strings_until=900)), HeuristicPlanner())

    assert report.shapes is not None
    address = next(m for m in report.shapes.mixes if m.path == "address")
    assert address.counted == {"object": 2100, "string": 900}
    # over the whole collection, not the sample: document 899 was the last string written
    assert address.last_written == {"string": START + timedelta(minutes=899), "object": START + timedelta(minutes=2999)}


def test_an_array_of_mixed_elements_is_reported_with_counts(make_target: Any) -> None:
    report = run_audit(make_target(customers(3000)), HeuristicPlanner())

    assert report.shapes is not None
    tags = next(m for m in report.shapes.mixes if m.path == "tags")
    assert tags.elements and tags.counted == {"number": 600, "object": 600, "string": 3000}


def test_fields_below_a_field_sometimes_a_string_are_not_missing_where_it_is_one(make_target: Any) -> None:
    report = run_audit(make_target(customers(3000, strings_until=900)), HeuristicPlanner())

    assert [(f.field, f.category) for f in report.findings] == [("address", Category.TYPE_MISMATCH)]


def test_a_rename_is_one_finding_with_its_boundary(make_target: Any) -> None:
    docs = renamed_orders(3000, at=1800)
    for doc in docs:  # names no rule relates: the values and the times tell
        if "customer_id" in doc:
            doc["buyer"] = doc.pop("customer_id")

    report = run_audit(make_target(docs), HeuristicPlanner())

    assert [(f.field, f.category, f.affected_count) for f in report.findings] == [
        ("customerId", Category.SCHEMA_DRIFT, 1800)]
    assert report.findings[0].description == (
        "customerId was renamed buyer around 2026-01-02; 1,800 of 3,000 documents (60.00%) still use the old name "
        "(customerId); newer documents carry buyer")
    assert report.shapes is not None
    [rename] = report.shapes.renames
    assert (rename.old, rename.new) == ("customerId", "buyer")
    assert rename.boundary is not None
    # The boundary is read from the sample (1,000 of the 3,000 documents, one a minute, drawn at random):
    # the nearest sampled documents of each name lie ~3 minutes from it, and 10 minutes away or more in a
    # few runs in a hundred ((2/3)^10 a side; failed once in CI at 11); 30 minutes away is (2/3)^30 a side.
    assert abs(rename.boundary - (START + timedelta(minutes=1800))) <= timedelta(minutes=30)


def test_a_rename_in_strict_mode_quotes_no_value(make_target: Any) -> None:
    report = run_audit(make_target(renamed_orders(3000, at=1800)), HeuristicPlanner(),
                       options=AuditOptions(privacy="strict"))

    [finding] = report.findings
    assert finding.category == Category.SCHEMA_DRIFT and finding.sample_values == []
    assert "CU-" not in report.model_dump_json()


def test_two_names_written_side_by_side_are_no_rename(make_target: Any) -> None:
    docs = renamed_orders(3000, at=3000)
    for i, doc in enumerate(docs):  # one writer in three uses the other name, all along
        if i % 3 == 0:
            doc["buyer"] = doc.pop("customerId")

    report = run_audit(make_target(docs), HeuristicPlanner())

    assert report.shapes is not None and report.shapes.renames == []


def test_a_rename_is_dated_by_the_scope_field_when_ids_carry_no_time(make_target: Any) -> None:
    """Documents keyed by strings, each with its created_at: a scoped audit dates the rename by that field."""
    from argus.agent.clock import ManualClock
    from argus.agent.options import ScopeOptions

    docs = renamed_orders(3000, at=1800)
    for i, doc in enumerate(docs):
        doc["created_at"] = doc["_id"].generation_time
        doc["_id"] = f"O-{i:05d}"
    now = START + timedelta(days=3)
    report = run_audit(make_target(docs), HeuristicPlanner(), clock=ManualClock(now),
                       options=AuditOptions(scope=ScopeOptions(field="created_at", since_s=7 * 86400)))

    assert report.shapes is not None
    [rename] = report.shapes.renames
    assert (rename.old, rename.new) == ("customerId", "customer_id")
    assert rename.boundary is not None
    assert abs(rename.boundary - (START + timedelta(minutes=1800))) <= timedelta(minutes=30)
    assert any(f.category == Category.SCHEMA_DRIFT and f.description.startswith(
        "customerId was renamed customer_id around 2026-01-02") for f in report.findings)
