"""The daemon's incident chores: what is due at a moment goes to the outbox.

Reminders for incidents left open (unacknowledged) for ``remind_after`` since they opened or were
last reminded, the notices of status changes, and refreshes that keep Alertmanager alerts of
active incidents from lapsing. Each event is queued once, in the transaction that marks it queued
(replicas skip rows another one holds).
"""

from __future__ import annotations

from datetime import datetime

from argus.daemon.alerts.policy import AlertPolicy
from argus.daemon.incidents.models import IncidentNotice
from argus.daemon.store.incidents import mark_queued, pending_notices, refresh_due, refreshed, remind_due
from argus.daemon.store.outbox import enqueue
from argus.daemon.store.pool import Connects

__all__ = ["queue_due"]


def queue_due(store: Connects, now: datetime, policy: AlertPolicy | None) -> int:
    """Queue what is due at ``now``; returns how many outbox rows are pending from it."""
    sends = policy is not None and policy.sends_incidents
    config = policy.config.incidents if policy is not None else None
    queued = 0
    with store._conn() as conn, conn.transaction():
        if sends and config is not None and config.remind_after is not None:
            remind_due(conn, now, config.remind_after)
        ids, pending = pending_notices(conn)
        if ids:
            routed = policy.incident_alerts(pending) if policy is not None else []
            queued += enqueue(conn, routed, now)
            mark_queued(conn, ids)
            refreshed(conn, [r.alert.incident.id for r in routed if isinstance(r.alert, IncidentNotice)], now)
        every = policy.refresh_every() if policy is not None else None
        if every is not None and policy is not None:
            due = refresh_due(conn, now, every)
            if due:
                queued += enqueue(conn, policy.incident_refreshes(due, now=now), now)
    return queued
