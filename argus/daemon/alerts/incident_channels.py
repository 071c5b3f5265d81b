"""How Slack and Alertmanager want an incident notice (a webhook gets the notice's JSON as it is).

- Slack: one Block Kit message per notice, its findings listed with their counts, the evidence
  query of each (masked as the run's privacy mode says) and links to the incident and its runs.
- Alertmanager: one alert per incident. Its labels never change while the incident lives (the
  incident's id, its collection, its grouping, the schedule that opened it and that schedule's
  labels), so
  Alertmanager sees one alert with a stable fingerprint; severity, status, owner and findings are
  annotations. ``endsAt`` is the resolution time once the incident is resolved or closed, and
  ``ends_after_s`` after each notice while it is active: refresh notices re-send it before then.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from typing import Any

from argus.daemon.incidents.models import ACTIVE, IncidentNotice
from argus.daemon.incidents.notices import finding_line

__all__ = ["incident_alertmanager_payload", "incident_slack_payload"]

_EVIDENCE_MAX = 600   # per finding; a Slack section text stops at 3,000 characters
_FINDINGS_SHOWN = 10  # Slack allows 50 blocks; the rest is counted
_VERBS = {"incident_opened": "opened", "incident_escalated": "escalated", "incident_reopened": "reopened",
          "incident_resolved": "resolved", "incident_reminder": "reminder", "incident_refresh": "refresh",
          "incident_updated": "updated"}


def _evidence(query: dict[str, Any]) -> str:
    text = json.dumps(query, ensure_ascii=False, sort_keys=True)
    return text if len(text) <= _EVIDENCE_MAX else text[:_EVIDENCE_MAX] + " …"


def incident_slack_payload(notice: IncidentNotice) -> dict[str, Any]:
    incident = notice.incident
    fields = [("Collection", f"`{incident.where}`"), ("Schedule", incident.schedule or "-"),
              ("Severity", incident.severity.value), ("Status", incident.status.replace("_", " ")),
              ("Owner", incident.owner or "-"), ("Findings", str(len(incident.active_findings)))]
    head = notice.text.split("\n")[0] if notice.changes or notice.kind == "incident_resolved" else ""
    blocks: list[dict[str, Any]] = [
        {"type": "header", "text": {"type": "plain_text", "text": notice.title[:150]}},
        {"type": "section", "text": {"type": "mrkdwn", "text": (head or notice.title)[:2900]},
         "fields": [{"type": "mrkdwn", "text": f"*{k}*\n{v}"} for k, v in fields]},
    ]
    if notice.changes and notice.kind in ("incident_escalated", "incident_updated"):
        blocks[-1]["text"]["text"] = "\n".join(f"• {c}" for c in notice.changes)[:2900]
    shown = [f for f in incident.findings if f.state == "active" or notice.kind == "incident_resolved"]
    for f in shown[:_FINDINGS_SHOWN]:
        text = f"*{finding_line(f)}*"
        if f.state == "active":
            note = " (values masked by the schedule's privacy mode)" if f.evidence_redacted else ""
            text += f"\nEvidence{note}: ```{_evidence(f.evidence_query)}```"
        if f.evidence_url:
            text += f"\n<{f.evidence_url}|Open the run>"
        blocks.append({"type": "section", "text": {"type": "mrkdwn", "text": text[:2900]}})
    if len(shown) > _FINDINGS_SHOWN:
        blocks.append({"type": "section", "text": {"type": "mrkdwn",
                                                   "text": f"… and {len(shown) - _FINDINGS_SHOWN} more findings"}})
    hint = f"incident {incident.id} · dedup `{notice.dedup_key}`"
    if incident.status in ACTIVE:
        hint += f" · take it with `argus incident ack {incident.id} --owner NAME`"
    blocks.append({"type": "context", "elements": [{"type": "mrkdwn", "text": hint}]})
    buttons = [(label, url) for label, url in (("Open incident", notice.incident_url), ("Open run", notice.run_url))
               if url]
    if buttons:
        blocks.append({"type": "actions", "elements": [
            {"type": "button", "text": {"type": "plain_text", "text": label}, "url": url} for label, url in buttons]})
    return {"text": notice.title, "blocks": blocks}


def incident_alertmanager_payload(notice: IncidentNotice, *, ends_after: timedelta) -> list[dict[str, Any]]:
    incident = notice.incident
    labels = {k: v for k, v in incident.labels.items() if k.isidentifier()}
    labels.update({"alertname": "ArgusIncident", "incident": str(incident.id), "connection": incident.connection,
                   "database": incident.database, "collection": incident.collection})
    if incident.schedule:
        labels["schedule"] = incident.schedule
    if incident.grouping == "category":
        labels["category"] = incident.group_key
    elif incident.grouping == "pattern" and incident.findings:
        labels.update({"field": incident.findings[0].field, "category": incident.findings[0].category.value})
    annotations = {"summary": notice.title, "description": notice.text, "severity": incident.severity.value,
                   "status": incident.status, "event": _VERBS[notice.kind], "dedup_key": notice.dedup_key,
                   "findings": "\n".join(finding_line(f) for f in incident.active_findings)}
    if incident.owner:
        annotations["owner"] = incident.owner
    if notice.incident_url:
        annotations["incident_url"] = notice.incident_url
    if notice.run_url:
        annotations["run_url"] = notice.run_url
    closed = incident.status not in ACTIVE
    ends = (incident.resolved_at or notice.occurred_at) if closed else notice.occurred_at + ends_after
    item: dict[str, Any] = {"labels": labels, "annotations": annotations, "startsAt": _rfc3339(incident.open_since),
                            "endsAt": _rfc3339(max(ends, incident.open_since))}
    if notice.incident_url:
        item["generatorURL"] = notice.incident_url
    return [item]


def _rfc3339(moment: datetime) -> str:
    return moment.isoformat().replace("+00:00", "Z")
