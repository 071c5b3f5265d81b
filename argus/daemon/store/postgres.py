"""Run history in PostgreSQL (psycopg 3 with a connection pool).

A report is stored whole or not at all: the run, its findings, dismissed findings, gate
evaluations and pattern bookkeeping go in one transaction, which also computes the diff against
the earlier runs under a per-collection advisory lock, so two processes storing runs of one
collection cannot interleave.

What a run is compared with (``_tracked``): the findings of the earlier runs that did not fail,
newest first, back to and including the last full audit that succeeded, which alone says what is
gone. A partial run is a baseline for what it found; a pattern it did not find is taken from the
runs before it. Shares are compared only between runs of the same kind (the same window of a
scoped audit, or the whole collection); a pattern last seen in the other kind is tracked, not new.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta
from typing import Any, NamedTuple
from uuid import UUID

import psycopg
import structlog
from psycopg.rows import dict_row
from psycopg.types.json import Jsonb
from pydantic import BaseModel

from argus.agent.findings import Category, Severity
from argus.agent.health.models import HealthSnapshot
from argus.agent.history import (
    HistoricalContext,
    LabelSummary,
    PastFinding,
    PastRun,
    RunDiff,
    build_context,
    fingerprint,
)
from argus.agent.report import AuditReport
from argus.agent.shapes.models import Shapes
from argus.daemon.alerts.policy import AlertPolicy
from argus.daemon.diff import diff_report
from argus.daemon.incidents.models import IncidentNotice
from argus.daemon.incidents.tracker import Change
from argus.daemon.store.errors import NotFound, StoreError
from argus.daemon.store.incidents import record_incidents, refreshed
from argus.daemon.store.metric_values import insert_values
from argus.daemon.store.outbox import enqueue
from argus.daemon.store.pool import Connections, describe_dsn, lock_key

__all__ = ["LOST_RUN", "CollectionRef", "Label", "PostgresStore", "RunSummary", "TriggerClaim", "describe_dsn"]

log = structlog.get_logger("argus.store")


class CollectionRef(NamedTuple):
    connection: str
    database: str
    collection: str

    def __str__(self) -> str:
        return f"{self.connection}/{self.database}.{self.collection}"


class RunSummary(BaseModel):
    id: UUID
    connection: str
    database: str
    collection: str
    schedule: str | None
    planner: str
    model: str | None
    started_at: datetime
    duration_s: float
    outcome: str
    termination_reason: str
    error: str | None
    findings: int
    new: int
    resolved: int
    queries_sent: int = 0
    passes: int = 0
    documents_examined: int = 0
    throttled: int = 0
    request_units: float | None = None


class TriggerClaim(BaseModel):
    """Who holds one firing of a schedule, and whether its run was stored or its lease ran out."""

    schedule: str
    slot: datetime
    replica: str
    run_id: UUID
    claimed_at: datetime
    stored: bool
    expired: bool


class Label(BaseModel):
    id: int
    fingerprint: str
    run_id: UUID
    finding_id: UUID
    field: str
    category: str
    verdict: str
    note: str | None
    affected_pct: float
    created_at: datetime


LOST_RUN = "lost: "  # how the error of a run recorded for a replica that died begins


def _kind(report: AuditReport) -> str | None:
    """Which runs a run is compared with: the same window (its key), or None for the whole collection."""
    return report.window.key if report.window is not None else None


class PostgresStore(Connections):
    """Keeps reports, diffs, labels and patterns; builds the historical context."""

    def __enter__(self) -> PostgresStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def schedule_lock(self, schedule: str, *, timeout: float = 2.0) -> Iterator[bool]:
        """Hold a session advisory lock on ``schedule`` for the block; yields False when another
        process holds it. Raises ``StoreUnavailable`` when the database cannot be reached."""
        key = lock_key(str(CollectionRef("schedule", "", schedule)))
        with self._conn(timeout=timeout) as conn:
            row = conn.execute("select pg_try_advisory_lock(%s)", (key,)).fetchone()
            got = bool(row and row[0])
            conn.commit()
            try:
                yield got
            finally:
                if got:
                    with contextlib.suppress(psycopg.Error):  # a lost connection has released it already
                        conn.execute("select pg_advisory_unlock(%s)", (key,))
                        conn.commit()

    def claim_trigger(self, schedule: str, slot: datetime, replica: str, run_id: UUID, *,
                      lease_s: float = 60.0) -> TriggerClaim | None:
        """Claim one firing of ``schedule`` for ``run_id`` with a lease of ``lease_s`` seconds.
        Returns None when the claim is ours, else the claim that already holds the firing."""
        with self._conn() as conn, conn.transaction():
            row = conn.execute("""insert into schedule_triggers (schedule, slot, replica, run_id, lease_until)
                                  values (%s, %s, %s, %s, now() + make_interval(secs => %s))
                                  on conflict do nothing returning 1""",
                               (schedule, slot, replica, run_id, lease_s)).fetchone()
            if row is not None:
                return None
            held = self._claims(conn, "t.schedule = %s and t.slot = %s", (schedule, slot))
        return held[0] if held else None

    def take_over_trigger(self, held: TriggerClaim, replica: str, run_id: UUID, *, lease_s: float = 60.0) -> bool:
        """Claim a firing whose run was lost (its owner died) for ``run_id``; False when someone else did first."""
        with self._conn() as conn, conn.transaction():
            row = conn.execute("""update schedule_triggers set replica = %s, run_id = %s, claimed_at = now(),
                                      lease_until = now() + make_interval(secs => %s)
                                  where schedule = %s and slot = %s and run_id = %s returning 1""",
                               (replica, run_id, lease_s, held.schedule, held.slot, held.run_id)).fetchone()
        return row is not None

    def renew_claims(self, run_ids: list[UUID], *, lease_s: float = 60.0) -> None:
        """The heartbeat of running audits: their claims stay theirs for another ``lease_s`` seconds."""
        if not run_ids:
            return
        with self._conn(timeout=2.0) as conn, conn.transaction():
            conn.execute("update schedule_triggers set lease_until = now() + make_interval(secs => %s) "
                         "where run_id = any(%s)", (lease_s, run_ids))

    def lost_claims(self, schedules: list[str], limit: int = 100) -> list[TriggerClaim]:
        """Claims of ``schedules`` whose lease ran out without their run being stored: runs of
        replicas that died."""
        with self._conn(timeout=2.0) as conn:
            return self._claims(conn, "t.schedule = any(%s) "
                                      "and coalesce(t.lease_until, t.claimed_at + interval '1 hour') < now() "
                                      "and not exists (select 1 from runs r where r.id = t.run_id) "
                                      "order by t.claimed_at limit %s", (schedules, limit))

    @staticmethod
    def _claims(conn: psycopg.Connection[Any], where: str, params: tuple[Any, ...]) -> list[TriggerClaim]:
        cur = conn.cursor(row_factory=dict_row)
        rows = cur.execute(
            f"""select t.schedule, t.slot, t.replica, t.run_id, t.claimed_at,
                       exists (select 1 from runs r where r.id = t.run_id) as stored,
                       coalesce(t.lease_until, t.claimed_at + interval '1 hour') < now() as expired
                from schedule_triggers t where {where}""", params).fetchall()
        return [TriggerClaim.model_validate(r) for r in rows]

    def open_findings(self) -> list[tuple[str, str, str, str, int]]:
        """(connection, database, collection, severity, count) from each collection's latest run."""
        with self._conn(timeout=1.0) as conn:
            return [tuple(r) for r in conn.execute(
                """select r.connection, r.database, r.collection, f.severity, count(*)
                   from (select distinct on (connection, database, collection) id, connection, database, collection
                         from runs where outcome <> 'failed'
                         order by connection, database, collection, started_at desc) r
                   join findings f on f.run_id = r.id
                   group by r.connection, r.database, r.collection, f.severity""").fetchall()]

    def last_runs_by_schedule(self) -> dict[str, RunSummary]:
        with self._conn(timeout=1.0) as conn:
            cur = conn.cursor(row_factory=dict_row)
            rows = cur.execute(
                """select distinct on (r.schedule) r.id, r.connection, r.database, r.collection, r.schedule,
                          r.planner, r.model, r.started_at, r.duration_s, r.outcome, r.termination_reason, r.error,
                          (select count(*) from findings f where f.run_id = r.id) as findings,
                          (select count(*) from findings f where f.run_id = r.id and f.diff_status = 'new') as new,
                          0 as resolved, r.queries_sent, r.passes, r.documents_examined, r.throttled, r.request_units
                   from runs r where r.schedule is not null order by r.schedule, r.started_at desc""").fetchall()
        return {r["schedule"]: RunSummary.model_validate(r) for r in rows}

    def ping(self, timeout: float = 0.5) -> bool:
        """Is the database reachable? Answers within about ``timeout`` (health probes are short)."""
        try:
            with self._conn(timeout=timeout) as conn:
                conn.execute("select 1")
            return True
        except StoreError:
            return False

    # --- writing -------------------------------------------------------------------------------

    def save_report(self, report: AuditReport, *, growth_factor: float = 1.5, alerts: AlertPolicy | None = None,
                    now: datetime | None = None, baseline_runs: int = 10) -> AuditReport:
        """Store ``report`` in one transaction and return it with its diff attached. With an alert
        ``policy``, the alerts it asks for go into the outbox in the same transaction. A pattern's
        growth is also measured against its smallest share in the last ``baseline_runs`` successful runs.
        The run updates its collection's incidents in the same transaction (grouped as the policy's
        ``alerts.incidents`` says, or by default)."""
        ref = CollectionRef(report.connection, report.database, report.collection)
        log.info("report_storing", run_id=str(report.run_id), collection=str(ref), findings=len(report.findings))
        with self._conn() as conn, conn.transaction():
            conn.execute("select pg_advisory_xact_lock(%s)", (lock_key(str(ref)),))
            existing = conn.execute("select error from runs where id = %s", (report.run_id,)).fetchone()
            if existing and (str(existing[0] or "").startswith(LOST_RUN) and not (report.error or "").startswith(
                    LOST_RUN)):
                # recorded as lost while its replica was cut off from the database: the real report wins
                conn.execute("delete from runs where id = %s", (report.run_id,))
                log.info("lost_run_found", run_id=str(report.run_id))
            elif existing:
                log.info("report_already_stored", run_id=str(report.run_id))
                return self._load_report(conn, report.run_id)
            kind = _kind(report)
            previous_id, previous = self._tracked(conn, ref, report.started_at, kind)
            newly = self._touch_patterns(conn, ref, report)
            report = report.model_copy(update={"diff": diff_report(
                report, previous, previous_run_id=previous_id, growth_factor=growth_factor,
                newly_persistent=frozenset(newly), suppressed=self._false_positives(conn, ref),
                baseline=self._smallest_shares(conn, ref, report.started_at, baseline_runs, kind))})
            self._insert(conn, report)
            incidents = record_incidents(conn, report, policy=alerts, growth_factor=growth_factor)
            queued = self._queue_alerts(conn, report, alerts, now or report.finished_at, incidents) if alerts else 0
        log.info("report_stored", run_id=str(report.run_id), collection=str(ref), outcome=report.outcome,
                 alerts=queued)
        return report

    def _insert(self, conn: psycopg.Connection[Any], report: AuditReport) -> None:
        usage = report.token_usage
        db = report.database_cost
        conn.execute(
            """insert into runs (id, connection, database, collection, schedule, planner, model, started_at,
                   finished_at, duration_s, outcome, termination_reason, error, iterations, documents_sampled,
                   collection_size, input_tokens, output_tokens, cached_tokens, cost_usd, report, scheduled_for,
                   replica, queries_sent, passes, documents_examined, throttled, request_units, scope)
               values (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s,
                       %s, %s, %s, %s, %s, %s)""",
            (report.run_id, report.connection, report.database, report.collection, report.schedule, report.planner,
             report.model, report.started_at, report.finished_at, report.duration_s, report.outcome,
             report.termination_reason, report.error, report.iterations, report.documents_sampled,
             report.collection_size, usage.input_tokens, usage.output_tokens, usage.cached_tokens, report.cost_usd,
             Jsonb(report.model_dump(mode="json")), report.scheduled_for, report.replica,
             db.queries_sent, db.passes, db.documents_examined, db.throttled, db.request_units, _kind(report)))
        if report.window is None and report.outcome != "failed":
            conn.execute(
                """insert into full_audits (connection, database, collection, last_full_at, last_full_run)
                   values (%s, %s, %s, %s, %s)
                   on conflict (connection, database, collection) do update
                       set last_full_at = excluded.last_full_at, last_full_run = excluded.last_full_run
                       where full_audits.last_full_at < excluded.last_full_at""",
                (report.connection, report.database, report.collection, report.started_at, report.run_id))
        if report.health is not None:
            h = report.health
            conn.execute(
                """insert into run_health (run_id, connection, database, collection, at, documents, inserts,
                       freshness_s, snapshot) values (%s, %s, %s, %s, %s, %s, %s, %s, %s)""",
                (report.run_id, report.connection, report.database, report.collection, h.at, h.documents,
                 h.inserts, h.freshness_s, Jsonb(h.model_dump(mode="json"))))
        insert_values(conn, report)
        status = {e.finding_id: e for e in (report.diff.entries if report.diff else []) if e.finding_id}
        with conn.cursor() as cur:
            cur.executemany(
                """insert into findings (run_id, id, fingerprint, field, category, severity, description, hypothesis,
                       evidence_query, affected_count, affected_pct, sample_values, confirmed, diff_status,
                       new_persistent)
                   values (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)""",
                [(report.run_id, f.id, self._fp(report, f.field, f.category), f.field, f.category.value,
                  f.severity.value, f.description, f.hypothesis, Jsonb(f.evidence_query), f.affected_count,
                  f.affected_pct, Jsonb(f.sample_values), f.confirmed,
                  status[f.id].status if f.id in status else None,
                  bool(status[f.id].new_persistent) if f.id in status else False) for f in report.findings])
            cur.executemany(
                """insert into dismissed_findings (run_id, seq, fingerprint, field, category, severity, affected_count,
                       affected_pct, evidence_query, critique, finding)
                   values (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)""",
                [(report.run_id, i, self._fp(report, d.finding.field, d.finding.category), d.finding.field,
                  d.finding.category.value, d.finding.severity.value, d.finding.affected_count, d.finding.affected_pct,
                  Jsonb(d.finding.evidence_query), d.critique, Jsonb(d.finding.model_dump(mode="json")))
                 for i, d in enumerate(report.dismissed_findings)])
            cur.executemany(
                """insert into gate_evaluations (run_id, seq, gate, iteration, evaluator, verdict, rules)
                   values (%s, %s, %s, %s, %s, %s, %s)""",
                [(report.run_id, i, e.gate, e.iteration, e.evaluator, e.verdict,
                  Jsonb([r.model_dump() for r in e.rules])) for i, e in enumerate(report.evaluations)])

    @staticmethod
    def _queue_alerts(conn: psycopg.Connection[Any], report: AuditReport, policy: AlertPolicy, now: datetime,
                      incidents: list[Change]) -> int:
        streak = 0
        if report.outcome == "failed" and report.schedule and policy.failed_runs:
            outcomes = conn.execute("select outcome from runs where schedule = %s order by started_at desc limit %s",
                                    (report.schedule, policy.failed_runs + 1)).fetchall()
            for (outcome,) in outcomes:
                if outcome != "failed":
                    break
                streak += 1
        routed = policy.alerts_for(report, failure_streak=streak, incidents=incidents)
        refreshed(conn, [r.alert.incident.id for r in routed if isinstance(r.alert, IncidentNotice)], now)
        return enqueue(conn, routed, now)

    @staticmethod
    def _fp(report: AuditReport, field: str, category: Category) -> str:
        return fingerprint(report.connection, report.database, report.collection, field, category)

    def _touch_patterns(self, conn: psycopg.Connection[Any], ref: CollectionRef, report: AuditReport) -> list[str]:
        """Count this run for every pattern it saw; return those that became persistent now."""
        seen = {(f.field, f.category) for f in report.findings}
        seen |= {(d.finding.field, d.finding.category) for d in report.dismissed_findings}
        rows = [(fingerprint(*ref, field, category), *ref, field, category.value, report.run_id, report.started_at,
                 report.run_id, report.started_at) for field, category in sorted(seen)]
        newly: list[str] = []
        if not rows:
            return newly
        with conn.cursor() as cur:
            cur.executemany(
                """insert into patterns (fingerprint, connection, database, collection, field, category, runs_seen,
                       first_seen_run, first_seen_at, last_seen_run, last_seen_at)
                   values (%s, %s, %s, %s, %s, %s, 1, %s, %s, %s, %s)
                   on conflict (fingerprint) do update set runs_seen = patterns.runs_seen + 1,
                       last_seen_run = excluded.last_seen_run, last_seen_at = excluded.last_seen_at,
                       persistent_since_run = coalesce(patterns.persistent_since_run, excluded.last_seen_run),
                       persistent_since_at = coalesce(patterns.persistent_since_at, excluded.last_seen_at)
                   returning fingerprint, persistent_since_run""", rows, returning=True)
            while True:
                row = cur.fetchone()
                if row is not None and row[1] == report.run_id:
                    newly.append(row[0])
                if not cur.nextset():
                    break
        return newly

    def add_label(self, run_id: UUID, finding_id: UUID, verdict: str, note: str | None = None) -> Label:
        """Record a user's verdict (``tp``, ``fp``, or ``expected`` for a planned anomaly) on a finding
        of a stored run."""
        if verdict not in ("tp", "fp", "expected"):
            raise StoreError(f"a label is 'tp', 'fp' or 'expected', not {verdict!r}")
        with self._conn() as conn, conn.transaction():
            row = conn.execute(
                """select r.connection, r.database, r.collection, f.field, f.category, f.fingerprint, f.affected_pct
                   from findings f join runs r on r.id = f.run_id where f.run_id = %s and f.id = %s""",
                (run_id, finding_id)).fetchone()
            if row is None:
                raise NotFound(f"run {run_id} has no finding {finding_id} (see `argus show {run_id}`)")
            connection, database, collection, field, category, fp, share = row
            cur = conn.cursor(row_factory=dict_row)
            label = cur.execute(
                """insert into labels (fingerprint, run_id, finding_id, connection, database, collection, field,
                       category, verdict, note, affected_pct)
                   values (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)
                   returning id, fingerprint, run_id, finding_id, field, category, verdict, note, affected_pct,
                       created_at""",
                (fp, run_id, finding_id, connection, database, collection, field, category, verdict, note,
                 share)).fetchone()
        log.info("finding_labelled", run_id=str(run_id), finding_id=str(finding_id), verdict=verdict)
        return Label.model_validate(label)

    def count_older(self, now: datetime, retention_days: float) -> int:
        """How many runs ``prune`` would delete."""
        with self._conn() as conn:
            row = conn.execute("select count(*) from runs where started_at < %s",
                               (now - timedelta(days=retention_days),)).fetchone()
        return int(row[0]) if row else 0

    def prune(self, now: datetime, retention_days: float) -> int:
        """Delete runs (and their findings) started more than ``retention_days`` before ``now``."""
        with self._conn() as conn, conn.transaction():
            cur = conn.execute("delete from runs where started_at < %s", (now - timedelta(days=retention_days),))
            deleted = cur.rowcount
        if deleted:
            log.info("runs_pruned", runs=deleted, retention_days=retention_days)
        return deleted

    # --- reading -------------------------------------------------------------------------------

    def _tracked(self, conn: psycopg.Connection[Any], ref: CollectionRef, before: datetime, kind: str | None,
                 limit: int = 200) -> tuple[UUID | None, list[PastFinding] | None]:
        """The latest earlier run of ``kind`` that did not fail, and every pattern still tracked before
        ``before`` (see the module docstring): each with its latest state from a run of ``kind`` where
        one exists since the last complete full audit, else marked not comparable."""
        rows = conn.execute(
            """select id, outcome, scope from runs where connection = %s and database = %s and collection = %s
                   and outcome <> 'failed' and started_at < %s order by started_at desc limit %s""",
            (*ref, before, limit)).fetchall()
        walked: list[tuple[UUID, bool]] = []
        for run_id, outcome, scope in rows:
            walked.append((run_id, scope == kind))
            if outcome == "succeeded" and scope is None:
                break  # a full audit that completed: what it did not find is gone
        if not walked:
            return None, None
        found = self._past_findings(conn, [run_id for run_id, _ in walked])
        tracked: dict[str, PastFinding] = {}
        for run_id, same_kind in walked:
            for past in found[run_id]:
                if past.dismissed:
                    continue
                known = tracked.get(past.fingerprint)
                if known is None or (same_kind and not known.comparable):
                    tracked[past.fingerprint] = past.model_copy(update={"comparable": same_kind})
        previous = next((run_id for run_id, same_kind in walked if same_kind), None)
        return previous, list(tracked.values())

    @staticmethod
    def _smallest_shares(conn: psycopg.Connection[Any], ref: CollectionRef, before: datetime,
                         runs: int, kind: str | None = None) -> dict[str, float]:
        """Fingerprint -> the smallest share committed in the last ``runs`` successful runs of ``kind``
        before ``before``."""
        return dict(conn.execute(
            """select f.fingerprint, min(f.affected_pct) from findings f
               where f.run_id in (select id from runs where connection = %s and database = %s and collection = %s
                                      and outcome = 'succeeded' and started_at < %s
                                      and scope is not distinct from %s
                                  order by started_at desc limit %s)
               group by f.fingerprint""", (*ref, before, kind, runs)).fetchall())

    def last_full_audit(self, ref: CollectionRef) -> datetime | None:
        """When the last audit of the whole collection that did not fail started (None: never)."""
        with self._conn(timeout=2.0) as conn:
            row = conn.execute("""select last_full_at from full_audits where connection = %s and database = %s
                                      and collection = %s""", tuple(ref)).fetchone()
        return row[0] if row else None

    def _past_findings(self, conn: psycopg.Connection[Any], run_ids: list[UUID]) -> dict[UUID, list[PastFinding]]:
        out: dict[UUID, list[PastFinding]] = {r: [] for r in run_ids}
        for run_id, fp, field, category, severity, count, share, evidence in conn.execute(
                """select run_id, fingerprint, field, category, severity, affected_count, affected_pct,
                          evidence_query from findings where run_id = any(%s)""", (run_ids,)):
            out[run_id].append(PastFinding(fingerprint=fp, field=field, category=Category(category),
                                           severity=Severity(severity), affected_count=count, affected_pct=share,
                                           evidence_query=evidence))
        for run_id, fp, field, category, severity, count, share, evidence, critique in conn.execute(
                """select run_id, fingerprint, field, category, severity, affected_count, affected_pct,
                          evidence_query, critique from dismissed_findings where run_id = any(%s)
                   order by run_id, seq""", (run_ids,)):
            out[run_id].append(PastFinding(fingerprint=fp, field=field, category=Category(category),
                                           severity=Severity(severity), affected_count=count, affected_pct=share,
                                           evidence_query=evidence, dismissed=True, critique=critique))
        return out

    def _false_positives(self, conn: psycopg.Connection[Any], ref: CollectionRef) -> frozenset[str]:
        """Patterns of ``ref`` that users judged false positives more often than true ones."""
        rows = conn.execute(
            """select fingerprint from labels where connection = %s and database = %s and collection = %s
                   group by fingerprint
                   having count(*) filter (where verdict = 'fp') > count(*) filter (where verdict = 'tp')""",
            tuple(ref)).fetchall()
        return frozenset(r[0] for r in rows)

    def history(self, ref: CollectionRef, *, runs: int = 10, drift_tolerance: float = 0.5,
                growth_factor: float = 1.5, health_runs: int = 30) -> HistoricalContext:
        """The context a planner gets before auditing ``ref``: the last ``runs`` runs and all labels,
        and the health measured by the last ``health_runs`` runs."""
        with self._conn() as conn:
            rows = conn.execute(
                """select r.id, r.started_at, r.outcome, h.snapshot from runs r
                       left join run_health h on h.run_id = r.id
                   where r.connection = %s and r.database = %s and r.collection = %s and r.outcome <> 'failed'
                   order by r.started_at desc limit %s""",
                (*ref, runs)).fetchall()
            found = self._past_findings(conn, [r[0] for r in rows]) if rows else {}
            labels: dict[str, LabelSummary] = {}
            for fp, verdict, note, share in conn.execute(
                    """select fingerprint, verdict, note, affected_pct from labels where connection = %s
                           and database = %s and collection = %s order by created_at, id""", tuple(ref)):
                summary = labels.setdefault(fp, LabelSummary())
                if verdict == "tp":
                    summary.true_positives += 1  # 'fp' and 'expected' (an anomaly users expected) both suppress
                else:
                    summary.false_positives += 1
                    summary.labelled_share = max(summary.labelled_share or 0.0, share)
                summary.last_note = note or summary.last_note
            sized = conn.execute(
                """select report->'database_cost'->'batch_checks' from runs
                   where connection = %s and database = %s and collection = %s
                         and report->'database_cost'->'batch_checks' <> '{}'::jsonb
                   order by started_at desc limit 1""", tuple(ref)).fetchone()
            shapes = [Shapes.model_validate(row[0]) for row in conn.execute(
                """select report->'shapes' from runs where connection = %s and database = %s and collection = %s
                       and outcome <> 'failed' and report->'shapes'->>'discriminator' is not null
                   order by started_at desc limit %s""", (*ref, runs))]
            health = [HealthSnapshot.model_validate(row[0]) for row in conn.execute(
                """select snapshot from run_health where connection = %s and database = %s and collection = %s
                       order by at desc limit %s""", (*ref, health_runs))]
        past = [PastRun(run_id=r[0], started_at=r[1], outcome=r[2], findings=found.get(r[0], []),
                        health=HealthSnapshot.model_validate(r[3]) if r[3] else None) for r in rows]
        context = build_context(past, labels, drift_tolerance=drift_tolerance, growth_factor=growth_factor)
        return context.model_copy(update={"health": health[::-1], "batch_checks": sized[0] if sized else {},
                                          "shapes": shapes})

    def get_report(self, run_id: UUID) -> AuditReport:
        with self._conn() as conn:
            return self._load_report(conn, run_id)

    @staticmethod
    def _load_report(conn: psycopg.Connection[Any], run_id: UUID) -> AuditReport:
        row = conn.execute("select report from runs where id = %s", (run_id,)).fetchone()
        if row is None:
            raise NotFound(f"no run {run_id} (see `argus runs`)")
        return AuditReport.model_validate(row[0])

    def find_run(self, prefix: str) -> UUID:
        """A run id from its full text or a unique prefix (as `argus runs` prints them)."""
        text = prefix.strip().lower()
        with self._conn() as conn:
            rows = conn.execute("select id from runs where id::text like %s order by started_at desc limit 2",
                                (text + "%",)).fetchall()
        if not rows:
            raise NotFound(f"no run matches {prefix!r} (see `argus runs`)")
        if len(rows) > 1:
            raise NotFound(f"{prefix!r} matches more than one run; give more of the id")
        return UUID(str(rows[0][0]))

    def find_finding(self, prefix: str) -> tuple[UUID, UUID]:
        """The run and finding ids of a finding, from its full id or a unique prefix (as `argus show` prints it)."""
        text = prefix.strip().lower()
        with self._conn() as conn:
            rows = conn.execute("select run_id, id from findings where id::text like %s limit 2",
                                (text + "%",)).fetchall()
        if not rows:
            raise NotFound(f"no finding matches {prefix!r} (`argus show RUN_ID` lists a run's findings with their ids)")
        if len(rows) > 1:
            raise NotFound(f"{prefix!r} matches more than one finding; give more of the id")
        return UUID(str(rows[0][0])), UUID(str(rows[0][1]))

    def list_runs(self, *, collection: CollectionRef | None = None, limit: int = 20) -> list[RunSummary]:
        """The newest runs, of one collection (see ``resolve_collection``) or of all."""
        where, params = "", []
        if collection:
            where = "where connection = %s and database = %s and collection = %s"
            params = [collection.connection, collection.database, collection.collection]
        with self._conn() as conn:
            cur = conn.cursor(row_factory=dict_row)
            rows = cur.execute(
                f"""select r.id, r.connection, r.database, r.collection, r.schedule, r.planner, r.model, r.started_at,
                        r.duration_s, r.outcome, r.termination_reason, r.error,
                        (select count(*) from findings f where f.run_id = r.id) as findings,
                        (select count(*) from findings f where f.run_id = r.id and f.diff_status = 'new') as new,
                        coalesce(jsonb_array_length(jsonb_path_query_array(r.report,
                            '$.diff.entries[*] ? (@.status == "resolved")')), 0) as resolved,
                        r.queries_sent, r.passes, r.documents_examined, r.throttled, r.request_units
                    from runs r {where} order by r.started_at desc limit %s""",
                (*params, limit)).fetchall()
        return [RunSummary.model_validate(r) for r in rows]

    def diff_runs(self, older: UUID, newer: UUID, *, growth_factor: float = 1.5) -> RunDiff:
        """``newer`` compared with ``older`` (any two stored runs of one collection)."""
        with self._conn() as conn:
            a, b = self._load_report(conn, older), self._load_report(conn, newer)
            if (a.connection, a.database, a.collection) != (b.connection, b.database, b.collection):
                raise StoreError(f"runs {older} and {newer} audit different collections")
            previous = self._past_findings(conn, [older])[older]
            suppressed = self._false_positives(conn, CollectionRef(b.connection, b.database, b.collection))
        return diff_report(b, previous, previous_run_id=older, growth_factor=growth_factor, suppressed=suppressed)

    def latest_runs(self, ref: CollectionRef, n: int = 2) -> list[UUID]:
        with self._conn() as conn:
            rows = conn.execute("""select id from runs where connection = %s and database = %s and collection = %s
                                       order by started_at desc limit %s""", (*ref, n)).fetchall()
        return [r[0] for r in rows]

    def collections_matching(self, name: str) -> tuple[list[CollectionRef], list[CollectionRef]]:
        """The stored collections ``name`` (``collection``, ``database.collection`` or
        ``connection/database.collection``) names, and every stored collection."""
        with self._conn() as conn:
            rows = conn.execute("select distinct connection, database, collection from runs").fetchall()
        refs = sorted(CollectionRef(*r) for r in rows)
        return [r for r in refs if name in (r.collection, f"{r.database}.{r.collection}", str(r))], refs

    def resolve_collection(self, name: str) -> CollectionRef:
        """A stored collection from ``collection``, ``database.collection`` or ``connection/database.collection``."""
        matches, known = self.collections_matching(name)
        if not matches:
            shown = ", ".join(f"{r.database}.{r.collection}" for r in known[:10]) or "none yet"
            raise NotFound(f"no stored runs for collection {name!r} (stored: {shown})")
        if len(matches) > 1:
            raise NotFound(f"{name!r} is ambiguous: {', '.join(map(str, matches))}")
        return matches[0]
