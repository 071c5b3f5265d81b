"""Incident metrics, computed at scrape time from the history database (every replica reports the
same numbers: dashboards and rules take ``max`` across instances):

- ``argus_incidents{status,severity}``: incidents in each status now (every pair, zeros included);
- ``argus_incident_oldest_open_timestamp_seconds{severity}``: when the oldest incident still open
  (not acknowledged) became open, for the rule on incidents left unacknowledged;
- ``argus_incident_time_to_acknowledge_seconds{severity}`` and
  ``argus_incident_time_to_resolve_seconds{severity}``: histograms over the stored incidents (first
  acknowledgement, and resolution of resolved ones, after opening).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, get_args

from prometheus_client.core import GaugeMetricFamily, HistogramMetricFamily, Metric
from prometheus_client.registry import Collector

from agent.findings import Severity
from daemon.incidents.models import IncidentStatus

if TYPE_CHECKING:
    from daemon.store.incidents import IncidentBook

__all__ = ["BUCKETS", "IncidentCollector", "IncidentStats"]

BUCKETS = (300.0, 900.0, 1800.0, 3600.0, 7200.0, 14400.0, 28800.0, 86400.0, 172800.0, 604800.0)


@dataclass
class IncidentStats:
    counts: dict[tuple[str, str], int] = field(default_factory=dict)        # (status, severity) -> incidents
    oldest_open: dict[str, float] = field(default_factory=dict)             # severity -> epoch seconds
    # severity -> (cumulative counts per bucket of BUCKETS then +Inf, sum of seconds)
    to_acknowledge: dict[str, tuple[list[int], float]] = field(default_factory=dict)
    to_resolve: dict[str, tuple[list[int], float]] = field(default_factory=dict)


class IncidentCollector(Collector):
    def __init__(self, book: Callable[[], IncidentBook], *, failed: Callable[[], object] | None = None) -> None:
        self._book, self._failed = book, failed

    def describe(self) -> Iterable[Metric]:
        return self._families(IncidentStats())

    def collect(self) -> Iterable[Metric]:
        try:
            stats = self._book().stats()
        except Exception:  # a scrape must never fail because the database is down
            if self._failed is not None:
                self._failed()
            stats = IncidentStats()
        return self._families(stats)

    @staticmethod
    def _families(stats: IncidentStats) -> list[Metric]:
        gauge = GaugeMetricFamily("argus_incidents", "Incidents in each status now, by severity",
                                  labels=["status", "severity"])
        for status in get_args(IncidentStatus):
            for severity in Severity:
                gauge.add_metric([status, severity.value], float(stats.counts.get((status, severity.value), 0)))
        oldest = GaugeMetricFamily("argus_incident_oldest_open_timestamp_seconds", "When the oldest incident still "
                                   "open (not acknowledged) became open, by severity", labels=["severity"])
        for name, at in sorted(stats.oldest_open.items()):
            oldest.add_metric([name], at)
        out: list[Metric] = [gauge, oldest]
        for name, doc, values in (
                ("argus_incident_time_to_acknowledge_seconds", "Time from opening to the first acknowledgement of "
                 "stored incidents", stats.to_acknowledge),
                ("argus_incident_time_to_resolve_seconds", "Time from opening to resolution of stored resolved "
                 "incidents", stats.to_resolve)):
            family = HistogramMetricFamily(name, doc, labels=["severity"])
            for severity in Severity:
                counts, total = values.get(severity.value, ([0] * (len(BUCKETS) + 1), 0.0))
                family.add_metric([severity.value], [(_le(b), float(c)) for b, c in zip((*BUCKETS, None), counts,
                                                                                         strict=True)], total)
            out.append(family)
        return out


def _le(bound: float | None) -> str:
    return "+Inf" if bound is None else f"{bound:g}"
