"""A scoped audit reads only its window of recent documents: the defects inside it are found with
their exact counts, those outside are not, every read carries the window first, and the cost
follows the window when an index leads with its field."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from bson import ObjectId

from argus.agent.clock import ManualClock
from argus.agent.health.models import HealthOptions
from argus.agent.loop import run_audit
from argus.agent.options import AuditOptions, ScopeOptions
from argus.agent.planners.heuristic import HeuristicPlanner
from argus.agent.report import AuditReport
from argus.agent.tools.target import AuditTarget
from argus.agent.window import unusable_filters
from tests.conftest import RecordingCollection, memory_collection

NOW = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)
DAY = 86400.0


def _doc(i: int, created: datetime) -> dict[str, Any]:
    return {"_id": ObjectId.from_datetime(created), "order_no": f"ORD-{100000 + i}", "qty": 1 + (i * 7) % 19,
            "price": round(5 + (i * 37) % 4500 / 100, 2), "status": ("open", "shipped", "delivered")[i % 3],
            "created_at": created}


def orders(old: int = 3000, recent: int = 1000) -> list[dict[str, Any]]:
    """``old`` documents from 30 to 2 days ago, with defects of their own (negative prices, a
    misspelt status), and ``recent`` from the last day with 8 quantities written as text and 5
    negative prices."""
    docs = [_doc(i, NOW - timedelta(days=2) - timedelta(seconds=28 * DAY * i / old)) for i in range(old)]
    for i in range(0, old, 100):
        docs[i]["price"] = -docs[i]["price"]
    for i in range(5, old, 300):
        docs[i]["status"] = "shiped"
    fresh = [_doc(old + i, NOW - timedelta(seconds=DAY * (i + 1) / (recent + 1))) for i in range(recent)]
    for i in range(3, recent, 125):
        fresh[i]["qty"] = str(fresh[i]["qty"])
    for i in range(7, recent, 200):
        fresh[i]["price"] = -fresh[i]["price"]
    return docs + fresh


def _audit(coll: Any, scope: ScopeOptions | None) -> AuditReport:
    clock = ManualClock(NOW)
    # the recent day is ten times busier than the month before: a first-run baseline would say so
    return run_audit(AuditTarget(coll, in_memory=True), HeuristicPlanner(clock=clock), clock=clock,
                     options=AuditOptions(scope=scope, health=HealthOptions(backfill=False)))


def _found(report: AuditReport) -> dict[tuple[str, str], int]:
    return {(f.field, f.category.value): f.affected_count for f in report.findings}


@pytest.fixture
def coll() -> Any:
    c = memory_collection(orders(), "orders", database="shop", indexes=["created_at"])
    return c


def test_a_scoped_audit_finds_the_defects_inside_the_window_and_none_outside(coll: Any) -> None:
    report = _audit(coll, ScopeOptions(field="created_at", since_s=DAY))

    assert report.outcome == "succeeded", report.notes
    assert _found(report) == {("qty", "type_mismatch"): 8, ("price", "outlier_value"): 5}
    assert report.window is not None
    assert (report.window.field, report.window.documents, report.window.indexed) == ("created_at", 1000, True)
    assert report.window.since == NOW - timedelta(days=1)
    assert report.collection_size == 4000
    qty = next(f for f in report.findings if f.field == "qty")
    assert qty.window is not None and qty.window.since == NOW - timedelta(days=1)
    assert qty.affected_pct == pytest.approx(8 / 1000)
    assert qty.description.startswith("8 of 1,000 documents (0.80%)")


def test_the_whole_collection_holds_the_defects_outside_the_window_too(coll: Any) -> None:
    report = _audit(coll, None)

    found = _found(report)
    assert found[("price", "outlier_value")] == 30 + 5 and found[("status", "enum_violation")] == 10
    assert report.window is None


def test_the_window_defaults_to_the_object_id_time_of_id() -> None:
    c = memory_collection(orders(), "orders", database="shop")
    report = _audit(c, ScopeOptions(since_s=DAY))

    assert _found(report) == {("qty", "type_mismatch"): 8, ("price", "outlier_value"): 5}
    assert report.window is not None and (report.window.field, report.window.indexed) == ("_id", True)


def test_every_read_carries_the_window_first(coll: Any) -> None:
    recording = RecordingCollection(coll)
    clock = ManualClock(NOW)
    run_audit(AuditTarget(recording, in_memory=True), HeuristicPlanner(clock=clock), clock=clock,
              options=AuditOptions(scope=ScopeOptions(field="created_at", since_s=DAY),
                                   health=HealthOptions(enabled=False)))  # health reads the whole collection
    window = {"created_at": {"$gte": NOW - timedelta(days=1)}}

    reads = [(name, args) for name, args in recording.reads if name in ("aggregate", "count_documents", "find")]
    assert len(reads) >= 6
    # the first counts the window itself; the next two the documents no window holds (the whole collection's)
    assert [args[0] for _, args in reads[1:3]] == list(unusable_filters("created_at"))
    for name, args in reads[3:]:
        if name == "aggregate":
            assert args[0][0] == {"$match": window}, args[0][:1]
        else:
            assert args[0] == window or args[0]["$and"][0] == window, args[0]


def test_the_cost_follows_the_window_when_an_index_leads_with_its_field(coll: Any) -> None:
    report = _audit(coll, ScopeOptions(field="created_at", since_s=DAY))
    cost = report.database_cost

    # The two counts of the documents no window holds read the whole collection (4,000), on every run.
    passes = [op for op in cost.operations if op.full_pass]
    whole = [op for op in passes if op.documents_examined == 4000]
    assert len(whole) == 2 and all(op.kind == "count_documents" for op in whole)
    windowed = [op for op in passes if op not in whole]
    assert windowed and all(op.documents_examined == 1000 for op in windowed)
    assert cost.documents_examined == 1000 * len(windowed) + 8000 + report.documents_sampled


def test_without_an_index_on_the_field_each_pass_still_reads_the_collection_and_the_report_says_so() -> None:
    c = memory_collection(orders(), "orders", database="shop")
    report = _audit(c, ScopeOptions(field="created_at", since_s=DAY))

    assert report.window is not None and report.window.indexed is False
    assert all(op.documents_examined == 4000 for op in report.database_cost.operations if op.full_pass)
    assert "no index leads with created_at: each pass of this scoped audit still reads the whole collection; an " \
           "index on {created_at: 1} makes it read only the window's documents" in report.notes


def test_a_scope_without_a_field_on_a_collection_without_object_ids_fails_saying_what_to_name() -> None:
    c = memory_collection([{"_id": i, "qty": i} for i in range(50)], "orders", database="shop")
    report = _audit(c, ScopeOptions(since_s=DAY))

    assert report.outcome == "failed"
    assert report.error == ("the audit's window could not be opened: scope needs a field: _id here is a int, not an "
                            "ObjectId with a creation time; name a date field (scope: {field: created_at, since: 24h})")


def test_documents_no_window_can_hold_are_counted_noted_and_reported_on_the_scope_field() -> None:
    """100 documents without ``updated`` and 100 holding the string "yesterday" are in no window: a rule on
    ``updated`` never saw them. Each scoped run says how many, with a finding on the field itself."""
    from argus.agent.engine import MemoryCollection

    docs: list[dict[str, Any]] = [{"_id": i, "status": "paid", "updated": NOW - timedelta(days=i % 60)}
                                  for i in range(200, 2000)]
    docs += [{"_id": i, "status": "paid"} for i in range(100)]
    docs += [{"_id": i, "status": "paid", "updated": "yesterday"} for i in range(100, 200)]
    report = _audit(MemoryCollection.of(docs), ScopeOptions(field="updated", since_s=30 * DAY))

    assert report.window is not None and (report.window.missing, report.window.not_dates) == (100, 100)
    assert ("100 lack updated and 100 hold a value of updated that is not a date (of 2,000 documents): they are in "
            "no window, so no scoped run audits them; see the finding on updated") in report.notes
    found = {(f.field, f.category.value): (f.affected_count, f.evidence_query, f.window) for f in report.findings}
    assert found[("updated", "null_rate")] == (100, {"updated": None}, None)
    assert found[("updated", "type_mismatch")] == (
        100, {"updated": {"$exists": True, "$ne": None, "$not": {"$type": "date"}}}, None)


def test_a_scoped_run_whose_documents_all_hold_a_date_says_none_is_left_out(coll: Any) -> None:
    report = _audit(coll, ScopeOptions(field="created_at", since_s=DAY))
    assert report.window is not None and (report.window.missing, report.window.not_dates) == (0, 0)
    assert not [f for f in report.findings if f.field == "created_at"]
