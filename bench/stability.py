#!/usr/bin/env python3
"""Stability benchmark: does the same data give the same findings on every run?

Usage: python bench/stability.py [BENCH_DIR] [--runs 5] [--only NAME ...] [--strict] [--quick]

BENCH_DIR defaults to shared/bench beside the repository (or beside a folder holding it, as for a
git worktree). Each NAME.jsonl there is loaded once
and audited ``--runs`` times in-process, exactly as ``argus audit --file NAME.jsonl`` would (heuristic
planner wrapped as the CLI wraps it, no store); only the random sample differs between runs.
Prints, per collection, every finding that is not identical in all runs (field, category, then
severity and affected count per run, '-' where a run did not report it), and a summary table.
Exit status: 1 when the bench folder holds no collection (nothing to measure), an audit failed or a
collection's audits sampled no document, 0 otherwise;
with ``--strict`` also 1 when any finding differs between runs. ``--quick`` (CI) audits a small
generated collection twice instead of the bench.
"""

from __future__ import annotations

import sys
from pathlib import Path

# Run as `python bench/stability.py`, sys.path[0] is bench/, where bench/daemon.py would shadow
# the `daemon` package: drop that folder and make sure the repository root comes first.
_HERE = Path(__file__).resolve().parent
sys.path[:] = [str(_HERE.parent)] + [p for p in sys.path if Path(p or ".").resolve() != _HERE]

import argparse  # noqa: E402
import copy  # noqa: E402
import random  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402

from bson import json_util  # noqa: E402

from argus.agent.loop import run_audit  # noqa: E402
from argus.agent.planners.factory import make_planner  # noqa: E402
from argus.config.settings import Settings  # noqa: E402
from argus.daemon.logs import configure_logging  # noqa: E402
from argus.daemon.sources import load_jsonl  # noqa: E402

Key = tuple[str, str]  # (field, category)
Seen = tuple[str, int]  # (severity, affected count)


def _audit_runs(path: Path, runs: int) -> tuple[list[dict[Key, Seen]], list[str], float, float, int]:
    """Each run's findings, each run's outcome, the load time, the mean audit time and the documents
    the runs sampled in all."""
    options = Settings().audit_options()
    t0 = time.perf_counter()
    loaded_target = load_jsonl(path, max_time_ms=options.max_time_ms)
    loaded = time.perf_counter() - t0
    results: list[dict[Key, Seen]] = []
    outcomes: list[str] = []
    spent = 0.0
    sampled = 0
    for run in range(runs):
        # A different sample each run: the in-memory engine otherwise draws the same one (seeded by
        # the namespace, so that unchanged data gives unchanged reports). The loaded collection is
        # read as it is, never copied.
        target = copy.copy(loaded_target)
        target._seed = 1000 + run  # a bench redraws the sample of the same loaded collection
        t1 = time.perf_counter()
        report = run_audit(target, make_planner("heuristic").planner, options=options)
        spent += time.perf_counter() - t1
        outcomes.append(report.outcome)
        sampled += report.documents_sampled
        results.append({(f.field, f.category.value): (f.severity.value, f.affected_count) for f in report.findings})
    return results, outcomes, loaded, spent / max(runs, 1), sampled


def unstable(results: list[dict[Key, Seen]]) -> dict[Key, list[Seen | None]]:
    """Findings not reported identically (same severity and count) by every run."""
    keys = sorted({k for r in results for k in r})
    per_key = {k: [r.get(k) for r in results] for k in keys}
    return {k: seen for k, seen in per_key.items() if None in seen or len(set(seen)) > 1}


def _default_bench() -> Path:
    """``shared/bench`` beside the repository or beside one of its parent folders."""
    repo = _HERE.parent
    found = next((p / "shared" / "bench" for p in repo.parents if (p / "shared" / "bench").is_dir()), None)
    return found or repo.parent / "shared" / "bench"


def _quick_bench() -> Path:
    """A folder with one small generated collection (a garage's repair jobs), for ``--quick``."""
    folder = Path(tempfile.mkdtemp(prefix="argus-stability-"))
    rng = random.Random(3)
    jobs = [{"job_id": f"J{i:05d}", "bay": rng.choice(["A", "B", "C"]), "hours": round(rng.uniform(0.5, 9), 1),
             "parts": rng.randint(0, 12), "mechanic_email": f"m{i % 40}@garage.example"} for i in range(400)]
    for job in jobs[::100]:
        job["hours"] = -job["hours"]  # a defect, so that the runs have a finding to agree on
    (folder / "repairs.jsonl").write_text("".join(json_util.dumps(d) + "\n" for d in jobs), encoding="utf-8")
    return folder


def main(argv: list[str] | None = None) -> int:
    default = _default_bench()
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("bench", nargs="?", type=Path, default=default)
    parser.add_argument("--runs", type=int, default=5, help="audits per collection (default 5)")
    parser.add_argument("--only", nargs="+", default=None, metavar="NAME", help="only these collections")
    parser.add_argument("--strict", action="store_true", help="exit 1 when any finding differs between runs")
    parser.add_argument("--quick", action="store_true", help="CI: a small generated collection, 2 runs")
    args = parser.parse_args(argv)
    if args.quick:
        args.bench, args.runs = _quick_bench(), 2
    if args.runs < 2:
        parser.error("--runs must be at least 2 (stability compares runs)")
    files = sorted(args.bench.glob("*.jsonl")) if args.bench.is_dir() else []
    if args.only:
        files = [f for f in files if f.name.removesuffix(".jsonl") in args.only]
    if not files:
        what = f"no collection named {', '.join(args.only)} in" if args.only else "no *.jsonl collections in"
        print(f"stability: {what} {args.bench}: nothing measured (give the bench folder as the first argument; "
              f"see docs/benchmarks.md)", file=sys.stderr)
        return 1
    configure_logging("WARNING")
    started = time.perf_counter()
    rows = []
    print(f"stability: {args.runs} audits per collection, heuristic planner, in-memory engine; a finding is "
          f"stable when every run reports it with the same severity and affected count")
    for path in files:
        name = path.name.removesuffix(".jsonl")
        results, outcomes, load_s, audit_s, sampled = _audit_runs(path, args.runs)
        differing = unstable(results)
        rows.append((name, len({k for r in results for k in r}), len(differing), outcomes, load_s, audit_s, sampled))
        if differing:
            print(f"\n{name}: {len(differing)} finding(s) differ between runs")
            print(f"  {'field':<28} {'category':<17} " + " ".join(f"{'run ' + str(i + 1):>14}"
                                                              for i in range(args.runs)))
            for (field, category), seen in differing.items():
                cells = [f"{s[0]} {s[1]}" if s else "-" for s in seen]
                print(f"  {field[:28]:<28} {category:<17} " + " ".join(f"{c:>14}" for c in cells))
    print(f"\n{'collection':<12} {'findings':>8} {'differ':>6} {'outcomes':<28} {'load s':>7} {'audit s':>8}")
    for name, total, differ, outcomes, load_s, audit_s, _sampled in rows:
        summary = ", ".join(f"{outcomes.count(o)} {o}" for o in sorted(set(outcomes)))
        print(f"{name:<12} {total:>8} {differ:>6} {summary:<28} {load_s:>7.2f} {audit_s:>8.2f}")
    total_differ = sum(r[2] for r in rows)
    print(f"{'total':<12} {sum(r[1] for r in rows):>8} {total_differ:>6}   "
          f"({time.perf_counter() - started:.0f} s wall)")
    if any(o == "failed" for r in rows for o in r[3]):
        print("stability: an audit failed: its runs measured nothing", file=sys.stderr)
        return 1
    if not all(r[6] for r in rows):
        print("stability: a collection's audits sampled no document (was it loaded?): nothing measured",
              file=sys.stderr)
        return 1
    return 1 if args.strict and total_differ else 0


if __name__ == "__main__":
    sys.exit(main())
