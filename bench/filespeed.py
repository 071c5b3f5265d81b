#!/usr/bin/env python3
"""File audits against a profiler: `argus audit --file` and ydata-profiling, interleaved on the same file.

For every file, Argus (`argus audit --file F --no-store --format json`, as a user runs it) and
ydata-profiling in its default mode (pandas reads the JSON lines, nested objects flattened with
`json_normalize`, `ProfileReport(df).to_file(...)`) run one after the other, A, B, A, B, ...
(`--pairs`, 2 by default; `--million-pairs`, 1, for the 1,000,000-document file), each a
whole process measured from outside (wait4: wall time, CPU seconds, peak resident memory), with the
machine's load average before and after each process.
The row gives the median of each side and their ratio; a side slower than the other is shown as it
is. A process that runs longer than `--timeout` seconds is stopped, and the row says so: that side
is not run again for the row.

Files: the shared bench's `events` (20,000 nested documents), a generated telemetry export (60,000
nested documents), 200,000 and 1,000,000 narrow flat documents, 5,000 documents of 300 fields.

ydata-profiling is no dependency of Argus (`pip install -e '.[bench]'`): without it, nothing is
compared and the script exits 1 unless `--skip-ydata` is given.

Usage: python bench/filespeed.py [--only NAME ...] [--pairs N] [--million-pairs N] [--timeout S]
                                  [--skip-ydata] [--quick] [--bench-dir DIR]
Exits 1 when nothing was measured, when an Argus audit failed or sampled no document, or when a
comparison had no ydata run to compare with (ydata-profiling missing or failing).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import random
import signal
import statistics
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


class _Run:
    """One process, measured from outside."""

    def __init__(self, *, ok: bool, seconds: float, rss_mib: float, cpu_s: float, load: str, why: str = "") -> None:
        self.ok, self.seconds, self.rss_mib, self.cpu_s, self.load, self.why = ok, seconds, rss_mib, cpu_s, load, why


def _load() -> str:
    return f"{os.getloadavg()[0]:.2f}"


def _run(argv: list[str], *, timeout: float, stdout: Any = subprocess.DEVNULL) -> tuple[int | None, _Run]:
    """Exit code (None when stopped at ``timeout``) and the figures of one process. CPU seconds
    (user + system) barely change with the machine's load; wall time does."""
    load = _load()
    with tempfile.TemporaryFile() as err:
        started = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=stdout, stderr=err, cwd=ROOT,
                                env={**os.environ, "ARGUS_DATA_DIR": tempfile.mkdtemp(prefix="argus-filespeed-")})
        code: int | None = None
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                code = os.waitstatus_to_exitcode(status)
                break
            if time.perf_counter() - started > timeout:
                os.kill(proc.pid, signal.SIGKILL)
                _, status, usage = os.wait4(proc.pid, 0)
                break
            time.sleep(0.05)
        proc.returncode = -9 if code is None else code
        seconds = time.perf_counter() - started
        err.seek(0)
        tail = err.read().decode("utf-8", "replace")[-400:]
    why = f"stopped after {timeout:.0f} s (--timeout)" if code is None else "" if code == 0 else f"exit {code}: {tail}"
    return code, _Run(ok=code == 0, seconds=seconds, rss_mib=usage.ru_maxrss / 1024,
                      cpu_s=usage.ru_utime + usage.ru_stime, load=f"{load}→{_load()}", why=why)


def _argus(path: Path, timeout: float) -> _Run:
    with tempfile.TemporaryFile() as out:
        code, run = _run([ARGUS, "audit", "--file", str(path), "--no-store", "--format", "json", "--fail-on", "none",
                          "--time-budget", str(int(timeout))], timeout=timeout, stdout=out)
        if code == 0:
            out.seek(0)
            report = json.loads(out.read() or b"{}")
            if report.get("outcome") != "succeeded" or not report.get("documents_sampled"):
                run.ok = False
                run.why = (f"outcome {report.get('outcome')}, {report.get('documents_sampled') or 0} documents "
                           f"sampled: measured nothing")
    return run


def _ydata(path: Path, folder: Path, timeout: float) -> _Run:
    html = folder / f"{path.stem}.html"
    html.unlink(missing_ok=True)
    _, run = _run([sys.executable, "-c", _YDATA, str(path), str(html)], timeout=timeout)
    if run.ok and not html.is_file():
        run.ok, run.why = False, "wrote no report"
    return run


def _median(runs: list[_Run], attr: str) -> float:
    return statistics.median(getattr(r, attr) for r in runs)


def _side(runs: list[_Run]) -> str:
    good = [r for r in runs if r.ok]
    if not good:
        return f"{'-':>8} {'-':>6} {'-':>6}"
    return f"{_median(good, 'seconds'):>8.1f} {_median(good, 'cpu_s'):>6.1f} {_median(good, 'rss_mib'):>6.0f}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", nargs="*", help="events telemetry long million wide")
    parser.add_argument("--pairs", type=int, default=2, help="Argus and ydata runs per file, interleaved (default 2)")
    parser.add_argument("--million-pairs", type=int, default=1,
                        help="pairs for a file of 1,000,000 documents or more (default 1: the run fits in ~15 min)")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds before a process is stopped")
    parser.add_argument("--skip-ydata", action="store_true", help="measure Argus only (no ratio is printed)")
    parser.add_argument("--quick", action="store_true", help="generated files at 1/50 size, Argus only: a smoke run")
    parser.add_argument("--bench-dir", type=Path, default=ROOT.parent / "shared" / "bench")
    args = parser.parse_args(argv)
    rng = random.Random(24)
    folder = Path(tempfile.mkdtemp(prefix="argus-filespeed-"))
    scale = 50 if args.quick else 1
    versus = not (args.skip_ydata or args.quick)
    if versus and importlib.util.find_spec("ydata_profiling") is None:
        # Looked up, not imported: importing pandas here would make every child's peak memory start at
        # this process's size (a forked child's high-water mark begins with its parent's pages).
        print("nothing compared: ydata-profiling is not installed (pip install -e '.[bench]', or --skip-ydata)",
              file=sys.stderr)
        return 1
    events = args.bench_dir / "events.jsonl"
    plan: list[tuple[str, str, Any]] = [
        ("events", "shared bench events, nested", (lambda: events) if events.is_file() and not args.quick
         else (lambda: _write(folder / "events.jsonl", telemetry(400, rng)))),
        ("telemetry", "telemetry export, nested",
         lambda: _write(folder / "telemetry.jsonl", telemetry(60_000 // scale, rng))),
        ("long", "narrow flat documents", lambda: _write(folder / "long.jsonl", narrow(200_000 // scale, rng))),
        ("million", "narrow flat documents", lambda: _write(folder / "million.jsonl", narrow(1_000_000 // scale, rng))),
        ("wide", "300 flat fields", lambda: _write(folder / "wide.jsonl", wide(5_000 // scale, rng))),
    ]
    failed = measured = 0
    print(f"machine: {os.cpu_count()} cores, load average {_load()} at the start; {args.pairs} pair(s) per file, "
          f"interleaved (Argus, ydata, Argus, ydata, ...), "
          f"{min(args.pairs, args.million_pairs)} for 1,000,000 documents; medians; "
          f"timeout {args.timeout:.0f} s a process"
          f"{'; --quick: generated files at 1/50 size, Argus only' if args.quick else ''}")
    print(f"{'file':<29} {'docs':>9} {'argus s':>8} {'cpu s':>6} {'MiB':>6} {'ydata s':>8} {'cpu s':>6} "
          f"{'MiB':>6} {'wall':>7} {'memory':>7}  runs (wall s, load before→after)")
    for name, label, make in plan:
        if args.only and name not in args.only:
            continue
        path = make()
        docs = sum(1 for line in path.open(encoding="utf-8") if line.strip())
        argus_runs: list[_Run] = []
        ydata_runs: list[_Run] = []
        pairs = min(args.pairs, args.million_pairs) if docs >= 1_000_000 else args.pairs
        for _ in range(pairs):
            argus_runs.append(_argus(path, args.timeout))
            if versus and all(r.ok for r in ydata_runs):  # a side that failed or timed out is not run again
                ydata_runs.append(_ydata(path, folder, args.timeout))
        good_a = [r for r in argus_runs if r.ok]
        good_y = [r for r in ydata_runs if r.ok]
        failed += len(good_a) < len(argus_runs)
        measured += bool(good_a)
        if versus and not good_y:
            failed += 1  # a comparison with nothing to compare
        ratio = (f"{_median(good_a, 'seconds') / _median(good_y, 'seconds'):>6.2f}x "
                 f"{_median(good_a, 'rss_mib') / _median(good_y, 'rss_mib'):>6.2f}x") if good_a and good_y \
            else f"{'-':>7} {'-':>7}"
        order = []
        for i, a in enumerate(argus_runs):
            order.append(f"A {a.seconds:.1f} ({a.load})" if a.ok else f"A {a.why}")
            if i < len(ydata_runs):
                y = ydata_runs[i]
                order.append(f"Y {y.seconds:.1f} ({y.load})" if y.ok else f"Y {y.why}")
        print(f"{label:<29} {docs:>9,} {_side(argus_runs)} {_side(ydata_runs) if versus else _side([])} {ratio}  "
              f"{'; '.join(order)}", flush=True)
        if path.parent == folder:
            path.unlink(missing_ok=True)
    print(f"load average {_load()} at the end")
    print("wall, memory: Argus's median over ydata's (above 1.00x: Argus slower or larger)")
    if failed:
        print(f"{failed} file(s) with a failed audit or nothing to compare", file=sys.stderr)
    if not measured:
        print("nothing measured", file=sys.stderr)
    return 1 if failed or not measured else 0


if __name__ == "__main__":
    sys.exit(main())
