#!/usr/bin/env python3
"""What an audit costs the audited database: passes over the collection, documents examined,
queries sent and wall time, per collection, with the heuristic planner on the in-memory engine.

Collections: every ``*.jsonl`` in the shared bench folder (../shared/bench beside the repo), a
generated wide collection (300 fields) and a generated long one (200,000 documents). The target
is at most 4 passes per audit ($sample excluded); the "target met" column says where it is.
Wall time is what ``argus audit --file`` spends: loading the file, then the audit.

Usage: python bench/passes.py [--only NAME ...] [--quick] [--bench-dir DIR] [--time-budget S]
Exits 1 when it measured nothing: no collection matched, or an audit failed or sampled no document
or ended partial (its passes say nothing about a whole audit, and its target is not judged).
"""

from __future__ import annotations

import sys
from pathlib import Path

# This file is in bench/, beside bench/daemon.py: keep its folder off the import path so `daemon`
# is the package, and put the repository root on it so the script runs without an install.
_HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _HERE]
sys.path.insert(0, str(_HERE.parent))

import argparse
import json
import random
import tempfile
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

from bson import json_util

from argus.agent.loop import run_audit
from argus.agent.options import AuditOptions
from argus.agent.planners.heuristic import HeuristicPlanner
from argus.daemon.logs import configure_logging
from argus.daemon.sources import load_jsonl

TARGET_PASSES = 4


def _wide(documents: int, rng: random.Random) -> Iterator[dict[str, Any]]:
    """Telemetry readings with 300 sensor fields; a few sensors go missing, negative or textual."""
    for i in range(documents):
        doc: dict[str, Any] = {"_id": i, "device": f"dev-{i % 97:03d}"}
        for f in range(298):
            value: Any = round(rng.uniform(0, 100), 2)
            if f % 50 == 7 and rng.random() < 0.03:
                value = None
            elif f % 61 == 3 and rng.random() < 0.02:
                value = -value
            elif f % 89 == 5 and rng.random() < 0.01:
                value = str(value)
            doc[f"sensor_{f:03d}"] = value
        doc["read_at"] = datetime(2025, 1, 1, tzinfo=UTC) + timedelta(minutes=i)
        yield doc


def _long(documents: int, rng: random.Random) -> Iterator[dict[str, Any]]:
    """Parcel shipments: weight, carrier, status, postcode; some weights are zero, some postcodes blank."""
    carriers = ["north", "south", "east", "west", "air"]
    for i in range(documents):
        yield {"_id": i, "parcel": f"P{i:08d}", "carrier": rng.choice(carriers),
               "weight_kg": 0.0 if rng.random() < 0.004 else round(rng.uniform(0.1, 30), 2),
               "postcode": "" if rng.random() < 0.002 else f"{rng.randint(10000, 99999)}",
               "status": rng.choice(["label", "in_transit", "delivered"])}


def _write(path: Path, docs: Iterator[dict[str, Any]]) -> Path:
    with path.open("w", encoding="utf-8") as out:
        for doc in docs:
            out.write(json_util.dumps(doc) + "\n")
    return path


def _measure(name: str, path: Path, budget_s: float) -> dict[str, Any]:
    t0, c0 = time.perf_counter(), time.process_time()
    target = load_jsonl(path, collection=name)
    loaded = time.perf_counter() - t0
    t1 = time.perf_counter()
    report = run_audit(target, HeuristicPlanner(), options=AuditOptions(time_budget_s=budget_s, max_iterations=1000))
    audit = time.perf_counter() - t1
    cpu = time.process_time() - c0  # load and audit: barely moved by other work on a shared machine
    cost = report.database_cost
    # A failed or partial audit (a budget cut it short, checks went unanswered), or one that sampled
    # nothing, says nothing of what a whole audit costs.
    measured = report.outcome == "succeeded" and report.documents_sampled > 0
    return {"measured": measured, "sampled": report.documents_sampled,
            "collection": name, "documents": report.collection_size, "fields": report.fields_total,
            "passes": cost.passes, "target_met": measured and cost.passes <= TARGET_PASSES,
            "documents_examined": cost.documents_examined, "queries_sent": cost.queries_sent,
            "load_s": round(loaded, 1), "audit_s": round(audit, 1), "wall_s": round(loaded + audit, 1),
            "cpu_s": round(cpu, 1),
            "findings": len(report.findings), "outcome": report.outcome, "ended": report.termination_reason,
            "sample_s": round(sum(o.duration_ms for o in cost.operations if o.kind == "sample") / 1000, 2)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", default=None, help="collection names to measure (e.g. orders wide)")
    parser.add_argument("--quick", action="store_true", help="a smoke run: only small generated collections "
                                                             "(wide 200 x 300 fields, long 5,000)")
    parser.add_argument("--bench-dir", type=Path, default=_HERE.parent.parent / "shared" / "bench")
    parser.add_argument("--time-budget", type=float, default=3600.0, help="each audit's budget in seconds")
    parser.add_argument("--json", action="store_true", help="print the rows as JSON lines")
    args = parser.parse_args(argv)
    configure_logging("WARNING")

    sources: dict[str, Path | None] = {} if args.quick else {
        p.stem: p for p in sorted(args.bench_dir.glob("*.jsonl"))}
    sources.update(wide=None, long=None)
    wanted = [n for n in sources if args.only is None or n in args.only]
    rows = []
    with tempfile.TemporaryDirectory(prefix="argus-passes-") as scratch:
        rng = random.Random(12)
        for name in wanted:
            path = sources[name]
            if path is None:
                size = {"wide": 200 if args.quick else 5_000, "long": 5_000 if args.quick else 200_000}[name]
                make = _wide if name == "wide" else _long
                path = _write(Path(scratch) / f"{name}.jsonl", make(size, rng))
            row = _measure(name, path, args.time_budget)
            rows.append(row)
            if args.json:
                print(json.dumps(row), flush=True)
            else:
                print(f"{row['collection']:<10} {row['documents']:>9,} docs {row['fields']:>4} fields  "
                      f"passes {row['passes']:>3} (target <= {TARGET_PASSES}: "
                      f"{'met' if row['target_met'] else 'NOT met' if row['measured'] else 'not judged'})"
                      f"  examined {row['documents_examined']:>12,}  queries {row['queries_sent']:>4}  "
                      f"load {row['load_s']:>6.1f}s  audit {row['audit_s']:>7.1f}s  cpu {row['cpu_s']:>6.1f}s  "
                      f"(sample {row['sample_s']:.2f}s)  "
                      f"{row['findings']} findings, {row['outcome']} ({row['ended']}), {row['sampled']:,} sampled",
                      flush=True)
    if not rows:
        print(f"measured nothing: no collection matched {args.only} (bench dir {args.bench_dir})", file=sys.stderr)
        return 1
    unmeasured = [row["collection"] for row in rows if not row["measured"]]
    if unmeasured:
        print(f"measured nothing on {', '.join(unmeasured)}: the audit did not succeed "
              "(failed, or partial: a budget or unanswered checks) or sampled no document",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
