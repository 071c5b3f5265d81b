#!/usr/bin/env python3
"""What a scoped audit costs as the collection grows: the same planted defects in a window of
recent documents, inside ever more older ones. The findings must be identical at every size and
the documents examined must stay flat (an index leads with the window's field: ``_id``'s ObjectId
time), while an unscoped audit's cost grows with the collection.

Each collection is generated (orders: quantities, prices, statuses, order numbers), written as
Extended JSON lines and loaded exactly as ``argus audit --file`` loads it (``argus.daemon.sources``), so
the script measures whatever engine stands behind ``--file``: today the in-memory engine
(mongomock), which visits every document on each read whatever the window, so wall time grows
with the old part even where documents examined do not (they count what a server with the index
would examine). The old part is clean of the window's defects and holds defects of its own
(negative prices, misspelt statuses) that a scoped audit must not report. Each audit is a first run
without history; the first-run health baseline (one read of the health window, once per collection,
not per run) is left out, so the figures are what every scoped run costs.

Usage: python bench/scope.py [--sizes 100000 1000000 5000000] [--window 10000] [--quick] [--strict]
       [--full]        also audit each collection unscoped, for comparison
Exits 1 when it measured nothing or an audit failed, ran out of memory or sampled no document;
with --strict also when the findings differ between sizes or the
documents examined are not flat.
"""

from __future__ import annotations

import sys
from pathlib import Path

# This file is in bench/: keep its folder off the import path so `daemon` is the package, and put
# the repository root on it so the script runs without an install.
_HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _HERE]
sys.path.insert(0, str(_HERE.parent))

import argparse
import tempfile
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

from bson import ObjectId, json_util

from argus.agent.clock import ManualClock
from argus.agent.health.models import HealthOptions
from argus.agent.loop import run_audit
from argus.agent.options import AuditOptions, ScopeOptions
from argus.agent.planners.heuristic import HeuristicPlanner
from argus.agent.report import AuditReport
from argus.daemon.logs import configure_logging
from argus.daemon.sources import load_jsonl

NOW = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)
WINDOW = timedelta(days=1)
OLD_SPAN = timedelta(days=720)
STATUSES = ("open", "paid", "shipped", "delivered")


def _order(i: int, created: datetime) -> dict[str, Any]:
    return {"_id": ObjectId.from_datetime(created), "order_no": f"ORD-{1_000_000 + i}", "qty": 1 + (i * 7) % 19,
            "price": round(5 + (i * 37) % 4500 / 100, 2), "status": STATUSES[i % 4],
            "email": f"buyer{i % 50_000}@mail.example.org"}


def orders(old: int, window: int) -> Iterator[dict[str, Any]]:
    """``old`` documents spread over the two years before the window (one negative price in 200,
    one misspelt status in 500), then ``window`` documents of the last day holding the planted
    defects: 1% quantities as text, 0.5% negative prices, 0.2% misspelt statuses, 0.3% emails
    without an @. Their positions depend only on ``window``, so the defects are the same at
    every size."""
    for i in range(old):
        doc = _order(i, NOW - WINDOW - timedelta(hours=1) - OLD_SPAN * (1 - i / max(old, 1)))
        if i % 200 == 13:
            doc["price"] = -doc["price"]
        if i % 500 == 7:
            doc["status"] = "shiped"
        yield doc
    for j in range(window):
        doc = _order(old + j, NOW - WINDOW + timedelta(minutes=1) + (WINDOW - timedelta(minutes=2)) * j / window)
        if j % 100 == 3:
            doc["qty"] = str(doc["qty"])
        if j % 200 == 11:
            doc["price"] = -doc["price"]
        if j % 500 == 17:
            doc["status"] = "payd"
        if j % 333 == 5:
            doc["email"] = doc["email"].replace("@", " at ")
        yield doc


def planted(window: int) -> dict[tuple[str, str], int]:
    """The defects planted in the window, as the audit should report them."""
    def count(every: int, at: int) -> int:
        return sum(1 for j in range(window) if j % every == at)
    return {("qty", "type_mismatch"): count(100, 3), ("price", "outlier_value"): count(200, 11),
            ("status", "enum_violation"): count(500, 17), ("email", "format_violation"): count(333, 5)}


def _audit(path: Path, scope: ScopeOptions | None, budget_s: float) -> tuple[AuditReport, float, float]:
    t0 = time.perf_counter()
    target = load_jsonl(path, collection="orders", database="shop")
    loaded = time.perf_counter() - t0
    clock = ManualClock(NOW)
    t1 = time.perf_counter()
    report = run_audit(target, HeuristicPlanner(clock=clock), clock=clock,
                       options=AuditOptions(scope=scope, time_budget_s=budget_s, health=HealthOptions(backfill=False)))
    return report, loaded, time.perf_counter() - t1


def _found(report: AuditReport) -> dict[tuple[str, str], int]:
    return {(f.field, f.category.value): f.affected_count for f in report.findings}


def _row(kind: str, old: int, window: int, report: AuditReport, loaded: float, audited: float) -> str:
    cost = report.database_cost
    found = ", ".join(f"{field}:{category}={n}" for (field, category), n in sorted(_found(report).items()))
    return (f"| {kind} | {old:,} | {window:,} | {report.outcome} | {cost.passes} | {cost.documents_examined:,} | "
            f"{found or 'none'} | {loaded:.1f} s | {audited:.1f} s |")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000, 1_000_000, 5_000_000],
                        help="older documents around the window, one collection each")
    parser.add_argument("--window", type=int, default=10_000, help="documents in the window (the last day)")
    parser.add_argument("--quick", action="store_true", help="a smoke run: 1,000 in the window, 2,000 and 8,000 old")
    parser.add_argument("--full", action="store_true", help="also audit each collection unscoped")
    parser.add_argument("--time-budget", type=float, default=3600.0, help="seconds per audit")
    parser.add_argument("--strict", action="store_true", help="exit 1 when findings differ or examined grow")
    args = parser.parse_args(argv)
    sizes, window = ([2_000, 8_000], 1_000) if args.quick else (args.sizes, args.window)
    configure_logging("ERROR", "console")
    expected = planted(window)
    print(f"scoped audits (window: the last day, {window:,} documents, _id's ObjectId time; heuristic planner; "
          f"engine behind --file)")
    print("| audit | old documents | window | outcome | passes | documents examined | findings | load | audit |")
    print("| --- | ---: | ---: | --- | ---: | ---: | --- | ---: | ---: |")
    measured: list[AuditReport] = []
    unmeasured = 0
    with tempfile.TemporaryDirectory() as tmp:
        for old in sizes:
            path = Path(tmp) / f"orders_{old}.jsonl"
            with path.open("w") as out:
                for doc in orders(old, window):
                    out.write(json_util.dumps(doc) + "\n")
            scope = ScopeOptions(since_s=WINDOW.total_seconds())
            try:
                report, loaded, audited = _audit(path, scope, args.time_budget)
            except MemoryError:
                print(f"| scoped | {old:,} | {window:,} | out of memory | | | | | |")
                unmeasured += 1
                continue
            print(_row("scoped", old, window, report, loaded, audited), flush=True)
            if report.outcome != "failed" and report.documents_sampled:
                measured.append(report)
            else:
                unmeasured += 1
            if args.full:
                full, loaded, audited = _audit(path, None, args.time_budget)
                print(_row("full", old, window, full, loaded, audited), flush=True)
                unmeasured += full.outcome == "failed" or not full.documents_sampled
            path.unlink()
    if not measured:
        print("nothing measured: no scoped audit finished", file=sys.stderr)
        return 1
    failed_any = unmeasured > 0
    findings = [_found(r) for r in measured]
    identical = all(f == findings[0] for f in findings)
    examined = [r.database_cost.documents_examined for r in measured]
    flat = max(examined) == min(examined)
    print(f"planted in the window: {', '.join(f'{f}:{c}={n}' for (f, c), n in sorted(expected.items()))}")
    print(f"findings identical at every size: {'yes' if identical else 'no'}; equal to the planted defects: "
          f"{'yes' if findings[0] == expected else 'no'}")
    print(f"documents examined flat: {'yes' if flat else 'no'} ({min(examined):,} to {max(examined):,})")
    if failed_any:
        print(f"{unmeasured} audit(s) failed, ran out of memory or sampled no document", file=sys.stderr)
        return 1
    if args.strict and not (identical and flat and findings[0] == expected):
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
