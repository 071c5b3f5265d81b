"""What a stored run does to a collection's incidents. Pure: a report and the incidents it may
touch in, the changed incidents with their new events and the notice each one asks for out.

The rules (docs/incidents.md says them for users):

- Findings at or above ``min_severity`` take part; a pattern users labelled a false positive or
  expected stays out while its share has not grown past the growth factor (as planners treat it).
- Findings of one group (the collection, a category of it, or a pattern, per ``group_by``) join
  the group's open or acknowledged incident. Without one, a finding that belonged to an incident
  resolved less than ``reopen_within`` ago reopens it; otherwise the group's findings open a new
  incident together.
- A joining finding escalates the incident when its severity is above the one the incident was last
  sent at, as does a finding at that severity whose share grew past ``growth_factor`` times its
  share when the incident was last sent. A finding new to the incident that does not escalate it
  sends an update (``notify_joined``, on by default), all of one run's in one notice.
- Only a complete (succeeded) audit of the whole collection proves absence (a scoped run's window
  of recent documents cannot, as the diff decides): a finding it no longer reports is resolved in
  its incident, and an incident whose findings all stayed resolved for ``resolve_after`` complete
  runs resolves; twice as many for each time it reopened (at most 16 times as many), so that a
  flapping defect stops resolving and reopening. A failed run changes nothing.

An incident sends at most one notice per run: opened, reopened, escalated, updated or resolved.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime

from argus.agent.evidence import written_evidence
from argus.agent.findings import Finding, severity_at_least
from argus.agent.history import fingerprint
from argus.agent.privacy import has_masked
from argus.agent.report import AuditReport
from argus.config.alerts import Grouping, IncidentsConfig
from argus.daemon.incidents.models import ACTIVE, Incident, IncidentEvent, IncidentFinding, NoticeKind

__all__ = ["Change", "clean_runs_needed", "group_key", "track"]

Held = Callable[[str, float], bool]  # (fingerprint, share) -> users labelled it away at this share


@dataclass
class Change:
    """One incident this run touched: its state after the run, what happened, what to send."""

    incident: Incident
    events: list[IncidentEvent] = field(default_factory=list)
    notice: NoticeKind | None = None
    changes: list[str] = field(default_factory=list)  # why it escalated, in words, for the notice
    joined: list[str] = field(default_factory=list)  # findings new to the incident, in words

    @property
    def is_new(self) -> bool:
        return self.incident.id == 0


def group_key(grouping: Grouping, fp: str, finding: Finding) -> str:
    if grouping == "collection":
        return ""
    return finding.category.value if grouping == "category" else fp


def track(report: AuditReport, incidents: Iterable[Incident], *, config: IncidentsConfig, growth_factor: float,
          held: Held = lambda fp, share: False, labels: Mapping[str, str] | None = None) -> list[Change]:
    """Apply ``report`` to ``incidents`` (those of its collection that are active, or resolved within
    ``reopen_within`` of it); the incidents are changed in place and returned inside their ``Change``.
    Every incident whose state changed is returned, with or without events."""
    if report.outcome == "failed":
        return []
    now = report.finished_at
    known = list(incidents)
    touched: dict[int, Change] = {}  # id(incident) -> its change
    # A finding already in an active incident stays there, whatever the grouping is now.
    holding: dict[int, list[tuple[str, Finding]]] = {}
    grouped: dict[tuple[Grouping, str], list[tuple[str, Finding]]] = {}
    for f in report.findings:
        fp = fingerprint(report.connection, report.database, report.collection, f.field, f.category)
        if not severity_at_least(f.severity, config.min_severity) or held(fp, f.affected_pct):
            continue
        holder = _holding(known, fp)
        if holder is not None:
            touched.setdefault(id(holder), Change(holder))
            holding.setdefault(id(holder), []).append((fp, f))
        else:
            grouped.setdefault((config.group_by, group_key(config.group_by, fp, f)), []).append((fp, f))

    for (grouping, key), found in grouped.items():
        incident = _active(known, grouping, key)
        if incident is not None:
            change = touched.setdefault(id(incident), Change(incident))
        else:
            back = _recently_resolved(known, grouping, key, {fp for fp, _ in found}, now, config)
            if back is not None:
                change = touched.setdefault(id(back), Change(back))
                _reopen(change, report)
            else:
                change = Change(_new(report, grouping, key, found, labels))
                known.append(change.incident)
                touched[id(change.incident)] = change
        holding.setdefault(id(change.incident), []).extend(found)

    for key_id, found in holding.items():
        change = touched[key_id]
        for fp, f in found:
            _join(change, report, fp, f, growth_factor)
        _seen(change, report, notify_joined=config.notify_joined)

    if report.outcome == "succeeded" and report.window is None:
        seen = {fp for found in holding.values() for fp, _ in found}
        for incident in known:
            if incident.status in ACTIVE:
                _absent(touched, incident, seen, report, config)
    return list(touched.values())


# --- finding incidents ------------------------------------------------------------------------------

def clean_runs_needed(incident: Incident, config: IncidentsConfig) -> int:
    """``resolve_after``, doubled each time the incident reopened (at most 16 times): a flapping
    defect must stay away longer before it is believed gone, instead of resolving and reopening
    every few runs."""
    return config.resolve_after * 2 ** min(incident.reopened, 4)


def _holding(known: list[Incident], fp: str) -> Incident | None:
    return next((i for i in known if i.status in ACTIVE and i.finding(fp) is not None), None)


def _active(known: list[Incident], grouping: Grouping, key: str) -> Incident | None:
    mine = [i for i in known if i.status in ACTIVE and i.grouping == grouping and i.group_key == key]
    return max(mine, key=lambda i: (i.id == 0, i.id), default=None)


def _recently_resolved(known: list[Incident], grouping: Grouping, key: str, fps: set[str], now: datetime,
                       config: IncidentsConfig) -> Incident | None:
    """The latest incident of the group resolved within ``reopen_within``, if one of ``fps`` was in it."""
    mine = [i for i in known if i.status == "resolved" and i.grouping == grouping and i.group_key == key
            and i.resolved_at is not None and now - i.resolved_at <= config.reopen_within
            and any(i.finding(fp) is not None for fp in fps)]
    return max(mine, key=lambda i: i.id, default=None)


# --- changing them --------------------------------------------------------------------------------

def _event(change: Change, report: AuditReport, kind: str, detail: str = "") -> None:
    """Record what happened; the event that opens, reopens, escalates or resolves carries the notice."""
    notice = change.notice if kind in ("opened", "reopened", "escalated", "updated", "resolved") else None
    change.events.append(IncidentEvent.model_validate({
        "at": report.finished_at, "kind": kind, "status": change.incident.status, "run_id": report.run_id,
        "source": "run", "detail": detail, "notice": notice}))


def _what(f: IncidentFinding | Finding) -> str:
    return f"{f.field} {f.category.value}"


def _new(report: AuditReport, grouping: Grouping, key: str, found: list[tuple[str, Finding]],
         labels: Mapping[str, str] | None) -> Incident:
    now = report.finished_at
    top = max((f.severity for _, f in found), key=lambda s: s.rank)
    return Incident(connection=report.connection, database=report.database, collection=report.collection,
                    grouping=grouping, group_key=key, status="open", severity=top, notified_severity=top,
                    schedule=report.schedule, labels=dict(labels or {}), opened_at=now, open_since=now,
                    opened_run=report.run_id, last_run=report.run_id, last_seen_at=now, updated_at=now)


def _reopen(change: Change, report: AuditReport) -> None:
    incident = change.incident
    incident.status = "open"
    incident.resolved_at = None
    incident.open_since = report.finished_at
    incident.reopened += 1
    incident.clean_runs = 0
    incident.reminders = 0
    change.notice = "incident_reopened"


def _join(change: Change, report: AuditReport, fp: str, f: Finding, growth_factor: float) -> None:
    incident = change.incident
    now = report.finished_at
    evidence = written_evidence(f, report.options.privacy)
    current = incident.finding(fp)
    if current is None:
        current = IncidentFinding(
            fingerprint=fp, field=f.field, category=f.category, severity=f.severity, affected_count=f.affected_count,
            affected_share=f.affected_pct, notified_share=f.affected_pct, collection_size=_counted_in(report),
            evidence_query=evidence, evidence_redacted=has_masked(evidence), first_run=report.run_id,
            last_run=report.run_id, last_finding=f.id, first_seen_at=now, last_seen_at=now)
        incident.findings.append(current)
        if not change.is_new and change.notice != "incident_reopened":
            joined = f"{_what(f)} joined ({f.severity.value}, {_count(f.affected_count, f)})"
            change.joined.append(joined)
            _event(change, report, "joined", joined)
    else:
        if current.state == "resolved" and change.notice != "incident_reopened":
            _event(change, report, "finding_back", f"{_what(f)} is back ({_count(f.affected_count, f)})")
        # Growth counts for findings at the severity the incident was sent at: a low finding's
        # share moving does not make a high incident worse.
        if f.affected_pct > current.notified_share * growth_factor and not change.is_new \
                and f.severity.rank >= incident.notified_severity.rank:
            change.changes.append(f"{_what(f)} grew from {current.notified_share:.2%} to {f.affected_pct:.2%} "
                                  f"of documents")
        current.state, current.resolved_at = "active", None
        current.severity, current.affected_count, current.affected_share = f.severity, f.affected_count, f.affected_pct
        current.collection_size, current.evidence_query = _counted_in(report), evidence
        current.evidence_redacted = has_masked(evidence)
        current.last_run, current.last_finding, current.last_seen_at = report.run_id, f.id, now
    if f.severity.rank > incident.notified_severity.rank and not change.is_new:
        change.changes.append(f"{_what(f)} is {f.severity.value}, above the {incident.notified_severity.value} "
                              f"the incident was sent at")
    if f.severity.rank > incident.severity.rank:
        incident.severity = f.severity


def _counted_in(report: AuditReport) -> int:
    """The documents a finding's share is of: a scoped run's window, else the collection."""
    return report.window.documents if report.window is not None else report.collection_size


def _count(count: int, f: Finding) -> str:
    return f"{count:,} documents, {f.affected_pct:.2%}"


def _seen(change: Change, report: AuditReport, *, notify_joined: bool = True) -> None:
    """After a run's findings joined: the incident is current, and escalated, opened or reopened
    notices reset what later growth is measured from."""
    incident = change.incident
    incident.last_run, incident.last_seen_at, incident.updated_at = report.run_id, report.finished_at, \
        report.finished_at
    incident.clean_runs = 0
    if incident.schedule is None and report.schedule is not None:
        incident.schedule = report.schedule
    if change.is_new:
        change.notice = "incident_opened"
        _event(change, report, "opened", ", ".join(_what(f) for f in incident.findings))
    elif change.notice == "incident_reopened":
        _event(change, report, "reopened", ", ".join(_what(f) for f in incident.active_findings) + " back")
    elif change.changes:
        change.notice = "incident_escalated"
        _event(change, report, "escalated", "; ".join(change.changes))
    elif change.joined and notify_joined:
        change.notice = "incident_updated"
        change.changes = list(change.joined)
        _event(change, report, "updated", "; ".join(change.joined))
    if change.notice is not None:
        incident.notified_severity = incident.severity
        for f in incident.active_findings:
            f.notified_share = f.affected_share


def _absent(touched: dict[int, Change], incident: Incident, seen: set[str], report: AuditReport,
            config: IncidentsConfig) -> None:
    """A complete run: findings of ``incident`` it did not report are resolved; an incident with
    nothing active counts the run as clean and resolves after ``resolve_after`` of them."""
    gone = [f for f in incident.active_findings if f.fingerprint not in seen]
    change = touched.get(id(incident)) or Change(incident)
    for f in gone:
        f.state, f.resolved_at = "resolved", report.finished_at
        _event(change, report, "finding_resolved", f"{_what(f)} resolved")
    if not incident.active_findings:
        incident.clean_runs += 1
        incident.updated_at = report.finished_at
        if incident.clean_runs >= clean_runs_needed(incident, config):
            incident.status, incident.resolved_at = "resolved", report.finished_at
            change.notice = "incident_resolved"
            _event(change, report, "resolved", f"every finding gone for {incident.clean_runs} complete run(s)")
    touched.setdefault(id(incident), change)
