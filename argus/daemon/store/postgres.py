"""Run history in PostgreSQL: the store's reads and writes outside storing a run (claims of
schedule firings, labels, pruning, the historical context a planner gets, what the CLI and the
HTTP API list). Storing a run is ``argus.daemon.record``'s: it reads and writes through
``store.runs`` inside ``storing``, one transaction under the collection's advisory lock.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta
from typing import Any
from uuid import UUID

import psycopg
import structlog
from psycopg.rows import dict_row

from argus.agent.health.models import HealthSnapshot
from argus.agent.history import HistoricalContext, PastFinding, PastRun, build_context
from argus.agent.report import AuditReport
from argus.agent.shapes.models import Shapes
from argus.daemon.store.errors import NotFound, StoreError
from argus.daemon.store.pool import Connections, describe_dsn, lock_key
from argus.daemon.store.rows import LOST_RUN, CollectionRef, Label, RunSummary, TriggerClaim
from argus.daemon.store.runs import (
    false_positives,
    label_summaries,
    load_report,
    lock_collection,
    past_findings,
)

__all__ = ["LOST_RUN", "CollectionRef", "Label", "PostgresStore", "RunSummary", "TriggerClaim", "describe_dsn"]

log = structlog.get_logger("argus.store")


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

    def last_full_audit(self, ref: CollectionRef) -> datetime | None:
        """When the last audit of the whole collection that did not fail started (None: never)."""
        with self._conn(timeout=2.0) as conn:
            row = conn.execute("""select last_full_at from full_audits where connection = %s and database = %s
                                      and collection = %s""", tuple(ref)).fetchone()
        return row[0] if row else None

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
            found = past_findings(conn, [r[0] for r in rows]) if rows else {}
            labels = label_summaries(conn, ref)
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
            return load_report(conn, run_id)

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

    def runs_to_diff(self, older: UUID, newer: UUID) -> tuple[AuditReport, list[PastFinding], frozenset[str]]:
        """``newer``'s report, ``older``'s findings and the patterns users labelled false positives,
        for comparing two stored runs of one collection."""
        with self._conn() as conn:
            a, b = load_report(conn, older), load_report(conn, newer)
            if (a.connection, a.database, a.collection) != (b.connection, b.database, b.collection):
                raise StoreError(f"runs {older} and {newer} audit different collections")
            previous = past_findings(conn, [older])[older]
            suppressed = false_positives(conn, CollectionRef(b.connection, b.database, b.collection))
        return b, previous, suppressed

    @contextmanager
    def storing(self, ref: CollectionRef) -> Iterator[psycopg.Connection[Any]]:
        """One transaction holding ``ref``'s lock: a run of ``ref`` is read against, and written, in it."""
        with self._conn() as conn, conn.transaction():
            lock_collection(conn, ref)
            yield conn

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
