#!/usr/bin/env python3
"""What segments cost an audit: the same generated multi-tenant orders audited with and without
``segments: {by: tenant}``, interleaved in one invocation (without, with, without, with ...), on the
engine behind ``argus audit --file``. Segments ride in the passes an audit already makes, so the
passes and queries must be the same; the wall time is what the extra ``$group`` branches cost.

Each collection holds ``--tenants`` tenants sending orders for three weeks (their own domain: a
shop's orders with totals, statuses and shipping methods); one tenant stopped sending 30 hours
before the audit, and another's importer drops the shipping method of two orders in five. An
audit with segments must report the stopped tenant's volume drop, and the shipping nulls
concentrated in the one tenant, with exact counts; the one without must not see the tenant.

Usage: python bench/segments.py [--sizes 20000 100000] [--tenants 40] [--repeat 2] [--quick]
Exits 1 when it measured nothing, an audit failed, the passes or queries differ with segments,
or the audit with segments missed a planted defect.
"""

from __future__ import annotations

import sys
from pathlib import Path

_HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _HERE]
sys.path.insert(0, str(_HERE.parent))

import argparse
import random
import struct
import time
from datetime import UTC, datetime, timedelta
from statistics import median
from typing import Any

from bson import ObjectId

from argus.agent.clock import ManualClock
from argus.agent.engine import DocumentStore, MemoryCollection
from argus.agent.findings import Category
from argus.agent.loop import run_audit
from argus.agent.options import AuditOptions
from argus.agent.planners.heuristic import HeuristicPlanner
from argus.agent.report import AuditReport
from argus.agent.segments.models import SegmentOptions
from argus.agent.tools.target import AuditTarget
from argus.daemon.logs import configure_logging

NOW = datetime(2026, 3, 2, 9, 30, tzinfo=UTC)
DAYS = 21


def orders(size: int, tenants: int, seed: int = 32) -> tuple[list[dict[str, Any]], str, str, int]:
    """``size`` orders of ``tenants`` tenants (uneven volumes) over three weeks; returns them, the tenant
    that stopped, the tenant missing shipping methods and how many of its orders miss one."""
    rng = random.Random(seed)
    names = [f"shop-{i:03d}" for i in range(tenants)]
    weights = [1 + (i % 7) for i in range(tenants)]
    stopped, lossy = names[3], names[5]
    docs: list[dict[str, Any]] = []
    missing = 0
    for i in range(size):
        tenant = rng.choices(names, weights)[0]
        at = NOW - timedelta(seconds=rng.uniform(1, DAYS * 86_400))
        if tenant == stopped and NOW - at < timedelta(hours=30):
            tenant = names[0]
        doc: dict[str, Any] = {"_id": ObjectId(struct.pack(">I", int(at.timestamp())) + i.to_bytes(8, "big")),
                               "order_no": f"ORD-{i:07d}", "tenant": tenant, "total": round(rng.uniform(5, 400), 2),
                               "status": rng.choice(["new", "paid", "shipped"])}
        if tenant == lossy and rng.random() < 0.4:
            missing += 1
        else:
            doc["shipping"] = rng.choice(["ground", "air", "pickup"])
        docs.append(doc)
    return docs, stopped, lossy, missing


def audit(docs: list[dict[str, Any]], segments: bool) -> tuple[AuditReport, float]:
    clock = ManualClock(NOW)
    target = AuditTarget(MemoryCollection(DocumentStore.of(docs), name="orders", database="shop"))
    t0 = time.perf_counter()
    report = run_audit(target, HeuristicPlanner(clock=clock), clock=clock,
                       options=AuditOptions(segments=SegmentOptions(by="tenant") if segments else None))
    return report, time.perf_counter() - t0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], allow_abbrev=False)
    parser.add_argument("--sizes", type=int, nargs="+", default=[20_000, 100_000])
    parser.add_argument("--tenants", type=int, default=40)
    parser.add_argument("--repeat", type=int, default=2, help="audits of each kind per size, interleaved")
    parser.add_argument("--quick", action="store_true", help="one small collection, once (a smoke test)")
    args = parser.parse_args()
    if args.quick:
        args.sizes, args.repeat = [6_000], 1
    configure_logging("ERROR", "console")
    print(f"{'documents':>10} {'passes':>13} {'queries':>13} {'seconds without':>16} {'seconds with':>13}  found")
    problems: list[str] = []
    measured = 0
    for size in args.sizes:
        docs, stopped, lossy, missing = orders(size, args.tenants)
        runs: dict[bool, list[tuple[AuditReport, float]]] = {False: [], True: []}
        for _ in range(args.repeat):
            for segments in (False, True):
                runs[segments].append(audit(docs, segments))
        reports = [r for pair in runs.values() for r, _ in pair]
        if any(r.outcome != "succeeded" for r in reports):
            problems.append(f"{size}: an audit did not succeed")
            continue
        measured += 1
        plain, seg = runs[False][0][0], runs[True][0][0]
        passes = (plain.database_cost.passes, seg.database_cost.passes)
        queries = (plain.database_cost.queries_sent, seg.database_cost.queries_sent)
        drop = any(f.category == Category.VOLUME_ANOMALY and f.field == f"(segment tenant={stopped})"
                   for f in seg.findings)
        nulls = next((f for f in seg.findings if f.field == "shipping" and f.category == Category.NULL_RATE), None)
        exact = nulls is not None and nulls.affected_count == missing and nulls.segments is not None \
            and nulls.segments.concentrated_in == f"tenant={lossy}"
        found = f"{stopped} drop {'Y' if drop else 'N'}, {lossy} nulls {missing if exact else 'N'}"
        print(f"{size:>10,} {passes[0]:>6} / {passes[1]:<4} {queries[0]:>6} / {queries[1]:<4} "
              f"{median(t for _, t in runs[False]):>16.2f} {median(t for _, t in runs[True]):>13.2f}  {found}")
        if passes[0] != passes[1] or queries[0] != queries[1]:
            problems.append(f"{size}: segments changed the passes or queries ({passes}, {queries})")
        if not (drop and exact):
            problems.append(f"{size}: the audit with segments missed a planted defect ({found})")
    print("passes and queries: without / with segments; seconds: the median of the interleaved audits")
    for problem in problems:
        print(problem, file=sys.stderr)
    if not measured:
        print("nothing was measured", file=sys.stderr)
    return 1 if problems or not measured else 0


if __name__ == "__main__":
    sys.exit(main())
