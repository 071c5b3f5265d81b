#!/usr/bin/env python3
"""Detection benchmark: audit every collection in the shared bench folder and score each report.

Usage: python bench/detect.py [BENCH_DIR] [--only NAME ...] [--reports DIR] [--quick]

BENCH_DIR defaults to ../shared/bench beside the repository. Each NAME.jsonl is audited with the
heuristic planner exactly as ``argus audit --file NAME.jsonl --format json`` would, the report is
scored with BENCH_DIR/score.py against NAME.truth.json, and a table with totals is printed. A
planted defect part of whose documents the values cannot tell apart has its honest count in
``HONEST_COUNTS`` (with why): the target there is that count exactly; the table's counts stay the
score's.
``--quick`` is a smoke run without BENCH_DIR: one generated 400-document collection with two planted
defects, which must both be found and nothing else.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bson import json_util

from argus.agent.loop import run_audit
from argus.agent.planners.heuristic import HeuristicPlanner
from argus.config.settings import Settings
from argus.daemon.logs import configure_logging
from argus.daemon.sources import load_jsonl

PLANTED = {"customers", "orders", "events", "products"}
# Planted defects whose documents the values cannot all tell apart, with the count they honestly give
# (docs/detection.md, "What the values cannot tell"): the target is that count exactly, not the truth's.
# products.price: 5 at -10 and 4 at 99,999 are found; 3 at 0.0 lie within the floor of prices spread
# evenly from 1.15 to 500 (a lognormal price field leaves zero further from its smallest values) and
# are as many as hold 40.42, so neither a gap nor a point mass marks them.
HONEST_COUNTS = {("products", "price"): 9}


def _scorer(bench: Path):  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("bench_score", bench / "score.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.score


def _quick(folder: Path) -> tuple[Path, Any]:
    """A parcels collection with negative weights and weights stored as text; the score is
    whether exactly those two defects are reported."""
    rng = random.Random(3)
    docs: list[dict[str, Any]] = [{"parcel_id": f"P{i:05d}", "weight_kg": round(rng.lognormvariate(1, 0.5), 2),
                                   "carrier": rng.choice(["dhl", "ups", "fedex", "gls"])} for i in range(400)]
    for d in docs[:12]:
        d["weight_kg"] = -d["weight_kg"]
    for d in docs[20:35]:
        d["weight_kg"] = str(d["weight_kg"])
    (folder / "parcels.jsonl").write_text("\n".join(json_util.dumps(d) for d in docs))
    planted = {("weight_kg", "outlier_value"): 12, ("weight_kg", "type_mismatch"): 15}
    (folder / "parcels.truth.json").write_text(json.dumps({"collection": "parcels"}))

    def score(truth: dict[str, Any], report: dict[str, Any]) -> dict[str, Any]:
        seen = {(f["field"], f["category"]): f["affected_count"] for f in report["findings"]}
        found = [k for k in planted if k in seen]
        return {"defects": len(planted), "found": len(found),
                "count_accurate": sum(seen[k] == planted[k] for k in found), "findings": len(seen),
                "missed": [k for k in planted if k not in seen],
                "false_positives": [k for k in seen if k not in planted]}

    return folder, score


def _honest_counts(name: str, truth: dict[str, Any], report: dict[str, Any]) -> dict[str, tuple[int, int, int]]:
    """For each of the collection's ``HONEST_COUNTS``: (the count reported, the honest target, the
    truth's count). A field without a finding of an accepted category reports 0."""
    out = {}
    for defect in truth.get("defects", []):
        honest = HONEST_COUNTS.get((name, defect["field"]))
        if honest is None:
            continue
        counts = [f["affected_count"] or 0 for f in report["findings"]
                  if f["field"] == defect["field"] and ("*" in defect["accept"] or f["category"] in defect["accept"])]
        out[defect["field"]] = (max(counts, default=0), honest, defect["affected"])
    return out


def main() -> int:
    default = Path(__file__).resolve().parents[1].parent / "shared" / "bench"
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("bench", nargs="?", type=Path, default=default)
    parser.add_argument("--only", nargs="*", default=None)
    parser.add_argument("--reports", type=Path, default=None, help="keep the JSON reports here")
    parser.add_argument("--quick", action="store_true", help="smoke run on one generated collection")
    args = parser.parse_args()
    configure_logging("WARNING")
    if args.quick:
        args.bench, score = _quick(Path(tempfile.mkdtemp(prefix="argus-detect-quick-")))
        planted_names = {"parcels"}
    elif not (args.bench / "score.py").is_file():
        print(f"nothing measured: no benchmark collections in {args.bench} (NAME.jsonl, NAME.truth.json and "
              f"score.py; see docs/benchmarks.md)", file=sys.stderr)
        return 2
    else:
        score = _scorer(args.bench)
        planted_names = PLANTED
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
        outcome = report.outcome if report.documents_sampled else "sampled nothing"
        result["honest"] = _honest_counts(name, truth, report.model_dump(mode="json"))
        rows.append((name, result, outcome, report.iterations, loaded - t0, done - loaded))
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
        ok &= outcome not in ("failed", "sampled nothing")
        for field, (reported, honest, truth_count) in r["honest"].items():
            met = reported == honest
            print(f"{'':<11} {name}.{field}: {reported} counted, {honest} the values can tell of {truth_count} planted "
                  f"({'met' if met else 'NOT met'}; see HONEST_COUNTS)")
            r["count_accurate"] += met and abs(reported - truth_count) > 0.1 * truth_count
        if name in planted_names:
            ok &= r["found"] == r["defects"] and fps == 0 and r["count_accurate"] >= 0.9 * r["found"]
        else:
            ok &= r["found"] >= 0.8 * r["defects"] and fps <= 1
    if not rows:
        print(f"nothing measured: no collection in {args.bench} matched", file=sys.stderr)
        return 2
    print(f"{'total':<11} {tot['found']:>3}/{tot['defects']:<3} {tot['fp']:>3} {tot['count_ok']:>6}/{tot['found']:<3}")
    print(f"targets met: {'yes' if ok else 'NO'} (planted: all found, no false positive, >=90% counts within 10% "
          f"or exactly the count HONEST_COUNTS gives; real: >=80% found, <=1 false positive)   reports in {reports}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
