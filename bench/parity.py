#!/usr/bin/env python3
"""The shared bench's findings from the new engine and from the engine before it (mongomock).

Each collection is audited twice in this process with the heuristic planner and one fixed clock:
on Argus's in-process engine (as `argus audit --file` now runs) and on mongomock holding the same
decoded documents (as it ran before, each read in a forked child). Both audits draw the same
sample (the documents at the engine's positions for the collection's seed): what is compared is how
each engine answers the audit's reads, not the luck of two samples, so a finding that rests on which
documents were drawn cannot make the two differ. Findings must be identical: the same fields,
categories and affected counts. Prints one line per collection with both times, and every difference.

Usage: python bench/parity.py [--only NAME ...] [--quick] [--bench-dir DIR] [--time-budget S]
Exits 1 when it compared nothing (no collection, or an engine's audit did not succeed or sampled no
document: two failures are no agreement), 2 when findings differ.
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

from argus.agent.clock import ManualClock  # noqa: E402
from argus.agent.loop import run_audit  # noqa: E402
from argus.agent.options import AuditOptions  # noqa: E402
from argus.agent.planners.heuristic import HeuristicPlanner  # noqa: E402
from argus.agent.tools.target import AuditTarget  # noqa: E402
from argus.daemon.files import load_file  # noqa: E402
from argus.daemon.logs import configure_logging  # noqa: E402

NOW = datetime(2026, 11, 26, 12, tzinfo=UTC)


def _findings(target: AuditTarget, budget_s: float) -> tuple[set[tuple[str, str, int]], float, str]:
    """The findings, the audit's seconds, and its outcome ("sampled nothing" when it read no document).
    Only two succeeded audits are compared: two failures, or two audits cut short, agree on nothing."""
    clock = ManualClock(NOW)
    started = time.perf_counter()
    report = run_audit(target, HeuristicPlanner(clock=clock), clock=clock,
                       options=AuditOptions(time_budget_s=budget_s, max_iterations=1000))
    found = {(f.field, f.category.value, f.affected_count) for f in report.findings}
    outcome = report.outcome if report.documents_sampled else "sampled nothing"
    return found, time.perf_counter() - started, outcome


class _SameSample:
    """mongomock's collection, whose sample is the engine's: every other read goes to mongomock."""

    in_process = True  # draw_in_memory then asks draw_sample, not mongomock's own $sample

    def __init__(self, reference: Any, engine: Any) -> None:
        self._reference, self._engine = reference, engine

    def __getattr__(self, name: str) -> Any:
        return getattr(self._reference, name)

    def draw_sample(self, size: int, seed: int) -> list[dict[str, Any]]:
        return list(self._engine.draw_sample(size, seed))


def same_sample(reference: Any, engine: Any) -> Any:
    """``reference`` (mongomock), drawing the sample ``engine`` draws for the same seed."""
    return _SameSample(reference, engine)


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
    parser.add_argument("--time-budget", type=float, default=3600.0, help="each audit's budget in seconds")
    args = parser.parse_args(argv)
    configure_logging("WARNING")
    folder = Path(tempfile.mkdtemp(prefix="argus-parity-"))
    files = [_generated(folder)] if args.quick else sorted(args.bench_dir.glob("*.jsonl"))
    files = [f for f in files if not args.only or f.stem in args.only]
    compared = differ = uncompared = 0
    for path in files:
        engine = load_file(path)
        documents = [d for batch in engine._store.batches() for d in batch]
        reference = mongomock.MongoClient()["files"][engine.name]
        if documents:
            reference.insert_many([dict(d) for d in documents])
        new, new_s, new_outcome = _findings(AuditTarget(engine, connection_name="file"), args.time_budget)
        old, old_s, old_outcome = _findings(AuditTarget(same_sample(reference, engine), connection_name="file",
                                                        in_memory=True), args.time_budget)
        if new_outcome != "succeeded" or old_outcome != "succeeded":
            uncompared += 1
            print(f"{engine.name:<10} {len(documents):>7,} docs  nothing compared: the audit ended {new_outcome} "
                  f"on the engine, {old_outcome} on mongomock", flush=True)
            continue
        compared += 1
        same = new == old and new_outcome == old_outcome
        differ += not same
        print(f"{engine.name:<10} {len(documents):>7,} docs  findings {len(new):>3} new / {len(old):>3} before  "
              f"identical: {'yes' if same else 'NO'}  audit {new_s:6.1f} s new, {old_s:6.1f} s before "
              f"({new_outcome}/{old_outcome})", flush=True)
        for item in sorted(new ^ old):
            print(f"    {'only new' if item in new else 'only before'}: {item}")
    if compared:
        print(f"{compared - differ}/{compared} collections with identical findings")
    if not compared or uncompared:
        print(f"nothing compared on {uncompared} collection(s)" if uncompared else
              "nothing measured: no collection to compare", file=sys.stderr)
        return 1
    return 2 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
