#!/usr/bin/env python3
"""Alerts per finding against alerts per incident, over a week of hourly runs on a noisy collection.

Usage: python bench/incidents.py [--days 7] [--dsn DSN] [--quick]   (default: a throw-away embedded PostgreSQL)

Stores the same simulated week of reports (``shop.events``, one run an hour) once per alert policy,
through the real store, tracker and alert policy, and counts what would reach a channel (one
webhook): one outbox row is one notification. The collection is noisy the way production ones are:

- ``amount`` outliers and ``email`` format violations start together on day 1; the outliers grow
  for two days, then are fixed; the emails stay all week;
- ``customer_id`` nulls flap around the detection threshold from day 2 to day 5 (found in some
  runs, not in others);
- a bad deploy writes ``qty`` as text for six hours on day 4 (critical), then it is rolled back;
- a nightly batch leaves ``status`` values outside the enum from 01:00 to 03:00 every night;
- ``order_no`` duplicates appear on day 5 and grow;
- the weekend's volume drops (a ``volume_anomaly`` on Saturday and Sunday mornings);
- two runs fail (the database unreachable) and one ends partial.

The daemon's chore (reminders, ``remind_after`` 24 h, and notices of status changes) runs half an
hour after each run. Nobody acknowledges anything, except in the row where someone acknowledges
every incident within the hour it opens. ``--quick`` simulates two days and two thresholds.
Exits 1 when no run was stored (nothing measured).
"""

from __future__ import annotations

import sys
from pathlib import Path

_HERE = Path(__file__).resolve().parent
sys.path[:] = [str(_HERE.parent)] + [p for p in sys.path if Path(p or ".").resolve() != _HERE]

import argparse  # noqa: E402
import random  # noqa: E402
import statistics  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
import uuid  # noqa: E402
from collections import Counter  # noqa: E402
from datetime import UTC, datetime, timedelta  # noqa: E402

import psycopg  # noqa: E402
from psycopg.conninfo import make_conninfo  # noqa: E402

from argus.agent.findings import Category, Finding  # noqa: E402
from argus.agent.options import AuditOptions  # noqa: E402
from argus.agent.report import AuditReport  # noqa: E402
from argus.agent.severity import severity_for  # noqa: E402
from argus.config.alerts import AlertsConfig  # noqa: E402
from argus.daemon.alerts.policy import AlertPolicy  # noqa: E402
from argus.daemon.incidents.chores import queue_due  # noqa: E402
from argus.daemon.logs import configure_logging  # noqa: E402
from argus.daemon.record import record_report  # noqa: E402
from argus.daemon.store import PostgresStore  # noqa: E402
from argus.daemon.store.embedded import start_embedded  # noqa: E402
from argus.daemon.store.incidents import IncidentBook  # noqa: E402

T0 = datetime(2026, 3, 2, tzinfo=UTC)  # a Monday
SIZE = 200_000
SCHEDULE = "events-hourly"


def _finding(field: str, category: Category, share: float, *, severity: str | None = None) -> Finding:
    count = round(SIZE * share)
    level = severity_for(category, share) if severity is None else severity
    return Finding(field=field, category=category, severity=level, description=f"{count} {category.value} in {field}",
                   hypothesis="h", evidence_query={field: {"$exists": True}}, affected_count=count,
                   affected_pct=count / SIZE)


def week(days: int, seed: int = 7) -> list[AuditReport]:
    """The simulated runs, one an hour, oldest first."""
    rng = random.Random(seed)
    runs = []
    for hour in range(24 * days):
        day, clock = divmod(hour, 24)
        findings: list[Finding] = []
        if 24 + 9 <= hour < 3 * 24 + 17:  # day 1 09:00 to day 3 17:00, growing from 1.5% to 6%
            grown = min((hour - 33) / 48, 1.0)
            findings.append(_finding("amount", Category.OUTLIER_VALUE, 0.015 + 0.045 * grown))
        if hour >= 24 + 9:
            findings.append(_finding("email", Category.FORMAT_VIOLATION, 0.02 + rng.uniform(-0.002, 0.002)))
        if 2 * 24 <= hour < 5 * 24 and rng.random() < 0.4:
            findings.append(_finding("customer_id", Category.NULL_RATE, rng.uniform(0.005, 0.012)))
        if 4 * 24 + 2 <= hour < 4 * 24 + 8:
            findings.append(_finding("qty", Category.TYPE_MISMATCH, 0.03, severity="critical"))
        if 1 <= clock < 3:
            findings.append(_finding("status", Category.ENUM_VIOLATION, rng.uniform(0.0005, 0.002)))
        if hour >= 5 * 24:
            findings.append(_finding("order_no", Category.DUPLICATE_VALUE, 0.001 * (1 + (hour - 120) / 12)))
        if day in (5, 6) and 6 <= clock < 12:
            findings.append(_finding("(collection)", Category.VOLUME_ANOMALY, 0.4, severity="high"))
        outcome = "failed" if hour in (30, 100) else "partial" if hour == 77 else "succeeded"
        started = T0 + timedelta(hours=hour)
        runs.append(AuditReport(
            run_id=uuid.uuid4(), connection="main", database="shop", collection="events", schedule=SCHEDULE,
            planner="heuristic", started_at=started, finished_at=started + timedelta(seconds=20), duration_s=20.0,
            outcome=outcome, termination_reason={"failed": "error", "partial": "time_budget"}.get(outcome, "concluded"),
            error="cannot reach the database" if outcome == "failed" else None, iterations=40,
            options=AuditOptions(), documents_sampled=1000, collection_size=SIZE, fields_total=12,
            fields_investigated=12, findings=[] if outcome == "failed" else
            [f for f in findings if outcome == "succeeded" or f.field != "email"]))
    return runs


POLICIES: list[tuple[str, dict[str, object], bool]] = [  # (name, alerts section, acknowledge within an hour)
    ("per finding (alerts.per: finding)", {"per": "finding"}, False),
    ("per incident, by collection (default)", {}, False),
    ("  the same, acknowledged within 1 h", {}, True),
    ("per incident, by category", {"incidents": {"group_by": "category"}}, False),
    ("per incident, by pattern", {"incidents": {"group_by": "pattern"}}, False),
    ("  the same, resolve_after: 6", {"incidents": {"group_by": "pattern", "resolve_after": 6}}, False),
]


def simulate(admin: str, runs: list[AuditReport], alerts: dict[str, object], *,
             acknowledge: bool = False) -> tuple[Counter[str], int, list[float]]:
    """(notifications by kind, incidents, seconds per stored run) for one alerts section."""
    name = f"argus_bench_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'create database "{name}"')
    try:
        with PostgresStore(make_conninfo(admin, dbname=name), pool_size=2) as store:
            config = AlertsConfig.model_validate({"channels": {"hook": {"type": "webhook", "url_env": "HOOK_URL"}},
                                                  **alerts})
            policy = AlertPolicy(config, {SCHEDULE: {"team": "events"}})
            book, timings = IncidentBook(store), []
            for report in runs:
                t = time.perf_counter()
                record_report(store, report, alerts=policy, now=report.finished_at)
                timings.append(time.perf_counter() - t)
                chore = report.finished_at + timedelta(minutes=30)
                if acknowledge:  # someone takes every incident within the hour
                    for incident in book.list(statuses=["open"]):
                        if incident.open_since <= chore - timedelta(minutes=30):
                            book.change_status(incident.id, "acknowledged", now=chore, source="cli", owner="oncall")
                queue_due(store, chore, policy)  # the daemon's chore: reminders, notices of status changes
            with store._conn() as conn:
                kinds = Counter({kind: n for kind, n in conn.execute(
                    "select kind, count(*) from alert_outbox group by kind")})
            incidents = len(book.list(statuses=None, limit=10_000))
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'drop database if exists "{name}" with (force)')
    return kinds, incidents, timings


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--days", type=int, default=7, help="days of hourly runs to simulate")
    parser.add_argument("--dsn", help="an admin DSN; scratch databases are created in it")
    parser.add_argument("--quick", action="store_true", help="smoke run: two days, two thresholds")
    args = parser.parse_args()
    days = 2 if args.quick else args.days
    thresholds = ["medium", "high"] if args.quick else ["low", "medium", "high", "critical"]
    configure_logging("WARNING")
    runs = week(days)
    embedded = None
    admin = args.dsn
    if admin is None:
        embedded = start_embedded(Path(tempfile.mkdtemp(prefix="argus-bench-")))
        admin = embedded.admin_uri()
    timings: list[float] = []
    breakdown: dict[str, tuple[Counter[str], int]] = {}
    try:
        outcomes = Counter(r.outcome for r in runs)
        print(f"{len(runs)} hourly runs of shop.events over {days} days ({outcomes['succeeded']} succeeded, "
              f"{outcomes['partial']} partial, {outcomes['failed']} failed), {sum(len(r.findings) for r in runs)} "
              f"findings in all, one webhook channel. Notifications sent, by alerts.min_severity:")
        print(f"{'policy':<40}" + "".join(f"{t:>10}" for t in thresholds))
        for name, alerts, acknowledge in POLICIES:
            counts = []
            for threshold in thresholds:
                kinds, incidents, spent = simulate(admin, runs, {"min_severity": threshold, **alerts},
                                                   acknowledge=acknowledge)
                counts.append(sum(kinds.values()))
                timings += spent
                if alerts.get("per") != "finding":
                    breakdown[f"{name.strip()} at {threshold}"] = (kinds, incidents)
            print(f"{name:<40}" + "".join(f"{n:>10}" for n in counts))
        for label in (f"per incident, by collection (default) at {thresholds[1]}",
                      f"the same, acknowledged within 1 h at {thresholds[1]}",
                      f"per incident, by pattern at {thresholds[1]}"):
            kinds, incidents = breakdown[label]
            sent = ", ".join(f"{n} {k.removeprefix('incident_')}" for k, n in sorted(kinds.items()))
            print(f"{label}: {sent or 'nothing'} ({incidents} incidents)")
        if timings:
            print(f"storing a run with its incidents: median {statistics.median(timings) * 1000:.1f} ms, "
                  f"max {max(timings) * 1000:.1f} ms ({len(timings)} runs)")
    finally:
        if embedded is not None:
            embedded.server.cleanup()
    if not timings:
        print("nothing measured: no run was stored", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
