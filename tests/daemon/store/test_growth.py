"""A pattern creeping up by less than the growth factor per run is still regressed."""

from __future__ import annotations

from argus.daemon.record import record_report
from argus.daemon.store import PostgresStore
from tests.daemon.store.reports import finding, report


def test_slow_growth_is_regressed_once_past_the_factor_over_its_smallest_share(store: PostgresStore) -> None:
    statuses = []
    for minutes, count in enumerate([50, 70, 95, 130, 130, 120]):
        stored = record_report(store, report([finding("dose", "outlier_value", count=count)], minutes=minutes))
        assert stored.diff is not None
        statuses.append(stored.diff.entries[0].status)
    assert statuses == ["new", "persisting", "regressed", "regressed", "persisting", "persisting"]


def test_the_smallest_share_is_taken_from_the_last_runs_only(store: PostgresStore) -> None:
    for minutes, count in enumerate([10, 60, 60, 60]):
        record_report(store, report([finding("dose", "outlier_value", count=count)], minutes=minutes))
    stored = record_report(store, report([finding("dose", "outlier_value", count=80)], minutes=5), baseline_runs=3)
    assert stored.diff is not None and stored.diff.entries[0].status == "persisting"
