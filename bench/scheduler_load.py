#!/usr/bin/env python3
"""Daemon benchmark: 200 schedules on a fast interval against small collections.

Starts a real `argus daemon` (heuristic planner, embedded PostgreSQL in a scratch directory),
lets it run, and prints runs completed per minute, trigger lateness (audit start minus the
trigger's scheduled time, from the stored runs) at p50/p99, the daemon's resident memory after
warm-up and at the end, and the CPU seconds a run cost the daemon and the PostgreSQL server while
it ran, with the machine's load average at start and end: on a shared machine lateness tells how
much of the machine the daemon got, CPU per run what it needed.

Usage: python bench/scheduler_load.py [--minutes 3] [--schedules 200] [--every 30s] [--workers 4] [--quick]

``--quick`` is a smoke run (5 schedules every 2s for 15 seconds) that proves the script still works.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import psutil
import psycopg
import yaml
from bson import json_util

from argus.daemon.logs import configure_logging
from argus.daemon.store.embedded import start_embedded

ARGUS = str(Path(sys.executable).with_name("argus"))


def _collections(folder: Path, count: int) -> dict[str, str]:
    rng = random.Random(7)
    files = {}
    for c in range(count):
        docs = [{"sku": f"S{c}-{i:04d}", "qty": rng.randint(1, 9), "price": round(rng.lognormvariate(3, 0.8), 2),
                 "status": rng.choice(["new", "paid", "shipped"]), "email": f"u{i}@example.com"} for i in range(100)]
        for d in docs[:3]:
            d["qty"] = -d["qty"]
        path = folder / f"c{c:02d}.jsonl"
        path.write_text("\n".join(json_util.dumps(d) for d in docs))
        files[f"c{c:02d}"] = str(path)
    return files


def _ready(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=2) as resp:
            return resp.status == 200
    except OSError:
        return False


def _cpu_s(process: psutil.Process) -> float:
    """User and system CPU seconds of ``process`` and its children, alive or reaped."""
    total = 0.0
    for each in [process, *process.children(recursive=True)]:
        try:
            times = each.cpu_times()
        except psutil.Error:
            continue
        total += times.user + times.system + (times.children_user + times.children_system if each is process else 0)
    return total


def _postmaster(pgdata: Path) -> psutil.Process:
    return psutil.Process(int((pgdata / "postmaster.pid").read_text().split()[0]))


def _load() -> str:
    return f"{os.getloadavg()[0]:.1f}"


def _skips(port: int) -> dict[str, float]:
    from prometheus_client.parser import text_string_to_metric_families

    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as resp:
        text = resp.read().decode()
    out: dict[str, float] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == "argus_triggers_skipped_total":
                reason = sample.labels["reason"]
                out[reason] = out.get(reason, 0) + sample.value
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--minutes", type=float, default=3.0)
    parser.add_argument("--schedules", type=int, default=200)
    parser.add_argument("--every", default="30s")
    parser.add_argument("--jitter", default=None, help="spread each firing by up to this much (e.g. 20s)")
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--port", type=int, default=None, help="default: a free port")
    parser.add_argument("--quick", action="store_true", help="smoke run: 5 schedules every 2s for 15 seconds")
    args = parser.parse_args()
    if args.quick:
        args.minutes, args.schedules, args.every, args.jitter = 0.25, 5, "2s", None
    if args.port is None:
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            args.port = probe.getsockname()[1]
    configure_logging("WARNING")
    work = Path(tempfile.mkdtemp(prefix="argus-bench-daemon-"))
    pg = start_embedded(work / "pg")
    files = _collections(work, 20)
    names = sorted(files)
    schedules = {
        "connections": {"files": {"files": files}},
        "defaults": {"trigger": {"every": args.every, **({"jitter": args.jitter} if args.jitter else {})},
                     "sample_size": 100},
        "schedules": [{"name": f"s{i:03d}", "connection": "files", "database": "bench",
                       "collection": names[i % len(names)]} for i in range(args.schedules)],
    }
    (work / "schedules.yaml").write_text(yaml.safe_dump(schedules))
    env = {**os.environ, "ARGUS_DATABASE_URL": pg.uri, "ARGUS_DATA_DIR": str(work / "data"),
           "ARGUS_WORKERS": str(args.workers), "ARGUS_LOG_LEVEL": "WARNING"}
    log = (work / "daemon.log").open("w")
    proc = subprocess.Popen([ARGUS, "daemon", "--schedules", str(work / "schedules.yaml"),
                             "--listen", f"127.0.0.1:{args.port}"], env=env, stdout=log, stderr=subprocess.STDOUT)
    daemon = psutil.Process(proc.pid)
    rss: list[tuple[float, float]] = []
    skipped: dict[str, float] = {}
    try:
        deadline = time.monotonic() + 60
        while not _ready(args.port):
            if time.monotonic() > deadline or proc.poll() is not None:
                raise SystemExit(f"daemon did not become ready; log in {work / 'daemon.log'}")
            time.sleep(0.5)
        postgres = _postmaster(pg.pgdata)
        load_start = _load()
        cpu_start = (_cpu_s(daemon), _cpu_s(postgres))
        start = time.monotonic()
        end = start + args.minutes * 60
        while time.monotonic() < end and proc.poll() is None:
            rss.append((time.monotonic() - start, daemon.memory_info().rss / 2**20))
            time.sleep(5)
        skipped = _skips(args.port)
        cpu_end = (_cpu_s(daemon), _cpu_s(postgres))
        load_end = _load()
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            proc.wait(120)
        log.close()
    elapsed = time.monotonic() - start
    with psycopg.connect(pg.uri) as conn:
        total, ok, p50, p99 = conn.execute(
            """select count(*), count(*) filter (where outcome = 'succeeded'),
                      percentile_cont(0.5) within group (order by extract(epoch from started_at - scheduled_for)),
                      percentile_cont(0.99) within group (order by extract(epoch from started_at - scheduled_for))
               from runs where scheduled_for is not null""").fetchone()
    pg.server.cleanup()
    if not total or not rss:
        print(f"nothing measured: no run was stored (log in {work / 'daemon.log'})", file=sys.stderr)
        return 1
    warm = [m for t, m in rss if t >= 60] or [m for _, m in rss]
    jitter = f" (jitter {args.jitter})" if args.jitter else ""
    print(f"{args.schedules} schedules every {args.every}{jitter}, {args.workers} workers, {elapsed / 60:.1f} minutes "
          f"(log and data in {work})")
    print(f"  runs completed      {total} ({ok} succeeded), {total / (elapsed / 60):.1f} per minute")
    print(f"  triggers skipped    {', '.join(f'{k} {v:.0f}' for k, v in sorted(skipped.items())) or 'none'}")
    print(f"  trigger lateness    p50 {p50:.2f} s, p99 {p99:.2f} s (target p99 < 1 s, none skipped: "
          f"{'met' if p99 < 1.0 and not any(skipped.values()) else 'NOT met'})")
    daemon_cpu, postgres_cpu = ((cpu_end[i] - cpu_start[i]) / total for i in (0, 1))
    print(f"  CPU per run         {daemon_cpu:.3f} s in the daemon, {postgres_cpu:.3f} s in PostgreSQL")
    print(f"  load average        {load_start} at start, {load_end} at the end (1 minute, {os.cpu_count()} cores)")
    print(f"  resident memory     {rss[0][1]:.0f} MiB at start, {warm[0]:.0f} MiB after the first minute, "
          f"{rss[-1][1]:.0f} MiB at the end (max {max(m for _, m in rss):.0f} MiB)")
    print(json.dumps({"runs": total, "runs_per_minute": round(total / (elapsed / 60), 1), "lateness_p50_s": p50,
                      "lateness_p99_s": p99, "rss_start_mib": round(rss[0][1]), "rss_warm_mib": round(warm[0]),
                      "rss_end_mib": round(rss[-1][1]), "cpu_per_run_daemon_s": round(daemon_cpu, 4),
                      "cpu_per_run_postgres_s": round(postgres_cpu, 4), "load_start": float(load_start),
                      "load_end": float(load_end)}))
    if ok < total:
        print(f"{total - ok} of {total} runs did not succeed: their lateness measured no audit (log in "
              f"{work / 'daemon.log'})", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
