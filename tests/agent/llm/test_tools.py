"""Tool schemas come from the registry; answers that are no action say what is wrong."""

from __future__ import annotations

import json

import pytest

from argus.agent.llm.client import Completion, ToolCall
from argus.agent.llm.tools import InvalidAnswer, action_from, strip_fence, tool_definitions
from argus.agent.tools.registry import TOOLS


def test_one_function_per_registry_tool_with_inlined_schemas() -> None:
    tools = tool_definitions()
    assert [t["function"]["name"] for t in tools] == list(TOOLS)
    assert "$ref" not in json.dumps(tools)
    finding = next(t for t in tools if t["function"]["name"] == "write_finding")["function"]["parameters"]
    assert {"field", "category", "evidence_query", "affected_count", "affected_pct"} <= set(finding["required"])
    assert "type_mismatch" in finding["properties"]["category"]["enum"]


def test_malformed_arguments_are_an_invalid_answer() -> None:
    with pytest.raises(InvalidAnswer, match="not valid JSON"):
        action_from(Completion(content=None, tool_calls=[ToolCall("run_query", '{"filter": {')]))


def test_an_unknown_tool_is_named_with_the_real_ones() -> None:
    with pytest.raises(InvalidAnswer, match=r"no tool 'drop_collection'.*run_query"):
        action_from(Completion(content=None, tool_calls=[ToolCall("drop_collection", "{}")]))


def test_a_json_action_in_text_is_read_for_servers_without_tools() -> None:
    text = '```json\n{"reasoning": "count it", "action": "run_query", "action_input": {"filter": {}, "limit": 0}}\n```'
    action = action_from(Completion(content=text))
    assert (action.action, action.action_input, action.reasoning) == ("run_query", {"filter": {}, "limit": 0},
                                                                       "count it")


def test_prose_is_an_invalid_answer() -> None:
    with pytest.raises(InvalidAnswer):
        action_from(Completion(content="Let me think about the email field."))


@pytest.mark.parametrize(("reply", "body"), [
    ('```json\n{"verdict": "PASS"}\n```', '{"verdict": "PASS"}'),
    ('```{"a": 1}```', '{"a": 1}'),
    ('  {"a": 1}  ', '{"a": 1}'),
    ("```" + " " * 20_000 + "```", ""),           # a regex took minutes on a few thousand spaces
    ("```json" + " " * 20_000 + "x", "```json" + " " * 20_000 + "x"),
])
def test_a_fenced_reply_is_unwrapped_in_one_linear_pass(reply: str, body: str) -> None:
    assert strip_fence(reply) == body
