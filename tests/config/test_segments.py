"""``segments:`` in schedules.yaml, in a contract and on the command line: what reaches the audit,
and errors that name the file, the line and the key."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from bson import json_util
from typer.testing import CliRunner

from argus.config.contracts import ContractError, load_contract
from argus.config.schedules import ScheduleError, load_schedules
from argus.daemon.cli import app

SCHEDULES = """\
connections:
  demo: {files: {orders: orders.jsonl}}
defaults:
  trigger: {every: 1h}
  segments: {by: region}
schedules:
  - name: orders
    connection: demo
    database: shop
    collection: orders
    segments: {by: [tenant, customer.region], top: 20}
  - name: by-default
    connection: demo
    database: shop
    collection: orders
"""


def _write(tmp_path: Path, text: str, name: str = "schedules.yaml") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


def test_a_schedules_segments_reach_its_audit_options_and_the_defaults_apply(tmp_path: Path) -> None:
    loaded = load_schedules(_write(tmp_path, SCHEDULES))

    mine = loaded.schedules["orders"].settings.audit_options().segments
    inherited = loaded.schedules["by-default"].settings.audit_options().segments
    assert mine is not None and (mine.by, mine.top) == (["tenant", "customer.region"], 20)
    assert inherited is not None and (inherited.by, inherited.top) == (["region"], 50)


@pytest.mark.parametrize(("segments", "line"), [
    ("{by: tenant, top: 500}", "schedules.yaml:11 schedules[0].segments.top: at most 200: a hard cap that keeps "
                               "each schedule's Prometheus series bounded"),
    ("{by: $tenant}", "schedules.yaml:11 schedules[0].segments.by: '$tenant' is not a field path"),
    ("{by: tenant, tops: 3}", "schedules.yaml:11 schedules[0].segments.tops: unknown key (did you mean 'top'?)"),
    ("{top: 3}", "schedules.yaml:11 schedules[0].segments.by: required key is missing"),
    ("{by: [a, b, c, d]}", "schedules.yaml:11 schedules[0].segments.by: List should have at most 3 items"),
])
def test_a_bad_segments_key_is_named_at_its_line(tmp_path: Path, segments: str, line: str) -> None:
    text = SCHEDULES.replace("segments: {by: [tenant, customer.region], top: 20}", f"segments: {segments}")
    with pytest.raises(ScheduleError) as info:
        load_schedules(_write(tmp_path, text))
    assert any(str(p).startswith(f"{tmp_path}/{line}") for p in info.value.problems), info.value.problems


def test_a_contract_may_carry_segments_and_a_bad_one_is_named_at_its_line(tmp_path: Path) -> None:
    good = load_contract(_write(tmp_path, "segments: tenant\nfields:\n  total: {required: true}\n", "c.yaml"))
    assert good.segments is not None and good.segments.by == ["tenant"]
    with pytest.raises(ContractError) as info:
        load_contract(_write(tmp_path, "fields:\n  total: {required: true}\nsegments: {by: tenant, topp: 3}\n",
                             "bad.yaml"))
    assert [str(p) for p in info.value.problems] == [
        f"{tmp_path / 'bad.yaml'}:3 segments.topp: unknown key (did you mean 'top'?)"]


def _orders(tmp_path: Path) -> Path:
    docs = [{"order_no": f"O-{i}", "tenant": "acme" if i % 4 == 0 else "beta",
             **({} if i % 4 == 0 and i % 8 == 0 else {"email": f"u{i}@example.org"})} for i in range(400)]
    path = tmp_path / "orders.jsonl"
    path.write_text("\n".join(json_util.dumps(d) for d in docs))
    return path


def test_argus_audit_segment_by_breaks_each_finding_down(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["audit", "--file", str(_orders(tmp_path)), "--segment-by", "tenant",
                                      "--fail-on", "none"], env={"ARGUS_DATABASE_URL": ""})
    assert result.exit_code == 0, result.output
    assert "segments email null_rate: 50 documents; 50 of them tenant=acme (concentrated in one segment)" \
        in result.stdout

    as_json = CliRunner().invoke(app, ["audit", "--file", str(_orders(tmp_path)), "--segment-by", "tenant",
                                       "--format", "json", "--fail-on", "none"], env={"ARGUS_DATABASE_URL": ""})
    [email] = [f for f in json.loads(as_json.stdout)["findings"] if f["field"] == "email"]
    assert email["segments"] == {"by": ["tenant"], "counts": [{"segment": "tenant=acme", "documents": 50}],
                                 "concentrated_in": "tenant=acme"}


@pytest.mark.parametrize(("args", "said"), [
    (["--segment-by", "$tenant"], "invalid option --segment-by: '$tenant' is not a field path"),
    (["--segment-by", "tenant", "--segment-top", "0"], "invalid option --segment-top: Input should be greater than "
                                                       "or equal to 1"),
])
def test_a_bad_segment_option_exits_2_naming_it(tmp_path: Path, args: list[str], said: str) -> None:
    result = CliRunner().invoke(app, ["audit", "--file", str(_orders(tmp_path)), *args],
                                env={"ARGUS_DATABASE_URL": ""})
    assert result.exit_code == 2
    assert said in result.stderr.replace("\n", " ")
