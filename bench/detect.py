#!/usr/bin/env python3
"""Detection benchmark: audit every collection in the shared bench folder and score each report.

Usage: python bench/detect.py [BENCH_DIR] [--only NAME ...] [--reports DIR]

BENCH_DIR defaults to ../shared/bench beside the repository. Each NAME.jsonl is audited with the
heuristic planner exactly as ``argus audit --file NAME.jsonl --format json`` would, the report is
scored with BENCH_DIR/score.py against NAME.truth.json, and a table with totals is printed.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
import tempfile
import time
from pathlib import Path

from agent.loop import run_audit
from agent.planners.heuristic import HeuristicPlanner
from config.settings import Settings
from daemon.logs import configure_logging
from daemon.sources import load_jsonl

PLANTED = {"customers", "orders", "events", "products"}


def _scorer(bench: Path):  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("bench_score", bench / "score.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.score


def main() -> int:
    default = Path(__file__).resolve().parents[1].parent / "shared" / "bench"
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("bench", nargs="?", type=Path, default=default)
    parser.add_argument("--only", nargs="*", default=None)
    parser.add_argument("--reports", type=Path, default=None, help="keep the JSON reports here")
    args = parser.parse_args()
    configure_logging("WARNING")
    score = _scorer(args.bench)
    reports = args.reports or Path(tempfile.mkdtemp(prefix="argus-detect-"))
    reports.mkdir(parents=True, exist_ok=True)
    options = Settings().audit_options()
    rows = []
    for truth_file in sorted(args.bench.glob("*.truth.json")):
        name = truth_file.name.removesuffix(".truth.json")
        if args.only and name not in args.only:
            continue
        truth = json.loads(truth_file.read_text())
        t0 = time.perf_counter()
        target = load_jsonl(args.bench / f"{name}.jsonl", max_time_ms=options.max_time_ms)
        loaded = time.perf_counter()
        report = run_audit(target, HeuristicPlanner(), options=options)
        done = time.perf_counter()
        path = reports / f"{name}.report.json"
        path.write_text(report.model_dump_json(indent=2))
        result = score(truth, json.loads(path.read_text()))
        rows.append((name, result, report.outcome, report.iterations, loaded - t0, done - loaded))
    print(f"{'collection':<11} {'found':>7} {'fp':>3} {'counts±10%':>10} {'findings':>8} {'outcome':>9} "
          f"{'iters':>5} {'load s':>7} {'audit s':>8}  missed / false positives")
    tot = {"defects": 0, "found": 0, "fp": 0, "count_ok": 0}
    ok = True
    for name, r, outcome, iters, load_s, audit_s in rows:
        fps = len(r["false_positives"])
        print(f"{name:<11} {r['found']:>3}/{r['defects']:<3} {fps:>3} {r['count_accurate']:>6}/{r['found']:<3} "
              f"{r['findings']:>8} {outcome:>9} {iters:>5} {load_s:>7.2f} {audit_s:>8.2f}  "
              f"{r['missed'] or ''} {r['false_positives'] or ''}")
        tot["defects"] += r["defects"]
        tot["found"] += r["found"]
        tot["fp"] += fps
        tot["count_ok"] += r["count_accurate"]
        if name in PLANTED:
            ok &= r["found"] == r["defects"] and fps == 0 and r["count_accurate"] >= 0.9 * r["found"]
        else:
            ok &= r["found"] >= 0.8 * r["defects"] and fps <= 1
    print(f"{'total':<11} {tot['found']:>3}/{tot['defects']:<3} {tot['fp']:>3} {tot['count_ok']:>6}/{tot['found']:<3}")
    print(f"targets met: {'yes' if ok else 'NO'} (planted: all found, no false positive, >=90% counts within 10%; "
          f"real: >=80% found, <=1 false positive)   reports in {reports}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
