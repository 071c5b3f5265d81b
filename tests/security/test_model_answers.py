"""A model's answer is text from outside: an unpaired surrogate ("\\ud800", which JSON's escapes can
carry and UTF-8 cannot encode) in any string it supplies once ended ``argus audit --planner llm
--format json`` with ``internal error: PydanticSerializationError``. Each reaches the report, the
table and the stored run as U+FFFD."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from bson import json_util
from typer.testing import CliRunner

from argus.daemon.cli import app
from tests.doubles.model_server import Reply, error_reply, text_reply, tool_reply

LONE = "\ud800"
MISMATCH = {"qty": {"$type": "string"}}
CONCLUDE = tool_reply("conclude", {})


def _finding(**changed: Any) -> dict[str, Any]:
    return {"field": "qty", "category": "type_mismatch", "severity": "high", "description": "qty as text",
            "evidence_query": MISMATCH, "affected_count": 12, "affected_pct": 0.04, **changed}


# Where a model puts a string, and the text of the report it reaches.
VARIANTS: dict[str, tuple[list[Reply], str]] = {
    "finding description": ([tool_reply("write_finding", _finding(description=f"qty as text {LONE}"))],
                            "qty as text \ufffd"),
    "finding hypothesis": ([tool_reply("write_finding", _finding(hypothesis=f"an importer {LONE}"))],
                           "an importer \ufffd"),
    # values are masked outside `full` privacy: what shows is that the run ends in a report
    "sample values": ([tool_reply("write_finding", _finding(sample_values=[f"7{LONE}"]))], ""),
    "conclusion notes": ([tool_reply("conclude", {"notes": [f"looked at qty {LONE}"]})], "looked at qty \ufffd"),
    "reasoning beside a call": ([tool_reply("run_query", {"filter": MISMATCH, "limit": 0},
                                            content=f"count the text {LONE}")], "count the text \ufffd"),
    "a value in a query": ([tool_reply("run_query", {"filter": {"qty": f"x{LONE}"}, "limit": 0})], ""),
    "a tool's name": ([tool_reply(f"run_query{LONE}", {"filter": MISMATCH})], "run_query\ufffd"),
    "reasoning of a text answer": ([text_reply(json.dumps({"action": "run_query", "reasoning": f"why {LONE}",
                                                           "action_input": {"filter": MISMATCH, "limit": 0}}))],
                                   "why \ufffd"),
    "the endpoint's error": ([error_reply(400, f"no such thing {LONE}")], "no such thing \ufffd"),
}


@pytest.fixture
def orders(tmp_path: Path) -> Path:
    docs: list[dict[str, Any]] = [{"order_no": f"O-{i}", "qty": 1 + i % 5} for i in range(300)]
    for d in docs[:12]:
        d["qty"] = str(d["qty"])
    path = tmp_path / "orders.jsonl"
    path.write_text("\n".join(json_util.dumps(d) for d in docs) + "\n")
    return path


def _audit(orders: Path, server: Any, *options: str) -> Any:
    return CliRunner().invoke(app, ["audit", "--file", str(orders), "--planner", "llm", "--model", "m",
                                    "--base-url", server.base_url, *options])


@pytest.mark.parametrize("variant", VARIANTS)
def test_a_lone_surrogate_from_the_model_reaches_the_json_report_as_a_replacement(
        variant: str, orders: Path, chat_server: Any) -> None:
    replies, shown = VARIANTS[variant]
    result = _audit(orders, chat_server(replies, default=CONCLUDE), "--format", "json", "--no-store")
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert result.exit_code in (0, 1), result.output
    report = json.dumps(json.loads(result.stdout), ensure_ascii=False)
    assert shown in report and LONE not in report


@pytest.mark.parametrize("variant", ["finding description", "conclusion notes", "a tool's name",
                                     "the endpoint's error"])
def test_a_lone_surrogate_from_the_model_prints_in_the_table(variant: str, orders: Path, chat_server: Any) -> None:
    replies, _ = VARIANTS[variant]
    result = _audit(orders, chat_server(replies, default=CONCLUDE), "--no-store")
    assert result.exit_code in (0, 1), result.output
    assert LONE not in result.output


@pytest.mark.parametrize("variant", ["finding description", "sample values", "a value in a query"])
def test_a_lone_surrogate_from_the_model_is_stored_as_a_replacement(
        variant: str, orders: Path, chat_server: Any, pg_dsn: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ARGUS_DATABASE_URL", pg_dsn)
    replies, shown = VARIANTS[variant]
    result = _audit(orders, chat_server(replies, default=CONCLUDE), "--format", "json", "--store")
    assert result.exit_code in (0, 1), result.output
    run_id = json.loads(result.stdout)["run_id"]
    shown_runs = CliRunner().invoke(app, ["show", run_id, "--format", "json"])
    assert shown_runs.exit_code == 0, shown_runs.output
    stored = json.dumps(json.loads(shown_runs.stdout), ensure_ascii=False)
    assert shown in stored and LONE not in stored
