"""The history store against a real PostgreSQL: whole reports, diffs, patterns, context, labels."""

from __future__ import annotations

import threading
from datetime import timedelta

import psycopg
import pytest

from argus.agent.history import fingerprint
from argus.daemon.record import record_report
from argus.daemon.store import CollectionRef, NotFound, PostgresStore, StoreError, StoreUnavailable
from argus.daemon.store.migrations import MIGRATIONS, migrate
from tests.daemon.store.reports import T0, finding, report

REF = CollectionRef("main", "shop", "orders")


def test_report_round_trips_whole(store: PostgresStore) -> None:
    original = report([finding("zip"), finding("age", "outlier_value", "high", 12)],
                      dismissed=[(finding("email", "format_violation"), "never run")])
    stored = record_report(store, original)
    loaded = store.get_report(original.run_id)
    assert loaded == stored
    assert loaded.findings == original.findings and loaded.dismissed_findings == original.dismissed_findings


def test_every_part_lands_in_its_table(store: PostgresStore, pg_dsn: str) -> None:
    r = record_report(store, report([finding("zip")], dismissed=[(finding("email", "format_violation"), "why")]))
    with psycopg.connect(pg_dsn) as conn:
        run = conn.execute("select outcome, planner, input_tokens, collection from runs where id = %s",
                           (r.run_id,)).fetchone()
        f = conn.execute("select field, fingerprint, diff_status from findings where run_id = %s",
                         (r.run_id,)).fetchone()
        d = conn.execute("select field, critique from dismissed_findings where run_id = %s", (r.run_id,)).fetchone()
        e = conn.execute("select gate, verdict from gate_evaluations where run_id = %s", (r.run_id,)).fetchone()
    assert run == ("succeeded", "heuristic", 0, "orders")
    assert f == ("zip", fingerprint("main", "shop", "orders", "zip", "null_rate"), "new")
    assert d == ("email", "why") and e == ("action", "PASS")


def test_failed_run_is_recorded_with_its_error(store: PostgresStore) -> None:
    r = record_report(store, report(outcome="failed"))
    [summary] = store.list_runs()
    assert (summary.id, summary.outcome, summary.error) == (r.run_id, "failed", "boom")


def test_a_report_that_cannot_be_stored_leaves_nothing(store: PostgresStore, pg_dsn: str) -> None:
    twin = finding("zip")
    broken = report([twin, twin.model_copy(update={"field": "other"})])   # two findings, one id: a key violation
    with pytest.raises(StoreError):
        record_report(store, broken)
    with psycopg.connect(pg_dsn) as conn:
        counts = [conn.execute(f"select count(*) from {t}").fetchone()[0]
                  for t in ("runs", "findings", "gate_evaluations", "patterns")]
    assert counts == [0, 0, 0, 0]


def test_storing_the_same_run_twice_keeps_one(store: PostgresStore) -> None:
    r = report([finding("zip")])
    record_report(store, r)
    record_report(store, r)
    assert len(store.list_runs()) == 1


def test_first_run_is_all_new_second_identical_run_is_all_persisting(store: PostgresStore) -> None:
    first = record_report(store, report([finding("zip"), finding("age", "outlier_value")]))
    second = record_report(store, report([finding("zip"), finding("age", "outlier_value")], minutes=10))
    assert first.diff is not None and first.diff.previous_run_id is None
    assert first.diff.counts()["new"] == 2
    assert second.diff is not None and second.diff.previous_run_id == first.run_id
    assert second.diff.counts() == {"new": 0, "resolved": 0, "persisting": 2, "regressed": 0, "improved": 0}


def test_fixed_and_added_defects_are_resolved_and_new(store: PostgresStore) -> None:
    record_report(store, report([finding("zip"), finding("age", "outlier_value")]))
    third = record_report(store, report([finding("zip"), finding("email", "format_violation")], minutes=10))
    assert third.diff is not None
    assert [(e.field, e.status) for e in third.diff.entries] == [("zip", "persisting"), ("email", "new"),
                                                                 ("age", "resolved")]


def test_regressed_and_improved(store: PostgresStore) -> None:
    record_report(store, report([finding("zip", count=50), finding("age", "outlier_value", "high", 100),
                              finding("tier", "enum_violation", count=100)]))
    later = record_report(store, report([finding("zip", count=80), finding("age", "outlier_value", "critical", 100),
                                      finding("tier", "enum_violation", count=60)], minutes=5))
    assert later.diff is not None
    assert {e.field: e.status for e in later.diff.entries} == {"zip": "regressed", "age": "regressed",
                                                                "tier": "improved"}


def test_diff_is_against_the_previous_run_that_did_not_fail(store: PostgresStore) -> None:
    record_report(store, report([finding("zip")]))
    partial = record_report(store, report([finding("zip")], outcome="partial", minutes=6))
    record_report(store, report(outcome="failed", minutes=8))
    latest = record_report(store, report([finding("zip")], minutes=10))
    assert latest.diff is not None and latest.diff.previous_run_id == partial.run_id
    assert [e.status for e in latest.diff.entries] == ["persisting"]


def test_a_partial_run_calls_nothing_resolved(store: PostgresStore) -> None:
    record_report(store, report([finding("zip"), finding("age", "outlier_value")]))
    partial = record_report(store, report([finding("zip")], outcome="partial", minutes=5))
    assert partial.diff is not None and not partial.diff.complete
    assert partial.diff.by_status("resolved") == []


def test_new_persistent_only_on_the_run_where_the_pattern_becomes_persistent(store: PostgresStore) -> None:
    runs = [record_report(store, report([finding("zip")], minutes=m)) for m in (0, 10, 20)]
    flags = [[e.new_persistent for e in r.diff.entries] for r in runs if r.diff]
    assert flags == [[False], [True], [False]]


def test_a_pattern_dismissed_then_committed_becomes_persistent(store: PostgresStore) -> None:
    record_report(store, report(dismissed=[(finding("zip"), "count differs")]))
    second = record_report(store, report([finding("zip")], minutes=10))
    assert second.diff is not None and second.diff.entries[0].new_persistent


def test_history_separates_persistent_one_off_stable_and_drifting(store: PostgresStore) -> None:
    for minutes, zip_count, age_count in ((0, 50, 10), (10, 52, 40), (20, 51, 90)):
        record_report(store, report([finding("zip", count=zip_count), finding("age", "outlier_value", count=age_count)],
                                 minutes=minutes))
    record_report(store, report([finding("zip", count=50), finding("email", "format_violation")], minutes=30))
    context = store.history(REF)
    persistent = {p.field: p for p in context.persistent}
    assert set(persistent) == {"zip", "age"} and [p.field for p in context.one_off] == ["email"]
    assert not persistent["zip"].drifting and persistent["age"].drifting
    assert persistent["zip"].runs_seen == 4 and context.runs_considered == 4


def test_history_uses_only_the_last_n_runs(store: PostgresStore) -> None:
    record_report(store, report([finding("old")]))
    for minutes in (10, 20, 30):
        record_report(store, report([finding("zip")], minutes=minutes))
    context = store.history(REF, runs=3)
    assert context.runs_considered == 3 and [p.field for p in context.persistent] == ["zip"]
    assert context.one_off == []


def test_history_carries_dismissals_with_their_critique(store: PostgresStore) -> None:
    record_report(store, report(dismissed=[(finding("email", "format_violation"), "affected_count 7 differs")]))
    context = store.history(REF)
    assert [(p.field, p.last_critique) for p in context.dismissed] == [("email", "affected_count 7 differs")]
    assert "affected_count 7 differs" in context.render()


def test_labels_give_a_net_verdict(store: PostgresStore) -> None:
    r = record_report(store, report([finding("zip", count=40)]))
    fid = r.findings[0].id
    store.add_label(r.run_id, fid, "fp", note="zip is optional for pickup orders")
    store.add_label(r.run_id, fid, "fp")
    store.add_label(r.run_id, fid, "tp")
    label = store.history(REF).labels[fingerprint("main", "shop", "orders", "zip", "null_rate")]
    assert (label.verdict, label.false_positives, label.true_positives) == ("false_positive", 2, 1)
    assert label.labelled_share == pytest.approx(40 / 5000)
    assert label.last_note == "zip is optional for pickup orders"


def test_labelling_an_unknown_finding_names_it(store: PostgresStore) -> None:
    r = record_report(store, report([finding("zip")]))
    with pytest.raises(NotFound, match=f"run {r.run_id} has no finding"):
        store.add_label(r.run_id, r.run_id, "fp")


def test_prune_removes_old_runs_and_their_findings_but_keeps_labels(store: PostgresStore, pg_dsn: str) -> None:
    old = record_report(store, report([finding("zip")]))
    store.add_label(old.run_id, old.findings[0].id, "fp")
    recent = record_report(store, report([finding("zip")], minutes=60 * 24 * 100))
    assert store.prune(T0 + timedelta(days=100), retention_days=30) == 1
    assert [r.id for r in store.list_runs()] == [recent.run_id]
    with psycopg.connect(pg_dsn) as conn:
        assert conn.execute("select count(*) from findings where run_id = %s", (old.run_id,)).fetchone() == (0,)
        assert conn.execute("select count(*) from labels").fetchone() == (1,)
    assert store.history(REF).labels  # the verdict still applies to later runs


def test_find_run_by_prefix_and_resolve_collection(store: PostgresStore) -> None:
    r = record_report(store, report([finding("zip")]))
    assert store.find_run(str(r.run_id)[:8]) == r.run_id
    assert store.resolve_collection("orders") == REF == store.resolve_collection("shop.orders")
    with pytest.raises(NotFound, match="no stored runs for collection 'nope'"):
        store.resolve_collection("nope")


def test_migrations_run_once_even_from_two_processes_at_once(pg_dsn: str) -> None:
    errors: list[BaseException] = []
    barrier = threading.Barrier(4)

    def run() -> None:
        try:
            with psycopg.connect(pg_dsn) as conn:
                barrier.wait()
                migrate(conn)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=run) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    with psycopg.connect(pg_dsn) as conn:
        assert conn.execute("select count(*) from schema_migrations").fetchone() == (len(MIGRATIONS),)


def test_unreachable_database_is_named_without_its_password(tmp_path) -> None:  # type: ignore[no-untyped-def]
    dsn = f"postgresql://argus:hunter2@/argus?host={tmp_path}&port=1"
    with pytest.raises(StoreUnavailable) as info:
        PostgresStore(dsn, connect_timeout_s=1)
    assert "cannot reach PostgreSQL at a local socket/argus" in str(info.value)
    assert "hunter2" not in str(info.value)


def test_health_is_stored_with_its_run_read_back_as_history_and_pruned_with_it(store: PostgresStore,
                                                                               pg_dsn: str) -> None:
    from argus.agent.health.models import HealthSnapshot

    old = record_report(store, report(health=HealthSnapshot(at=T0, documents=5000, freshness_s=60.0)))
    record_report(store, report(minutes=60 * 24 * 100, health=HealthSnapshot(at=T0 + timedelta(days=100),
                                                                           documents=7000, inserts=2000)))
    assert [h.documents for h in store.history(REF).health] == [5000, 7000]  # oldest first
    assert store.prune(T0 + timedelta(days=100), retention_days=30) == 1
    assert [h.documents for h in store.history(REF).health] == [7000]
    with psycopg.connect(pg_dsn) as conn:
        assert conn.execute("select count(*) from run_health where run_id = %s", (old.run_id,)).fetchone() == (0,)


def test_history_gives_the_batch_sizes_the_latest_run_learned(store: PostgresStore) -> None:
    """The next run of a collection starts its batched passes at the sizes the server allowed last time."""
    for minutes, sizes in ((0, {"counts": 300}), (10, {"counts": 120, "stats": 40}), (20, {})):
        run = report([finding("zip")], minutes=minutes)
        run.database_cost.batch_checks = sizes
        record_report(store, run)
    assert store.history(REF).batch_checks == {"counts": 120, "stats": 40}  # a run that learned nothing keeps them
