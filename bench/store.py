#!/usr/bin/env python3
"""Store benchmark: time to store a report with 200 findings and to load the history after it,
and the history load time once one collection has 1,000 stored runs.

Usage: python bench/store.py [--dsn DSN] [--quick]   (default: a throw-away embedded PostgreSQL)

``--quick`` is a smoke run (20 findings, 30 stored runs) that proves the script still works.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

import psycopg
from psycopg.conninfo import make_conninfo

from argus.agent.findings import Category, Finding, Severity
from argus.agent.options import AuditOptions
from argus.agent.report import AuditReport
from argus.agent.state import EvaluationRecord, RuleResult
from argus.daemon.logs import configure_logging
from argus.daemon.record import record_report
from argus.daemon.store import CollectionRef, PostgresStore
from argus.daemon.store.embedded import start_embedded

T0 = datetime(2026, 1, 1, tzinfo=UTC)
CATEGORIES = list(Category)


def _report(i: int, findings: int, collection: str = "orders") -> AuditReport:
    started = T0 + timedelta(minutes=30 * i)
    return AuditReport(
        run_id=uuid.uuid4(), connection="main", database="shop", collection=collection, planner="heuristic",
        started_at=started, finished_at=started + timedelta(seconds=5), duration_s=5.0, outcome="succeeded",
        termination_reason="concluded", iterations=60, options=AuditOptions(), documents_sampled=1000,
        collection_size=1_000_000, fields_total=findings, fields_investigated=findings,
        findings=[Finding(field=f"field_{k:03d}", category=CATEGORIES[k % len(CATEGORIES)], severity=Severity.MEDIUM,
                          description="x" * 80, hypothesis="h", evidence_query={f"field_{k:03d}": None},
                          affected_count=1000 + (i * k) % 500, affected_pct=(1000 + (i * k) % 500) / 1_000_000,
                          sample_values=["shape:a+"]) for k in range(findings)],
        evaluations=[EvaluationRecord(gate="action", iteration=n, verdict="PASS",
                                      rules=[RuleResult(rule="known_field", verdict="PASS")]) for n in range(60)])


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:8.1f} ms"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--dsn", help="an admin DSN; a scratch database is created in it")
    parser.add_argument("--quick", action="store_true", help="smoke run: 20 findings, 30 stored runs")
    args = parser.parse_args()
    wide, runs = (20, 30) if args.quick else (200, 1000)
    configure_logging("WARNING")
    embedded = None
    admin = args.dsn
    if admin is None:
        embedded = start_embedded(Path(tempfile.mkdtemp(prefix="argus-bench-")))
        admin = embedded.admin_uri()
    name = f"argus_bench_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'create database "{name}"')
    try:
        with PostgresStore(make_conninfo(admin, dbname=name)) as store:
            ref = CollectionRef("main", "shop", "wide")
            store_times, history_times = [], []
            for i in range(10):
                report = _report(i, wide, collection="wide")
                t = time.perf_counter()
                record_report(store, report)
                store_times.append(time.perf_counter() - t)
                t = time.perf_counter()
                store.history(ref)
                history_times.append(time.perf_counter() - t)
            print(f"report with {wide} findings (10 runs, median / max):")
            print(f"  store        {_ms(statistics.median(store_times))} / {_ms(max(store_times))}")
            print(f"  load history {_ms(statistics.median(history_times))} / {_ms(max(history_times))}"
                  f"   (last 10 runs, {wide} patterns)")

            ref = CollectionRef("main", "shop", "orders")
            t = time.perf_counter()
            for i in range(runs):
                record_report(store, _report(i, 20))
            fill = time.perf_counter() - t
            loads = []
            for _ in range(20):
                t = time.perf_counter()
                context = store.history(ref)
                loads.append(time.perf_counter() - t)
            print(f"{runs:,} stored runs of one collection (20 findings each; stored in {fill:.1f} s, "
                  f"{fill / runs * 1000:.1f} ms per run):")
            print(f"  load history {_ms(statistics.median(loads))} / {_ms(max(loads))}   "
                  f"(median / max of 20; {context.runs_considered} runs in the window, "
                  f"{len(context.persistent)} persistent patterns)")
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'drop database if exists "{name}" with (force)')
        if embedded is not None:
            embedded.server.cleanup()
    return 0


if __name__ == "__main__":
    sys.exit(main())
