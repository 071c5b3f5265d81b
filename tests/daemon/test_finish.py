"""After an audit ends, whatever fails, the run is stored (or spooled) as what it was."""

from __future__ import annotations

import threading
import uuid
from pathlib import Path
from typing import Any

import psycopg

from argus.agent.report import TraceEntry
from argus.config.schedules import ScheduleSet
from argus.config.settings import Settings
from argus.daemon.metrics import Metrics
from argus.daemon.runner import ScheduleRunner
from argus.daemon.spool import Spool
from argus.daemon.store import PostgresStore
from tests.daemon.test_runner import AT, _runner


def _nested(levels: int) -> dict[str, Any]:
    out: dict[str, Any] = {"qty": {"$gt": 0}}
    for _ in range(levels):
        out = {"$and": [out]}
    return out


def test_a_report_with_a_filter_nested_200_levels_is_stored_and_counted(
        store: PostgresStore, pg_dsn: str, schedules: ScheduleSet, tmp_path: Path) -> None:
    runner = _runner(store, tmp_path)
    report = runner.run(schedules, "orders", scheduled_at=AT)
    assert report is not None
    deep = TraceEntry(iteration=99, action="run_query", action_input={"filter": _nested(200)}, observation="x",
                      verdict="PASS", outcome="ok")
    again = report.model_copy(update={"run_id": uuid.uuid4(), "trace": [*report.trace, deep]})
    runner.finish("orders", again)
    with psycopg.connect(pg_dsn) as conn:
        stored = conn.execute("select report->'trace'->-1->'action_input' from runs where id = %s",
                              (again.run_id,)).fetchone()
    assert stored is not None and "<nested" in str(stored[0])  # cut where the trace or the spool bounds depth
    assert runner.metrics.sample("argus_audit_runs_total", {"schedule": "orders", "outcome": "succeeded"}) == 2
    assert runner.last_reports["orders"].run_id == again.run_id and len(runner.spool) == 0


def test_a_report_the_database_cannot_take_is_counted_as_spooled_once(
        store: PostgresStore, schedules: ScheduleSet, tmp_path: Path) -> None:
    report = _runner(store, tmp_path).run(schedules, "orders", scheduled_at=AT)
    assert report is not None
    down = PostgresStore(f"postgresql://argus@/argus?host={tmp_path}&port=9", wait=False, connect_timeout_s=0.3)
    try:
        offline = ScheduleRunner(store=down, spool=Spool(tmp_path / "offline"), metrics=Metrics(),
                                 settings=Settings(data_dir=tmp_path))
        offline.finish("orders", report.model_copy(update={"run_id": uuid.uuid4()}))
        for _ in range(5):                                        # the maintenance loop retrying
            assert offline.drain() == 1
        assert offline.metrics.sample("argus_reports_spooled_total") == 1
    finally:
        down.close()


def test_the_final_drain_waits_for_a_drain_under_way(store: PostgresStore, pg_dsn: str, schedules: ScheduleSet,
                                                     tmp_path: Path) -> None:
    runner = _runner(store, tmp_path)
    report = runner.run(schedules, "orders", scheduled_at=AT)
    assert report is not None
    runner.spool.put(report.model_copy(update={"run_id": uuid.uuid4()}))
    runner._drain_lock.acquire()                                  # a worker is draining
    threading.Timer(0.5, runner._drain_lock.release).start()
    assert runner.drain(wait_s=10) == 0
