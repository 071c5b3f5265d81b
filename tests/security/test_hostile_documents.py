"""Hostile documents, as real collections hold them: each audit ends in a report within its budget.

Each case is generated here, written as an Extended JSON lines file and audited end to end through
the file loader and the agent loop (the path of ``argus audit --file``), and also inserted into an
in-memory collection directly. A file that MongoDB itself could not hold (nesting past 100 levels,
an invalid ``$oid``) gives a ``file:line`` error instead, never ``internal error``.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from bson import Code, DBRef, ObjectId
from bson.datetime_ms import DatetimeMS
from typer.testing import CliRunner

from argus.agent.errors import DataLoadError
from argus.agent.loop import run_audit
from argus.agent.options import AuditOptions
from argus.agent.planners.heuristic import HeuristicPlanner
from argus.agent.report import AuditReport
from argus.agent.tools.target import AuditTarget
from argus.daemon.cli import app
from argus.daemon.sources import load_jsonl
from tests.conftest import memory_collection

BUDGET_S = 20.0
BEFORE_YEAR_1 = -62_135_596_800_001  # milliseconds since the epoch
AFTER_YEAR_9999 = 253_402_300_800_000


def _deep_text(levels: int, *, arrays: bool) -> str:
    return "[" * levels + "1" + "]" * levels if arrays else '{"x": ' * levels + "1" + "}" * levels


def _lines(rows: list[str]) -> str:
    return "\n".join(rows) + "\n"


# name → Extended JSON lines (as text, so nesting past Python's own limits can be written)
FILES: dict[str, str] = {
    "nested_objects_100": _lines([f'{{"_id": {i}, "a": {_deep_text(99, arrays=False)}}}' for i in range(20)]),
    "nested_arrays_100": _lines([f'{{"_id": {i}, "a": {_deep_text(99, arrays=True)}}}' for i in range(20)]),
    "dbrefs": _lines([json.dumps({"_id": i, "owner": {"$ref": "users", "$id": {"$oid": f"{i:024x}"}, "$db": "app"},
                                  "tag": "x"}) for i in range(50)]),
    "code_values": _lines([json.dumps({"_id": i, "fn": {"$code": "function() { return 1 }"},
                                       "scoped": {"$code": "x + 1", "$scope": {"x": i}}}) for i in range(50)]),
    "far_dates": _lines([json.dumps({"_id": i, "d": {"$date": {"$numberLong": str(BEFORE_YEAR_1 - i)}}})
                         for i in range(25)] + [json.dumps({"_id": 100 + i, "d": {"$date": {"$numberLong":
                                                             str(AFTER_YEAR_9999 + i)}}}) for i in range(25)]),
    "long_blank_strings": _lines([json.dumps({"_id": i, "s": " " * 150_000 + ("x" if i % 2 else "")})
                                  for i in range(6)]),
    "long_text": _lines([json.dumps({"_id": i, "s": "a@" + "b." * 75_000 + "!", "n": "1" * 150_000 + "x"})
                         for i in range(4)]),
    "wide_object": _lines([json.dumps({"_id": i, **{f"k{j}": j for j in range(5000)}}) for i in range(3)]),
    "odd_keys": _lines([json.dumps({"_id": i, "o": {"$x": 1, "a.b": 2, "": 3}, "n\\u0000": 4}) for i in range(10)]),
}

BAD_FILES: dict[str, tuple[str, str]] = {
    "nested_objects_1000": (_lines(['{"_id": 1}', f'{{"_id": 2, "a": {_deep_text(1000, arrays=False)}}}']),
                            ":2: the document is nested deeper than 100 levels, MongoDB's limit"),
    "nested_arrays_1000": (_lines([f'{{"_id": 1, "a": {_deep_text(1000, arrays=True)}}}']),
                           ":1: the document is nested deeper than 100 levels, MongoDB's limit"),
    "nested_150": (_lines([f'{{"_id": 1, "a": {_deep_text(150, arrays=False)}}}']),
                   ":1: the document is nested deeper than 100 levels, MongoDB's limit"),
    "invalid_oid": (_lines(['{"_id": 1}', '{"_id": 2}', '{"_id": {"$oid": "not-an-object-id"}}']),
                    ":3: not valid Extended JSON: an $oid must be 24 hexadecimal characters"),
}


def _audit(target: AuditTarget) -> tuple[AuditReport, float]:
    started = time.monotonic()
    report = run_audit(target, HeuristicPlanner(), options=AuditOptions(time_budget_s=BUDGET_S))
    return report, time.monotonic() - started


def _assert_reported(report: AuditReport, seconds: float) -> None:
    assert report.error is None and report.outcome != "failed"
    assert report.documents_sampled > 0
    assert seconds < BUDGET_S + 5
    json.loads(report.model_dump_json())  # the report serializes, whatever the documents held


@pytest.mark.parametrize("name", sorted(FILES))
def test_hostile_file_is_audited_within_its_budget(tmp_path: Path, name: str) -> None:
    path = tmp_path / f"{name}.jsonl"
    path.write_text(FILES[name])
    report, seconds = _audit(load_jsonl(path, max_time_ms=2000))
    _assert_reported(report, seconds)


@pytest.mark.parametrize("name", sorted(BAD_FILES))
def test_file_mongodb_could_not_hold_gives_a_file_and_line_error(tmp_path: Path, name: str) -> None:
    text, message = BAD_FILES[name]
    path = tmp_path / f"{name}.jsonl"
    path.write_text(text)
    with pytest.raises(DataLoadError) as info:
        load_jsonl(path)
    assert str(info.value) == f"{path}{message}"


def test_cli_names_file_and_line_for_an_invalid_object_id(tmp_path: Path) -> None:
    path = tmp_path / "ids.jsonl"
    path.write_text(BAD_FILES["invalid_oid"][0])
    result = CliRunner().invoke(app, ["audit", "--file", str(path)])
    assert result.exit_code == 2
    assert "ids.jsonl:3: not valid Extended JSON" in result.output and "internal error" not in result.output


def test_cli_reports_on_dbref_code_and_far_date_values(tmp_path: Path) -> None:
    path = tmp_path / "mixed.jsonl"
    path.write_text(FILES["dbrefs"] + FILES["code_values"].replace('"_id": ', '"_id": 1000') + FILES["far_dates"]
                    .replace('"_id": ', '"_id": 2000'))
    result = CliRunner().invoke(app, ["audit", "--file", str(path), "--format", "json", "--fail-on", "none"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert report["outcome"] == "succeeded" and report["documents_sampled"] == 150


def _nested(levels: int) -> Any:
    value: Any = 1
    for _ in range(levels):
        value = {"x": value}
    return value


IN_MEMORY: dict[str, list[dict[str, Any]]] = {
    "dbref": [{"_id": i, "owner": DBRef("users", ObjectId(), "app", role="admin")} for i in range(40)],
    "code": [{"_id": i, "fn": Code("return 1"), "scoped": Code("x", {"x": i})} for i in range(40)],
    "far_dates": [{"_id": i, "d": DatetimeMS(BEFORE_YEAR_1 if i % 2 else AFTER_YEAR_9999)} for i in range(40)],
    "blank_150k": [{"_id": i, "s": " " * 150_000 + ("x" if i % 2 else "")} for i in range(6)],
    "nested_100": [{"_id": i, "a": _nested(99)} for i in range(10)],
}


@pytest.mark.parametrize("name", sorted(IN_MEMORY))
def test_hostile_documents_in_a_collection_are_audited_within_the_budget(name: str) -> None:
    collection = memory_collection(IN_MEMORY[name], name, database="db")
    report, seconds = _audit(AuditTarget(collection, max_time_ms=2000))
    _assert_reported(report, seconds)


@pytest.mark.slow
def test_an_array_of_100000_objects_is_audited_within_the_budget(tmp_path: Path) -> None:
    path = tmp_path / "big_array.jsonl"
    path.write_text(_lines([json.dumps({"_id": 1, "items": [{"q": i, "s": "x"} for i in range(100_000)]}),
                            json.dumps({"_id": 2, "items": []})]))
    report, seconds = _audit(load_jsonl(path, max_time_ms=2000))
    _assert_reported(report, seconds)


def test_far_dates_in_a_live_server_reply_are_profiled_as_dates() -> None:
    from mockupdb import MockupDB, go

    from argus.agent.tools import schema_sample
    from argus.agent.tools.models import SchemaSampleInput
    from argus.daemon.sources import open_uri

    server = MockupDB(auto_ismaster={"maxWireVersion": 17, "minWireVersion": 0})
    server.run()
    try:
        target = open_uri(server.uri, database="app", collection="events", connect_timeout_ms=5000)
        result = go(schema_sample, target, SchemaSampleInput(sample_size=5))
        sample = server.receives(timeout=10)
        if sample.command_name == "ping":  # the first contact, within serverSelectionTimeoutMS
            sample.ok()
            sample = server.receives(timeout=10)
        assert sample.command_name == "aggregate"
        sample.ok(cursor={"id": 0, "ns": "app.events", "firstBatch": [
            {"_id": 1, "d": DatetimeMS(BEFORE_YEAR_1)}, {"_id": 2, "d": DatetimeMS(AFTER_YEAR_9999)}]})
        probe = server.receives(timeout=10)  # is this Cosmos DB? (its request charge); MongoDB does not know it
        assert probe.command_name == "getLastRequestStatistics"
        probe.command_err(code=59, errmsg="no such command: 'getLastRequestStatistics'")
        count = server.receives(timeout=10)
        assert count.command_name == "count"
        count.ok(n=2)
        fields = {f.path: f for f in result(timeout=10).fields}
    finally:
        server.stop()
    assert fields["d"].types == {"date": 2}
