"""A real llama.cpp session (llama-cpp-python 0.3.36, Qwen2.5-Coder-0.5B on CPU), replayed exchange by
exchange through the local server and the real openai client: what Argus makes of each recorded answer."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from argus.agent.llm.client import OpenAIChat, build_client
from argus.agent.llm.errors import LLMError, LLMRejected, LLMUnavailable, LLMUnsupported
from argus.agent.llm.options import LLMOptions
from argus.agent.llm.tools import InvalidAnswer, action_from
from argus.agent.llm.usage import LLMAccount
from tests.doubles.model_server import LocalChatServer, read_transcript, recorded_reply

TRANSCRIPT = Path(__file__).parent / "transcripts" / "llamacpp-qwen2.5-0.5b.jsonl.gz"
EXCHANGES = read_transcript(TRANSCRIPT)


def _replay(chat_server: Any, exchange: dict[str, Any], account: LLMAccount | None = None,
            **over: Any) -> tuple[Any, LocalChatServer]:
    """Send the recorded request; the server answers what llama.cpp answered. Returns the completion or
    the error, and the server (to count requests)."""
    server = chat_server([recorded_reply(exchange)], default=recorded_reply(exchange))
    options = LLMOptions(**{"model": "qwen0.5b", "base_url": server.base_url, "backoff_s": 0.0, "timeout_s": 10.0,
                            **over})
    request = exchange["request"]
    chat = OpenAIChat(build_client(options), model=options.model, options=options, account=account or LLMAccount(),
                      sleep=lambda _s: None)
    try:
        return chat.complete(request["messages"], tools=request.get("tools"),
                             response_format=request.get("response_format")), server
    except LLMError as exc:
        return exc, server


def _answered(kind: str) -> list[dict[str, Any]]:
    out = []
    for e in EXCHANGES:
        if e["status"] != 200:
            continue
        message = e["response"]["choices"][0]["message"]
        calls = bool(message.get("tool_calls"))
        if (kind == "tool_calls" and calls) or (kind == "text" and not calls and message.get("content")):
            out.append(e)
    return out


def test_the_transcript_holds_every_kind_of_answer_the_tests_below_replay() -> None:
    statuses = {e["status"] for e in EXCHANGES}
    assert {200, 400, 500, 599} <= statuses and _answered("tool_calls") and _answered("text")


@pytest.mark.parametrize("exchange", [e for e in _answered("text") if e["request"].get("tools")],
                         ids=lambda e: f"seq{e['seq']}")
def test_text_answers_to_a_tool_request_are_read_as_tool_calls_or_told_what_is_missing(
        chat_server: Any, exchange: dict[str, Any]) -> None:
    completion, _ = _replay(chat_server, exchange)
    content = completion.content.strip()
    tools = [t["function"]["name"] for t in exchange["request"]["tools"]]
    try:
        action = action_from(completion)
    except InvalidAnswer as exc:
        problem = str(exc)
        if content.removeprefix("functions.").rstrip(":") in tools:
            # "functions.run_query:" and nothing else: the model stopped before its arguments
            assert "came without its arguments" in problem
        elif content.startswith("{") and '"name"' in content:
            assert "there is no tool" in problem  # a call of the toy session's get_weather: parsed, not ours
        else:
            assert "neither a tool call nor a JSON object" in problem, content
        return
    assert action.action in tools and action.action_input, content


def test_the_0_5b_models_json_call_in_content_becomes_a_run_query(chat_server: Any) -> None:
    [exchange] = [e for e in _answered("text")
                  if e["response"]["choices"][0]["message"]["content"].startswith('{"name": "run_query"')]
    completion, _ = _replay(chat_server, exchange)
    action = action_from(completion)
    assert action.action == "run_query" and action.action_input["filter"] == {"$sample": 1000}


def test_the_name_then_arguments_answer_becomes_a_run_query(chat_server: Any) -> None:
    [exchange] = [e for e in _answered("text")
                  if e["response"]["choices"][0]["message"]["content"].startswith("run_query {")]
    action = action_from(_replay(chat_server, exchange)[0])
    assert action.action == "run_query" and action.action_input["limit"] == 50


@pytest.mark.parametrize("exchange", _answered("tool_calls"), ids=lambda e: f"seq{e['seq']}")
def test_recorded_tool_calls_parse(chat_server: Any, exchange: dict[str, Any]) -> None:
    completion, _ = _replay(chat_server, exchange)
    try:
        action = action_from(completion)
    except InvalidAnswer as exc:  # the toy session's get_weather is not an Argus tool
        assert "there is no tool 'get_weather'" in str(exc)
        return
    assert action.action == "run_query"


def test_the_json_schema_refusal_is_one_request_and_a_short_clean_message(chat_server: Any) -> None:
    refusals = [e for e in EXCHANGES if e["status"] == 500 and "response_format" in str(e["response"])]
    assert len(refusals) > 1
    error, server = _replay(chat_server, refusals[0], max_retries=3)
    assert isinstance(error, LLMUnsupported) and len(server.requests) == 1  # not retried as transient
    assert str(error) == ("the model endpoint does not support this request (500): body.response_format.type: "
                          "Input should be 'text' or 'json_object'")


def test_an_empty_500_stays_transient(chat_server: Any) -> None:
    [first] = [e for e in EXCHANGES if e["status"] == 500 and e["response"]["error"]["message"] == ""][:1]
    error, server = _replay(chat_server, first, max_retries=2)
    assert isinstance(error, LLMUnavailable) and not isinstance(error, LLMUnsupported)
    assert len(server.requests) == 3


def test_a_dropped_connection_is_transient(chat_server: Any) -> None:
    dropped = next(e for e in EXCHANGES if e["status"] == 599)
    error, server = _replay(chat_server, dropped, max_retries=1)
    assert isinstance(error, LLMUnavailable) and "cannot reach the model endpoint" in str(error)
    assert len(server.requests) == 2


def test_the_context_overflow_is_rejected_without_retries(chat_server: Any) -> None:
    overflow = next(e for e in EXCHANGES if e["status"] == 400)
    error, server = _replay(chat_server, overflow, max_retries=3)
    assert isinstance(error, LLMRejected) and not isinstance(error, LLMUnsupported)
    assert "maximum context length is 16384 tokens" in str(error) and len(server.requests) == 1


def test_the_servers_usage_is_recorded_beside_the_estimate(chat_server: Any) -> None:
    argus = [e for e in _answered("tool_calls") if "Argus" in e["request"]["messages"][0]["content"]]
    account = LLMAccount()
    for exchange in argus[:5]:
        _replay(chat_server, exchange, account)
    [line] = account.report().usage
    assert line.input_tokens == sum(e["response"]["usage"]["prompt_tokens"] for e in argus[:5])
    assert line.estimated_input_tokens > 0 and line.estimated_input_tokens != line.input_tokens


def test_the_calibrated_estimate_is_never_below_the_servers_count_and_at_most_a_fifth_above() -> None:
    from argus.agent.llm.tokens import estimate_messages

    ratios = []
    for e in _answered("tool_calls") + _answered("text"):
        request = e["request"]
        if "Argus" not in request["messages"][0]["content"]:
            continue
        estimate = estimate_messages(request["messages"], request.get("tools"), request.get("response_format"))
        ratios.append(estimate / e["response"]["usage"]["prompt_tokens"])
    print(f"estimate / server count over {len(ratios)} prompts: {min(ratios):.2f}-{max(ratios):.2f}, "
          f"mean {sum(ratios) / len(ratios):.2f}")
    assert len(ratios) > 50 and min(ratios) >= 1.0 and max(ratios) <= 1.25
