"""One trigger end to end: lock, claim, audit, spool, store, metrics."""

from __future__ import annotations

import threading
from datetime import datetime
from pathlib import Path

import psycopg

from argus.agent.clock import ManualClock
from argus.config.schedules import ScheduleSet
from argus.config.settings import Settings
from argus.daemon.metrics import Metrics
from argus.daemon.runner import ScheduleRunner
from argus.daemon.spool import Spool
from argus.daemon.store import PostgresStore

NOW_TEXT = "2026-05-01T10:00:07+00:00"
AT = datetime.fromisoformat("2026-05-01T10:00:02+00:00")   # the firing: due at 10:00:02 (slot 10:00 + jitter)


def _runner(store: PostgresStore, tmp_path: Path, replica: str = "r1", spool: str = "spool") -> ScheduleRunner:
    clock = ManualClock(datetime.fromisoformat(NOW_TEXT))
    return ScheduleRunner(store=store, spool=Spool(tmp_path / spool), metrics=Metrics(),
                          settings=Settings(data_dir=tmp_path), clock=clock, replica=replica)


def _runs(dsn: str) -> list[tuple]:
    with psycopg.connect(dsn) as conn:
        return conn.execute("select schedule, outcome, scheduled_for, replica, error from runs "
                            "order by started_at").fetchall()


def test_a_trigger_stores_its_report_with_schedule_slot_and_replica(store: PostgresStore, pg_dsn: str,
                                                                    schedules: ScheduleSet, tmp_path: Path) -> None:
    runner = _runner(store, tmp_path)
    report = runner.run(schedules, "orders", scheduled_at=AT)
    assert report is not None and report.outcome == "succeeded"
    [(schedule, outcome, slot, replica, _)] = _runs(pg_dsn)
    assert (schedule, outcome, slot, replica) == ("orders", "succeeded", AT, "r1")
    assert runner.metrics.sample("argus_audit_runs_total", {"schedule": "orders", "outcome": "succeeded"}) == 1
    assert runner.metrics.sample("argus_findings_new_total", {"schedule": "orders", "severity": "high"}) == 1
    assert runner.metrics.sample("argus_trigger_lateness_seconds_sum") == 5.0     # started at 10:00:07
    with psycopg.connect(pg_dsn) as conn:
        claim = conn.execute("select slot, run_id from schedule_triggers").fetchone()
    assert claim == (datetime.fromisoformat("2026-05-01T10:00:00+00:00"), report.run_id)
    assert len(runner.spool) == 0


def test_a_trigger_runs_once_however_many_replicas_see_it(store: PostgresStore, pg_dsn: str, schedules: ScheduleSet,
                                                          tmp_path: Path) -> None:
    first, second = _runner(store, tmp_path, "r1"), _runner(store, tmp_path, "r2", spool="spool2")
    assert first.run(schedules, "orders", scheduled_at=AT) is not None
    assert second.run(schedules, "orders", scheduled_at=AT) is None
    assert second.metrics.sample("argus_triggers_skipped_total", {"schedule": "orders", "reason": "already_ran"}) == 1
    assert len(_runs(pg_dsn)) == 1


def test_a_schedule_running_elsewhere_is_skipped(store: PostgresStore, schedules: ScheduleSet, tmp_path: Path,
                                                 pg_dsn: str) -> None:
    held, release = threading.Event(), threading.Event()

    def other_replica() -> None:
        with PostgresStore(pg_dsn) as other, other.schedule_lock("orders") as got:
            assert got
            held.set()
            release.wait(10)

    thread = threading.Thread(target=other_replica)
    thread.start()
    try:
        assert held.wait(10)
        runner = _runner(store, tmp_path)
        assert runner.run(schedules, "orders", scheduled_at=AT) is None
        assert runner.metrics.sample("argus_triggers_skipped_total", {"schedule": "orders", "reason": "locked"}) == 1
    finally:
        release.set()
        thread.join()


def test_without_the_database_nothing_runs(schedules: ScheduleSet, tmp_path: Path) -> None:
    down = PostgresStore(f"postgresql://argus@/argus?host={tmp_path}&port=9", wait=False, connect_timeout_s=0.5)
    runner = _runner(down, tmp_path)
    try:
        assert runner.run(schedules, "orders", scheduled_at=AT) is None
        assert runner.metrics.sample("argus_triggers_skipped_total",
                                     {"schedule": "orders", "reason": "store_unavailable"}) == 1
        assert runner.metrics.sample("argus_audit_runs_total", {"schedule": "orders", "outcome": "succeeded"}) is None
    finally:
        down.close()


def test_a_failing_audit_is_stored_as_failed_with_its_error(store: PostgresStore, pg_dsn: str,
                                                             schedules: ScheduleSet, tmp_path: Path) -> None:
    runner = _runner(store, tmp_path)
    report = runner.run(schedules, "broken", scheduled_at=AT)
    assert report is not None and report.outcome == "failed"
    [(_, outcome, _, _, error)] = _runs(pg_dsn)
    assert outcome == "failed" and error == f"{tmp_path / 'nowhere.jsonl'}: No such file or directory"
    assert runner.metrics.sample("argus_audit_runs_total", {"schedule": "broken", "outcome": "failed"}) == 1


def test_reports_wait_in_the_spool_and_are_stored_in_order_once(store: PostgresStore, pg_dsn: str,
                                                                  schedules: ScheduleSet, tmp_path: Path) -> None:
    up = _runner(store, tmp_path)
    first = up.run(schedules, "orders", scheduled_at=AT)
    assert first is not None
    down = PostgresStore(f"postgresql://argus@/argus?host={tmp_path}&port=9", wait=False, connect_timeout_s=0.5)
    try:
        offline = ScheduleRunner(store=down, spool=Spool(tmp_path / "offline"), metrics=Metrics(),
                                 settings=Settings(data_dir=tmp_path))
        later = [first.model_copy(update={"run_id": __import__("uuid").uuid4(),
                                          "started_at": first.started_at.replace(minute=m)}) for m in (5, 10)]
        for report in later:
            offline.finish("orders", report)
        assert len(offline.spool) == 2
        assert offline.metrics.sample("argus_reports_spooled_total") == 2
        copy = offline.spool.pending()[0]
        (copy.parent / ("0" + copy.name)).write_text(copy.read_text())   # as if a crash kept a stored copy
    finally:
        down.close()
    back = ScheduleRunner(store=store, spool=Spool(tmp_path / "offline"), metrics=Metrics(),
                          settings=Settings(data_dir=tmp_path))
    assert back.drain() == 0
    runs = {r.id: r for r in store.list_runs()}
    assert set(runs) == {first.run_id, *(r.run_id for r in later)}          # each stored exactly once
    second = store.get_report(later[1].run_id)
    assert second.diff is not None and second.diff.previous_run_id == later[0].run_id  # stored in order


def test_an_interrupted_audit_is_stored_as_partial(store: PostgresStore, pg_dsn: str, schedules: ScheduleSet,
                                                   tmp_path: Path) -> None:
    runner = _runner(store, tmp_path)
    original = runner.sources.target

    def target_then_stop(*args, **kwargs):  # type: ignore[no-untyped-def]
        for progress in runner.running():
            progress.stop.set()                  # SIGTERM arrives as the audit begins
        return original(*args, **kwargs)

    runner.sources.target = target_then_stop  # type: ignore[method-assign]
    report = runner.run(schedules, "orders", scheduled_at=AT)
    assert report is not None and (report.outcome, report.termination_reason) == ("partial", "interrupted")
    assert _runs(pg_dsn)[0][1] == "partial"


def test_readiness_ping_answers_quickly_when_the_database_is_down(tmp_path: Path) -> None:
    import time

    down = PostgresStore(f"postgresql://argus@/argus?host={tmp_path}&port=9", wait=False, connect_timeout_s=5)
    try:
        t0 = time.monotonic()
        assert down.ping() is False
        assert time.monotonic() - t0 < 1.5   # a probe with a 1 s timeout still gets an answer
    finally:
        down.close()


def test_a_run_stores_and_exports_what_it_cost_the_database(store: PostgresStore, pg_dsn: str,
                                                            schedules: ScheduleSet, tmp_path: Path) -> None:
    runner = _runner(store, tmp_path)
    report = runner.run(schedules, "orders", scheduled_at=AT)
    assert report is not None
    cost = report.database_cost
    assert cost.server == "memory" and cost.request_units is None
    assert cost.passes >= 1 and cost.queries_sent == len(cost.operations) > cost.passes
    assert cost.documents_examined == cost.passes * 200 + report.documents_sampled
    with psycopg.connect(pg_dsn) as conn:
        stored = conn.execute("select queries_sent, passes, documents_examined, throttled, request_units "
                              "from runs").fetchone()
    assert stored == (cost.queries_sent, cost.passes, cost.documents_examined, 0, None)
    assert store.last_runs_by_schedule()["orders"].passes == cost.passes
    metrics = runner.metrics
    assert metrics.sample("argus_db_passes_total", {"schedule": "orders"}) == cost.passes
    assert metrics.sample("argus_db_queries_total", {"schedule": "orders"}) == cost.queries_sent
    assert metrics.sample("argus_db_request_units_total", {"schedule": "orders"}) == 0.0


def test_an_audit_returning_after_shutdown_recorded_it_as_interrupted_is_not_kept_again(
        store: PostgresStore, pg_dsn: str, schedules: ScheduleSet, tmp_path: Path) -> None:
    runner = _runner(store, tmp_path)
    original = runner.sources.target
    inside, release = threading.Event(), threading.Event()

    def stuck(*args, **kwargs):  # type: ignore[no-untyped-def]
        inside.set()
        release.wait(30)                         # a query nothing in the process can stop
        return original(*args, **kwargs)

    runner.sources.target = stuck  # type: ignore[method-assign]
    returned: list[object] = []
    worker = threading.Thread(target=lambda: returned.append(runner.run(schedules, "orders", scheduled_at=AT)))
    worker.start()
    assert inside.wait(30)
    runner.interrupt_all()
    assert runner.record_interrupted() == ["orders"]                   # the grace period is over
    assert runner.busy()                                               # its thread is still in the query
    release.set()
    worker.join(30)
    assert returned == [None] and not runner.busy()
    assert _runs(pg_dsn) == [("orders", "partial", AT, "r1", "interrupted at shutdown while a query was running")]
    assert len(runner.spool) == 0
    assert runner.metrics.sample("argus_audit_runs_total", {"schedule": "orders", "outcome": "partial"}) == 1
