#!/usr/bin/env python3
"""The shared bench's findings from the new engine and from the engine before it (mongomock).

Each collection is audited twice in this process with the heuristic planner and one fixed clock:
on Argus's in-process engine (as `argus audit --file` now runs) and on mongomock holding the same
decoded documents (as it ran before, each read in a forked child). Findings must be identical:
the same fields, categories and affected counts. Prints one line per collection with both
times, and every difference.

Usage: python bench/parity.py [--only NAME ...] [--quick] [--bench-dir DIR]
Exits 1 when it compared nothing, 2 when findings differ.
"""

from __future__ import annotations

import sys
from pathlib import Path

_HERE = Path(__file__).resolve().parent
sys.path[:] = [str(_HERE.parent)] + [p for p in sys.path if Path(p or ".").resolve() != _HERE]

import argparse  # noqa: E402
import json  # noqa: E402
import random  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from datetime import UTC, datetime  # noqa: E402
from typing import Any  # noqa: E402

import mongomock  # noqa: E402

from agent.clock import ManualClock  # noqa: E402
from agent.loop import run_audit  # noqa: E402
from agent.options import AuditOptions  # noqa: E402
from agent.planners.heuristic import HeuristicPlanner  # noqa: E402
from agent.tools.target import AuditTarget  # noqa: E402
from daemon.files import load_file  # noqa: E402
from daemon.logs import configure_logging  # noqa: E402

NOW = datetime(2026, 11, 26, 12, tzinfo=UTC)


def _findings(target: AuditTarget) -> tuple[set[tuple[str, str, int]], float, str]:
    clock = ManualClock(NOW)
    started = time.perf_counter()
    report = run_audit(target, HeuristicPlanner(clock=clock), clock=clock,
                       options=AuditOptions(time_budget_s=3600, max_iterations=1000))
    found = {(f.field, f.category.value, f.affected_count) for f in report.findings}
    return found, time.perf_counter() - started, report.outcome


def _generated(folder: Path) -> Path:
    rng = random.Random(5)
    path = folder / "quick.jsonl"
    with path.open("w") as out:
        for i in range(800):
            doc: dict[str, Any] = {"_id": i, "status": rng.choice(["open", "closed", "Closed ", ""]),
                                   "amount": rng.choice([rng.uniform(1, 90), -3.0]),
                                   "items": [{"qty": rng.randint(-1, 5)}]}
            out.write(json.dumps(doc) + "\n")
    return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*")
    parser.add_argument("--quick", action="store_true", help="one small generated collection")
    parser.add_argument("--bench-dir", type=Path, default=_HERE.parent.parent / "shared" / "bench")
    args = parser.parse_args(argv)
    configure_logging("WARNING")
    folder = Path(tempfile.mkdtemp(prefix="argus-parity-"))
    files = [_generated(folder)] if args.quick else sorted(args.bench_dir.glob("*.jsonl"))
    files = [f for f in files if not args.only or f.stem in args.only]
    compared = differ = 0
    for path in files:
        engine = load_file(path)
        documents = [d for batch in engine._store.batches() for d in batch]
        reference = mongomock.MongoClient()["files"][engine.name]
        if documents:
            reference.insert_many([dict(d) for d in documents])
        new, new_s, new_outcome = _findings(AuditTarget(engine, connection_name="file"))
        old, old_s, old_outcome = _findings(AuditTarget(reference, connection_name="file", in_memory=True))
        compared += 1
        same = new == old and new_outcome == old_outcome
        differ += not same
        print(f"{engine.name:<10} {len(documents):>7,} docs  findings {len(new):>3} new / {len(old):>3} before  "
              f"identical: {'yes' if same else 'NO'}  audit {new_s:6.1f} s new, {old_s:6.1f} s before "
              f"({new_outcome}/{old_outcome})", flush=True)
        for item in sorted(new ^ old):
            print(f"    {'only new' if item in new else 'only before'}: {item}")
    if not compared:
        print("nothing measured: no collection to compare", file=sys.stderr)
        return 1
    print(f"{compared - differ}/{compared} collections with identical findings")
    return 2 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
