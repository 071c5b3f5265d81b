"""What a run is compared with: the previous run that did not fail, partial or not, for what it did
check; scoped runs with scoped runs of the same window, full audits with full audits; and only a
full audit that completed calls a defect gone."""

from __future__ import annotations

from datetime import timedelta

from argus.agent.report import AuditReport
from argus.agent.window import AuditWindow
from argus.daemon.metrics import Metrics
from argus.daemon.record import record_report
from argus.daemon.store import PostgresStore
from tests.daemon.store.reports import T0, finding, report


def _changes(stored: AuditReport) -> dict[str, str]:
    assert stored.diff is not None
    return {e.field: e.status for e in stored.diff.entries}


def _window(documents: int = 1000, span_s: float = 86400.0, minutes: int = 0) -> AuditWindow:
    return AuditWindow(field="created_at", since=T0 + timedelta(minutes=minutes) - timedelta(seconds=span_s),
                       span_s=span_s, documents=documents, indexed=True)


def test_two_partial_runs_in_a_row_do_not_make_the_same_findings_new_again(store: PostgresStore) -> None:
    metrics = Metrics()
    first = record_report(store, report([finding("zip"), finding("age", "outlier_value")], outcome="partial",
                                     schedule="orders"))
    second = record_report(store, report([finding("zip"), finding("age", "outlier_value")], outcome="partial",
                                      minutes=5, schedule="orders"))
    for stored in (first, second):
        metrics.observe_diff("orders", stored)

    assert second.diff is not None and second.diff.previous_run_id == first.run_id
    assert _changes(second) == {"zip": "persisting", "age": "persisting"}
    assert metrics.sample("argus_findings_new_total", {"schedule": "orders", "severity": "medium"}) == 2


def test_a_partial_run_is_the_baseline_for_what_it_checked_and_the_complete_run_before_for_the_rest(
        store: PostgresStore) -> None:
    record_report(store, report([finding("zip"), finding("age", "outlier_value")]))
    partial = record_report(store, report([finding("zip", count=90)], outcome="partial", minutes=5))
    latest = record_report(store, report([finding("zip", count=90)], minutes=10))

    assert latest.diff is not None and latest.diff.previous_run_id == partial.run_id
    assert _changes(latest) == {"zip": "persisting", "age": "resolved"}  # age: unchecked by the partial run


def test_a_defect_found_only_by_a_partial_run_is_resolved_by_the_next_complete_run(store: PostgresStore) -> None:
    record_report(store, report([]))
    record_report(store, report([finding("tier", "enum_violation")], outcome="partial", minutes=5))
    latest = record_report(store, report([], minutes=10))

    assert _changes(latest) == {"tier": "resolved"}


def test_a_scoped_run_is_compared_with_the_previous_scoped_run(store: PostgresStore) -> None:
    record_report(store, report([finding("qty", count=400, size=5000)]))  # a full audit: 8% of the collection
    first = record_report(store, report([finding("qty", count=8, size=1000)], minutes=60, window=_window(minutes=60)))
    second = record_report(store, report([finding("qty", count=80, size=1000)], minutes=120,
                                      window=_window(minutes=120)))

    assert first.diff is not None and first.diff.previous_run_id is None
    assert _changes(first) == {"qty": "persisting"}  # tracked since the full audit, shares not comparable
    assert second.diff is not None and second.diff.previous_run_id == first.run_id
    assert _changes(second) == {"qty": "regressed"}  # 0.8% -> 8% of the window


def test_a_defect_gone_from_the_window_stays_tracked_until_a_full_audit_confirms_it_gone(
        store: PostgresStore) -> None:
    record_report(store, report([finding("qty", count=8, size=1000)], window=_window()))
    quiet = record_report(store, report([], minutes=60, window=_window(minutes=60)))
    back = record_report(store, report([finding("qty", count=8, size=1000)], minutes=120, window=_window(minutes=120)))
    full = record_report(store, report([], minutes=180))
    again = record_report(store, report([finding("qty", count=8, size=1000)], minutes=240, window=_window(minutes=240)))

    assert _changes(quiet) == {} and quiet.diff is not None and not quiet.diff.complete
    assert _changes(back) == {"qty": "persisting"}
    assert _changes(full) == {"qty": "resolved"}
    assert _changes(again) == {"qty": "new"}


def test_the_time_of_the_last_full_audit_is_kept(store: PostgresStore) -> None:
    from argus.daemon.store import CollectionRef

    ref = CollectionRef("main", "shop", "orders")
    assert store.last_full_audit(ref) is None
    record_report(store, report([], minutes=30))
    record_report(store, report([], minutes=60, window=_window(minutes=60)))
    record_report(store, report([], minutes=90, outcome="failed"))
    assert store.last_full_audit(ref) == T0 + timedelta(minutes=30)
