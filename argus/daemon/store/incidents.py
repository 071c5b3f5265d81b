"""Incidents in the history database: loading the ones a run may touch, saving what the tracker
changed, status changes by people, reminders, and what the CLI, the HTTP API and metrics read.

``incidents_to_track`` and ``save_incident`` run inside the transaction that stores a run
(``argus.daemon.record``), under that collection's advisory lock, so a run and what it did to
incidents are kept together or not at all, and two runs of one collection never interleave. The
incidents a run may change are locked; status changes lock their incident's row; the daemon's
chores skip rows another transaction holds.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, timedelta
from typing import Any, Literal

import psycopg
import structlog
from psycopg.rows import dict_row
from psycopg.types.json import Jsonb

from argus.daemon.incidents.errors import StatusRefused
from argus.daemon.incidents.models import (
    ACTIVE,
    Incident,
    IncidentEvent,
    IncidentFinding,
    IncidentStatus,
)
from argus.daemon.metrics import INCIDENT_BUCKETS, IncidentStats
from argus.daemon.store.errors import NotFound
from argus.daemon.store.pool import Connects

__all__ = ["TRANSITIONS", "Action", "IncidentBook", "incidents_to_track", "mark_queued", "pending_notices",
           "refresh_due", "refreshed", "remind_due", "save_incident"]

log = structlog.get_logger("argus.incidents")

Action = Literal["acknowledged", "resolved", "expected", "false_positive"]
# What each action may change: a closed incident (expected, false positive) stays closed; a
# resolved one reopens by itself when a finding comes back.
TRANSITIONS: dict[Action, tuple[IncidentStatus, ...]] = {
    "acknowledged": ("open", "acknowledged"),
    "resolved": ("open", "acknowledged"),
    "expected": ("open", "acknowledged", "resolved"),
    "false_positive": ("open", "acknowledged", "resolved"),
}
_VERDICT = {"expected": "expected", "false_positive": "fp"}

_COLUMNS = ("connection, database, collection, grouping, group_key, status, severity, notified_severity, owner, "
            "note, schedule, labels, opened_at, open_since, opened_run, last_run, last_seen_at, updated_at, "
            "acknowledged_at, resolved_at, clean_runs, reopened, reminders")
_FINDING_COLUMNS = ("fingerprint, field, category, severity, state, affected_count, affected_pct, notified_pct, "
                    "collection_size, evidence_query, evidence_redacted, first_run, last_run, last_finding, "
                    "first_seen_at, last_seen_at, resolved_at")


# --- inside the transaction that stores a run --------------------------------------------------------

def incidents_to_track(conn: psycopg.Connection[Any], ref: tuple[str, str, str], since: datetime) -> list[Incident]:
    """The collection's active incidents and those resolved at or after ``since``, locked: a status
    change made meanwhile waits for the storing run, or the run sees it (no lost update)."""
    return _load(conn, "connection = %s and database = %s and collection = %s and (status = any(%s) "
                       "or (status = 'resolved' and resolved_at >= %s))", (*ref, list(ACTIVE), since), lock=True)


def save_incident(conn: psycopg.Connection[Any], incident: Incident, events: Iterable[IncidentEvent]) -> None:
    """Save what a run did to ``incident`` and its new events (their notices queued by the run
    itself); the incident and the events get their ids."""
    _save(conn, incident)
    for event in events:
        event.id = _insert_event(conn, incident.id, event, queued=True)


# --- rows and models ---------------------------------------------------------------------------------

def _load(conn: psycopg.Connection[Any], where: str, params: Iterable[Any], *, order: str = "id",
          limit: int | None = None, history: bool = False, lock: bool = False) -> list[Incident]:
    cur = conn.cursor(row_factory=dict_row)
    sql = f"select id, {_COLUMNS} from incidents where {where} order by {order}"
    if limit is not None:
        sql += f" limit {int(limit)}"
    if lock:
        sql += " for update"
    rows = cur.execute(sql, tuple(params)).fetchall()
    if not rows:
        return []
    ids = [r["id"] for r in rows]
    findings: dict[int, list[IncidentFinding]] = {i: [] for i in ids}
    for r in cur.execute(f"select incident_id, {_FINDING_COLUMNS} from incident_findings "
                         "where incident_id = any(%s) order by first_seen_at, field, category", (ids,)):
        findings[r.pop("incident_id")].append(IncidentFinding.model_validate(
            {**r, "affected_share": r.pop("affected_pct"), "notified_share": r.pop("notified_pct")}))
    events: dict[int, list[IncidentEvent]] = {i: [] for i in ids}
    if history:
        for r in cur.execute("""select incident_id, id, at, kind, status, owner, note, run_id, source, detail, notice
                                from incident_events where incident_id = any(%s) order by id""", (ids,)):
            events[r.pop("incident_id")].append(IncidentEvent.model_validate(r))
    return [Incident.model_validate({**r, "findings": findings[r["id"]], "history": events[r["id"]]}) for r in rows]


def _save(conn: psycopg.Connection[Any], incident: Incident) -> None:
    values = (incident.connection, incident.database, incident.collection, incident.grouping, incident.group_key,
              incident.status, incident.severity.value, incident.notified_severity.value, incident.owner,
              incident.note, incident.schedule, Jsonb(incident.labels), incident.opened_at, incident.open_since,
              incident.opened_run, incident.last_run, incident.last_seen_at, incident.updated_at,
              incident.acknowledged_at, incident.resolved_at, incident.clean_runs, incident.reopened,
              incident.reminders)
    if incident.id == 0:
        row = conn.execute(f"insert into incidents ({_COLUMNS}, refreshed_at) values "
                           f"({', '.join(['%s'] * len(values))}, %s) returning id",
                           (*values, incident.opened_at)).fetchone()
        assert row is not None
        incident.id = int(row[0])
    else:
        assignments = ", ".join(f"{c.strip()} = %s" for c in _COLUMNS.split(","))
        conn.execute(f"update incidents set {assignments} where id = %s", (*values, incident.id))
    with conn.cursor() as cur:
        cur.executemany(
            f"""insert into incident_findings (incident_id, {_FINDING_COLUMNS})
                values ({', '.join(['%s'] * 18)})
                on conflict (incident_id, fingerprint) do update set severity = excluded.severity,
                    state = excluded.state, affected_count = excluded.affected_count,
                    affected_pct = excluded.affected_pct, notified_pct = excluded.notified_pct,
                    collection_size = excluded.collection_size, evidence_query = excluded.evidence_query,
                    evidence_redacted = excluded.evidence_redacted, last_run = excluded.last_run,
                    last_finding = excluded.last_finding, last_seen_at = excluded.last_seen_at,
                    resolved_at = excluded.resolved_at""",
            [(incident.id, f.fingerprint, f.field, f.category.value, f.severity.value, f.state, f.affected_count,
              f.affected_share, f.notified_share, f.collection_size, Jsonb(f.evidence_query), f.evidence_redacted,
              f.first_run, f.last_run, f.last_finding, f.first_seen_at, f.last_seen_at, f.resolved_at)
             for f in incident.findings])


def pending_notices(conn: psycopg.Connection[Any], *, where: tuple[str, str, str] | None = None,
                    ) -> tuple[list[int], list[tuple[IncidentEvent, Incident]]]:
    """Events recorded outside a run (status changes, reminders) whose notices wait to be queued,
    oldest first, of every incident or of one collection's, locked; rows another transaction holds
    are left to it. Returns the events' ids (for ``mark_queued``) and each event with its incident."""
    scope = "" if where is None else ("and incident_id in (select id from incidents where connection = %s "
                                      "and database = %s and collection = %s)")
    rows = conn.execute(f"""select id, incident_id from incident_events where notice is not null
                                and not notice_queued {scope} order by id limit 200 for update skip locked""",
                        where or ()).fetchall()
    if not rows:
        return [], []
    incidents = {i.id: i for i in _load(conn, "id = any(%s)", ([r[1] for r in rows],), history=True)}
    pending = [(next(e for e in incidents[incident_id].history if e.id == event_id), incidents[incident_id])
               for event_id, incident_id in rows if incident_id in incidents]
    return [r[0] for r in rows], pending


def mark_queued(conn: psycopg.Connection[Any], event_ids: list[int]) -> None:
    conn.execute("update incident_events set notice_queued = true where id = any(%s)", (event_ids,))


def refreshed(conn: psycopg.Connection[Any], incident_ids: Iterable[int], now: datetime) -> None:
    """Notices of these incidents were just queued: Alertmanager saw them now. Rows another
    transaction holds are skipped (their next refresh comes a little early), so that this never
    waits for a storing run: no deadlock between the daemon's chores and a run."""
    ids = sorted(set(incident_ids))
    if ids:
        conn.execute("""update incidents set refreshed_at = %s
                        where id in (select id from incidents where id = any(%s) order by id for update skip locked)""",
                     (now, ids))


def _insert_event(conn: psycopg.Connection[Any], incident_id: int, event: IncidentEvent, *, queued: bool) -> int:
    row = conn.execute(
        """insert into incident_events (incident_id, at, kind, status, owner, note, run_id, source, detail, notice,
               notice_queued) values (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s) returning id""",
        (incident_id, event.at, event.kind, event.status, event.owner, event.note, event.run_id, event.source,
         event.detail, event.notice, queued or event.notice is None)).fetchone()
    assert row is not None
    return int(row[0])


# --- the daemon's chores -----------------------------------------------------------------------------

def remind_due(conn: psycopg.Connection[Any], now: datetime, after: timedelta) -> int:
    """Record a reminder (an event whose notice waits) for each incident open, unacknowledged, for
    ``after`` since it opened or was last reminded; rows a storing run holds are left for the next pass."""
    due = conn.execute("""update incidents set reminders = reminders + 1, reminded_at = %s
                          where id in (select id from incidents where status = 'open'
                                           and coalesce(reminded_at, open_since) <= %s
                                       order by id for update skip locked) returning id""",
                       (now, now - after)).fetchall()
    for (incident_id,) in due:
        _insert_event(conn, incident_id, IncidentEvent(
            at=now, kind="reminded", status="open", source="daemon", notice="incident_reminder"), queued=False)
    return len(due)


def refresh_due(conn: psycopg.Connection[Any], now: datetime, every: timedelta) -> list[tuple[Incident, int]]:
    """Active incidents last sent ``every`` ago or earlier, each with its refresh's number, counted
    as refreshed now; rows another transaction holds are skipped."""
    due = conn.execute("""update incidents set refreshes = refreshes + 1, refreshed_at = %s
                          where id in (select id from incidents where status = any(%s)
                                           and coalesce(refreshed_at, opened_at) <= %s
                                       order by id for update skip locked)
                          returning id, refreshes""", (now, list(ACTIVE), now - every)).fetchall()
    if not due:
        return []
    counts = dict(due)
    return [(i, counts[i.id]) for i in _load(conn, "id = any(%s)", (list(counts),))]


# --- what people and the daemon do -------------------------------------------------------------------

class IncidentBook:
    """Incidents of one store, for the CLI, the HTTP API, the daemon's chores and metrics."""

    def __init__(self, store: Connects) -> None:
        self._store = store

    def get(self, incident_id: int) -> Incident:
        with self._store._conn() as conn:
            found = _load(conn, "id = %s", (incident_id,), history=True)
        if not found:
            raise NotFound(f"no incident {incident_id} (see `argus incidents --status all`)")
        return found[0]

    def list(self, *, statuses: Iterable[str] | None = None, connection: str | None = None,
             database: str | None = None, collection: str | None = None, limit: int = 100) -> list[Incident]:
        """Newest first; ``statuses`` None for every status."""
        where: list[str] = ["true"]
        params: list[Any] = []
        for column, value in (("connection", connection), ("database", database), ("collection", collection)):
            if value is not None:
                where.append(f"{column} = %s")
                params.append(value)
        if statuses is not None:
            where.append("status = any(%s)")
            params.append(list(statuses))
        with self._store._conn() as conn:
            return _load(conn, " and ".join(where), params, order="id desc", limit=limit)

    def change_status(self, incident_id: int, action: Action, *, now: datetime, source: Literal["cli", "http"],
                      owner: str | None = None, note: str | None = None) -> Incident:
        """Acknowledge, resolve, or close as expected or a false positive (its findings are labelled
        so that planners learn it). Raises ``NotFound`` or ``StatusRefused``."""
        with self._store._conn() as conn, conn.transaction():
            found = _load(conn, "id = %s", (incident_id,), lock=True)
            if not found:
                raise NotFound(f"no incident {incident_id} (see `argus incidents --status all`)")
            incident = found[0]
            if incident.status == action in TRANSITIONS[action] and owner in (None, incident.owner) \
                    and note in (None, incident.note):
                # the same change twice (a retried request, a second click) is no change: no new entry
                return _load(conn, "id = %s", (incident_id,), history=True)[0]
            if incident.status not in TRANSITIONS[action]:
                raise StatusRefused(_refusal(incident, action))
            was_active = incident.status in ACTIVE
            incident.status = action
            incident.owner = owner if owner is not None else incident.owner
            incident.note = note if note is not None else incident.note
            incident.updated_at = now
            if action == "acknowledged":
                incident.acknowledged_at = incident.acknowledged_at or now
            elif was_active:
                incident.resolved_at = now
            verdict = _VERDICT.get(action)
            for f in incident.findings if verdict else []:
                _label(conn, incident, f, str(verdict), note)
            _save(conn, incident)
            # Closing an active incident ends it where it was sent (Alertmanager's endsAt among them).
            notice = "incident_resolved" if was_active and action != "acknowledged" else None
            detail = f"{len(incident.findings)} finding(s) labelled {verdict}" if verdict else ""
            event = IncidentEvent.model_validate({"at": now, "kind": action, "status": action, "owner": owner,
                                                  "note": note, "source": source, "detail": detail,
                                                  "notice": notice})
            event.id = _insert_event(conn, incident.id, event, queued=False)
            # read back while the row is still locked: read after the commit, a change made meanwhile
            # by another request was described as this one's
            changed = _load(conn, "id = %s", (incident_id,), history=True)[0]
        log.info("incident_status_changed", incident=incident.id, status=action, source=source)
        return changed

    def stats(self) -> IncidentStats:
        """What the metrics show: counts by status and severity, the oldest open incident per
        severity, and how long acknowledging and resolving took (cumulative per bucket)."""
        stats = IncidentStats()
        buckets = ", ".join(f"count(*) filter (where d <= {b:g})" for b in INCIDENT_BUCKETS)
        with self._store._conn(timeout=1.0) as conn:
            for status, severity, n in conn.execute("select status, severity, count(*) from incidents group by 1, 2"):
                stats.counts[(status, severity)] = int(n)
            for severity, at in conn.execute("""select severity, extract(epoch from min(open_since)) from incidents
                                                where status = 'open' group by severity"""):
                stats.oldest_open[severity] = float(at)
            for target, since in ((stats.to_acknowledge, "acknowledged_at - opened_at"),
                                  (stats.to_resolve, "resolved_at - opened_at")):
                only = "acknowledged_at is not null" if target is stats.to_acknowledge else "status = 'resolved'"
                for row in conn.execute(
                        f"""select severity, {buckets}, count(*), coalesce(sum(d), 0) from (
                                select severity, greatest(extract(epoch from {since}), 0) as d from incidents
                                where {only}) x group by severity"""):
                    target[row[0]] = ([int(c) for c in row[1:-1]], float(row[-1]))
        return stats

    def prune(self, before: datetime) -> int:
        """Delete closed incidents (resolved, expected, false positive) last changed before ``before``."""
        with self._store._conn() as conn:
            return conn.execute("delete from incidents where status not in ('open', 'acknowledged') "
                                "and updated_at < %s", (before,)).rowcount


def _refusal(incident: Incident, action: Action) -> str:
    if incident.status == action:
        return f"incident {incident.id} is {action.replace('_', ' ')} already"
    allowed = " or ".join(s.replace("_", " ") for s in TRANSITIONS[action])
    return (f"incident {incident.id} is {incident.status.replace('_', ' ')}: only an incident that is {allowed} "
            f"can be marked {action.replace('_', ' ')}")


def _label(conn: psycopg.Connection[Any], incident: Incident, f: IncidentFinding, verdict: str,
           note: str | None) -> None:
    """A label on the finding's latest occurrence, as ``argus label`` writes one."""
    conn.execute(
        """insert into labels (fingerprint, run_id, finding_id, connection, database, collection, field, category,
               verdict, note, affected_pct) values (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)""",
        (f.fingerprint, f.last_run, f.last_finding, incident.connection, incident.database, incident.collection,
         f.field, f.category.value, verdict, note or f"incident {incident.id}", f.affected_share))
