"""``metrics:`` in schedules.yaml: what it accepts, and each refusal at its file, line and key,
including a pipeline the read-only guard refuses (the same guard every query passes)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from argus.config.schedules import ScheduleError, load_schedules

HEAD = """\
connections:
  prod: {uri_env: ARGUS_TEST_URI}
defaults: {trigger: {every: 1h}}
schedules:
  - name: orders
    connection: prod
    database: shop
    collection: orders
    metrics:
"""


def _problems(tmp_path: Path, metrics: str) -> list[str]:
    path = tmp_path / "schedules.yaml"
    path.write_text(textwrap.dedent(HEAD) + textwrap.indent(textwrap.dedent(metrics), "      "))
    with pytest.raises(ScheduleError) as info:
        load_schedules(path)
    return [p.replace(str(tmp_path) + "/", "") for p in info.value.problems]


def test_the_issue_example_loads_into_the_audit_options(tmp_path: Path) -> None:
    path = tmp_path / "schedules.yaml"
    path.write_text(textwrap.dedent(HEAD) + textwrap.indent(textwrap.dedent("""\
        - name: avg_total
          pipeline: [{$group: {_id: null, v: {$avg: "$total"}}}]
          between: [10, 500]
        - name: orders_per_region
          pipeline: [{$group: {_id: "$region", v: {$sum: 1}}}]
          anomaly: true
        - name: late
          pipeline: [{$match: {status: late}}, {$count: n}]
          warn: {above: 10}
          fail: {above: 100}
    """), "      "))
    metrics = load_schedules(path).schedules["orders"].settings.audit_options().metrics
    assert [(m.name, m.between, m.anomaly) for m in metrics] == [
        ("avg_total", (10.0, 500.0), False), ("orders_per_region", None, True), ("late", None, False)]
    assert metrics[0].pipeline == [{"$group": {"_id": None, "v": {"$avg": "$total"}}}]
    assert (metrics[2].warn and metrics[2].warn.above, metrics[2].fail and metrics[2].fail.above) == (10.0, 100.0)


@pytest.mark.parametrize(("stage", "says"), [
    ('{$out: stolen}', "operator $out is refused in a pipeline: it writes to a collection; Argus is read-only"),
    ('{$merge: {into: other}}', "operator $merge is refused in a pipeline: it writes to a collection"),
    ('{$group: {_id: null, v: {$function: {body: "x", args: [], lang: js}}}}',
     "operator $function is refused in a pipeline: it runs JavaScript on the server"),
    ('{$lookup: {from: users, localField: a, foreignField: b, as: c}}',
     "operator $lookup is refused in a pipeline: it reads another collection"),
])
def test_a_pipeline_the_guard_refuses_is_refused_at_its_stage_line(tmp_path: Path, stage: str, says: str) -> None:
    problems = _problems(tmp_path, f"""\
        - name: fine
          pipeline: [{{$count: n}}]
          between: [0, 10]
        - name: sneaky
          pipeline:
            - {{$match: {{status: paid}}}}
            - {stage}
          between: [0, 10]
    """)
    assert len(problems) == 1
    assert problems[0].startswith("schedules.yaml:16 schedules[0].metrics[1].pipeline[1]: refused by the read-only "
                                  "guard: "), problems
    assert says in problems[0]


def test_a_metric_name_used_twice_is_refused_at_the_second(tmp_path: Path) -> None:
    assert _problems(tmp_path, """\
        - name: total
          pipeline: [{$count: n}]
          between: [0, 10]
        - name: total
          pipeline: [{$count: n}]
          anomaly: true
    """) == ["schedules.yaml:13 schedules[0].metrics[1].name: metric name 'total' is used twice in this schedule "
             "(first at schedules[0].metrics[0]); each metric needs its own name"]


def test_a_bad_name_a_missing_expectation_and_an_unknown_key_are_named(tmp_path: Path) -> None:
    problems = _problems(tmp_path, """\
        - name: "total orders"
          pipeline: [{$count: n}]
          between: [0, 10]
        - name: no_expectation
          pipeline: [{$count: n}]
        - name: typo
          pipeline: [{$count: n}]
          betwen: [1, 2]
        - name: upside_down
          pipeline: [{$count: n}]
          between: [10, 1]
    """)
    assert problems[0].startswith("schedules.yaml:10 schedules[0].metrics[0].name: String should match pattern")
    assert problems[1:] == [
        "schedules.yaml:13 schedules[0].metrics[1]: say what to expect: 'between: [low, high]', 'warn'/'fail' "
        "thresholds (e.g. fail: {above: 500}) or 'anomaly: true'",
        "schedules.yaml:17 schedules[0].metrics[2].betwen: unknown key (did you mean 'between'?)",
        "schedules.yaml:18 schedules[0].metrics[3]: between: the low end (10) is above the high end (1)",
    ]
