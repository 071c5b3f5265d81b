"""Alerts end to end against a local receiver: exact payloads, retries, restarts, mutes."""

from __future__ import annotations

import hashlib
import hmac
import json

import httpx

from argus.agent.findings import Category, Finding
from argus.agent.history import fingerprint
from argus.config.alerts import AlertsConfig
from argus.daemon.alerts.models import dedup_key
from tests.daemon.alerts.conftest import HMAC_KEY, SCHEDULE, Alerting
from tests.daemon.alerts.receiver import Receiver
from tests.daemon.store.reports import finding, report


def negative_totals() -> Finding:
    return finding("total", "outlier_value", "critical", count=100).model_copy(
        update={"evidence_query": {"total": {"$lt": 0}}, "description": "have a negative total"})


def bad_emails() -> Finding:
    return finding("email", "format_violation", "medium", count=40)


FP_TOTAL = fingerprint("main", "shop", "orders", "total", Category.OUTLIER_VALUE)
FP_EMAIL = fingerprint("main", "shop", "orders", "email", Category.FORMAT_VIOLATION)


def test_new_critical_finding_reaches_every_channel_with_its_exact_payload(alerting: Alerting,
                                                                         receiver: Receiver) -> None:
    stored = alerting.save(report([negative_totals()]))
    assert alerting.deliver() == 3
    run, key = stored.run_id, dedup_key("new_finding", stored.run_id, FP_TOTAL)
    title = "New critical finding: shop.orders total (outlier_value)"
    text = "100 of 5,000 documents (2.00%): outlier_value in total"
    finding = stored.findings[0].id
    documents = f"argus finding show {str(finding)[:8]} --documents"

    (slack,) = receiver.at("/slack/T000/B000/XXXX")
    assert slack.json() == {"text": title, "blocks": [
        {"type": "header", "text": {"type": "plain_text", "text": title}},
        {"type": "section", "text": {"type": "mrkdwn", "text": text}, "fields": [
            {"type": "mrkdwn", "text": "*Collection*\n`shop.orders`"},
            {"type": "mrkdwn", "text": "*Schedule*\norders-hourly"},
            {"type": "mrkdwn", "text": "*Severity*\ncritical"},
            {"type": "mrkdwn", "text": "*Field*\n`total`"},
            {"type": "mrkdwn", "text": "*Category*\noutlier_value"},
            {"type": "mrkdwn", "text": "*Affected*\n100 of 5,000 (2.00%)"}]},
        {"type": "section", "text": {"type": "mrkdwn", "text": '*Evidence query*\n```{"total": {"$lt": 0}}```'}},
        {"type": "context", "elements": [{"type": "mrkdwn", "text": f"run `{run}` · dedup `{key}` · mute with "
                                                                    f"`argus mute --fingerprint {FP_TOTAL[:12]}` · "
                                                                    f"failing documents: `{documents}`"}]},
        {"type": "actions", "elements": [{"type": "button", "text": {"type": "plain_text", "text": "Open run"},
                                          "url": f"https://argus.example.com/runs/{run}"}]}]}

    (hook,) = receiver.at("/hook")
    assert hook.json() == {
        "version": 1, "dedup_key": key, "kind": "new_finding", "title": title, "text": text,
        "severity": "critical", "run_id": str(run), "run_url": f"https://argus.example.com/runs/{run}",
        "occurred_at": "2026-03-01T12:00:03Z", "schedule": SCHEDULE, "labels": {"team": "shop", "tier": "1"},
        "connection": "main", "database": "shop", "collection": "orders", "fingerprint": FP_TOTAL,
        "field": "total", "category": "outlier_value", "previous_severity": None, "affected_count": 100,
        "affected_share": 0.02, "collection_size": 5000, "evidence_query": {"total": {"$lt": 0}},
        "evidence_redacted": False, "sample_values": [], "failed_runs": None, "error": None,
        "finding_id": str(finding), "documents_command": documents,
        "documents_url": f"https://argus.example.com/findings/{finding}"}
    stamp = hook.headers["x-argus-timestamp"]
    expected = hmac.new(HMAC_KEY.encode(), f"{stamp}.".encode() + hook.body, hashlib.sha256).hexdigest()
    assert hook.headers["x-argus-signature"] == f"sha256={expected}"
    assert hook.headers["idempotency-key"] == key

    (am,) = receiver.at("/am/api/v2/alerts")
    assert am.json() == [{
        "labels": {"alertname": "ArgusNewFinding", "severity": "critical", "team": "shop", "tier": "1",
                   "schedule": SCHEDULE, "connection": "main", "database": "shop", "collection": "orders",
                   "field": "total", "category": "outlier_value"},
        "annotations": {"summary": title, "description": text, "run_id": str(run), "dedup_key": key,
                        "affected": "100 of 5,000 (2.00%)", "evidence_query": '{"total": {"$lt": 0}}',
                        "run_url": f"https://argus.example.com/runs/{run}",
                        "documents": f"https://argus.example.com/findings/{finding}"},
        "startsAt": "2026-03-01T12:00:03Z", "endsAt": "2026-03-02T12:00:03Z",
        "generatorURL": f"https://argus.example.com/runs/{run}"}]


def test_a_pattern_seen_in_a_second_run_alerts_once_as_new_persistent(alerting: Alerting,
                                                                     receiver: Receiver) -> None:
    alerting.save(report([bad_emails()]))  # medium and new: below the critical threshold
    assert alerting.deliver() == 0
    second = alerting.save(report([bad_emails()], minutes=60))
    assert alerting.deliver() == 3
    (hook,) = receiver.at("/hook")
    assert hook.json()["kind"] == "new_persistent"
    assert hook.json()["dedup_key"] == dedup_key("new_persistent", second.run_id, FP_EMAIL)
    assert hook.json()["title"] == ("New persistent pattern: shop.orders email (format_violation), "
                                    "seen again after an earlier run")
    (am,) = receiver.at("/am/api/v2/alerts")
    assert am.json()[0]["labels"]["alertname"] == "ArgusNewPersistentPattern"


def test_findings_that_merely_persist_send_nothing(alerting: Alerting, receiver: Receiver) -> None:
    for minutes in (0, 60):
        alerting.save(report([negative_totals(), bad_emails()], minutes=minutes))
        alerting.deliver()
    before = len(receiver.requests)
    assert before > 0
    for minutes in (120, 180):
        alerting.save(report([negative_totals(), bad_emails()], minutes=minutes))
        assert alerting.deliver() == 0
    assert len(receiver.requests) == before
    assert alerting.outbox.pending() == 0


def test_an_alert_waits_for_a_receiver_that_is_down_and_keeps_its_dedup_key(alerting: Alerting,
                                                                            receiver: Receiver) -> None:
    receiver.stop()
    stored = alerting.save(report([negative_totals()]))
    assert alerting.deliver() == 0
    rows = alerting.outbox.rows()
    assert {r["status"] for r in rows} == {"pending"}
    assert {r["last_error"] for r in rows} == {"ConnectError"}
    assert alerting.metrics.alerts_pending._value.get() == 3  # type: ignore[attr-defined]

    receiver.start()
    receiver.statuses = [503]  # the first attempt after the outage times out upstream
    assert alerting.deliver() == 0, "not due yet: the next attempt waits for its backoff"
    alerting.later(5)
    assert alerting.deliver() == 2
    alerting.later(10)
    assert alerting.deliver() == 1
    keys = {r.headers["idempotency-key"] for r in receiver.requests}
    assert keys == {dedup_key("new_finding", stored.run_id, FP_TOTAL)}
    assert len(receiver.requests) == 4  # one 503 and its retry, plus the two others
    assert alerting.outbox.pending() == 0


def test_pending_alerts_survive_a_restart(alerting: Alerting, receiver: Receiver, pg_dsn: str) -> None:
    from argus.daemon.store import PostgresStore

    receiver.stop()
    alerting.save(report([negative_totals()]))
    alerting.deliver()
    alerting.store.close()

    receiver.start()
    alerting.later(60)
    with PostgresStore(pg_dsn, pool_size=1) as reopened:
        alerting.store = reopened
        assert alerting.deliver() == 3
    assert len(receiver.requests) == 3


def test_a_muted_pattern_sends_nothing(alerting: Alerting, receiver: Receiver) -> None:
    alerting.outbox.mute(now=alerting.clock.now(), fingerprint=FP_TOTAL[:12], reason="known, fix planned")
    alerting.save(report([negative_totals()]))
    assert alerting.deliver() == 0
    assert receiver.requests == []
    assert {r["status"] for r in alerting.outbox.rows()} == {"muted"}


def test_a_mute_added_before_delivery_stops_the_queued_alert(alerting: Alerting, receiver: Receiver) -> None:
    alerting.save(report([negative_totals()]))
    alerting.outbox.mute(now=alerting.clock.now(), database="shop", collection="orders")
    assert alerting.deliver() == 0
    assert receiver.requests == []


def test_an_expired_or_lifted_mute_no_longer_applies(alerting: Alerting, receiver: Receiver) -> None:
    from datetime import timedelta

    now = alerting.clock.now()
    alerting.outbox.mute(now=now, category="outlier_value", expires_at=now + timedelta(minutes=5))
    lifted = alerting.outbox.mute(now=now, fingerprint=FP_TOTAL)
    alerting.outbox.unmute(lifted.id)
    alerting.later(600)
    alerting.save(report([negative_totals()]))
    assert alerting.deliver() == 3


def test_a_mute_on_another_collection_does_not_apply(alerting: Alerting, receiver: Receiver) -> None:
    alerting.outbox.mute(now=alerting.clock.now(), collection="customers")
    alerting.save(report([negative_totals()]))
    assert alerting.deliver() == 3


def test_routes_pick_channels_by_schedule_labels_and_severity(alerting: Alerting, receiver: Receiver) -> None:
    alerting.config = AlertsConfig.model_validate({**alerting.config.model_dump(exclude={"routes"}), "routes": [
        {"match": {"team": "shop"}, "channels": ["slack"], "min_severity": "medium", "new_persistent": False},
        {"match": {"team": "crm"}, "channels": ["am"], "min_severity": "low"},
        {"channels": ["hook"]}]})
    alerting.save(report([negative_totals(), bad_emails()]))
    alerting.deliver()
    titles = sorted((r.path.split("/")[1], r.json()["text"] if r.path == "/slack/T000/B000/XXXX" else "")
                    for r in receiver.requests)
    assert [t[0] for t in titles] == ["hook", "slack", "slack"]  # the medium one only where medium is enough
    assert receiver.at("/am/api/v2/alerts") == []


def test_failed_runs_alert_once_when_the_streak_reaches_the_threshold(alerting: Alerting,
                                                                     receiver: Receiver) -> None:
    alerting.config = alerting.config.model_copy(update={"failed_runs": 2, "channels": {
        "hook": alerting.config.channels["hook"]}})
    sent = []
    for minutes, outcome in enumerate(["failed", "failed", "failed", "succeeded", "failed", "failed"]):
        alerting.save(report([], minutes=minutes, outcome=outcome))
        sent.append(alerting.deliver())
    assert sent == [0, 1, 0, 0, 0, 1]
    body = receiver.requests[0].json()
    assert body["kind"] == "failed_runs"
    assert body["title"] == "2 failed runs in a row: orders-hourly (shop.orders)"
    assert body["text"] == "The last 2 audits of schedule orders-hourly failed. Latest error: boom"


def test_values_stay_out_of_alerts_unless_the_schedule_allows_them(alerting: Alerting,
                                                                   receiver: Receiver) -> None:
    dup = finding("email", "duplicate_value", "critical", count=200).model_copy(update={
        "evidence_query": {"email": {"$in": ["zoe@example.org", "max@example.org"]}},
        "sample_values": ["zoe@example.org"], "description": "share zoe@example.org with another document"})
    alerting.save(report([dup]))
    alerting.deliver()
    sent = b"".join(r.body for r in receiver.requests).decode()
    assert "example.org" not in sent
    (hook,) = receiver.at("/hook")
    assert hook.json()["evidence_query"] == {"email": {"$in": [{"$masked": "shape:a+@a+.a+"}] * 2}}
    assert hook.json()["evidence_redacted"] is True

    receiver.requests.clear()
    full = report([dup], minutes=60, collection="customers")
    full = full.model_copy(update={"options": full.options.model_copy(update={"privacy": "full"})})
    alerting.save(full)
    alerting.deliver()
    (hook,) = receiver.at("/hook")
    assert hook.json()["sample_values"] == ["zoe@example.org"]
    assert hook.json()["text"] == "share zoe@example.org with another document"


def test_delivery_errors_never_carry_the_webhook_url(alerting: Alerting, receiver: Receiver,
                                                     capsys: object) -> None:
    import structlog

    receiver.statuses = [500, 500, 500]
    with structlog.testing.capture_logs() as logs:
        alerting.save(report([negative_totals()]))
        alerting.deliver()
    assert {r["last_error"] for r in alerting.outbox.rows()} == {"HTTP 500"}
    assert "T000/B000" not in json.dumps(logs, default=str)
    assert alerting.metrics.alerts_failed.labels("slack")._value.get() == 1  # type: ignore[attr-defined]


def test_an_alert_for_a_channel_removed_from_the_config_is_dropped(alerting: Alerting,
                                                                   receiver: Receiver) -> None:
    receiver.stop()
    alerting.save(report([negative_totals()]))
    alerting.config = alerting.config.model_copy(update={"channels": {"hook": alerting.config.channels["hook"]}})
    receiver.start()
    assert alerting.deliver() == 1
    assert sorted(r["status"] for r in alerting.outbox.rows()) == ["delivered", "dropped", "dropped"]


def test_a_redirect_is_not_followed_to_somewhere_else(alerting: Alerting, receiver: Receiver) -> None:
    receiver.statuses = [302]
    alerting.config = alerting.config.model_copy(update={"channels": {"hook": alerting.config.channels["hook"]}})
    alerting.save(report([negative_totals()]))
    assert alerting.sender(httpx.Client(follow_redirects=False)).deliver_due() == 0
    assert alerting.outbox.rows()[0]["last_error"] == "HTTP 302"
