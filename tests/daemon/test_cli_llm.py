"""argus audit --planner llm|hybrid --model M --base-url URL, against the local server."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from bson import json_util
from typer.testing import CliRunner

from argus.daemon.cli import app
from tests.doubles.model_server import tool_reply

runner = CliRunner()
DOCS = [{"order_no": f"O-{i}", "qty": 1 + i % 5} for i in range(300)]


@pytest.fixture
def orders(tmp_path: Path) -> Path:
    docs = [dict(d) for d in DOCS]
    for d in docs[:12]:
        d["qty"] = str(d["qty"])
    path = tmp_path / "orders.jsonl"
    path.write_text("\n".join(json_util.dumps(d) for d in docs) + "\n")
    return path


MISMATCH = {"qty": {"$type": "string"}}
SCRIPT = [tool_reply("run_query", {"filter": MISMATCH, "limit": 0}),
          tool_reply("write_finding", {"field": "qty", "category": "type_mismatch", "severity": "high",
                                       "description": "qty stored as text", "evidence_query": MISMATCH,
                                       "affected_count": 12, "affected_pct": 0.04}),
          tool_reply("run_query", {"filter": {"order_no": {"$exists": False}}, "limit": 0}),
          tool_reply("conclude", {})]


def test_audit_with_the_llm_planner(orders: Path, chat_server: Any) -> None:
    server = chat_server(SCRIPT)
    result = runner.invoke(app, ["audit", "--no-store", "--file", str(orders), "--planner", "llm",
                                 "--model", "my-model", "--base-url", server.base_url, "--format", "json"])
    assert result.exit_code == 1, result.output  # a high finding
    report = json.loads(result.stdout)
    assert (report["planner"], report["model"], report["outcome"]) == ("llm", "my-model", "succeeded")
    assert [(f["field"], f["category"], f["affected_count"]) for f in report["findings"]] == \
        [("qty", "type_mismatch", 12)]
    assert report["llm"]["usage"][0]["calls"] == 4 and report["token_usage"]["input_tokens"] > 0
    assert {r.body["model"] for r in server.requests} == {"my-model"}


def test_audit_with_the_hybrid_planner(orders: Path, chat_server: Any) -> None:
    server = chat_server([tool_reply("conclude", {})])
    result = runner.invoke(app, ["audit", "--no-store", "--file", str(orders), "--planner", "hybrid", "--model", "m",
                                 "--base-url", server.base_url, "--format", "json"])
    report = json.loads(result.stdout)
    assert report["planner"] == "hybrid" and report["outcome"] == "succeeded" and len(server.requests) == 1
    assert [f["category"] for f in report["findings"]] == ["type_mismatch"]


def test_the_table_shows_model_tokens_and_cost(orders: Path, chat_server: Any) -> None:
    server = chat_server(SCRIPT)
    result = runner.invoke(app, ["audit", "--no-store", "--file", str(orders), "--planner", "llm",
                                 "--model", "gpt-4o-mini", "--base-url", server.base_url])
    assert "planner llm (gpt-4o-mini)" in result.stdout and "output tokens" in result.stdout and "$0.0" in result.stdout


def test_openai_without_a_key_is_a_one_line_error(orders: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    result = runner.invoke(app, ["audit", "--no-store", "--file", str(orders), "--planner", "llm", "--model", "gpt-4o"])
    assert result.exit_code == 2
    assert "argus: error: OpenAI needs an API key: set OPENAI_API_KEY" in result.stderr


def test_a_model_answer_the_tools_once_crashed_on_is_a_step_of_the_report(orders: Path, chat_server: Any) -> None:
    """value_counts with value_filter {"$regex": ...} printed 'internal error' and exited 2."""
    server = chat_server([tool_reply("get_stats", {"field": "order_no", "operation": "value_counts",
                                                   "value_filter": {"$regex": "^O-1"}}), *SCRIPT])
    result = runner.invoke(app, ["audit", "--no-store", "--file", str(orders), "--planner", "llm", "--model", "m",
                                 "--base-url", server.base_url, "--format", "json"])
    assert result.exit_code == 1, result.output  # the high finding, as without the extra step
    report = json.loads(result.stdout)
    assert report["outcome"] == "succeeded"
    assert report["trace"][1]["action"] == "get_stats" and report["trace"][1]["outcome"] == "ok"
