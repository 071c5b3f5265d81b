"""How each channel wants an alert: the exact HTTP request for Slack, a JSON webhook and Alertmanager.

Pure functions, an alert (or an incident notice, see ``incident_channels``) in and an
``httpx.Request`` out, so the payloads are tested byte for byte.

Generic webhook (documented in the README): ``POST`` of the ``Alert`` JSON with headers
``Idempotency-Key`` and ``X-Argus-Dedup-Key`` (the alert's dedup key, the same on every retry),
``X-Argus-Timestamp`` (Unix seconds) and, with a secret, ``X-Argus-Signature:
sha256=<hex HMAC-SHA256 of "{timestamp}.{body}">``.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from datetime import datetime, timedelta
from typing import Any

import httpx

from argus.agent.secrets import SECRETS
from argus.config.alerts import Channel
from argus.daemon.alerts.incident_channels import incident_alertmanager_payload, incident_slack_payload
from argus.daemon.alerts.models import Alert, Notification

__all__ = ["alertmanager_payload", "build_request", "sign", "slack_payload", "webhook_body"]

_ALERTNAMES = {"new_finding": "ArgusNewFinding", "new_persistent": "ArgusNewPersistentPattern",
               "failed_runs": "ArgusRunsFailing"}
_EVIDENCE_MAX = 2500  # Slack section texts stop at 3,000 characters
_USER_AGENT = "argus-alerts/1"


def build_request(channel: Channel, alert: Notification, *, url: str, secret: bytes | None,
                  now: datetime) -> httpx.Request:
    headers = {"Content-Type": "application/json", "User-Agent": _USER_AGENT,
               "Idempotency-Key": alert.dedup_key, "X-Argus-Dedup-Key": alert.dedup_key}
    ends_after = timedelta(seconds=channel.ends_after_s)
    if channel.type == "slack":
        body = _dumps(slack_payload(alert) if isinstance(alert, Alert) else incident_slack_payload(alert))
    elif channel.type == "webhook":
        body = webhook_body(alert)
        stamp = str(int(now.timestamp()))
        headers["X-Argus-Timestamp"] = stamp
        if secret is not None:
            headers["X-Argus-Signature"] = sign(secret, stamp, body)
    else:
        body = _dumps(alertmanager_payload(alert, ends_after=ends_after) if isinstance(alert, Alert)
                      else incident_alertmanager_payload(alert, ends_after=ends_after))
        url = url.rstrip("/") + "/api/v2/alerts"
    return httpx.Request("POST", url, content=body, headers=headers)


def sign(secret: bytes, timestamp: str, body: bytes) -> str:
    return "sha256=" + hmac.new(secret, timestamp.encode() + b"." + body, hashlib.sha256).hexdigest()


def webhook_body(alert: Notification) -> bytes:
    return _dumps(alert.model_dump(mode="json"))


def _dumps(value: Any) -> bytes:
    value = SECRETS.scrub(value)  # a failed run's error may quote what an endpoint echoed
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, sort_keys=True).encode()


def _evidence(alert: Alert) -> str:
    text = json.dumps(alert.evidence_query, ensure_ascii=False, sort_keys=True)
    return text if len(text) <= _EVIDENCE_MAX else text[:_EVIDENCE_MAX] + " …"


def _affected(alert: Alert) -> str:
    if alert.affected_count is None:
        return "-"
    share = f" ({alert.affected_share:.2%})" if alert.affected_share is not None else ""
    total = f" of {alert.collection_size:,}" if alert.collection_size else ""
    return f"{alert.affected_count:,}{total}{share}"


def slack_payload(alert: Alert) -> dict[str, Any]:
    """Block Kit message for an incoming webhook; ``text`` is the notification fallback."""
    fields = [("Collection", f"`{alert.where}`"), ("Schedule", alert.schedule or "-"),
              ("Severity", alert.severity.value)]
    if alert.field is not None:
        fields += [("Field", f"`{alert.field}`"), ("Category", alert.category.value if alert.category else "-"),
                   ("Affected", _affected(alert))]
    if alert.failed_runs is not None:
        fields.append(("Failed runs in a row", str(alert.failed_runs)))
    blocks: list[dict[str, Any]] = [
        {"type": "header", "text": {"type": "plain_text", "text": alert.title[:150]}},
        {"type": "section", "text": {"type": "mrkdwn", "text": alert.text[:2900]},
         "fields": [{"type": "mrkdwn", "text": f"*{k}*\n{v}"} for k, v in fields]},
    ]
    if alert.evidence_query is not None:
        note = " (values masked by the schedule's privacy mode)" if alert.evidence_redacted else ""
        blocks.append({"type": "section", "text": {"type": "mrkdwn",
                                                   "text": f"*Evidence query*{note}\n```{_evidence(alert)}```"}})
    if alert.sample_values:
        samples = ", ".join(f"`{json.dumps(v, ensure_ascii=False)[:80]}`" for v in alert.sample_values[:5])
        blocks.append({"type": "section", "text": {"type": "mrkdwn", "text": f"*Sample values*\n{samples}"}})
    context = f"run `{alert.run_id}` · dedup `{alert.dedup_key}`"
    if alert.fingerprint:
        context += f" · mute with `argus mute --fingerprint {alert.fingerprint[:12]}`"
    if alert.documents_command:
        context += f" · failing documents: `{alert.documents_command}`"
    blocks.append({"type": "context", "elements": [{"type": "mrkdwn", "text": context}]})
    if alert.run_url:
        blocks.append({"type": "actions", "elements": [
            {"type": "button", "text": {"type": "plain_text", "text": "Open run"}, "url": alert.run_url}]})
    return {"text": alert.title, "blocks": blocks}


def alertmanager_payload(alert: Alert, *, ends_after: timedelta) -> list[dict[str, Any]]:
    """``POST /api/v2/alerts`` body. Labels identify the alert (one per pattern and kind) and carry
    the schedule's labels so Alertmanager routes, silences and inhibits as teams already do."""
    labels = {k: v for k, v in alert.labels.items() if k.isidentifier()}
    labels.update({"alertname": _ALERTNAMES[alert.kind], "severity": alert.severity.value,
                   "connection": alert.connection, "database": alert.database, "collection": alert.collection})
    if alert.schedule:
        labels["schedule"] = alert.schedule
    if alert.field is not None and alert.category is not None:
        labels.update({"field": alert.field, "category": alert.category.value})
    annotations = {"summary": alert.title, "description": alert.text, "run_id": str(alert.run_id),
                   "dedup_key": alert.dedup_key}
    if alert.affected_count is not None:
        annotations["affected"] = _affected(alert)
    if alert.evidence_query is not None:
        annotations["evidence_query"] = _evidence(alert)
    if alert.run_url:
        annotations["run_url"] = alert.run_url
    if alert.documents_command:
        annotations["documents"] = alert.documents_url or alert.documents_command
    item: dict[str, Any] = {"labels": labels, "annotations": annotations,
                            "startsAt": _rfc3339(alert.occurred_at),
                            "endsAt": _rfc3339(alert.occurred_at + ends_after)}
    if alert.run_url:
        item["generatorURL"] = alert.run_url
    return [item]


def _rfc3339(moment: datetime) -> str:
    return moment.isoformat().replace("+00:00", "Z")
