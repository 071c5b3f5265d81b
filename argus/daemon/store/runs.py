"""SQL over one connection for a run being stored and for what it is compared with: the rows of
a run (the run, findings, dismissed findings, gate evaluations, health, metric values, patterns),
the earlier runs and their findings, users' labels. No decisions: ``argus.daemon.record`` reads
through these under the collection's lock, decides, and writes through them in one transaction.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any
from uuid import UUID

import psycopg
from psycopg.types.json import Jsonb

from argus.agent.findings import Category, Severity
from argus.agent.history import LabelSummary, PastFinding, fingerprint
from argus.agent.report import AuditReport
from argus.daemon.store.errors import NotFound
from argus.daemon.store.metric_values import insert_values
from argus.daemon.store.pool import lock_key
from argus.daemon.store.rows import CollectionRef, kind_of

__all__ = ["delete_run", "earlier_runs", "false_positives", "insert_run", "label_summaries", "load_report",
           "lock_collection", "newly_persistent", "past_findings", "recent_outcomes", "smallest_shares",
           "stored_error", "touch_patterns"]


def lock_collection(conn: psycopg.Connection[Any], ref: CollectionRef) -> None:
    """Two transactions storing runs of one collection never interleave (held to the transaction's end)."""
    conn.execute("select pg_advisory_xact_lock(%s)", (lock_key(str(ref)),))


def stored_error(conn: psycopg.Connection[Any], run_id: UUID) -> tuple[str | None] | None:
    """(error,) of the stored run ``run_id``; None when it is not stored."""
    row = conn.execute("select error from runs where id = %s", (run_id,)).fetchone()
    return (row[0],) if row else None


def delete_run(conn: psycopg.Connection[Any], run_id: UUID) -> None:
    conn.execute("delete from runs where id = %s", (run_id,))


def load_report(conn: psycopg.Connection[Any], run_id: UUID) -> AuditReport:
    row = conn.execute("select report from runs where id = %s", (run_id,)).fetchone()
    if row is None:
        raise NotFound(f"no run {run_id} (see `argus runs`)")
    return AuditReport.model_validate(row[0])


def _fp(report: AuditReport, field: str, category: Category) -> str:
    return fingerprint(report.connection, report.database, report.collection, field, category)


def insert_run(conn: psycopg.Connection[Any], report: AuditReport) -> None:
    """The run and everything it carries, as ``report`` (with its diff) says."""
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
         db.queries_sent, db.passes, db.documents_examined, db.throttled, db.request_units, kind_of(report)))
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
            [(report.run_id, f.id, _fp(report, f.field, f.category), f.field, f.category.value,
              f.severity.value, f.description, f.hypothesis, Jsonb(f.evidence_query), f.affected_count,
              f.affected_pct, Jsonb(f.sample_values), f.confirmed,
              status[f.id].status if f.id in status else None,
              bool(status[f.id].new_persistent) if f.id in status else False) for f in report.findings])
        cur.executemany(
            """insert into dismissed_findings (run_id, seq, fingerprint, field, category, severity, affected_count,
                   affected_pct, evidence_query, critique, finding)
               values (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)""",
            [(report.run_id, i, _fp(report, d.finding.field, d.finding.category), d.finding.field,
              d.finding.category.value, d.finding.severity.value, d.finding.affected_count, d.finding.affected_pct,
              Jsonb(d.finding.evidence_query), d.critique, Jsonb(d.finding.model_dump(mode="json")))
             for i, d in enumerate(report.dismissed_findings)])
        cur.executemany(
            """insert into gate_evaluations (run_id, seq, gate, iteration, evaluator, verdict, rules)
               values (%s, %s, %s, %s, %s, %s, %s)""",
            [(report.run_id, i, e.gate, e.iteration, e.evaluator, e.verdict,
              Jsonb([r.model_dump() for r in e.rules])) for i, e in enumerate(report.evaluations)])


def _patterns(report: AuditReport) -> list[tuple[str, str, Category]]:
    """(fingerprint, field, category) of every pattern the run saw, committed or dismissed."""
    seen = {(f.field, f.category) for f in report.findings}
    seen |= {(d.finding.field, d.finding.category) for d in report.dismissed_findings}
    return [(_fp(report, field, category), field, category) for field, category in sorted(seen)]


def newly_persistent(conn: psycopg.Connection[Any], report: AuditReport) -> frozenset[str]:
    """Patterns of ``report`` an earlier run saw too and that were not persistent yet: storing this
    run makes them persistent (``touch_patterns``)."""
    fps = [fp for fp, _, _ in _patterns(report)]
    if not fps:
        return frozenset()
    rows = conn.execute("select fingerprint from patterns where fingerprint = any(%s) and persistent_since_run is null",
                        (fps,)).fetchall()
    return frozenset(r[0] for r in rows)


def touch_patterns(conn: psycopg.Connection[Any], report: AuditReport) -> None:
    """Count this run for every pattern it saw; one seen before becomes persistent from this run."""
    ref = (report.connection, report.database, report.collection)
    rows = [(fp, *ref, field, category.value, report.run_id, report.started_at, report.run_id, report.started_at)
            for fp, field, category in _patterns(report)]
    if not rows:
        return
    with conn.cursor() as cur:
        cur.executemany(
            """insert into patterns (fingerprint, connection, database, collection, field, category, runs_seen,
                   first_seen_run, first_seen_at, last_seen_run, last_seen_at)
               values (%s, %s, %s, %s, %s, %s, 1, %s, %s, %s, %s)
               on conflict (fingerprint) do update set runs_seen = patterns.runs_seen + 1,
                   last_seen_run = excluded.last_seen_run, last_seen_at = excluded.last_seen_at,
                   persistent_since_run = coalesce(patterns.persistent_since_run, excluded.last_seen_run),
                   persistent_since_at = coalesce(patterns.persistent_since_at, excluded.last_seen_at)""", rows)


def earlier_runs(conn: psycopg.Connection[Any], ref: CollectionRef, before: datetime,
                 limit: int = 200) -> list[tuple[UUID, str, str | None]]:
    """(id, outcome, scope) of the runs of ``ref`` that did not fail and started before ``before``, newest first."""
    return [(r[0], r[1], r[2]) for r in conn.execute(
        """select id, outcome, scope from runs where connection = %s and database = %s and collection = %s
               and outcome <> 'failed' and started_at < %s order by started_at desc limit %s""",
        (*ref, before, limit)).fetchall()]


def smallest_shares(conn: psycopg.Connection[Any], ref: CollectionRef, before: datetime,
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


def past_findings(conn: psycopg.Connection[Any], run_ids: list[UUID]) -> dict[UUID, list[PastFinding]]:
    """The committed findings of each run, then its dismissed ones (in the order they were dismissed)."""
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


def false_positives(conn: psycopg.Connection[Any], ref: CollectionRef) -> frozenset[str]:
    """Patterns of ``ref`` that users judged false positives more often than true ones."""
    rows = conn.execute(
        """select fingerprint from labels where connection = %s and database = %s and collection = %s
               group by fingerprint
               having count(*) filter (where verdict = 'fp') > count(*) filter (where verdict = 'tp')""",
        tuple(ref)).fetchall()
    return frozenset(r[0] for r in rows)


def label_summaries(conn: psycopg.Connection[Any], ref: CollectionRef) -> dict[str, LabelSummary]:
    """Users' labels of ``ref``'s patterns, oldest first, summed per pattern."""
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
    return labels


def recent_outcomes(conn: psycopg.Connection[Any], schedule: str, limit: int) -> list[tuple[datetime, str]]:
    """(started_at, outcome) of the schedule's newest ``limit`` runs, newest first."""
    return [(r[0], r[1]) for r in conn.execute(
        "select started_at, outcome from runs where schedule = %s order by started_at desc limit %s",
        (schedule, limit)).fetchall()]
