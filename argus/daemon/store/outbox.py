"""The alert outbox and the mute list, in the history database.

Alerts are written by ``enqueue`` inside the transaction that stores their run, so a run is never
kept without its alerts nor an alert without its run. Senders lease due rows (several replicas
may send; a lease keeps two from taking the same row), and record each attempt. A row is
``pending`` until ``delivered``; ``muted`` when a mute covered it; ``dropped`` when its channel
left the configuration.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import psycopg
import structlog
from psycopg.types.json import Jsonb

from argus.daemon.alerts.models import NOTIFICATION, Alert, Notification, RoutedAlert
from argus.daemon.store.errors import NotFound
from argus.daemon.store.pool import Connects

__all__ = ["AlertOutbox", "Mute", "OutboxRow", "enqueue"]

log = structlog.get_logger("argus.alerts")

_MUTED = """exists (select 1 from mutes m where (m.expires_at is null or m.expires_at > %(now)s)
                and (m.fingerprint is null or starts_with(o.fingerprint, m.fingerprint))
                and (m.connection is null or m.connection = o.connection)
                and (m.database is null or m.database = o.database)
                and (m.collection is null or m.collection = o.collection)
                and (m.category is null or m.category = o.category))"""


@dataclass(frozen=True)
class OutboxRow:
    id: int
    channel: str
    attempts: int
    alert: Notification


@dataclass(frozen=True)
class Mute:
    id: int
    fingerprint: str | None
    connection: str | None
    database: str | None
    collection: str | None
    category: str | None
    reason: str | None
    created_at: datetime
    expires_at: datetime | None

    def describe(self) -> str:
        parts = [f"{k}={v}" for k, v in (("fingerprint", self.fingerprint), ("connection", self.connection),
                                          ("database", self.database), ("collection", self.collection),
                                          ("category", self.category)) if v is not None]
        return " ".join(parts)


def _matched_by_mutes(alert: Notification) -> tuple[str | None, str | None]:
    """(fingerprint, category) a mute may match: an incident grouped per pattern has both, one grouped
    per category its category; one per collection is matched by connection and collection alone."""
    if isinstance(alert, Alert):
        return alert.fingerprint, alert.category.value if alert.category else None
    incident = alert.incident
    if incident.grouping == "pattern":
        return incident.group_key, incident.findings[0].category.value if incident.findings else None
    return None, incident.group_key if incident.grouping == "category" else None


def enqueue(conn: psycopg.Connection[Any], routed: Iterable[RoutedAlert], now: datetime) -> int:
    """Queue each alert for each of its channels (muted ones as ``muted``); return how many are pending."""
    rows = [(r.alert.dedup_key, channel, r.alert.kind, r.alert.run_id, *_matched_by_mutes(r.alert),
             r.alert.connection, r.alert.database, r.alert.collection,
             None if isinstance(r.alert, Alert) else r.alert.incident.id,
             Jsonb(r.alert.model_dump(mode="json")), now, now)
            for r in routed for channel in r.channels]
    if not rows:
        return 0
    with conn.cursor() as cur:
        cur.executemany(
            """insert into alert_outbox (dedup_key, channel, kind, run_id, fingerprint, category, connection,
                   database, collection, incident_id, alert, next_attempt_at, created_at)
               values (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)
               on conflict (dedup_key, channel) do nothing""", rows)
        cur.execute(f"""update alert_outbox o set status = 'muted' where o.status = 'pending'
                            and o.dedup_key = any(%(keys)s) and o.created_at = %(now)s and {_MUTED}""",
                    {"now": now, "keys": sorted({r[0] for r in rows})})
        muted = cur.rowcount
    return len(rows) - muted


class AlertOutbox:
    """The outbox and mutes of one store."""

    def __init__(self, store: Connects) -> None:
        self._store = store

    # --- sending -------------------------------------------------------------------------------

    def lease_due(self, now: datetime, *, limit: int = 50, lease: timedelta = timedelta(seconds=60)) -> list[OutboxRow]:
        """Take up to ``limit`` due pending alerts for ``lease``; alerts muted since they were
        queued are marked muted instead of returned."""
        with self._store._conn() as conn, conn.transaction():
            conn.execute(f"""update alert_outbox o set status = 'muted' where o.status = 'pending'
                                 and o.next_attempt_at <= %(now)s and {_MUTED}""", {"now": now})
            rows = conn.execute(
                """update alert_outbox set leased_until = %(until)s
                   where id in (select id from alert_outbox
                                where status = 'pending' and next_attempt_at <= %(now)s
                                  and (leased_until is null or leased_until <= %(now)s)
                                order by id limit %(limit)s for update skip locked)
                   returning id, channel, attempts, alert""",
                {"now": now, "until": now + lease, "limit": limit}).fetchall()
        return [OutboxRow(r[0], r[1], r[2], NOTIFICATION.validate_python(r[3])) for r in sorted(rows)]

    def delivered(self, row_id: int, now: datetime) -> None:
        self._update(row_id, "status = 'delivered', delivered_at = %(now)s, attempts = attempts + 1, "
                             "leased_until = null, last_error = null", now=now)

    def failed(self, row_id: int, error: str, next_attempt_at: datetime) -> None:
        self._update(row_id, "attempts = attempts + 1, last_error = %(error)s, next_attempt_at = %(next)s, "
                             "leased_until = null", error=error[:300], next=next_attempt_at)

    def dropped(self, row_id: int, error: str) -> None:
        self._update(row_id, "status = 'dropped', last_error = %(error)s, leased_until = null", error=error[:300])

    def _update(self, row_id: int, assignments: str, **params: Any) -> None:
        with self._store._conn() as conn:
            conn.execute(f"update alert_outbox set {assignments} where id = %(id)s", {"id": row_id, **params})

    def pending(self) -> int:
        with self._store._conn() as conn:
            row = conn.execute("select count(*) from alert_outbox where status = 'pending'").fetchone()
        return int(row[0]) if row else 0

    def rows(self, *, limit: int | None = None) -> list[dict[str, Any]]:
        """The newest ``limit`` outbox rows (all without one), oldest first (for `argus alerts`)."""
        with self._store._conn() as conn, conn.cursor(row_factory=psycopg.rows.dict_row) as cur:
            cur.execute("""select id, dedup_key, channel, kind, run_id, status, attempts, last_error,
                               next_attempt_at, created_at, delivered_at, alert
                           from alert_outbox order by id desc limit %s""", (limit,))
            return list(reversed(cur.fetchall()))

    def prune(self, before: datetime) -> int:
        with self._store._conn() as conn:
            return conn.execute("delete from alert_outbox where status <> 'pending' and created_at < %s",
                                (before,)).rowcount

    # --- mutes ---------------------------------------------------------------------------------

    def mute(self, *, now: datetime, fingerprint: str | None = None, connection: str | None = None,
             database: str | None = None, collection: str | None = None, category: str | None = None,
             expires_at: datetime | None = None, reason: str | None = None) -> Mute:
        if fingerprint is None and collection is None and category is None:
            raise ValueError("a mute needs a fingerprint, a collection or a category")
        if fingerprint is not None and len(fingerprint) < 8:
            raise ValueError("give at least 8 characters of the fingerprint")
        with self._store._conn() as conn:
            row = conn.execute(
                """insert into mutes (fingerprint, connection, database, collection, category, reason, created_at,
                       expires_at) values (%s, %s, %s, %s, %s, %s, %s, %s)
                   returning id, fingerprint, connection, database, collection, category, reason, created_at,
                       expires_at""",
                (fingerprint, connection, database, collection, category, reason, now, expires_at)).fetchone()
        assert row is not None
        mute = Mute(*row)
        log.info("mute_added", mute_id=mute.id, what=mute.describe(), expires_at=str(expires_at))
        return mute

    def unmute(self, mute_id: int) -> Mute:
        with self._store._conn() as conn:
            row = conn.execute("""delete from mutes where id = %s returning id, fingerprint, connection, database,
                                      collection, category, reason, created_at, expires_at""",
                               (mute_id,)).fetchone()
        if row is None:
            raise NotFound(f"no mute with id {mute_id}")
        mute = Mute(*row)
        log.info("mute_removed", mute_id=mute.id, what=mute.describe())
        return mute

    def mutes(self, now: datetime) -> list[Mute]:
        """Mutes in force at ``now``, oldest first."""
        with self._store._conn() as conn:
            rows = conn.execute("""select id, fingerprint, connection, database, collection, category, reason,
                                          created_at, expires_at from mutes
                                   where expires_at is null or expires_at > %s order by id""", (now,)).fetchall()
        return [Mute(*r) for r in rows]
