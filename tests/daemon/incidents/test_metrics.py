"""Incident metrics as Prometheus reads them, computed from the store at scrape time."""

from __future__ import annotations

from datetime import timedelta

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families

from argus.daemon.metrics import IncidentStats, Metrics, catalogue
from argus.daemon.record import record_report
from argus.daemon.store import PostgresStore
from argus.daemon.store.incidents import IncidentBook
from tests.daemon.store.reports import T0, finding, report


def _registry(store: PostgresStore) -> CollectorRegistry:
    registry = CollectorRegistry()
    Metrics(registry).daemon_gauges(open_findings=list, next_runs=list, schedules=list, spooled=lambda: 0,
                                    embedded_up=None, incidents=IncidentBook(store).stats)
    return registry


def test_incidents_by_status_and_severity_and_the_oldest_open_one(store: PostgresStore) -> None:
    record_report(store, report([finding("total", "outlier_value", "high")]))
    record_report(store, report([finding("zip", "null_rate", "medium")], collection="customers", minutes=30))
    record_report(store, report([finding("qty", "type_mismatch", "high")], collection="invoices", minutes=60))
    IncidentBook(store).change_status(3, "acknowledged", now=T0 + timedelta(minutes=70), source="cli")
    registry = _registry(store)
    value = registry.get_sample_value
    assert value("argus_incidents", {"status": "open", "severity": "high"}) == 1
    assert value("argus_incidents", {"status": "open", "severity": "medium"}) == 1
    assert value("argus_incidents", {"status": "acknowledged", "severity": "high"}) == 1
    assert value("argus_incidents", {"status": "resolved", "severity": "critical"}) == 0, "every pair, zeros too"
    assert value("argus_incident_oldest_open_timestamp_seconds", {"severity": "high"}) == (
        T0 + timedelta(seconds=3)).timestamp()
    assert value("argus_incident_oldest_open_timestamp_seconds", {"severity": "medium"}) == (
        T0 + timedelta(minutes=30, seconds=3)).timestamp()


def test_time_to_acknowledge_and_to_resolve_are_histograms(store: PostgresStore) -> None:
    for minutes, collection in ((0, "orders"), (0, "customers")):
        record_report(store, report([finding("total", "outlier_value", "high")], collection=collection,
                                    minutes=minutes))
    book = IncidentBook(store)
    book.change_status(1, "acknowledged", now=T0 + timedelta(minutes=10, seconds=3), source="cli")
    book.change_status(1, "resolved", now=T0 + timedelta(hours=3, seconds=3), source="cli")
    book.change_status(2, "acknowledged", now=T0 + timedelta(hours=5, seconds=3), source="http")
    value = _registry(store).get_sample_value
    ack = {"severity": "high"}
    assert value("argus_incident_time_to_acknowledge_seconds_count", ack) == 2
    assert value("argus_incident_time_to_acknowledge_seconds_sum", ack) == 600 + 5 * 3600
    assert value("argus_incident_time_to_acknowledge_seconds_bucket", {**ack, "le": "900"}) == 1
    assert value("argus_incident_time_to_acknowledge_seconds_bucket", {**ack, "le": "28800"}) == 2
    assert value("argus_incident_time_to_resolve_seconds_count", ack) == 1
    assert value("argus_incident_time_to_resolve_seconds_bucket", {**ack, "le": "7200"}) == 0
    assert value("argus_incident_time_to_resolve_seconds_bucket", {**ack, "le": "14400"}) == 1
    assert value("argus_incident_time_to_resolve_seconds_count", {"severity": "low"}) == 0


def test_a_scrape_with_the_database_down_still_lists_the_families() -> None:
    def broken() -> IncidentStats:
        raise OSError("down")

    registry = CollectorRegistry()
    Metrics(registry).daemon_gauges(open_findings=list, next_runs=list, schedules=list, spooled=lambda: 0,
                                    embedded_up=None, incidents=broken)
    names = {f.name for f in text_string_to_metric_families(generate_latest(registry).decode())}
    assert {"argus_incidents", "argus_incident_oldest_open_timestamp_seconds",
            "argus_incident_time_to_acknowledge_seconds", "argus_incident_time_to_resolve_seconds"} <= names
    declared = {f.name: f.labels for f in catalogue(registry) if "incident" in f.name}
    assert declared == {"argus_incidents": ("status", "severity"),
                        "argus_incident_oldest_open_timestamp_seconds": ("severity",),
                        "argus_incident_time_to_acknowledge_seconds": ("severity",),
                        "argus_incident_time_to_resolve_seconds": ("severity",)}
