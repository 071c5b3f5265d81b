"""Killing the process in the middle of storing a report leaves no partial run."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from uuid import UUID

import psycopg

from argus.daemon.record import record_report
from argus.daemon.store import PostgresStore
from tests.daemon.store.reports import finding, report

ROOT = Path(__file__).resolve().parents[3]
CHILD = """
import sys
from argus.daemon.store import PostgresStore
from argus.daemon.record import record_report
from tests.daemon.store.reports import finding, report
store = PostgresStore(sys.argv[1])
r = report([finding(f"field_{i}") for i in range(20000)])
print(r.run_id, flush=True)
record_report(store, r)
print("stored", flush=True)
"""


def _advisory_locks(dsn: str) -> int:
    with psycopg.connect(dsn) as conn:
        row = conn.execute("select count(*) from pg_locks where locktype = 'advisory' and granted").fetchone()
    return int(row[0]) if row else 0


def test_sigkill_while_storing_leaves_no_partial_run(pg_dsn: str) -> None:
    PostgresStore(pg_dsn).close()  # migrate first, so the child's lock is the report's
    child = subprocess.Popen([sys.executable, "-c", CHILD, pg_dsn], cwd=ROOT, stdout=subprocess.PIPE, text=True,
                             env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert child.stdout is not None
    run_id = UUID(child.stdout.readline().strip())
    deadline = time.monotonic() + 60
    while _advisory_locks(pg_dsn) == 0:           # the storing transaction has begun
        assert time.monotonic() < deadline, "the child never started storing"
        time.sleep(0.02)
    time.sleep(0.3)                               # well inside it: 20,000 findings take seconds
    child.send_signal(signal.SIGKILL)
    child.wait(timeout=10)
    rest = child.stdout.read()
    assert child.returncode == -signal.SIGKILL and "stored" not in rest

    with psycopg.connect(pg_dsn) as conn:
        counts = {t: conn.execute(f"select count(*) from {t}").fetchone()[0]
                  for t in ("runs", "findings", "dismissed_findings", "gate_evaluations", "patterns")}
    assert counts == {"runs": 0, "findings": 0, "dismissed_findings": 0, "gate_evaluations": 0, "patterns": 0}

    with PostgresStore(pg_dsn) as store:          # and the database takes the next report normally
        stored = record_report(store, report([finding("zip")]))
        assert store.get_report(stored.run_id).findings == stored.findings
        assert run_id not in [r.id for r in store.list_runs()]
