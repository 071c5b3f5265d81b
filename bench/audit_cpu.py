#!/usr/bin/env python3
"""CPU seconds one small audit costs: the figure behind `bench/scheduler_load.py`'s throughput.

Audits one of `scheduler_load.py`'s 100-document collections (heuristic planner) in this process,
then runs the daemon's path for a trigger (`ScheduleRunner.run`: lock, claim, history, audit,
spool, store with diff and incidents, metrics) against an embedded PostgreSQL in a scratch
directory, and prints CPU seconds per audit and per run: this process's (threads and reaped
children included) and the PostgreSQL server's. CPU seconds, not wall time, so the figures hold on
a machine shared with other work; the load average is printed beside them.

The daemon's audits share one process (one core under the GIL), so 400 runs a minute needs well
under 0.15 CPU-s a run there.

Usage: python bench/audit_cpu.py [--audits 50] [--rounds 3] [--quick]
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path

import psutil
import yaml
from prometheus_client import CollectorRegistry
from scheduler_load import _collections

from argus.agent.clock import SystemClock
from argus.agent.loop import run_audit
from argus.agent.planners.factory import make_planner
from argus.config.schedules import load_schedules
from argus.config.settings import Settings
from argus.daemon.logs import configure_logging
from argus.daemon.metrics import Metrics
from argus.daemon.runner import ScheduleRunner
from argus.daemon.sources import SourceCache, load_path
from argus.daemon.spool import Spool
from argus.daemon.store import open_store
from argus.daemon.store.embedded import start_embedded

TARGET_S = 0.15  # a run's CPU in the daemon for 400 runs a minute on one core, with room to spare
SCHEDULES = 40


def _cpu_s() -> float:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def _server_cpu_s(pgdata: Path) -> float:
    postmaster = psutil.Process(int((pgdata / "postmaster.pid").read_text().split()[0]))
    total = 0.0
    for each in [postmaster, *postmaster.children(recursive=True)]:
        try:
            times = each.cpu_times()
        except psutil.Error:
            continue
        total += times.user + times.system
    return total


def _in_process(path: str, audits: int) -> float:
    settings = Settings()
    options = settings.audit_options(sample_size=100)
    target = load_path(path, max_time_ms=options.max_time_ms)

    def audit() -> None:
        setup = make_planner("heuristic")
        report = run_audit(target, setup.planner, options=options, gates=setup.gates, llm=setup.account)
        if report.outcome != "succeeded":
            raise SystemExit(f"the audit ended {report.outcome}: {report.error}")
    audit()  # first: imports and caches
    start = _cpu_s()
    for _ in range(audits):
        audit()
    return (_cpu_s() - start) / audits


def _runner_path(work: Path, files: dict[str, str], rounds: int) -> tuple[float, float, int]:
    pg = start_embedded(work / "pg")
    names = sorted(files)
    (work / "schedules.yaml").write_text(yaml.safe_dump({
        "connections": {"files": {"files": files}},
        "defaults": {"trigger": {"every": "30s"}, "sample_size": 100},
        "schedules": [{"name": f"s{i:03d}", "connection": "files", "database": "bench",
                       "collection": names[i % len(names)]} for i in range(SCHEDULES)]}))
    os.environ.update({"ARGUS_DATABASE_URL": pg.uri, "ARGUS_DATA_DIR": str(work / "data")})
    settings = Settings()
    store = open_store(settings, pool_size=4)
    clock = SystemClock()
    runner = ScheduleRunner(store=store, spool=Spool(settings.data_dir / "spool"),
                            metrics=Metrics(CollectorRegistry()), settings=settings, sources=SourceCache(), clock=clock)
    schedules = load_schedules(work / "schedules.yaml")
    first = clock.now()

    def one_round(k: int) -> None:
        for i in range(SCHEDULES):
            report = runner.run(schedules, f"s{i:03d}", scheduled_at=first + timedelta(seconds=30 * k))
            if report is None or report.outcome != "succeeded":
                raise SystemExit(f"run s{i:03d} ended {report.outcome if report else 'skipped'}")
    try:
        one_round(0)  # first runs: files loaded, nothing to diff against
        own, server = _cpu_s(), _server_cpu_s(pg.pgdata)
        for k in range(1, rounds + 1):
            one_round(k)
        runs = rounds * SCHEDULES
        return (_cpu_s() - own) / runs, (_server_cpu_s(pg.pgdata) - server) / runs, runs
    finally:
        store.close()
        pg.server.cleanup()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--audits", type=int, default=50, help="audits measured in process")
    parser.add_argument("--rounds", type=int, default=3, help=f"rounds of {SCHEDULES} runs on the daemon's path")
    parser.add_argument("--quick", action="store_true", help="smoke run: 3 audits, one round")
    args = parser.parse_args()
    if args.quick:
        args.audits, args.rounds = 3, 1
    if args.audits < 1 or args.rounds < 1:
        print("nothing measured: --audits and --rounds must be at least 1", file=sys.stderr)
        return 1
    configure_logging("WARNING")
    work = Path(tempfile.mkdtemp(prefix="argus-bench-audit-cpu-"))
    files = _collections(work, 20)
    load = f"{os.getloadavg()[0]:.1f}"
    wall = time.monotonic()
    audit_s = _in_process(files["c00"], args.audits)
    run_s, server_s, runs = _runner_path(work, files, args.rounds)
    print(f"one 100-document collection of scheduler_load.py, heuristic planner ({os.cpu_count()} cores, "
          f"load average {load} at start, {os.getloadavg()[0]:.1f} at the end, {time.monotonic() - wall:.0f} s)")
    print(f"  audit in process        {audit_s:.4f} CPU-s ({args.audits} audits)")
    print(f"  daemon's path, a run    {run_s:.4f} CPU-s in the daemon's process, {server_s:.4f} in PostgreSQL "
          f"({runs} runs; target under {TARGET_S} in the process: {'met' if run_s < TARGET_S else 'NOT met'})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
