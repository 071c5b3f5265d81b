"""A schedule with planner llm: its token usage and cost are stored with the run and exported."""

from __future__ import annotations

import json
import textwrap
from datetime import datetime
from pathlib import Path
from typing import Any

import psycopg
from bson import json_util

from argus.agent.clock import ManualClock
from argus.config.schedules import load_schedules
from argus.config.settings import Settings
from argus.daemon.metrics import Metrics
from argus.daemon.runner import ScheduleRunner
from argus.daemon.spool import Spool
from argus.daemon.store import PostgresStore
from tests.doubles.model_server import error_reply, tool_reply

USAGE = {"prompt_tokens": 3000, "completion_tokens": 100, "total_tokens": 3100}


def _schedules(tmp_path: Path, base_url: str) -> Any:
    docs = [{"order_no": f"O-{i}", "qty": 1 + i % 5} for i in range(100)]
    (tmp_path / "orders.jsonl").write_text("\n".join(json_util.dumps(d) for d in docs))
    (tmp_path / "schedules.yaml").write_text(textwrap.dedent(f"""\
        connections:
          files: {{files: {{orders: orders.jsonl}}}}
        defaults: {{trigger: {{every: 1m}}}}
        schedules:
          - name: orders
            connection: files
            database: shop
            collection: orders
            planner: llm
            llm: {{model: gpt-4o-mini, base_url: "{base_url}", max_retries: 0, fallback_after: 1}}
    """))
    return load_schedules(tmp_path / "schedules.yaml")


def _runner(store: PostgresStore, tmp_path: Path, metrics: Metrics) -> ScheduleRunner:
    return ScheduleRunner(store=store, spool=Spool(tmp_path / "spool"), metrics=metrics,
                          settings=Settings(data_dir=tmp_path),
                          clock=ManualClock(datetime.fromisoformat("2026-05-01T10:00:00+00:00")), replica="r1")


def test_llm_usage_is_stored_and_counted(store: PostgresStore, pg_dsn: str, tmp_path: Path, chat_server: Any) -> None:
    server = chat_server([tool_reply("run_query", {"filter": {"$or": [{"order_no": {"$exists": False}},
                                                                      {"qty": {"$type": "string"}}]}, "limit": 0},
                                     usage=USAGE),
                          tool_reply("conclude", {}, usage=USAGE)])
    metrics = Metrics()
    report = _runner(store, tmp_path, metrics).run(_schedules(tmp_path, server.base_url), "orders")
    assert report is not None and report.outcome == "succeeded" and report.planner == "llm"
    with psycopg.connect(pg_dsn) as conn:
        row = conn.execute("select input_tokens, output_tokens, cost_usd, report from runs").fetchone()
    assert row is not None
    input_tokens, output_tokens, cost, stored = row
    assert (input_tokens, output_tokens) == (6000, 200)
    assert float(cost) == round((6000 * 0.15 + 200 * 0.60) / 1e6, 6)
    body = stored if isinstance(stored, dict) else json.loads(stored)
    assert body["llm"]["usage"][0]["purpose"] == "planner"
    labels = {"schedule": "orders", "model": "gpt-4o-mini"}
    assert metrics.sample("argus_llm_tokens_total", {**labels, "kind": "input"}) == 6000
    assert metrics.sample("argus_llm_tokens_total", {**labels, "kind": "output"}) == 200
    assert metrics.sample("argus_llm_cost_usd_total", labels) == float(cost)


def test_an_llm_outage_still_stores_a_run(store: PostgresStore, pg_dsn: str, tmp_path: Path, chat_server: Any) -> None:
    server = chat_server([], default=error_reply(503))
    report = _runner(store, tmp_path, Metrics()).run(_schedules(tmp_path, server.base_url), "orders")
    assert report is not None and report.outcome == "succeeded" and report.llm is not None and report.llm.fallback
    with psycopg.connect(pg_dsn) as conn:
        assert conn.execute("select outcome from runs").fetchall() == [("succeeded",)]
