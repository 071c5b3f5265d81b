#!/usr/bin/env python3
"""Fault benchmark: real `argus daemon` processes put through kills, crashes and costly queries.

Each fault in ``FAULTS`` runs against its own PostgreSQL database (an embedded server in a scratch
directory) and prints one line: runs triggered / stored / lost / failed, alerts queued /
delivered / doubled, and the longest run against its time budget. A run is *lost* when an audit started and
nothing of it was stored (not even as failed); an alert is *doubled* when the receiver got it more
than once. Target: 0 lost, 0 failed (an audit that crashed, not one whose daemon died), 0 doubled, no run
longer than its budget + 10 s. A fault whose waits ran out (a daemon that exited or never got
there) or that triggered no run is NOT MEASURED. Exits 1 when a fault misses the target or was not
measured, 2 when nothing was measured.

Usage: python bench/faults.py [--only NAME ...]
"""

from __future__ import annotations

import sys
from pathlib import Path

# Run as `python bench/faults.py`: bench/ must not shadow the `daemon` package; the repository
# root holds `tests`, whose daemon and receiver helpers this script drives.
ROOT = Path(__file__).resolve().parents[1]
sys.path[:] = [str(ROOT)] + [p for p in sys.path if Path(p or ".").resolve() != ROOT / "bench"]

import argparse
import signal
import subprocess
import tempfile
import time
import uuid
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import psycopg
from psycopg.conninfo import make_conninfo

from argus.daemon.logs import configure_logging
from argus.daemon.store.embedded import start_embedded
from tests.daemon.alerts.receiver import Receiver
from tests.daemon.process import DaemonProcess
from tests.doubles.model_server import LocalChatServer, tool_reply
from tests.faults.scenarios import kill_postmaster, slow_collection, write_schedules

GRACE_S = 10.0


@dataclass
class Scene:
    """What one fault needs: a scratch directory, a database, an alert receiver, the daemons it ran."""

    work: Path
    dsn: str | None
    receiver: Receiver
    daemons: list[DaemonProcess] = field(default_factory=list)

    def env(self, **extra: str) -> dict[str, str]:
        env = {"ARGUS_DATA_DIR": str(self.work / "data"), "ARGUS_RELOAD_POLL_S": "0.2",
               "FAULT_HOOK_URL": f"{self.receiver.url}/hook", **extra}
        if self.dsn:
            env["ARGUS_DATABASE_URL"] = self.dsn
        return env

    def daemon(self, path: Path, **extra: str) -> DaemonProcess:
        d = DaemonProcess(path, self.env(**extra), self.work / f"daemon-{len(self.daemons)}.log")
        self.daemons.append(d)
        return d

    def alerts(self) -> dict[str, Any]:
        return {"alerts": {"failed_runs": 1, "min_severity": "critical", "new_persistent": False,
                           "channels": {"hook": {"type": "webhook", "url_env": "FAULT_HOOK_URL"}}}}


@dataclass(frozen=True)
class Fault:
    name: str
    run: Callable[[Scene], str | None]  # the history DSN it stored into (None: the scene's)
    embedded: bool = False              # the daemon starts its own embedded PostgreSQL


# --- the faults ------------------------------------------------------------------------------

def _sigkill_mid_audit(scene: Scene) -> None:
    path = scene.work / "schedules.yaml"
    write_schedules(path, {"orders": slow_collection(scene.work)}, extra=scene.alerts())
    first = scene.daemon(path)
    first.wait_until("the audit under way", lambda: bool(first.status()["in_progress"]))
    first.kill()
    second = scene.daemon(path)
    second.wait_until("the trigger run again", lambda: any(
        s["last_run"] and s["last_run"]["outcome"] == "succeeded" for s in second.status()["schedules"]), timeout=120)
    second.wait_until("alerts out", lambda: second.metric("argus_alerts_pending") == 0)
    time.sleep(2)
    second.stop()


def _sigterm_mid_audit(scene: Scene) -> None:
    path = scene.work / "schedules.yaml"
    write_schedules(path, {"orders": slow_collection(scene.work, documents=20000)}, extra=scene.alerts())
    daemon = scene.daemon(path, ARGUS_SHUTDOWN_GRACE_S="2")
    daemon.wait_until("the audit under way", lambda: bool(daemon.status()["in_progress"]))
    daemon.stop()


def _embedded_postgres_killed(scene: Scene) -> None:
    path = scene.work / "schedules.yaml"
    write_schedules(path, {"orders": slow_collection(scene.work, documents=300)}, every="2s")
    daemon = scene.daemon(path)
    daemon.wait_until("a stored run", lambda: daemon.metric("argus_audit_runs_total") >= 1
                      and daemon.metric("argus_spool_reports") == 0)
    kill_postmaster(scene.work / "data" / "pgdata")
    daemon.wait_until("the restart", lambda: daemon.metric("argus_embedded_database_restarts_total") >= 1,
                      timeout=120)
    before = daemon.metric("argus_audit_runs_total")
    daemon.wait_until("runs stored again", lambda: daemon.metric("argus_audit_runs_total") >= before + 2
                      and daemon.metric("argus_spool_reports") == 0, timeout=120)
    daemon.stop()


def _llm_scene(scene: Scene, replies: list[Any], *, docs: str, budget: str, name: str = "orders") -> None:
    """One schedule whose planner is scripted by a local OpenAI-compatible server."""
    server = LocalChatServer(replies, default=tool_reply("conclude", {})).start()
    try:
        data = scene.work / f"{name}.jsonl"
        data.write_text(docs)
        path = scene.work / "schedules.yaml"
        write_schedules(path, {name: data}, time_budget=budget, max_time_ms=600000, planner="llm",
                        llm={"model": "m", "base_url": server.base_url, "max_retries": 0})
        daemon = scene.daemon(path)
        daemon.wait_until("the run finished", lambda: daemon.metric("argus_audit_runs_total") >= 1, timeout=120)
        daemon.stop()
    finally:
        server.stop()


def _catastrophic_regex(scene: Scene) -> None:
    # A search the guard lets through (its cost is judged per starting position) that the engine's
    # regex restarts at each of 60,000 blanks: half a minute per value (the guard refuses ^.*a.*a.*b$ and
    # ^(a+)+$). Each value differs: the engine memoises a pattern's verdict per value within a read.
    _llm_scene(scene, [tool_reply("run_query", {"filter": {"email": {"$regex": "\\s+[xy]"}}, "limit": 0})],
               docs="".join(f'{{"order_no": "O-{i}", "email": "{" " * 60_000}!{i}"}}\n' for i in range(50)),
               budget="5s")


def _huge_unwind(scene: Scene) -> None:
    big = "[" + ",".join(str(i) for i in range(100_000)) + "]"
    _llm_scene(scene, [tool_reply("get_stats", {"field": "arr"})] * 3,
               docs="".join(f'{{"order_no": "O-{i}", "arr": {big}}}\n' for i in range(20)), budget="3s")


def _nested_filter(scene: Scene) -> None:
    nested: dict[str, Any] = {"qty": {"$gt": 0}}
    for _ in range(200):
        nested = {"$and": [nested]}
    _llm_scene(scene, [tool_reply("run_query", {"filter": nested, "limit": 0})],
               docs="".join(f'{{"order_no": "O-{i}", "qty": {i % 5}}}\n' for i in range(100)), budget="30s")


_ORDERS = "".join(f'{{"order_no": "O-{i}", "qty": {i % 5}, "sku": "S-{i % 7}"}}\n' for i in range(100))


def _hostile_answer(tool: str, arguments: Any) -> Callable[[Scene], None]:
    """A model answer that once ended the audit with an exception (the daemon stored it as failed)."""
    return lambda scene: _llm_scene(scene, [tool_reply(tool, arguments)], docs=_ORDERS, budget="30s")


def _file_scene(docs: str) -> Callable[[Scene], None]:
    """A file whose lines once ended the file audit (the daemon stored it as failed)."""
    return lambda scene: _llm_scene(scene, [], docs=docs, budget="30s")


# Every pattern that reached the wire though PCRE backtracks on it for minutes: the eight, then
# the classes PCRE reads wider than Python (\W, \S, \D, \v) and a POSIX class Python reads as characters.
_PCRE_SLOW = [r"^(?:a?){28}a{28}$", r"^(ab?|b)+$", r"^(a[bc]?|b)*$", r"^(a|[ab])+$", r"^(\d|[0-9])+$",
              r"^(\w|\d)+$", "^([\u0100-\u0102]|[\u0101-\u0103])+$", r"^.*a.*a.*a.*a.*a.*b$",
              r"^(\W|é)+$", r"^(\S|\xa0)+$", "^(\\D|\u0663)+$", r"^(\v|\n)+$", r"^([[:digit:]]|1)+$"]
_SNAN = ('{"_id": 99, "qty": {"$numberDecimal": "sNaN"}}\n{"_id": 100, "qty": {"$numberDecimal": "-sNaN"}}\n'
         + _ORDERS)
_NESTED_5000 = '{"filter": ' + '{"$and": [' * 5000 + '{"qty": 1}' + ']}' * 5000 + ', "limit": 0}'

FAULTS: list[Fault] = [
    Fault("sigkill-mid-audit", _sigkill_mid_audit),
    Fault("sigterm-mid-audit", _sigterm_mid_audit),
    Fault("embedded-postgres-killed", _embedded_postgres_killed, embedded=True),
    Fault("in-memory-catastrophic-regex", _catastrophic_regex),
    Fault("in-memory-unwind-100k", _huge_unwind),
    Fault("llm-filter-nested-200", _nested_filter),
    Fault("llm-arguments-nested-5000", _hostile_answer("run_query", _NESTED_5000)),
    Fault("llm-value-filter-regex", _hostile_answer("get_stats", {"field": "sku", "operation": "value_counts",
                                                                  "value_filter": {"$regex": "^S"}})),
    Fault("llm-integer-beyond-int64", _hostile_answer("run_query", {"filter": {"qty": 99999999999999999999999},
                                                                    "limit": 0})),
    Fault("llm-integer-beyond-int64-in", _hostile_answer(
        "run_query", {"filter": {"qty": {"$in": [1, 99999999999999999999999]}}, "limit": 0})),
    Fault("llm-nul-in-a-key", _hostile_answer("run_query", {"filter": {"sku": {"a\x00b": 1}}, "limit": 0})),
    Fault("llm-nul-in-a-pattern", _hostile_answer(
        "run_query", {"filter": {"sku": {"$regularExpression": {"pattern": "a\x00", "options": ""}}}, "limit": 0})),
    *[Fault(f"llm-regex-pcre-{i}", _hostile_answer("run_query", {"filter": {"sku": {"$regex": pattern}}, "limit": 0}))
      for i, pattern in enumerate(_PCRE_SLOW)],
    Fault("file-snan-decimal", _file_scene(_SNAN)),
]
# Model-endpoint faults (a server answering 500, 429 with Retry-After, a non-JSON 200, nothing at
# all, one byte at a time) belong here too, as Fault(name, scene function) entries built on
# `_llm_scene` with the local server's scripted replies.


# --- measuring -------------------------------------------------------------------------------

@dataclass
class Measured:
    triggered: int
    stored: int
    lost: int
    queued: int
    delivered: int
    doubled: int
    longest_s: float
    budget_s: float
    failed: int = 0  # runs stored as failed for another reason than their daemon dying (an audit that crashed)

    def ok(self) -> bool:
        """The target met, by a fault that triggered a run at all (one that triggered none measured nothing)."""
        return self.triggered > 0 and self.lost == 0 and self.doubled == 0 and self.failed == 0 and \
            self.longest_s <= self.budget_s + GRACE_S

    def line(self, name: str) -> str:
        return (f"{name:30s} runs triggered {self.triggered} / stored {self.stored} / lost {self.lost} / "
                f"failed {self.failed}   "
                f"alerts queued {self.queued} / delivered {self.delivered} / doubled {self.doubled}   "
                f"longest run {self.longest_s:.1f}s vs budget {self.budget_s:.0f}s   "
                f"{'ok' if self.ok() else 'MISSED' if self.triggered else 'NOT MEASURED: no run triggered'}")


def measure(scene: Scene, dsn: str) -> Measured:
    started = {e["run_id"] for d in scene.daemons for e in d.events() if e["event"] == "audit_started"}
    with psycopg.connect(dsn) as conn:
        runs = conn.execute("select id::text, duration_s, error, (report->'options'->>'time_budget_s')::float, "
                            "outcome from runs").fetchall()
        queued, delivered = conn.execute("select count(*), count(*) filter (where status = 'delivered') "
                                         "from alert_outbox").fetchone() or (0, 0)
    stored = {r[0] for r in runs}
    timed = [(r[1], r[3]) for r in runs if not str(r[2] or "").startswith("lost: ")]  # a lost run has no duration
    longest, budget = max(timed, default=(0.0, 0.0))
    received = Counter(r.headers.get("x-argus-dedup-key") or r.body for r in scene.receiver.requests)
    return Measured(triggered=len(started | stored), stored=len(stored), lost=len(started - stored),
                    queued=int(queued), delivered=int(delivered),
                    doubled=sum(n - 1 for n in received.values()), longest_s=float(longest),
                    budget_s=float(budget or 0.0),
                    failed=sum(1 for r in runs if r[4] == "failed" and not str(r[2] or "").startswith("lost: ")))


def _why(exc: BaseException) -> str:
    """The wait that ran out, and the last line its daemon logged (the error it exited on)."""
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    if not lines:
        return type(exc).__name__
    return lines[0] + (f" ... {lines[-1][:300]}" if len(lines) > 1 else "")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", help="run only these faults", default=None)
    parser.add_argument("--quick", action="store_true", help="a smoke run: the quickest fault only")
    args = parser.parse_args()
    configure_logging("WARNING")  # the figures only: the scratch PostgreSQL's start is no figure
    only = ["llm-filter-nested-200"] if args.quick and not args.only else args.only
    unknown = sorted(set(only or ()) - {f.name for f in FAULTS})
    if unknown:
        parser.error(f"no fault named {', '.join(unknown)}; the faults: {', '.join(f.name for f in FAULTS)}")
    faults = [f for f in FAULTS if not only or f.name in only]
    measured: list[Measured] = []
    with tempfile.TemporaryDirectory(prefix="argus-faults-") as scratch:
        pg = start_embedded(Path(scratch) / "pg")
        try:
            for fault in faults:
                work = Path(scratch) / fault.name
                work.mkdir()
                dsn = None
                if not fault.embedded:
                    name = f"faults_{uuid.uuid4().hex[:8]}"
                    with psycopg.connect(pg.admin_uri(), autocommit=True) as conn:
                        conn.execute(f'create database "{name}"')
                    dsn = make_conninfo(pg.admin_uri(), dbname=name)
                scene = Scene(work=work, dsn=dsn, receiver=Receiver().start())
                try:
                    fault.run(scene)
                    if fault.embedded:
                        own = start_embedded(work / "data")
                        try:
                            result = measure(scene, own.uri)
                        finally:
                            own.server.cleanup()
                    else:
                        assert dsn is not None
                        result = measure(scene, dsn)
                except (AssertionError, subprocess.TimeoutExpired) as exc:  # a wait ran out, a daemon died
                    print(f"{fault.name:30s} NOT MEASURED: {_why(exc)}", flush=True)
                    continue
                finally:
                    for d in scene.daemons:
                        if d.proc.poll() is None:
                            d.proc.send_signal(signal.SIGKILL)
                            d.proc.wait()
                    scene.receiver.stop()
                measured.append(result)
                print(result.line(fault.name), flush=True)
        finally:
            pg.server.cleanup()
    if not measured or not any(m.triggered for m in measured):
        print("measured nothing", file=sys.stderr)
        return 2
    return 0 if all(m.ok() for m in measured) and len(measured) == len(faults) else 1


if __name__ == "__main__":
    sys.exit(main())
