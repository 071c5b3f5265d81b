"""The in-process engine's refusals are a server's; any other exception inside it is a bug that fails the run.

Before, ``AuditTarget`` turned ``KeyError``, ``AttributeError``, ``TypeError`` (and the like) raised in
the engine into "refused by the server", so an engine bug ended as a quiet ``partial`` run."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest
from bson import json_util
from structlog.testing import capture_logs
from typer.testing import CliRunner

import argus.agent.engine.collection as engine_collection
import argus.agent.engine.pipeline as engine_pipeline
from argus.agent.engine import MemoryCollection
from argus.agent.engine.store import DocumentStore
from argus.agent.errors import EngineFault, QueryRejected
from argus.agent.loop import run_audit
from argus.agent.options import AuditOptions
from argus.agent.state import AgentAction
from argus.agent.tools.target import AuditTarget, query_shape
from argus.daemon.cli import app
from tests.conftest import RecordingCollection
from tests.doubles.planner import ScriptedPlanner

SECRET = "zoe.secret@mail.org"
DOCS = [{"age": i % 90, "email": f"user{i}@mail.org"} for i in range(100)] + [{"age": 999, "email": SECRET}]


class _BuggyCollection(MemoryCollection):
    """The engine with a bug: a filter on ``email`` raises ``KeyError`` naming a document's value."""

    def count_documents(self, filter: Mapping[str, Any], maxTimeMS: int | None = None, **kwargs: Any) -> int:
        if "email" in json.dumps(filter, default=str):
            raise KeyError(SECRET)
        return super().count_documents(filter, maxTimeMS, **kwargs)


def _act(action: str, **inp: Any) -> AgentAction:
    return AgentAction(action=action, action_input=inp)  # type: ignore[arg-type]


def test_an_exception_inside_the_engine_fails_the_audit_and_logs_the_querys_shape_without_values() -> None:
    target = AuditTarget(_BuggyCollection(DocumentStore.of(DOCS), name="people"))
    check = _act("run_query", filter={"$or": [{"age": {"$gt": 130}}, {"email": {"$in": [SECRET, "n/a"]}}]}, limit=0)
    with capture_logs() as logs:
        report = run_audit(target, ScriptedPlanner([_act("schema_sample"), check, _act("conclude")]),
                           options=AuditOptions(min_field_coverage=0.0))

    assert (report.outcome, report.termination_reason) == ("failed", "error")
    assert report.error is not None and report.error.startswith(
        "internal error in the in-process engine: count_documents raised KeyError")
    [fault] = [entry for entry in logs if entry["event"] == "engine_fault"]
    assert (fault["operators"], fault["fields"]) == (["$gt", "$in", "$or"], ["age", "email"])
    assert SECRET not in str(logs) and "n/a" not in str(logs) and "130" not in str(logs)
    assert SECRET not in report.model_dump_json()


def test_a_type_error_the_engine_raises_is_a_bug_not_a_refusal(monkeypatch: pytest.MonkeyPatch) -> None:
    """The engine's own wrapper used to dress a TypeError as a server's BadValue (code 2)."""
    def broken(*args: Any, **kwargs: Any) -> Any:
        raise TypeError("'<' not supported between instances of 'str' and 'int'")

    monkeypatch.setattr(engine_collection, "compile_filter", broken)
    target = AuditTarget(MemoryCollection.of(DOCS))
    with pytest.raises(EngineFault, match="internal error in the in-process engine: count_documents raised TypeError"):
        target.count_documents({"age": {"$gt": 1}})


def test_argus_audit_file_exits_4_on_an_engine_bug(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "people.jsonl"
    path.write_text("\n".join(json_util.dumps(d) for d in DOCS))
    compile_filter = engine_collection.compile_filter

    def buggy(query: dict[str, Any], *args: Any) -> Any:
        if "email" in json.dumps(query, default=str):
            raise AttributeError("'NoneType' object has no attribute 'get'")
        return compile_filter(query, *args)

    monkeypatch.setattr(engine_collection, "compile_filter", buggy)
    monkeypatch.setattr(engine_pipeline, "compile_filter", buggy)  # a $match stage's filter
    result = CliRunner().invoke(app, ["audit", "--file", str(path), "--no-store"])

    assert result.exit_code == 4, result.output
    assert "argus: error: audit failed: internal error in the in-process engine" in result.output
    assert "refused" not in result.output


def test_a_refusal_the_engine_gives_as_a_server_would_stays_a_refusal() -> None:
    target = AuditTarget(MemoryCollection.of(DOCS))
    with pytest.raises(QueryRejected, match=r"code 51091"):
        target.count_documents({"email": {"$regex": "("}})
    assert target.count_documents({"email": {"$regex": "^user1"}}) == 11


def test_the_shape_of_a_pipeline_names_stages_operators_and_fields_never_values() -> None:
    pipeline = [{"$match": {"status": {"$in": ["paid", "void"]}}},
                {"$facet": {"q0": [{"$match": {"qty": {"$not": {"$gt": 5}}}}, {"$count": "n"}]}}]
    assert query_shape(pipeline) == {"operators": ["$count", "$facet", "$gt", "$in", "$match", "$not"],
                                      "fields": ["q0", "qty", "status"]}


@pytest.mark.parametrize(("in_memory", "expected_ms"), [(False, 10), (True, 60_000)])
def test_the_in_memory_engine_gets_the_runs_remaining_time_a_server_its_max_time(
        make_collection: Callable[..., Any], in_memory: bool, expected_ms: int) -> None:
    recording = RecordingCollection(make_collection([{"k": 1}]))
    target = AuditTarget(recording, max_time_ms=10, in_memory=in_memory)
    target.cap_time_with(lambda: 60_000)
    target.count_documents({"k": 1})
    assert [kw.get("maxTimeMS") for op, kw in recording.calls if op == "count_documents"] == [expected_ms]
