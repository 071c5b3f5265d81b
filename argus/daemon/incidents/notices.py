"""Words for incident notices: the title and text every channel shows, and the dedup key that
stays the same on every retry of one notice."""

from __future__ import annotations

import hashlib
from datetime import datetime, timedelta
from uuid import UUID

from argus.daemon.incidents.models import Incident, IncidentFinding, IncidentNotice, NoticeKind

__all__ = ["build_notice", "describe_age", "finding_line", "notice_key"]

_CLOSED = {"resolved": "resolved", "expected": "closed as expected", "false_positive": "closed as a false positive"}


def notice_key(kind: NoticeKind, incident_id: int, seq: int) -> str:
    """Stable per notice: ``seq`` is the event's id (or the refresh's number)."""
    return hashlib.sha256(f"{kind}:{incident_id}:{seq}".encode()).hexdigest()[:32]


def describe_age(age: timedelta) -> str:
    """``2d 3h``, ``5h 12m``, ``40m``: how long, for people."""
    minutes = max(int(age.total_seconds() // 60), 0)
    days, hours, mins = minutes // 1440, minutes % 1440 // 60, minutes % 60
    if days:
        return f"{days}d {hours}h" if hours else f"{days}d"
    if hours:
        return f"{hours}h {mins}m" if mins else f"{hours}h"
    return f"{mins}m"


def finding_line(f: IncidentFinding) -> str:
    """``total outlier_value: critical, 100 of 5,000 documents (2.00%)`` (``resolved`` when gone)."""
    if f.state == "resolved":
        return f"{f.field} {f.category.value}: resolved (was {f.severity.value}, {f.affected_count:,} documents)"
    return (f"{f.field} {f.category.value}: {f.severity.value}, {f.affected_count:,} of {f.collection_size:,} "
            f"documents ({f.affected_share:.2%})")


def _count(incident: Incident) -> str:
    active = len(incident.active_findings)
    return f"{active} finding{'s' if active != 1 else ''}"


def build_notice(incident: Incident, kind: NoticeKind, *, seq: int, occurred_at: datetime,
                 base_url: str | None = None, run_id: UUID | None = None, changes: list[str] | None = None,
                 by: str | None = None) -> IncidentNotice:
    """The notice of ``kind`` for ``incident`` as it stands now; ``by`` names who changed its status."""
    base = base_url.rstrip("/") if base_url else None
    findings = [f.model_copy(update={"evidence_url": f"{base}/runs/{f.last_run}" if base else None})
                for f in sorted(incident.findings, key=lambda f: (f.state != "active", -f.severity.rank, f.field))]
    shown = incident.model_copy(update={"findings": findings, "history": []})
    name = f"Incident #{incident.id}"
    where, severity = incident.where, incident.severity.value
    changed = list(changes or [])
    if kind == "incident_opened":
        title = f"{name} opened: {where}, {_count(incident)} ({severity})"
    elif kind == "incident_escalated":
        title = f"{name} escalated: {where}, {_count(incident)} ({severity})"
    elif kind == "incident_updated":
        title = f"{name} updated: {where}, {_count(incident)} ({severity})"
    elif kind == "incident_reopened":
        title = f"{name} reopened: {where}, {_count(incident)} ({severity})"
    elif kind == "incident_resolved":
        title = f"{name} {_CLOSED.get(incident.status, 'resolved')}: {where}"
    elif kind == "incident_reminder":
        age = describe_age(occurred_at - incident.open_since)
        title = f"{name} still open, unacknowledged for {age}: {where}, {_count(incident)} ({severity})"
    else:
        title = f"{name}: {where}, {_count(incident)} ({severity})"
    lines = []
    if kind == "incident_resolved":
        lines.append(f"Open for {describe_age(occurred_at - incident.opened_at)}"
                     + (f"; {_CLOSED.get(incident.status, 'resolved')} by {by}" if by else "")
                     + (f": {incident.note}" if by and incident.note else "."))
    elif changed:
        lines += changed
    lines += [finding_line(f) for f in findings if f.state == "active" or kind == "incident_resolved"]
    if incident.owner and kind != "incident_resolved":
        lines.append(f"Owner: {incident.owner}")
    return IncidentNotice(
        dedup_key=notice_key(kind, incident.id, seq), kind=kind, title=title, text="\n".join(lines),
        severity=incident.severity, occurred_at=occurred_at, run_id=run_id,
        run_url=f"{base}/runs/{run_id}" if base and run_id else None,
        incident_url=f"{base}/incidents/{incident.id}" if base else None, changes=changed, incident=shown)
