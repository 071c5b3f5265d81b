"""Metrics of your own on the in-process engine: one read each, values per group capped with the rest
as ``other``, verdicts for ranges, thresholds and learned baselines, and a metric that cannot be
read leaves the run partial instead of reading as one that passed."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from argus.agent.custom_metrics.measure import MAX_SEGMENTS, measure_metrics
from argus.agent.custom_metrics.models import MetricPoint, MetricSpec
from argus.agent.findings import Category
from argus.agent.health.models import ExcludedSpan, HealthOptions
from argus.agent.loop import run_audit
from argus.agent.options import AuditOptions
from argus.agent.planners.heuristic import HeuristicPlanner
from argus.agent.tools.target import AuditTarget
from tests.conftest import memory_collection

AT = datetime(2026, 3, 9, 6, 0, tzinfo=UTC)
OPTIONS = HealthOptions(min_history=3, seasonality="off")


def _target(docs: list[dict[str, Any]]) -> AuditTarget:
    return AuditTarget(memory_collection(docs, "orders", database="shop"))


def _spec(**kwargs: Any) -> MetricSpec:
    return MetricSpec.model_validate({"name": "m", **kwargs})


def _history(values: list[float], segment: str | None = None) -> list[MetricPoint]:
    return [MetricPoint(at=AT - timedelta(days=len(values) - i), segment=segment, value=v, verdict="ok")
            for i, v in enumerate(values)]


ORDERS = [{"tenant": f"t{i % 60:02d}", "total": 10.0 + i % 7} for i in range(600)] + \
         [{"tenant": "t00", "total": 12.0} for _ in range(40)]


def test_each_metric_is_one_read_counted_as_such() -> None:
    target = _target(ORDERS)
    specs = [_spec(name="avg", pipeline=[{"$group": {"_id": None, "v": {"$avg": "$total"}}}], between=[0, 100]),
             _spec(name="n", pipeline=[{"$count": "n"}], fail={"below": 1})]
    measured = measure_metrics(target, specs, at=AT, history={}, options=OPTIONS, privacy="shapes")
    assert [(r.name, r.values[0].verdict) for r in measured.results] == [("avg", "ok"), ("n", "ok")]
    assert measured.results[1].values[0].value == 640
    cost = target.cost()
    assert [op.kind for op in cost.operations] == ["metric", "metric"]
    assert (cost.queries_sent, cost.metric_reads, cost.passes) == (2, 2, 2)


def test_groups_past_the_cap_fold_into_other() -> None:
    spec = _spec(pipeline=[{"$group": {"_id": "$tenant", "v": {"$sum": 1}}}], fail={"above": 1000})
    [result] = measure_metrics(_target(ORDERS), [spec], at=AT, history={}, options=OPTIONS,
                               privacy="shapes").results
    assert len(result.values) == MAX_SEGMENTS + 1 and result.folded == 10
    assert result.values[0].group == "t00" and result.values[0].value == 50   # the largest first
    other = result.values[-1]
    assert (other.segment, other.value) == ("other", 100)                     # ten tenants of ten orders each
    assert sum(v.value or 0 for v in result.values) == len(ORDERS)
    assert all(v.segment and v.segment.startswith("seg_") and "t" not in v.segment.removeprefix("seg_")
               for v in result.values[:-1])


def test_strict_privacy_keeps_the_group_out_of_the_result() -> None:
    spec = _spec(pipeline=[{"$group": {"_id": "$tenant", "v": {"$sum": 1}}}], fail={"above": 1000})
    thirty = [d for d in ORDERS if d["tenant"] < "t30"]
    [result] = measure_metrics(_target(thirty), [spec], at=AT, history={}, options=OPTIONS, privacy="strict").results
    assert {v.group for v in result.values} == {None}
    assert len({v.segment for v in result.values}) == 30


@pytest.mark.parametrize(("value", "verdict"), [(5, "ok"), (11, "warn"), (101, "fail"), (-1, "fail")])
def test_warn_and_fail_thresholds(value: float, verdict: str) -> None:
    spec = _spec(pipeline=[{"$group": {"_id": None, "v": {"$sum": "$x"}}}], warn={"above": 10},
                 fail={"above": 100, "below": 0})
    measured = measure_metrics(_target([{"x": value}]), [spec], at=AT, history={}, options=OPTIONS, privacy="full")
    assert measured.results[0].values[0].verdict == verdict
    assert [f.severity.value for f in measured.findings] == {"ok": [], "warn": ["medium"]}.get(verdict, ["high"])


def test_a_learned_baseline_judges_each_segment_against_its_own_history() -> None:
    docs = [{"region": "EU"}] * 100 + [{"region": "US"}] * 3
    spec = _spec(pipeline=[{"$group": {"_id": "$region", "v": {"$sum": 1}}}], anomaly=True)
    probe = measure_metrics(_target(docs), [spec], at=AT, history={}, options=OPTIONS, privacy="full").results[0]
    key = {v.group: v.segment for v in probe.values}
    history = {"m": _history([98, 101, 100, 99], key["EU"]) + _history([97, 103, 100, 101], key["US"])}
    measured = measure_metrics(_target(docs), [spec], at=AT, history=history, options=OPTIONS, privacy="full")
    verdicts = {v.group: (v.verdict, v.z is not None and v.z < -3) for v in measured.results[0].values}
    assert verdicts == {"EU": ("ok", False), "US": ("anomaly", True)}
    [finding] = measured.findings
    assert (finding.category, finding.field, finding.affected_count) == (Category.METRIC_BREACH, "metric:m", 1)
    assert finding.description.startswith("metric m 1 of 2 groups: US (seg_")


def test_a_baseline_waits_for_its_history_and_skips_what_was_anomalous_or_excluded() -> None:
    spec = _spec(pipeline=[{"$count": "n"}], anomaly=True)
    docs = [{"a": 1}] * 50
    few = measure_metrics(_target(docs), [spec], at=AT, history={"m": _history([100, 100])}, options=OPTIONS,
                          privacy="full")
    assert few.results[0].values[0].verdict == "learning" and not few.findings
    # Three steady points and many anomalous ones: only the steady ones form the baseline.
    points = _history([100, 101, 99]) + [MetricPoint(at=AT - timedelta(hours=h), value=50, verdict="anomaly")
                                         for h in range(1, 9)]
    judged = measure_metrics(_target(docs), [spec], at=AT, history={"m": points}, options=OPTIONS, privacy="full")
    assert judged.results[0].values[0].verdict == "anomaly"
    held = OPTIONS.model_copy(update={"exclude": [ExcludedSpan(start=AT - timedelta(hours=1),
                                                               end=AT + timedelta(hours=1))]})
    excluded = measure_metrics(_target(docs), [spec], at=AT, history={"m": points}, options=held, privacy="full")
    assert excluded.results[0].values[0].verdict == "excluded" and not excluded.findings


def test_an_answer_without_a_number_and_a_spent_budget_are_not_measured() -> None:
    specs = [_spec(name="text", pipeline=[{"$group": {"_id": None, "v": {"$first": "$name"}}}], between=[0, 1]),
             _spec(name="two", pipeline=[{"$group": {"_id": None, "a": {"$sum": 1}, "b": {"$sum": 2}}}],
                   between=[0, 1])]
    measured = measure_metrics(_target([{"name": "Zoe"}]), specs, at=AT, history={}, options=OPTIONS,
                               privacy="full")
    assert [r.error for r in measured.results] == [
        "field 'v' of result document 1 is str, not a finite number",
        "result document 1 holds 2 fields beside _id (a, b); a metric's pipeline returns _id and one number, "
        "e.g. {$group: {_id: null, v: {$avg: \"$total\"}}}"]
    assert "Zoe" not in " ".join(measured.notes)
    target = _target([{"x": 1}])
    target.cap_time_with(lambda: 0)
    [spent] = measure_metrics(target, specs[:1], at=AT, history={}, options=OPTIONS, privacy="full").results
    assert spent.error == "the run's time budget ran out before its read" and target.cost().queries_sent == 0


def test_a_metric_not_measured_leaves_the_run_partial_and_a_breach_is_a_finding() -> None:
    docs = [{"order_no": f"O-{i}", "total": float(i % 50)} for i in range(300)]
    metrics = (_spec(name="avg", pipeline=[{"$group": {"_id": None, "v": {"$avg": "$total"}}}], between=[100, 200]),)
    report = run_audit(_target(docs), HeuristicPlanner(), options=AuditOptions(metrics=metrics))
    assert report.outcome == "succeeded"
    assert [(f.category, f.field) for f in report.findings if f.category == Category.METRIC_BREACH] == [
        (Category.METRIC_BREACH, "metric:avg")]
    assert report.metrics[0].values[0].value == pytest.approx(24.5)
    assert report.database_cost.metric_reads == 1
    broken = (_spec(name="bad", pipeline=[{"$group": {"_id": None, "v": {"$first": "$order_no"}}}],
                    between=[0, 1]),)
    partial = run_audit(_target(docs), HeuristicPlanner(), options=AuditOptions(metrics=broken))
    assert partial.outcome == "partial"
    assert "metric bad was not measured: field 'v' of result document 1 is str, not a finite number" in partial.notes


@pytest.mark.parametrize("privacy", ["strict", "shapes", "full"])
def test_a_server_refusal_quoting_a_value_is_kept_only_in_full_privacy(privacy: str) -> None:
    spec = _spec(pipeline=[{"$group": {"_id": None, "v": {"$sum": {"$toInt": "$name"}}}}], between=[0, 1])
    measured = measure_metrics(_target([{"name": "Zoe-4471"}]), [spec], at=AT, history={}, options=OPTIONS,
                               privacy=privacy)
    error = measured.results[0].error or ""
    assert "code 241" in error
    assert ("Zoe-4471" in error) == (privacy == "full")
    assert ("Zoe-4471" in " ".join(measured.notes)) == (privacy == "full")


def test_shapes_privacy_shows_a_vocabulary_group_and_only_the_shape_of_an_identifier() -> None:
    spec = _spec(pipeline=[{"$group": {"_id": "$who", "v": {"$sum": 1}}}], fail={"above": 1000})
    docs = [{"who": "EU"}, {"who": "zoe@mail.org"}, {"who": 4471}]
    [result] = measure_metrics(_target(docs), [spec], at=AT, history={}, options=OPTIONS, privacy="shapes").results
    assert sorted(v.group or "" for v in result.values) == ["4-digit number", "EU",
                                                            "shape:a+@a+.a+"]


def test_one_group_without_a_finite_number_leaves_the_others_judged() -> None:
    """A tenant whose totals hold a NaN averages NaN: that group has no value, the others are judged (the
    whole metric was an error before, so one bad tenant hid every other tenant's breach)."""
    docs = [{"tenant": "a", "total": 10.0}, {"tenant": "b", "total": 500.0}, {"tenant": "c", "total": float("nan")}]
    spec = _spec(name="avg", pipeline=[{"$group": {"_id": "$tenant", "v": {"$avg": "$total"}}}], fail={"above": 100})
    measured = measure_metrics(_target(docs), [spec], at=AT, history={}, options=OPTIONS, privacy="full")
    [result] = measured.results
    assert result.error is None
    assert [(v.group, v.value, v.verdict) for v in result.values] == [("b", 500.0, "fail"), ("a", 10.0, "ok"),
                                                                       ("c", None, "no_value")]
    assert len(measured.findings) == 1
    assert "metric avg: 1 group(s) answered no finite number (null, NaN, infinite or not a number) and have no " \
           "value; the others were judged" in measured.notes
    every = measure_metrics(_target([{"tenant": "c", "total": "x"}]),
                            [_spec(pipeline=[{"$group": {"_id": "$tenant", "v": {"$first": "$total"}}}],
                                   fail={"above": 1})], at=AT, history={}, options=OPTIONS, privacy="full")
    assert every.results[0].error == "field 'v' of result document 1 is str, not a finite number"
