"""The LLM planner against the answers of real self-hosted servers: llama.cpp (replayed from a recorded
session), and the text shapes Ollama and vLLM send when no tool parser runs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from argus.agent.llm.options import LLMOptions
from argus.agent.loop import run_audit
from argus.agent.planners.factory import make_planner
from argus.agent.report import AuditReport
from argus.agent.tools.target import AuditTarget
from tests.doubles.model_server import Reply, read_transcript, recorded_reply, text_reply, tool_reply

TRANSCRIPT = Path(__file__).parents[1] / "llm" / "transcripts" / "llamacpp-qwen2.5-0.5b.jsonl.gz"
DOCS = [{"age": i % 90, "email": f"user{i}@mail.org"} for i in range(100)] + [{"age": 999, "email": "n/a"}]
OUTLIERS = {"age": {"$gt": 130}}
FINDING = {"field": "age", "category": "outlier_value", "severity": "high", "description": "impossible ages",
           "evidence_query": OUTLIERS, "affected_count": 1, "affected_pct": round(1 / 101, 6)}
STEPS: list[tuple[str, dict[str, Any]]] = [("run_query", {"filter": OUTLIERS, "limit": 0}),
                                           ("write_finding", FINDING),
                                           ("run_query", {"filter": {"email": {"$exists": False}}, "limit": 0}),
                                           ("conclude", {"summary": "done"})]
REFUSAL = next(e for e in read_transcript(TRANSCRIPT)
               if e["status"] == 500 and "response_format" in str(e["response"]))


def _audit(target: AuditTarget, server: Any, **llm: Any) -> AuditReport:
    settings = LLMOptions(**{"model": "qwen0.5b", "base_url": server.base_url, "timeout_s": 5.0, "max_retries": 3,
                             **llm})
    setup = make_planner("llm", llm=settings, sleep=lambda _s: None)
    return run_audit(target, setup.planner, gates=setup.gates, llm=setup.account)


def _as_text(render: Any) -> list[Reply]:
    return [text_reply(render(name, arguments)) for name, arguments in STEPS]


def _found(report: AuditReport) -> list[tuple[str, str, int]]:
    return [(f.field, f.category.value, f.affected_count) for f in report.findings]


def test_a_refused_json_schema_steps_down_to_json_mode_at_once(make_target: Any, chat_server: Any) -> None:
    json_answers = _as_text(lambda n, a: json.dumps({"reasoning": "", "action": n, "action_input": a}))

    def llama_cpp(body: dict[str, Any]) -> Reply:
        if body.get("response_format", {}).get("type") == "json_schema":
            return recorded_reply(REFUSAL)
        return json_answers.pop(0)

    server = chat_server(llama_cpp)
    report = _audit(make_target(DOCS), server, structured_output="json_schema")
    assert report.outcome == "succeeded" and _found(report) == [("age", "outlier_value", 1)]
    shapes = [r.body.get("response_format", {}).get("type") for r in server.requests]
    assert shapes == ["json_schema", "json_object", "json_object", "json_object", "json_object"]  # no retries
    assert '"run_query":{' in server.requests[1].body["messages"][0]["content"]  # the schemas are in the prompt
    assert report.llm is not None and report.llm.fallback is None
    assert "the model endpoint does not support json_schema (body.response_format.type: Input should be 'text' or " \
           "'json_object'); switched to json_object" in report.notes


def test_a_server_refusing_every_format_gets_plain_text_with_the_schema(make_target: Any, chat_server: Any) -> None:
    answers = _as_text(lambda n, a: json.dumps({"name": n, "arguments": a}))

    def strict(body: dict[str, Any]) -> Reply:
        if "tools" in body or "response_format" in body:
            return recorded_reply(REFUSAL)
        return answers.pop(0)

    server = chat_server(strict)
    report = _audit(make_target(DOCS), server)
    assert report.outcome == "succeeded" and _found(report) == [("age", "outlier_value", 1)]
    assert report.llm is not None and report.llm.request_shape == "text" and len(report.llm.shape_notes) == 3


def test_llama_cpp_without_a_tool_parser_answers_in_the_content(make_target: Any, chat_server: Any) -> None:
    # the shape the recorded 0.5B model sent: {"name": ..., "arguments": {...}} as the message content
    server = chat_server(_as_text(lambda n, a: json.dumps({"name": n, "arguments": a})))
    report = _audit(make_target(DOCS), server)
    assert report.outcome == "succeeded" and _found(report) == [("age", "outlier_value", 1)]
    assert report.llm is not None and report.llm.invalid_answers == 0


def test_vllm_with_a_hermes_template_and_no_parser_sends_tool_call_tags(make_target: Any, chat_server: Any) -> None:
    server = chat_server(_as_text(lambda n, a: f"<tool_call>\n{json.dumps({'name': n, 'arguments': a})}\n</tool_call>"))
    report = _audit(make_target(DOCS), server)
    assert report.outcome == "succeeded" and _found(report) == [("age", "outlier_value", 1)]


def test_ollama_and_mistral_style_tool_call_lists_are_read(make_target: Any, chat_server: Any) -> None:
    server = chat_server(_as_text(lambda n, a: "[TOOL_CALLS] " + json.dumps([{"name": n, "arguments": a}])))
    report = _audit(make_target(DOCS), server)
    assert report.outcome == "succeeded" and _found(report) == [("age", "outlier_value", 1)]


def test_ollama_tool_calls_with_arguments_as_an_object_string(make_target: Any, chat_server: Any) -> None:
    # Ollama's OpenAI endpoint sends real tool_calls; arguments arrive as a JSON string
    server = chat_server([tool_reply(n, a) for n, a in STEPS])
    report = _audit(make_target(DOCS), server)
    assert report.outcome == "succeeded" and _found(report) == [("age", "outlier_value", 1)]


def test_functions_prefix_with_arguments_is_a_call(make_target: Any, chat_server: Any) -> None:
    server = chat_server(_as_text(lambda n, a: f"functions.{n}: {json.dumps(a)}"))
    report = _audit(make_target(DOCS), server)
    assert report.outcome == "succeeded" and _found(report) == [("age", "outlier_value", 1)]


def test_the_recorded_bare_functions_prefix_becomes_a_critique_with_the_raw_answer_in_the_trace(
        make_target: Any, chat_server: Any) -> None:
    bare = next(e for e in read_transcript(TRANSCRIPT) if e["status"] == 200
                and e["response"]["choices"][0]["message"].get("content") == "functions.run_query:")
    server = chat_server([recorded_reply(bare), *_as_text(lambda n, a: json.dumps({"name": n, "arguments": a}))])
    report = _audit(make_target(DOCS), server)
    assert report.outcome == "succeeded"
    retry = server.requests[1].body["messages"][1]["content"]
    assert "Your last answer was not a valid action: the call to run_query came without its arguments" in retry
    assert report.trace[1].failed_answers == ["functions.run_query:"] and report.trace[1].proposed_by == "model"
