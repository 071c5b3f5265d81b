#!/usr/bin/env python3
"""File audits against a profiler: `argus audit --file` beside ydata-profiling on the same file.

Each file is audited as a user runs it, whole process (`argus audit --file F --no-store --format
json`), and profiled by ydata-profiling in its default mode (pandas reads the JSON lines, nested
objects flattened with `json_normalize`, `ProfileReport(df).to_file(...)`), one after the other.
Wall time and peak resident memory of each process are measured from outside (wait4), and each
figure is printed beside the issue's target, with the machine's load average at the start and the
end of each measurement: the machine is shared, and a loaded machine slows both tools.

Files: the shared bench's `events` (20,000), a generated telemetry export (60,000 nested
documents, 9 fields), 200,000 and 1,000,000 narrow documents, 5,000 documents of 300 fields, and
`bench/scheduler_load.py --minutes 2` (p99 trigger lateness, triggers skipped).

ydata-profiling is no dependency of Argus (`pip install ydata-profiling` to compare): without it the
comparisons say "nothing measured" and only the absolute targets are judged.

Usage: python bench/filespeed.py [--only NAME ...] [--skip-ydata] [--quick] [--bench-dir DIR]
Exits 1 when it measured nothing, 2 when a target was missed.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
ARGUS = str(Path(sys.executable).with_name("argus"))

_YDATA = """
import sys, json
import pandas as pd
from ydata_profiling import ProfileReport
rows = []
with open(sys.argv[1], encoding="utf-8") as handle:
    for line in handle:
        if line.strip():
            rows.append(json.loads(line))
df = pd.json_normalize(rows)
del rows
ProfileReport(df, title="export").to_file(sys.argv[2])
"""


def _date(when: datetime) -> dict[str, str]:
    return {"$date": when.strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"}


def telemetry(n: int, rng: random.Random) -> Iterator[dict[str, Any]]:
    """Device readings: 9 top-level fields, nested reading and location, a few defects."""
    start = datetime(2025, 1, 1, tzinfo=UTC)
    statuses = ["ok", "ok", "ok", "degraded", "offline"]
    for i in range(n):
        temp: Any = round(rng.gauss(21, 3), 2)
        if rng.random() < 0.004:
            temp = -999.0
        battery: Any = rng.randint(5, 100)
        if rng.random() < 0.002:
            battery = None
        yield {"_id": {"$oid": f"{i:024x}"}, "device_id": f"dev-{rng.randint(1, 800):04d}",
               "ts": _date(start + timedelta(seconds=17 * i)),
               "reading": {"temperature_c": temp, "humidity": round(rng.uniform(20, 80), 1), "battery": battery},
               "location": {"lat": round(rng.uniform(47, 55), 4), "lon": round(rng.uniform(6, 15), 4)},
               "firmware": rng.choice(["1.4.2", "1.4.3", "1.5.0"]),
               "status": rng.choice(statuses) if rng.random() > 0.003 else "OK ",
               "signal_dbm": rng.randint(-110, -40),
               "tags": rng.sample(["indoor", "outdoor", "basement", "roof", "lab"], rng.randint(0, 2))}


def narrow(n: int, rng: random.Random) -> Iterator[dict[str, Any]]:
    """Parcel shipments (as bench/passes.py): weight, carrier, status, postcode; some zeros and blanks."""
    carriers = ["north", "south", "east", "west", "air"]
    for i in range(n):
        yield {"_id": i, "parcel": f"P{i:08d}", "carrier": rng.choice(carriers),
               "weight_kg": 0.0 if rng.random() < 0.004 else round(rng.uniform(0.1, 30), 2),
               "postcode": "" if rng.random() < 0.002 else f"{rng.randint(10000, 99999)}",
               "status": rng.choice(["label", "in_transit", "delivered"])}


def wide(n: int, rng: random.Random) -> Iterator[dict[str, Any]]:
    """Telemetry with 300 fields (as bench/passes.py); a few sensors missing, negative or textual."""
    for i in range(n):
        doc: dict[str, Any] = {"_id": i, "device": f"dev-{i % 97:03d}"}
        for f in range(297):
            value: Any = round(rng.uniform(0, 100), 2)
            if f % 50 == 7 and rng.random() < 0.03:
                value = None
            elif f % 61 == 3 and rng.random() < 0.02:
                value = -value
            elif f % 89 == 5 and rng.random() < 0.01:
                value = str(value)
            doc[f"sensor_{f:03d}"] = value
        doc["read_at"] = _date(datetime(2025, 1, 1, tzinfo=UTC) + timedelta(minutes=i))
        yield doc


def _write(path: Path, docs: Iterator[dict[str, Any]]) -> Path:
    with path.open("w", encoding="utf-8") as out:
        for doc in docs:
            out.write(json.dumps(doc, separators=(",", ":")) + "\n")
    return path


def _run(argv: list[str]) -> tuple[int, float, float, float]:
    """Exit code, wall seconds, peak resident MiB and CPU seconds (user + system) of one process,
    measured from outside. CPU seconds barely change with the machine's load; wall time does."""
    with tempfile.TemporaryFile() as err:
        started = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=err, cwd=ROOT,
                                env={**os.environ, "ARGUS_DATA_DIR": tempfile.mkdtemp(prefix="argus-filespeed-")})
        _, status, usage = os.wait4(proc.pid, 0)
        seconds = time.perf_counter() - started
        code = os.waitstatus_to_exitcode(status)
        proc.returncode = code
        if code not in (0, 1):
            err.seek(0)
            tail = err.read().decode("utf-8", "replace")[-600:]
            print(f"  {Path(argv[3] if len(argv) > 3 else argv[-1]).name}: exit {code}: {tail}", file=sys.stderr)
    return code, seconds, usage.ru_maxrss / 1024, usage.ru_utime + usage.ru_stime


def _load() -> str:
    return f"{os.getloadavg()[0]:.2f}"


def _argus(path: Path) -> tuple[bool, float, float, float, str]:
    load = _load()
    code, seconds, rss, cpu = _run([ARGUS, "audit", "--file", str(path), "--no-store", "--format", "json",
                                    "--fail-on", "none", "--time-budget", "1200"])
    return code == 0, seconds, rss, cpu, f"{load}→{_load()}"


def _ydata(path: Path, folder: Path) -> tuple[bool, float, float, float, str] | None:
    # Looked up, not imported: importing pandas here would make every child's peak memory start at
    # this process's size (a forked child's high-water mark begins with its parent's pages).
    if importlib.util.find_spec("ydata_profiling") is None:
        return None
    load = _load()
    code, seconds, rss, cpu = _run([sys.executable, "-c", _YDATA, str(path), str(folder / f"{path.stem}.html")])
    return code == 0, seconds, rss, cpu, f"{load}→{_load()}"


def _scheduler(quick: bool) -> dict[str, Any] | None:
    argv = [sys.executable, str(ROOT / "bench" / "scheduler_load.py"), *(["--quick"] if quick else ["--minutes", "2"])]
    done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=900)
    line = next((text for text in reversed(done.stdout.splitlines()) if text.startswith("{")), None)
    skipped = re.search(r"triggers skipped\s+(.*)", done.stdout)
    if done.returncode != 0 or line is None:
        return None
    figures = json.loads(line)
    figures["skipped_text"] = skipped.group(1).strip() if skipped else "?"
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", nargs="*", help="events telemetry long million wide scheduler")
    parser.add_argument("--skip-ydata", action="store_true", help="measure Argus only")
    parser.add_argument("--quick", action="store_true", help="small generated files, Argus only: a smoke run")
    parser.add_argument("--bench-dir", type=Path, default=ROOT.parent / "shared" / "bench")
    args = parser.parse_args(argv)
    rng = random.Random(24)
    folder = Path(tempfile.mkdtemp(prefix="argus-filespeed-"))
    scale = 50 if args.quick else 1
    events = args.bench_dir / "events.jsonl"
    plan: list[tuple[str, str, Any, float | None, bool]] = [  # name, label, file maker, seconds target, vs ydata
        ("events", "shared bench events", (lambda: events) if events.is_file() and not args.quick
         else (lambda: _write(folder / "events.jsonl", telemetry(400, rng))), None, True),
        ("telemetry", "telemetry export, nested",
         lambda: _write(folder / "telemetry.jsonl", telemetry(60_000 // scale, rng)), None, True),
        ("long", "narrow documents", lambda: _write(folder / "long.jsonl", narrow(200_000 // scale, rng)), 60.0, False),
        ("million", "narrow documents", lambda: _write(folder / "million.jsonl", narrow(1_000_000 // scale, rng)),
         300.0, True),
        ("wide", "300 fields", lambda: _write(folder / "wide.jsonl", wide(5_000 // scale, rng)), 60.0, False),
    ]
    measured = 0
    missed = 0
    print(f"machine: {os.cpu_count()} cores, load average {_load()} at the start"
          f"{'; --quick: generated files at 1/50 size, targets not judged' if args.quick else ''}")
    print(f"{'file':<27} {'docs':>9} {'argus s':>8} {'cpu s':>6} {'MiB':>5} {'ydata s':>8} {'cpu s':>6} {'MiB':>5} "
          f"{'ratio':>6}  {'target':<26} {'met':<5} load (argus; ydata)")
    for name, label, make, target_s, versus in plan:
        if args.only and name not in args.only:
            continue
        path = make()
        docs = sum(1 for line in path.open(encoding="utf-8") if line.strip())
        ok, seconds, rss, cpu, load = _argus(path)
        if not ok:
            print(f"{label:<27} {docs:>9,} argus failed", flush=True)
            missed += 1
            continue
        measured += 1
        ydata = None if args.skip_ydata or args.quick else _ydata(path, folder)
        y_text = "  nothing measured (ydata-profiling not installed or skipped)" if ydata is None else \
            f" {ydata[1]:>8.1f} {ydata[3]:>6.1f} {ydata[2]:>5.0f}" if ydata[0] else "  ydata failed"
        ratio = seconds / ydata[1] if ydata and ydata[0] else None
        targets = []
        met = True
        if target_s is not None:
            targets.append(f"≤ {target_s:.0f} s")
            met &= seconds <= target_s
        if versus and name != "million":
            targets.append("≤ 1.0 x ydata")
            met &= ratio is not None and ratio <= 1.0
        if name == "million":
            targets.append("peak < ydata's")
            met &= bool(ydata and ydata[0] and rss < ydata[2])
        if args.quick:
            verdict = "(quick)"
        else:
            verdict = "yes" if met else "NO"
            missed += not met
        print(f"{label:<27} {docs:>9,} {seconds:>8.1f} {cpu:>6.1f} {rss:>5.0f}"
              f"{y_text} "
              f"{'' if ratio is None else f'{ratio:>5.2f}x':>6}  {', '.join(targets):<26} {verdict:<5} "
              f"{load}; {ydata[4] if ydata else '-'}", flush=True)
        path.unlink(missing_ok=True) if path.parent == folder else None
    if not args.only or "scheduler" in args.only:
        figures = _scheduler(args.quick)
        if figures is None:
            print("scheduler_load.py: nothing measured (the daemon benchmark failed)")
        else:
            measured += 1
            met = figures["lateness_p99_s"] < 1.0 and figures["skipped_text"] == "none"
            missed += not met and not args.quick
            print(f"scheduler_load.py {'--quick' if args.quick else '--minutes 2'}: {figures['runs_per_minute']} "
                  f"runs/min, lateness p50 {figures['lateness_p50_s']:.2f} s, p99 {figures['lateness_p99_s']:.2f} s "
                  f"(target < 1 s), skipped {figures['skipped_text']} (target none): "
                  f"{'(quick)' if args.quick else 'met' if met else 'NOT met'}")
    print(f"load average {_load()} at the end")
    if not measured:
        print("nothing measured", file=sys.stderr)
        return 1
    return 2 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
