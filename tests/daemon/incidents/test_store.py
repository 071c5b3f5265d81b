"""Incidents as the history database keeps them: written with the run that changed them, read
back whole, changed by people with a history, labelled, pruned."""

from __future__ import annotations

from datetime import timedelta

import pytest

from argus.agent.history import fingerprint
from argus.daemon.incidents.errors import StatusRefused
from argus.daemon.record import record_report
from argus.daemon.store import CollectionRef, NotFound, PostgresStore
from argus.daemon.store.incidents import IncidentBook
from tests.daemon.store.reports import T0, finding, report


def _dup() -> object:
    return finding("email", "duplicate_value", "high", count=200).model_copy(
        update={"evidence_query": {"email": {"$in": ["zoe@example.org", "max@example.org"]}}})


def test_a_stored_run_opens_an_incident_kept_with_it(store: PostgresStore) -> None:
    stored = record_report(store, report([finding("total", "outlier_value", "high", count=100), _dup()]))
    [incident] = IncidentBook(store).list()
    assert (incident.id, incident.status, incident.severity.value, incident.opened_run) == (
        1, "open", "high", stored.run_id)
    assert [(f.field, f.affected_count, f.state) for f in incident.findings] == [  # first seen, then by field
        ("email", 200, "active"), ("total", 100, "active")]
    shown = IncidentBook(store).get(incident.id)
    assert [(e.kind, e.source, e.notice) for e in shown.history] == [("opened", "run", "incident_opened")]


def test_evidence_is_masked_as_the_run_says_and_values_never_stored(store: PostgresStore, pg_dsn: str) -> None:
    import psycopg

    record_report(store, report([_dup()]))
    [incident] = IncidentBook(store).list()
    assert incident.findings[0].evidence_query == {"email": {"$in": [{"$masked": "shape:a+@a+.a+"}] * 2}}
    assert incident.findings[0].evidence_redacted is True
    with psycopg.connect(pg_dsn) as conn:
        dumped = str(conn.execute("select i.*, f.*, e.* from incidents i join incident_findings f on "
                                  "f.incident_id = i.id join incident_events e on e.incident_id = i.id").fetchall())
    assert "example.org" not in dumped


def test_a_failed_run_or_a_run_stored_twice_changes_nothing(store: PostgresStore) -> None:
    first = record_report(store, report([finding("total", "outlier_value", "high")]))
    record_report(store, report([], minutes=60, outcome="failed"))
    record_report(store, first)  # the spool may hand a stored report over again
    [incident] = IncidentBook(store).list()
    assert len(IncidentBook(store).get(incident.id).history) == 1


def test_runs_of_other_collections_keep_their_own_incidents(store: PostgresStore) -> None:
    record_report(store, report([finding("total", "outlier_value", "high")]))
    record_report(store, report([finding("total", "outlier_value", "high")], collection="invoices"))
    assert sorted(i.collection for i in IncidentBook(store).list()) == ["invoices", "orders"]
    assert [i.collection for i in IncidentBook(store).list(collection="invoices", database="shop")] == ["invoices"]


def test_acknowledging_keeps_owner_note_and_time_in_the_history(store: PostgresStore) -> None:
    record_report(store, report([finding("total", "outlier_value", "high")]))
    book = IncidentBook(store)
    acked = book.change_status(1, "acknowledged", now=T0 + timedelta(hours=2), source="cli", owner="alice",
                               note="looking at the importer")
    assert (acked.status, acked.owner, acked.note, acked.acknowledged_at) == (
        "acknowledged", "alice", "looking at the importer", T0 + timedelta(hours=2))
    again = book.change_status(1, "acknowledged", now=T0 + timedelta(hours=3), source="http", owner="bob")
    assert again.owner == "bob" and again.acknowledged_at == T0 + timedelta(hours=2), "the first ack counts"
    assert [(e.kind, e.owner, e.note, e.source) for e in again.history[1:]] == [
        ("acknowledged", "alice", "looking at the importer", "cli"), ("acknowledged", "bob", None, "http")]


def test_a_status_change_that_does_not_apply_is_refused_with_what_would(store: PostgresStore) -> None:
    record_report(store, report([finding("total", "outlier_value", "high")]))
    book = IncidentBook(store)
    book.change_status(1, "resolved", now=T0 + timedelta(hours=1), source="cli")
    with pytest.raises(StatusRefused, match="incident 1 is resolved: only an incident that is open or acknowledged "
                                            "can be marked acknowledged"):
        book.change_status(1, "acknowledged", now=T0 + timedelta(hours=2), source="cli")
    with pytest.raises(StatusRefused, match="incident 1 is resolved already"):
        book.change_status(1, "resolved", now=T0 + timedelta(hours=2), source="cli")
    with pytest.raises(NotFound, match=r"no incident 7 \(see `argus incidents --status all`\)"):
        book.change_status(7, "resolved", now=T0, source="cli")


@pytest.mark.parametrize(("action", "verdict"), [("expected", "expected"), ("false_positive", "fp")])
def test_expected_and_false_positive_label_every_finding_inside(store: PostgresStore, action: str,
                                                                 verdict: str) -> None:
    stored = record_report(store, report([finding("total", "outlier_value", "high", count=100),
                                       finding("zip", "null_rate", "medium", count=60)]))
    IncidentBook(store).change_status(1, action, now=T0 + timedelta(hours=1), source="cli",  # type: ignore[arg-type]
                                      note="planned backfill")
    context = store.history(CollectionRef("main", "shop", "orders"))
    for field, category, share in (("total", "outlier_value", 0.02), ("zip", "null_rate", 0.012)):
        label = context.labels[fingerprint("main", "shop", "orders", field, category)]
        assert (label.verdict, label.labelled_share, label.last_note) == ("false_positive", share, "planned backfill")
    assert {f.id for f in stored.findings} == {f.last_finding for f in IncidentBook(store).get(1).findings}
    assert context.suppressed(fingerprint("main", "shop", "orders", "total", "outlier_value"), 0.02) is not None
    assert verdict in ("expected", "fp")


def test_pruning_removes_closed_incidents_only(store: PostgresStore) -> None:
    record_report(store, report([finding("total", "outlier_value", "high")]))
    record_report(store, report([finding("total", "outlier_value", "high")], collection="invoices"))
    IncidentBook(store).change_status(1, "resolved", now=T0, source="cli")
    assert IncidentBook(store).prune(T0 + timedelta(days=1)) == 1
    assert [i.collection for i in IncidentBook(store).list(statuses=None)] == ["invoices"]
