"""Which events of a stored run are worth an alert, and which channels get each one.

Pure: a report with its diff (and what it did to incidents) in, alerts out. The store calls it
inside the transaction that stores the run, so a run and its alerts are kept together or not at
all. With ``per: incident`` (the default) findings alert through their incident: a notice when it
opens, escalates, reopens, resolves or waits unacknowledged; with ``per: finding``, each new
finding and new persistent pattern alerts on its own. Failing schedules alert either way.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime, timedelta
from uuid import UUID

from argus.agent.evidence import written_evidence
from argus.agent.findings import Finding, Severity, severity_at_least
from argus.agent.history import DiffEntry
from argus.agent.privacy import has_masked
from argus.agent.report import AuditReport
from argus.agent.window import affected_words
from argus.config.alerts import AlertsConfig
from argus.config.schedules import ScheduleSet
from argus.daemon.alerts.models import Alert, AlertKind, RoutedAlert, dedup_key
from argus.daemon.incidents.models import Incident, IncidentEvent, NoticeKind
from argus.daemon.incidents.notices import build_notice
from argus.daemon.incidents.tracker import Change

__all__ = ["AlertPolicy", "RoutedAlert"]

_ERROR_MAX = 300


class AlertPolicy:
    """``config`` is the ``alerts:`` section; ``labels`` maps schedule names to their labels."""

    def __init__(self, config: AlertsConfig, labels: Mapping[str, Mapping[str, str]]) -> None:
        self.config = config
        self.labels = {name: dict(value) for name, value in labels.items()}

    @classmethod
    def of(cls, schedules: ScheduleSet) -> AlertPolicy:
        return cls(schedules.alerts, {name: s.settings.labels for name, s in schedules.schedules.items()})

    @property
    def failed_runs(self) -> int:
        """Consecutive failed runs that raise an alert (0: never); the store counts the streak."""
        return self.config.failed_runs if self.config.channels else 0

    @property
    def sends_incidents(self) -> bool:
        """Incidents are the unit of alerting, and there is somewhere to send them."""
        return self.config.per == "incident" and bool(self.config.channels)

    def labels_of(self, schedule: str | None) -> dict[str, str]:
        return dict(self.labels.get(schedule or "", {}))

    def alerts_for(self, report: AuditReport, *, failure_streak: int = 0,
                   incidents: Sequence[Change] = ()) -> list[RoutedAlert]:
        if not self.config.channels:
            return []
        labels = self.labels.get(report.schedule or "", {})
        out: list[RoutedAlert] = []
        findings = {f.id: f for f in report.findings}
        if self.sends_incidents:
            for change in incidents:
                for event in change.events:
                    if event.notice is not None:
                        out += self._incident(change.incident, event.notice, seq=event.id, now=report.finished_at,
                                              run_id=report.run_id, changes=change.changes)
        for entry in report.diff.entries if report.diff and self.config.per == "finding" else []:
            finding = findings.get(entry.finding_id) if entry.finding_id else None
            if finding is None:
                continue
            if entry.status in ("new", "regressed"):
                channels = self._channels(labels, "new_finding", entry)
                if channels:
                    out.append(RoutedAlert(self._finding_alert("new_finding", report, entry, finding, labels),
                                           channels))
            if entry.new_persistent:
                channels = self._channels(labels, "new_persistent", entry)
                if channels:
                    out.append(RoutedAlert(self._finding_alert("new_persistent", report, entry, finding, labels),
                                           channels))
        if report.outcome == "failed" and self.failed_runs and failure_streak == self.failed_runs:
            channels = self._channels(labels, "failed_runs", None)
            if channels:
                out.append(RoutedAlert(self._failure_alert(report, failure_streak, labels), channels))
        return out

    # --- incidents -----------------------------------------------------------------------------

    def incident_alerts(self, pending: Iterable[tuple[IncidentEvent, Incident]]) -> list[RoutedAlert]:
        """Notices of events recorded outside a run (status changes by people, reminders), dated when
        they happened."""
        if not self.sends_incidents:
            return []
        out: list[RoutedAlert] = []
        for event, incident in pending:
            if event.notice is not None:
                by = (event.owner or "someone") if event.source in ("cli", "http") else None
                out += self._incident(incident, event.notice, seq=event.id, now=event.at, run_id=event.run_id, by=by)
        return out

    def refresh_every(self) -> timedelta | None:
        """How often an active incident is sent to Alertmanager again so that its alert does not
        lapse (half the shortest ``ends_after_s``); None without Alertmanager channels."""
        spans = [c.ends_after_s for c in self.config.channels.values() if c.type == "alertmanager"]
        return timedelta(seconds=min(spans) / 2) if spans and self.sends_incidents else None

    def incident_refreshes(self, due: Iterable[tuple[Incident, int]], *, now: datetime) -> list[RoutedAlert]:
        out: list[RoutedAlert] = []
        for incident, n in due:
            out += self._incident(incident, "incident_refresh", seq=n, now=now)
        return out

    def _incident(self, incident: Incident, kind: NoticeKind, *, seq: int, now: datetime,
                  run_id: UUID | None = None, changes: list[str] | None = None,
                  by: str | None = None) -> list[RoutedAlert]:
        labels = incident.labels or self.labels_of(incident.schedule)
        chosen: list[str] = []
        for route in self.config.effective_routes():
            if route.matches(labels) and severity_at_least(incident.severity,
                                                             route.min_severity or self.config.min_severity):
                chosen.extend(c for c in route.channels if c not in chosen and (
                    kind != "incident_refresh" or self.config.channels[c].type == "alertmanager"))
        if not chosen:
            return []
        notice = build_notice(incident.model_copy(update={"labels": labels}), kind, seq=seq, occurred_at=now,
                              base_url=self.config.base_url, run_id=run_id, changes=changes, by=by)
        return [RoutedAlert(notice, tuple(chosen))]

    # --- routing -------------------------------------------------------------------------------

    @staticmethod
    def _new_at_severity(entry: DiffEntry, threshold: Severity) -> bool:
        """New at or above ``threshold``, or regressed across it (a medium that turned critical)."""
        if not severity_at_least(entry.severity, threshold):
            return False
        if entry.status == "new":
            return True
        return (entry.status == "regressed" and entry.previous_severity is not None
                and not severity_at_least(entry.previous_severity, threshold))

    def _channels(self, labels: dict[str, str], kind: AlertKind, entry: DiffEntry | None) -> tuple[str, ...]:
        chosen: list[str] = []
        for route in self.config.effective_routes():
            if not route.matches(labels):
                continue
            if kind == "new_finding":
                assert entry is not None
                wanted = self._new_at_severity(entry, route.min_severity or self.config.min_severity)
            elif kind == "new_persistent":
                wanted = route.new_persistent if route.new_persistent is not None else self.config.new_persistent
            else:
                wanted = route.failed_runs
            if wanted:
                chosen.extend(c for c in route.channels if c not in chosen)
        return tuple(chosen)

    # --- building ------------------------------------------------------------------------------

    def _run_url(self, report: AuditReport) -> str | None:
        base = self.config.base_url
        return f"{base.rstrip('/')}/runs/{report.run_id}" if base else None

    def _finding_alert(self, kind: AlertKind, report: AuditReport, entry: DiffEntry, finding: Finding,
                       labels: dict[str, str]) -> Alert:
        mode = report.options.privacy
        evidence = written_evidence(finding, mode)  # as the run masked it
        where = f"{report.database}.{report.collection}"
        affected = affected_words(finding.affected_count, finding.affected_pct, report.collection_size, report.window)
        if kind == "new_finding":
            what = "Regressed" if entry.status == "regressed" else "New"
            title = f"{what} {finding.severity.value} finding: {where} {finding.field} ({finding.category.value})"
        else:
            title = (f"New persistent pattern: {where} {finding.field} ({finding.category.value}), "
                     f"seen again after an earlier run")
        text = finding.description if mode == "full" else f"{affected}: {finding.category.value} in {finding.field}"
        if entry.status == "regressed" and entry.previous_severity is not None:
            text += f" (was {entry.previous_severity.value})"
        if finding.segments is not None and finding.segments.counts:  # labels hashed in strict (agent.segments)
            text += f". By segment: {finding.segments.line(finding.affected_count)}"
        return Alert(
            dedup_key=dedup_key(kind, report.run_id, entry.fingerprint), kind=kind, title=title, text=text,
            severity=finding.severity, run_id=report.run_id, run_url=self._run_url(report),
            occurred_at=report.finished_at, schedule=report.schedule, labels=labels,
            connection=report.connection, database=report.database, collection=report.collection,
            fingerprint=entry.fingerprint, field=finding.field, category=finding.category,
            previous_severity=entry.previous_severity, affected_count=finding.affected_count,
            affected_share=finding.affected_pct, collection_size=report.collection_size,
            evidence_query=evidence, evidence_redacted=has_masked(evidence),
            sample_values=finding.sample_values if mode == "full" else [], finding_id=finding.id,
            segments=finding.segments,
            documents_command=f"argus finding show {str(finding.id)[:8]} --documents",
            documents_url=f"{self.config.base_url.rstrip('/')}/findings/{finding.id}" if self.config.base_url else None)

    def _failure_alert(self, report: AuditReport, streak: int, labels: dict[str, str]) -> Alert:
        error = (report.error or "unknown error")[:_ERROR_MAX]
        return Alert(
            dedup_key=dedup_key("failed_runs", report.run_id, None), kind="failed_runs",
            title=f"{streak} failed runs in a row: {report.schedule} ({report.database}.{report.collection})",
            text=f"The last {streak} audits of schedule {report.schedule} failed. Latest error: {error}",
            severity=Severity.HIGH, run_id=report.run_id, run_url=self._run_url(report),
            occurred_at=report.finished_at, schedule=report.schedule, labels=labels,
            connection=report.connection, database=report.database, collection=report.collection,
            failed_runs=streak, error=error)
