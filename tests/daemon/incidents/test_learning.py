"""Closing an incident teaches later audits: ``expected`` keeps its findings from alerting in the
next run, and ``false_positive`` is read by the heuristic and the LLM planner as a label from
``argus label`` is."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from argus.agent.llm.options import LLMOptions
from argus.agent.loop import run_audit
from argus.agent.planners.factory import make_planner
from argus.agent.planners.heuristic import HeuristicPlanner
from argus.daemon.cli import app
from argus.daemon.record import record_report
from argus.daemon.store import CollectionRef, PostgresStore
from argus.daemon.store.incidents import IncidentBook
from tests.daemon.alerts.receiver import Receiver
from tests.daemon.store.reports import T0
from tests.daemon.test_daemon_process import _demo_schedules, _write
from tests.doubles.model_server import tool_reply

runner = CliRunner()


@pytest.fixture
def argus_run(pg_dsn: str, tmp_path: Path, receiver: Receiver) -> Any:
    path = tmp_path / "schedules.yaml"
    data = _demo_schedules(every="1h")
    data["alerts"] = {"min_severity": "low", "channels": {"hook": {"type": "webhook", "url_env": "TEST_HOOK_URL"}}}
    _write(path, data)
    env = {"ARGUS_DATABASE_URL": pg_dsn, "ARGUS_DATA_DIR": str(tmp_path / "data"), "COLUMNS": "200"}

    def invoke(*args: str) -> Any:
        argv = ["run", "demo-orders", "--schedules", str(path), "--format", "json"] if not args else list(args)
        result = runner.invoke(app, argv, env=env)
        assert result.exit_code in (0, 1), result.output
        return json.loads(result.stdout) if not args else result

    return invoke


def _kinds(receiver: Receiver) -> list[str]:
    return [r.json()["kind"] for r in receiver.requests]


def test_expected_keeps_the_findings_of_an_incident_from_alerting_in_the_next_run(argus_run: Any,
                                                                                  receiver: Receiver) -> None:
    first = argus_run()
    assert len(first["findings"]) == 3 and _kinds(receiver) == ["incident_opened"]
    closed = argus_run("incident", "expected", "1", "--note", "legacy orders, migrated next week")
    assert "labelled its findings expected" in closed.stdout

    second = argus_run()
    assert second["findings"] == [], "the planner held every labelled pattern back"
    assert _kinds(receiver) == ["incident_opened", "incident_resolved"], "only the closing itself was told"
    listed = json.loads(argus_run("incidents", "--status", "all", "--format", "json").stdout)
    assert [(i["id"], i["status"]) for i in listed] == [(1, "expected")]


def test_without_expected_the_same_findings_come_back_and_reopen_the_incident(argus_run: Any,
                                                                               receiver: Receiver) -> None:
    argus_run()
    argus_run("incident", "resolve", "1")
    second = argus_run()
    assert len(second["findings"]) == 3
    assert _kinds(receiver) == ["incident_opened", "incident_resolved", "incident_reopened"]


DOCS = [{"age": i % 90, "email": f"user{i}@mail.org"} for i in range(100)] + [{"age": 999, "email": "x@mail.org"}]
OUTLIERS = {"age": {"$gt": 130}}
PROPOSAL = {"field": "age", "category": "outlier_value", "severity": "high", "description": "impossible ages",
            "evidence_query": OUTLIERS, "affected_count": 1, "affected_pct": round(1 / 101, 6)}


def test_false_positive_is_read_by_both_planners(store: PostgresStore, make_target: Any, chat_server: Any) -> None:
    target = make_target(DOCS)
    first = run_audit(target, HeuristicPlanner())
    assert [(f.field, f.category.value) for f in first.findings] == [("age", "outlier_value")]
    record_report(store, first)
    book = IncidentBook(store)
    [incident] = book.list()
    book.change_status(incident.id, "false_positive", now=T0, source="cli", note="999 means unknown here")
    context = store.history(CollectionRef(target.connection_name, target.database, target.name))

    heuristic = run_audit(target, HeuristicPlanner(), historical_context=context)
    assert heuristic.findings == [] and heuristic.dismissed_findings == []

    server = chat_server([tool_reply("write_finding", PROPOSAL), tool_reply("conclude", {"summary": "done"})])
    setup = make_planner("llm", llm=LLMOptions(model="gpt-4o-mini", base_url=server.base_url, timeout_s=2.0,
                                               max_retries=0), sleep=lambda _s: None)
    llm = run_audit(target, setup.planner, gates=setup.gates, llm=setup.account, historical_context=context)
    prompt = server.requests[0].body["messages"][1]["content"]
    assert "Marked false positive by users" in prompt and "- age outlier_value at 0.99%: 999 means unknown here" \
        in prompt
    assert llm.findings == []
    assert any("users marked this pattern a false positive at 0.99% affected" in (e.critique or "")
               for e in llm.trace)
