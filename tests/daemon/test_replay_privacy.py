"""Replay under ``strict``: the store holds masked evidence; the daemon replays what it ran itself."""

from __future__ import annotations

import json
import textwrap
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from bson import json_util

from argus.agent.clock import ManualClock
from argus.agent.report import AuditReport
from argus.config.schedules import ScheduleSet, load_schedules
from argus.config.settings import Settings
from argus.daemon.metrics import Metrics
from argus.daemon.runner import ScheduleRunner
from argus.daemon.spool import Spool
from argus.daemon.store import PostgresStore

pytestmark = [pytest.mark.slow]

NOW = datetime.fromisoformat("2026-05-01T10:00:07+00:00")


@pytest.fixture
def schedules(tmp_path: Path) -> ScheduleSet:
    docs = [{"order_no": f"ORD-{i:05d}", "qty": 1 + i % 5} for i in range(2000)]
    for i in range(0, 200, 20):  # ten keys written twice
        docs[i + 1]["order_no"] = docs[i]["order_no"]
    (tmp_path / "orders.jsonl").write_text("\n".join(json_util.dumps(d) for d in docs))
    (tmp_path / "schedules.yaml").write_text(textwrap.dedent("""\
        connections:
          files: {files: {orders: orders.jsonl}}
        defaults: {trigger: {every: 1m}, privacy: strict, sample_size: 500}
        schedules:
          - {name: orders, connection: files, database: shop, collection: orders}
    """))
    return load_schedules(tmp_path / "schedules.yaml")


def _runner(store: PostgresStore, tmp_path: Path, hours: int = 0) -> ScheduleRunner:
    """A runner as a fresh process would have it; each run an hour after the last (see ``_run``)."""
    return ScheduleRunner(store=store, spool=Spool(tmp_path / "spool"), metrics=Metrics(),
                          settings=Settings(data_dir=tmp_path), clock=ManualClock(NOW + timedelta(hours=hours)),
                          replica="r1")


def _run(runner: ScheduleRunner, schedules: ScheduleSet) -> AuditReport:
    report = runner.run(schedules, "orders")
    assert report is not None
    assert isinstance(runner.clock, ManualClock)
    runner.clock.advance(3600)
    return report


def _replayed(report: AuditReport) -> list[int]:
    """Documents the replayed duplicate_value evidence matched, as the replayed finding says."""
    return [e.action_input["affected_count"] for e in report.trace
            if e.reasoning == "replayed evidence still matches" and e.action_input.get("category") == "duplicate_value"]


def test_strict_stores_masked_evidence_and_replays_it_from_memory(store: PostgresStore, schedules: ScheduleSet,
                                                                  tmp_path: Path) -> None:
    runner = _runner(store, tmp_path)
    first = _run(runner, schedules)
    dup = next(f for f in first.findings if f.category == "duplicate_value")
    assert dup.evidence_query == {"order_no": {"$in": [{"$masked": "string"}] * 5 + [{"$masked": "5 more"}]}}
    assert "ORD-" not in json.dumps(store.get_report(first.run_id).model_dump(mode="json"))
    _run(runner, schedules)  # seen twice: persistent from now on
    third = _run(runner, schedules)
    assert _replayed(third) == [20]  # the query as run, kept in memory
    assert "ORD-" not in json.dumps(store.get_report(third.run_id).model_dump(mode="json"))


def test_after_a_restart_a_masked_pattern_is_not_replayed_but_still_found(store: PostgresStore,
                                                                          schedules: ScheduleSet,
                                                                          tmp_path: Path) -> None:
    _run(_runner(store, tmp_path, hours=0), schedules)
    _run(_runner(store, tmp_path, hours=1), schedules)
    restarted = _run(_runner(store, tmp_path, hours=2), schedules)  # persistent now, and nothing in memory
    assert _replayed(restarted) == []
    found = next(f for f in restarted.findings if f.category == "duplicate_value")
    assert found.affected_count == 20
    stored = store.get_report(restarted.run_id)
    assert stored.diff is not None and any(e.status == "persisting" and e.field == "order_no"
                                           for e in stored.diff.entries)
