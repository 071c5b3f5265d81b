"""An incident's life at a local receiver: one notification when it opens, one when it
escalates, one when it resolves, nothing in between; the same incident when a defect comes back;
reminders, refreshes, mutes, and exactly once across a receiver outage and a restart."""

from __future__ import annotations

from typing import Any

from argus.agent.findings import Finding
from argus.daemon.incidents.chores import queue_due
from tests.daemon.alerts.receiver import Receiver
from tests.daemon.incidents.conftest import Incidents, incident_config
from tests.daemon.store.reports import finding, report

SLACK, HOOK, AM = "/slack/T000/B000/XXXX", "/hook", "/am/api/v2/alerts"


def total(count: int = 100, severity: str = "high") -> Finding:
    return finding("total", "outlier_value", severity, count=count).model_copy(
        update={"evidence_query": {"total": {"$lt": 0}}})


def email() -> Finding:
    return finding("email", "format_violation", "medium", count=40)


def zip_() -> Finding:
    return finding("zip", "null_rate", "medium", count=60)


def qty(severity: str = "critical") -> Finding:
    return finding("qty", "type_mismatch", severity, count=300)


def _kinds(receiver: Receiver, path: str = HOOK) -> list[str]:
    return [r.json()["kind"] for r in receiver.at(path)]


def _run(incidents: Incidents, hour: int, findings: list[Finding], **over: Any) -> int:
    incidents.save(report(findings, minutes=60 * hour, **over))
    return incidents.deliver()


def test_three_defects_a_fourth_two_fixed_then_all_make_one_incident_and_three_notices(
        incidents: Incidents, receiver: Receiver) -> None:
    sent = [_run(incidents, 0, [total(), email(), zip_()]),          # three appear at once: opened
            _run(incidents, 1, [total(), email(), zip_(), qty()]),   # a critical one joins: escalated
            _run(incidents, 2, [zip_(), qty()]),                     # two fixed: nothing
            _run(incidents, 3, []),                                  # all fixed: one clean run of two
            _run(incidents, 4, [])]                                  # the second: resolved
    assert sent == [3, 3, 0, 0, 3]
    assert _kinds(receiver) == ["incident_opened", "incident_escalated", "incident_resolved"]
    assert [r.json()["text"].split(":")[0] for r in receiver.at(SLACK)] == [
        "Incident #1 opened", "Incident #1 escalated", "Incident #1 resolved"]
    assert [r.json()[0]["annotations"]["event"] for r in receiver.at(AM)] == ["opened", "escalated", "resolved"]
    assert len({r.headers["idempotency-key"] for r in receiver.requests}) == 3, "one key per notice, every channel"
    [only] = incidents.book.list(statuses=None)
    assert only.id == 1 and only.status == "resolved"
    assert [e.kind for e in incidents.book.get(1).history] == [
        "opened", "joined", "escalated", "finding_resolved", "finding_resolved", "finding_resolved",
        "finding_resolved", "resolved"]
    assert incidents.deliver() == 0 and incidents.outbox.pending() == 0

    bodies = [r.json() for r in receiver.at(HOOK)]
    assert [len(b["incident"]["findings"]) for b in bodies] == [3, 4, 4]
    assert bodies[1]["changes"] == ["qty type_mismatch is critical, above the high the incident was sent at"]
    assert bodies[1]["title"] == "Incident #1 escalated: shop.orders, 4 findings (critical)"
    assert bodies[2]["title"] == "Incident #1 resolved: shop.orders"

    # a defect back within the cool-off (24 h) reopens the same incident, and says so once
    assert _run(incidents, 5, [zip_()]) == 3
    assert _kinds(receiver)[-1] == "incident_reopened"
    assert [i.id for i in incidents.book.list(statuses=None)] == [1]
    assert incidents.book.get(1).status == "open" and incidents.book.get(1).reopened == 1
    assert _run(incidents, 6, [zip_()]) == 0


def test_the_alertmanager_alert_keeps_its_identity_and_ends_when_the_incident_resolves(
        incidents: Incidents, receiver: Receiver) -> None:
    _run(incidents, 0, [total(), email()])
    _run(incidents, 1, [total(), email(), qty()])
    _run(incidents, 2, [])
    _run(incidents, 3, [])
    posts = [r.json() for r in receiver.at(AM)]
    assert len(posts) == 3 and all(len(p) == 1 for p in posts)
    assert [p[0]["labels"] for p in posts] == [{
        "alertname": "ArgusIncident", "incident": "1", "connection": "main", "database": "shop",
        "collection": "orders", "schedule": "orders-hourly", "team": "shop", "tier": "1"}] * 3
    assert [p[0]["startsAt"] for p in posts] == ["2026-03-01T12:00:03Z"] * 3
    assert [p[0]["endsAt"] for p in posts] == ["2026-03-02T12:00:03Z", "2026-03-02T13:00:03Z",
                                               "2026-03-01T15:00:03Z"], "the last: the time it resolved"
    assert [p[0]["annotations"]["severity"] for p in posts] == ["high", "critical", "critical"]


def test_the_opening_notice_carries_every_finding_with_counts_and_evidence_links(
        incidents: Incidents, receiver: Receiver) -> None:
    stored = incidents.save(report([total(), email()]))
    incidents.deliver()
    run = stored.run_id
    (hook,) = receiver.at(HOOK)
    body = hook.json()
    key = body["dedup_key"]
    assert hook.headers["idempotency-key"] == key and hook.headers["x-argus-signature"].startswith("sha256=")
    assert {k: v for k, v in body.items() if k != "incident"} == {
        "version": 1, "dedup_key": key, "kind": "incident_opened",
        "title": "Incident #1 opened: shop.orders, 2 findings (high)",
        "text": "total outlier_value: high, 100 of 5,000 documents (2.00%)\n"
                "email format_violation: medium, 40 of 5,000 documents (0.80%)",
        "severity": "high", "occurred_at": "2026-03-01T12:00:03Z", "run_id": str(run),
        "run_url": f"https://argus.example.com/runs/{run}", "incident_url": "https://argus.example.com/incidents/1",
        "changes": []}
    incident = body["incident"]
    assert (incident["id"], incident["status"], incident["labels"], incident["schedule"]) == (
        1, "open", {"team": "shop", "tier": "1"}, "orders-hourly")
    assert [(f["field"], f["affected_count"], f["affected_share"], f["evidence_query"], f["evidence_url"])
            for f in incident["findings"]] == [
        ("total", 100, 0.02, {"total": {"$lt": 0}}, f"https://argus.example.com/runs/{run}"),
        ("email", 40, 0.008, {"email": None}, f"https://argus.example.com/runs/{run}")]

    (slack,) = receiver.at(SLACK)
    blocks = slack.json()["blocks"]
    assert slack.json()["text"] == "Incident #1 opened: shop.orders, 2 findings (high)"
    assert blocks[1]["fields"] == [{"type": "mrkdwn", "text": t} for t in (
        "*Collection*\n`shop.orders`", "*Schedule*\norders-hourly", "*Severity*\nhigh", "*Status*\nopen",
        "*Owner*\n-", "*Findings*\n2")]
    assert blocks[2]["text"]["text"] == ("*total outlier_value: high, 100 of 5,000 documents (2.00%)*\n"
                                         "Evidence: ```{\"total\": {\"$lt\": 0}}```\n"
                                         f"<https://argus.example.com/runs/{run}|Open the run>")
    assert blocks[-2]["elements"][0]["text"] == (f"incident 1 · dedup `{key}` · take it with "
                                                 "`argus incident ack 1 --owner NAME`")
    assert blocks[-1]["elements"] == [
        {"type": "button", "text": {"type": "plain_text", "text": "Open incident"},
         "url": "https://argus.example.com/incidents/1"},
        {"type": "button", "text": {"type": "plain_text", "text": "Open run"},
         "url": f"https://argus.example.com/runs/{run}"}]


def test_growth_past_the_factor_escalates_and_smaller_growth_does_not(incidents: Incidents,
                                                                      receiver: Receiver) -> None:
    _run(incidents, 0, [total(100)])
    assert _run(incidents, 1, [total(140)]) == 0
    assert _run(incidents, 2, [total(160)]) == 3
    assert receiver.at(HOOK)[-1].json()["changes"] == ["total outlier_value grew from 2.00% to 3.20% of documents"]


def test_findings_below_every_route_open_an_incident_that_sends_nothing(incidents: Incidents,
                                                                        receiver: Receiver) -> None:
    incidents.config = incident_config(receiver, min_severity="critical")
    assert _run(incidents, 0, [total(), email()]) == 0
    assert _run(incidents, 1, [total(), email(), qty()]) == 3, "the escalation to critical is what they first see"
    assert _kinds(receiver) == ["incident_escalated"]
    assert receiver.at(HOOK)[0].json()["incident"]["findings"][0]["field"] in ("total", "qty")


def test_a_reminder_for_an_incident_left_unacknowledged_then_none_once_acknowledged(
        incidents: Incidents, receiver: Receiver) -> None:
    incidents.config = incident_config(receiver, channels={
        k: v for k, v in incident_config(receiver).model_dump()["channels"].items() if k != "am"})
    _run(incidents, 0, [total()])
    incidents.later(20 * 3600)
    assert incidents.queue() == 0
    incidents.later(5 * 3600)  # 25 h after it opened at 12:00
    assert incidents.queue() == 2 and incidents.queue() == 0
    assert incidents.deliver() == 2
    reminder = receiver.at(HOOK)[-1].json()
    assert reminder["kind"] == "incident_reminder"
    assert reminder["title"] == "Incident #1 still open, unacknowledged for 1d 1h: shop.orders, 1 finding (high)"
    incidents.later(24 * 3600)
    assert incidents.queue() == 2, "again after another day"
    incidents.book.change_status(1, "acknowledged", now=incidents.clock.now(), source="cli", owner="alice")
    incidents.deliver()
    incidents.later(72 * 3600)
    assert incidents.queue() == 0
    assert _kinds(receiver) == ["incident_opened", "incident_reminder", "incident_reminder"]


def test_closing_an_incident_by_hand_tells_the_channels_once(incidents: Incidents, receiver: Receiver) -> None:
    _run(incidents, 0, [total()])
    incidents.book.change_status(1, "false_positive", now=incidents.clock.now(), source="http", owner="bob",
                                 note="totals below zero are refunds")
    assert incidents.queue() == 3 and incidents.queue() == 0
    incidents.deliver()
    closed = receiver.at(HOOK)[-1].json()
    assert closed["kind"] == "incident_resolved"
    assert closed["title"] == "Incident #1 closed as a false positive: shop.orders"
    assert closed["text"] == ("Open for 59m; closed as a false positive by bob: totals below zero are refunds\n"
                              "total outlier_value: high, 100 of 5,000 documents (2.00%)")
    assert receiver.at(AM)[-1].json()[0]["endsAt"] == "2026-03-01T13:00:00Z"


def test_alertmanager_hears_of_an_active_incident_before_its_alert_would_lapse(incidents: Incidents,
                                                                              receiver: Receiver) -> None:
    channels = {**incidents.config.channels, "am": incidents.config.channels["am"].model_copy(
        update={"ends_after_s": 3600.0})}
    incidents.config = incidents.config.model_copy(update={"channels": channels})
    _run(incidents, 0, [total()])
    incidents.later(29 * 60)
    assert incidents.queue() == 0
    incidents.later(2 * 60)
    assert incidents.queue() == 1, "Alertmanager only: the people were told already"
    incidents.deliver()
    assert [r.json()[0]["annotations"]["event"] for r in receiver.at(AM)] == ["opened", "refresh"]
    assert len(receiver.at(HOOK)) == len(receiver.at(SLACK)) == 1


def test_a_mute_on_the_collection_silences_its_incident(incidents: Incidents, receiver: Receiver) -> None:
    incidents.outbox.mute(now=incidents.clock.now(), database="shop", collection="orders")
    assert _run(incidents, 0, [total()]) == 0
    assert receiver.requests == []
    assert {r["status"] for r in incidents.outbox.rows()} == {"muted"}


def test_alerts_per_finding_remain_an_option(incidents: Incidents, receiver: Receiver) -> None:
    incidents.config = incident_config(receiver, per="finding")
    _run(incidents, 0, [total(), email(), zip_()])
    assert _kinds(receiver) == ["new_finding"] * 3
    assert len(incidents.book.list()) == 1, "incidents are tracked either way"


def test_a_notice_waits_out_a_receiver_outage_and_a_restart_and_arrives_once(incidents: Incidents,
                                                                            receiver: Receiver,
                                                                            pg_dsn: str) -> None:
    from argus.daemon.store import PostgresStore

    receiver.stop()
    assert _run(incidents, 0, [total(), email()]) == 0
    assert {r["last_error"] for r in incidents.outbox.rows()} == {"ConnectError"}
    incidents.store.close()

    receiver.start()
    incidents.later(60)
    with PostgresStore(pg_dsn, pool_size=1) as reopened:
        incidents.store = reopened
        assert incidents.deliver() == 3
        incidents.later(600)
        assert incidents.deliver() == 0
    assert _kinds(receiver) == ["incident_opened"]
    assert len(receiver.requests) == 3


def test_two_replicas_queue_each_reminder_once(incidents: Incidents, receiver: Receiver, pg_dsn: str) -> None:
    import threading

    from argus.daemon.store import PostgresStore

    for collection in ("orders", "customers", "invoices"):
        incidents.save(report([total()], collection=collection))
    incidents.later(25 * 3600)
    start, queued = threading.Barrier(2), []

    def replica() -> None:
        with PostgresStore(pg_dsn, pool_size=1) as own:
            start.wait()
            queued.append(queue_due(own, incidents.clock.now(), incidents.policy))

    threads = [threading.Thread(target=replica) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    reminders = [r for r in incidents.outbox.rows() if r["kind"] == "incident_reminder"]
    assert len(reminders) == 3 * 3, "three incidents, three channels, once each"
    assert sum(queued) == 9 and len({(r["dedup_key"], r["channel"]) for r in reminders}) == 9


def test_acknowledging_an_acknowledged_incident_again_changes_nothing(incidents: Incidents) -> None:
    _run(incidents, 0, [total()])
    book, now = incidents.book, incidents.clock.now()
    book.change_status(1, "acknowledged", now=now, source="cli", owner="alice", note="on it")
    again = book.change_status(1, "acknowledged", now=now, source="http")
    same = book.change_status(1, "acknowledged", now=now, source="http", owner="alice")
    assert [e.kind for e in same.history] == [e.kind for e in again.history] == ["opened", "acknowledged"]
    assert (same.owner, same.note) == ("alice", "on it")
    handed = book.change_status(1, "acknowledged", now=now, source="cli", owner="bob")
    assert [e.kind for e in handed.history] == ["opened", "acknowledged", "acknowledged"] and handed.owner == "bob"
