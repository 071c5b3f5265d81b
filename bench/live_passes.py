#!/usr/bin/env python3
"""Passes and wall time of a live audit on a real server beside the same file's audit.

Each collection (every ``*.jsonl`` of the shared bench folder, and two generated here: a narrow
``sensors`` log and a wide ``tickets`` table, each with its own planted defects) is written as
Extended JSON lines, loaded into the server with pymongo, and audited twice in a row, interleaved:
``argus audit --file`` (the in-process engine) and ``argus audit --uri`` (the server), heuristic
planner, ``--no-store``. Printed per collection: passes, wall time and findings of each side.

Usage: python bench/live_passes.py --uri mongodb://127.0.0.1:27091 [--only NAME ...] [--bench-dir DIR]
Exits 1 when an audit failed (exit code other than 0 or 1), nothing was measured, the findings of
the two sides differ, a live audit took more than 4 passes or more than twice the file audit's wall
time. After the table, each live pass's seconds.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pymongo
from bson import ObjectId, json_util

MAX_PASSES = 4
MAX_RATIO = 2.0  # a live audit's wall time, at most, over the file audit's
_HERE = Path(__file__).resolve().parent
_ROOT = _HERE.parent


def _sensors(rng: random.Random) -> list[dict[str, Any]]:
    """A reading log: a temperature written as text by one firmware, impossible readings, a unit typo."""
    start = datetime(2026, 1, 1, tzinfo=UTC)
    docs = []
    for i in range(6000):
        docs.append({"_id": ObjectId(), "device": f"dev-{i % 120:03d}", "at": start + timedelta(minutes=i),
                     "celsius": round(rng.gauss(21, 3), 2), "unit": "C", "battery": rng.randint(5, 100)})
    for i in rng.sample(range(6000), 90):
        docs[i]["celsius"] = str(docs[i]["celsius"])
    for i in rng.sample(range(6000), 40):
        docs[i]["celsius"] = -999.0
    for i in rng.sample(range(6000), 60):
        docs[i]["unit"] = "c"
    return docs


def _tickets(rng: random.Random) -> list[dict[str, Any]]:
    """A wide table (60 fields, some nested): missing owners, duplicate ticket numbers, a flag as text."""
    docs = []
    for i in range(2000):
        doc: dict[str, Any] = {"_id": i, "number": f"T-{i:06d}", "owner": f"agent{i % 37}",
                               "open": bool(i % 3), "meta": {f"m{k}": (i * k) % 97 for k in range(20)}}
        doc.update({f"x{k}": rng.choice(["low", "mid", "high"]) if k % 2 else i * k for k in range(40)})
        docs.append(doc)
    for i in rng.sample(range(2000), 50):
        docs[i]["owner"] = None
    for i in rng.sample(range(1, 2000), 30):
        docs[i]["number"] = docs[i - 1]["number"]
    for i in rng.sample(range(2000), 25):
        docs[i]["open"] = "yes"
    return docs


def _write(path: Path, docs: list[dict[str, Any]]) -> None:
    with path.open("w") as out:
        for doc in docs:
            out.write(json_util.dumps(doc, json_options=json_util.RELAXED_JSON_OPTIONS) + "\n")


def _load(db: Any, name: str, path: Path) -> int:
    db[name].drop()
    with path.open() as src:
        docs = [json_util.loads(line) for line in src if line.strip()]
    for i in range(0, len(docs), 1000):
        db[name].insert_many(docs[i:i + 1000])
    return len(docs)


def _audit(args: list[str], time_budget: float) -> tuple[int, float, dict[str, Any] | None]:
    cmd = [sys.executable, "-m", "argus.daemon.cli", "audit", *args, "--no-store", "--format", "json",
           "--time-budget", str(time_budget)]
    t0 = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True, cwd=_ROOT, check=False)
    wall = time.perf_counter() - t0
    try:
        report = json.loads(done.stdout)
    except ValueError:
        report = None
    return done.returncode, wall, report


def _findings(report: dict[str, Any]) -> set[tuple[str, str, int]]:
    return {(f["field"], f["category"], f["affected_count"]) for f in report["findings"]}


def _stamp(label: str) -> None:
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=_ROOT,
                            check=False).stdout.strip()
    dirty = subprocess.run(["git", "status", "--porcelain"], capture_output=True, text=True, cwd=_ROOT,
                           check=False).stdout.strip()
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"# {label} {datetime.now(UTC).isoformat(timespec='seconds')} commit {commit}{'+dirty' if dirty else ''} "
          f"load {load}", flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--uri", default=os.environ.get("ARGUS_TEST_MONGODB_URI"),
                        required="ARGUS_TEST_MONGODB_URI" not in os.environ,
                        help="the server (default: $ARGUS_TEST_MONGODB_URI, as the live tests use)")
    parser.add_argument("--quick", action="store_true", help="only the generated sensors collection")
    parser.add_argument("--database", default="argus_live_passes")
    parser.add_argument("--bench-dir", type=Path, default=_ROOT.parent / "shared" / "bench")
    parser.add_argument("--only", nargs="*", default=None)
    parser.add_argument("--time-budget", type=float, default=600.0)
    opts = parser.parse_args()
    if opts.quick:
        opts.only = ["sensors"]
    _stamp("start")
    db = pymongo.MongoClient(opts.uri, serverSelectionTimeoutMS=5000)[opts.database]
    failures: list[str] = []
    durations: dict[str, list[str]] = {}
    measured = 0
    rng = random.Random(30)
    with tempfile.TemporaryDirectory() as tmp:
        files = {p.stem: p for p in sorted(opts.bench_dir.glob("*.jsonl"))}
        for name, make in (("sensors", _sensors), ("tickets", _tickets)):
            files[name] = Path(tmp) / f"{name}.jsonl"
            _write(files[name], make(rng))
        print(f"{'collection':<12} {'docs':>6}  {'file passes':>11} {'file s':>7}  {'live passes':>11} {'live s':>7} "
              f"{'live/file':>9}  {'findings':>8}  verdict", flush=True)
        for name, path in files.items():
            if opts.only and name not in opts.only:
                continue
            docs = _load(db, name, path)
            rc_f, wall_f, file_report = _audit(["--file", str(path)], opts.time_budget)
            rc_l, wall_l, live_report = _audit(["--uri", opts.uri, "--database", opts.database, "--collection", name],
                                               opts.time_budget)
            problems = []
            if rc_f not in (0, 1) or file_report is None:
                problems.append(f"file audit exit {rc_f}")
            if rc_l not in (0, 1) or live_report is None:
                problems.append(f"live audit exit {rc_l}")
            if file_report is None or live_report is None:
                print(f"{name:<12} {docs:>6}  {'-':>11} {wall_f:>7.1f}  {'-':>11} {wall_l:>7.1f}  {'':>9}  {'':>8}  "
                      f"FAIL: {'; '.join(problems)}", flush=True)
                failures.append(name)
                continue
            measured += 1
            passes_f = file_report["database_cost"]["passes"]
            passes_l = live_report["database_cost"]["passes"]
            same = _findings(file_report) == _findings(live_report)
            if not same:
                problems.append(f"findings differ: file only {sorted(_findings(file_report) - _findings(live_report))}"
                                f", live only {sorted(_findings(live_report) - _findings(file_report))}")
            if passes_l > MAX_PASSES:
                problems.append(f"{passes_l} live passes > {MAX_PASSES}")
            if wall_l > MAX_RATIO * wall_f:
                problems.append(f"live {wall_l / wall_f:.2f} times the file's wall time > {MAX_RATIO:g}")
            durations[name] = [f"{o['duration_ms'] / 1000:.2f}" + (f" ({o['error']})" if o["error"] else "")
                               for o in live_report["database_cost"]["operations"] if o["full_pass"]]
            print(f"{name:<12} {docs:>6}  {passes_f:>11} {wall_f:>7.1f}  {passes_l:>11} {wall_l:>7.1f} "
                  f"{wall_l / wall_f:>9.2f}  {len(live_report['findings']):>8}  "
                  f"{'ok' if not problems else 'FAIL: ' + '; '.join(problems)}", flush=True)
            if problems:
                failures.append(name)
    print("# each live pass, in order: seconds", flush=True)
    for name, passes in durations.items():
        print(f"{name:<12} " + "  ".join(passes), flush=True)
    _stamp("end")
    if not measured:
        print("nothing was measured", flush=True)
        return 1
    if failures:
        print(f"failed: {', '.join(failures)}", flush=True)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
