"""Each run's metric values (``metrics:`` of a schedule) in the ``metric_values`` table.

Written in the run's own transaction (``insert_values``), read back as the baselines of the next
runs (``MetricBook.history``) and as the history ``argus metrics ls|show`` prints. A value goes
when its run is pruned (the foreign key cascades).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any
from uuid import UUID

import psycopg
from pydantic import BaseModel

from argus.agent.custom_metrics.models import MetricPoint, MetricVerdict, verdict_rank
from argus.agent.report import AuditReport
from argus.daemon.store.errors import NotFound
from argus.daemon.store.pool import Connects

__all__ = ["MetricBook", "MetricRow", "MetricSeries", "insert_values"]


def insert_values(conn: psycopg.Connection[Any], report: AuditReport) -> None:
    """The report's metric values, one row per value (per segment), under the report's schedule."""
    if not report.schedule or not report.metrics:
        return
    rows: list[tuple[Any, ...]] = []
    for result in report.metrics:
        if result.error is not None:
            rows.append((report.run_id, report.schedule, result.name, "", None, report.started_at, None, "error",
                         None, result.error))
            continue
        for v in result.values:
            rows.append((report.run_id, report.schedule, result.name, v.segment or "", v.group, report.started_at,
                         v.value, v.verdict, v.expected, None))
    with conn.cursor() as cur:
        cur.executemany(
            """insert into metric_values (run_id, schedule, metric, segment, grp, at, value, verdict, expected, error)
               values (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s) on conflict do nothing""", rows)


class MetricRow(BaseModel):
    """One stored value, as ``argus metrics show`` prints it."""

    run_id: UUID
    at: datetime
    segment: str | None
    group: str | None
    value: float | None
    verdict: MetricVerdict
    expected: str | None
    error: str | None


class MetricSeries(BaseModel):
    """One metric of one schedule, as ``argus metrics ls`` prints it: its latest run."""

    schedule: str
    metric: str
    runs: int
    last_at: datetime
    last_value: float | None
    segments: int
    verdict: MetricVerdict


class MetricBook:
    """The metric values of one store."""

    def __init__(self, store: Connects) -> None:
        self._store = store

    def history(self, schedule: str, metrics: Sequence[str], *, window: int) -> dict[str, list[MetricPoint]]:
        """Per metric, the last ``window`` values of each segment, oldest first: a baseline's history."""
        if not metrics:
            return {}
        with self._store._conn() as conn:
            rows = conn.execute(
                """select metric, segment, at, value, verdict from (
                       select metric, segment, at, value, verdict,
                              row_number() over (partition by metric, segment order by at desc) as n
                       from metric_values where schedule = %s and metric = any(%s) and value is not null) v
                   where n <= %s order by at""", (schedule, list(metrics), window)).fetchall()
        out: dict[str, list[MetricPoint]] = {}
        for metric, segment, at, value, verdict in rows:
            out.setdefault(metric, []).append(MetricPoint(at=at, segment=segment or None, value=value,
                                                          verdict=verdict))
        return out

    def series(self, *, schedule: str | None = None) -> list[MetricSeries]:
        """Every metric stored (of ``schedule``), with its latest run's values summed up."""
        with self._store._conn() as conn:
            rows = conn.execute(
                """with last as (
                       select distinct on (schedule, metric) schedule, metric, run_id, at from metric_values
                       where %(schedule)s::text is null or schedule = %(schedule)s
                       order by schedule, metric, at desc)
                   select l.schedule, l.metric, l.at,
                          (select count(distinct run_id) from metric_values m
                              where m.schedule = l.schedule and m.metric = l.metric),
                          array_agg(v.value order by v.segment), array_agg(v.verdict), count(*)
                   from last l join metric_values v on v.run_id = l.run_id and v.metric = l.metric
                   group by l.schedule, l.metric, l.at order by l.schedule, l.metric""",
                {"schedule": schedule}).fetchall()
        return [MetricSeries(schedule=s, metric=m, runs=runs, last_at=at, last_value=values[0] if count == 1 else None,
                             segments=count if count > 1 else 0, verdict=max(verdicts, key=verdict_rank))
                for s, m, at, runs, values, verdicts, count in rows]

    def show(self, metric: str, *, schedule: str | None = None, limit: int = 20) -> tuple[str, list[MetricRow]]:
        """The schedule the metric is of, and its values in its last ``limit`` runs, newest first.
        A name two schedules use needs ``schedule``."""
        with self._store._conn() as conn:
            owners = [r[0] for r in conn.execute(
                """select distinct schedule from metric_values where metric = %s
                       and (%s::text is null or schedule = %s) order by 1""",
                (metric, schedule, schedule)).fetchall()]
            if not owners:
                where = f" of schedule {schedule!r}" if schedule else ""
                raise NotFound(f"no stored values of a metric {metric!r}{where} (see `argus metrics ls`)")
            if len(owners) > 1:
                raise NotFound(f"metric {metric!r} is stored for several schedules ({', '.join(owners)}): name one "
                               f"with --schedule")
            rows = conn.execute(
                """select run_id, at, segment, grp, value, verdict, expected, error from metric_values
                   where schedule = %s and metric = %s and run_id in (
                       select run_id from metric_values where schedule = %s and metric = %s
                       group by run_id order by max(at) desc limit %s)
                   order by at desc, segment""", (owners[0], metric, owners[0], metric, limit)).fetchall()
        return owners[0], [MetricRow(run_id=r[0], at=r[1], segment=r[2] or None, group=r[3], value=r[4],
                                     verdict=r[5], expected=r[6], error=r[7]) for r in rows]
