"""The real openai client over HTTP against the local server: retries, errors, accounting, Azure."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from argus.agent.errors import ArgusError
from argus.agent.llm.client import OpenAIChat, build_client
from argus.agent.llm.errors import LLMBudgetExhausted, LLMRejected, LLMTimeout, LLMUnavailable
from argus.agent.llm.options import LLMOptions
from argus.agent.llm.tools import action_from
from argus.agent.llm.usage import DEFAULT_PRICES, LLMAccount, ModelPrice, price_for
from argus.agent.state import TokenUsage
from tests.doubles.model_server import LocalChatServer, drip_reply, error_reply, raw_reply, tool_reply

MESSAGES = [{"role": "system", "content": "You audit."}, {"role": "user", "content": "Next step?"}]
CALL = tool_reply("run_query", {"filter": {"age": {"$gt": 130}}, "limit": 0, "reasoning": "impossible ages"})


def _chat(server: LocalChatServer, sleeps: list[float] | None = None, account: LLMAccount | None = None,
          **over: Any) -> OpenAIChat:
    options = LLMOptions(**{"model": "gpt-4o-mini", "base_url": server.base_url, "timeout_s": 2.0, "backoff_s": 0.5,
                            **over})
    return OpenAIChat(build_client(options), model=options.model, options=options, account=account or LLMAccount(),
                      sleep=(sleeps.append if sleeps is not None else lambda _s: None))


def test_a_tool_call_comes_back_as_an_action(chat_server: Any) -> None:
    server = chat_server([CALL])
    completion = _chat(server).complete(MESSAGES, tools=[{"type": "function", "function": {"name": "run_query"}}])
    action = action_from(completion)
    assert (action.action, action.action_input, action.reasoning) == \
        ("run_query", {"filter": {"age": {"$gt": 130}}, "limit": 0}, "impossible ages")
    [request] = server.requests
    assert request.path == "/v1/chat/completions" and request.body["model"] == "gpt-4o-mini"
    assert request.body["tools"][0]["function"]["name"] == "run_query" and request.body["messages"] == MESSAGES


def test_rate_limit_then_success_waits_as_retry_after_says(chat_server: Any) -> None:
    server = chat_server([error_reply(429, "slow down", headers={"retry-after": "2"}), CALL])
    sleeps: list[float] = []
    account = LLMAccount()
    action = action_from(_chat(server, sleeps, account).complete(MESSAGES))
    assert action.action == "run_query" and sleeps == [2.0] and len(server.requests) == 2
    [line] = account.report().usage
    assert (line.calls, line.failed_calls) == (1, 0)


def test_retry_after_ms_is_honoured(chat_server: Any) -> None:
    server = chat_server([error_reply(429, headers={"retry-after-ms": "250"}), CALL])
    sleeps: list[float] = []
    _chat(server, sleeps).complete(MESSAGES)
    assert sleeps == [0.25]


def test_a_retry_after_beyond_the_limit_gives_up_instead_of_waiting(chat_server: Any) -> None:
    server = chat_server([error_reply(429, headers={"retry-after": "3600"}), CALL])
    sleeps: list[float] = []
    with pytest.raises(LLMUnavailable, match="429"):
        _chat(server, sleeps).complete(MESSAGES)
    assert sleeps == [] and len(server.requests) == 1


def test_server_errors_back_off_exponentially_then_raise(chat_server: Any) -> None:
    server = chat_server([], default=error_reply(503, "overloaded"))
    sleeps: list[float] = []
    account = LLMAccount()
    with pytest.raises(LLMUnavailable, match="503"):
        _chat(server, sleeps, account, max_retries=3).complete(MESSAGES)
    assert sleeps == [0.5, 1.0, 2.0] and len(server.requests) == 4
    assert account.report().usage[0].failed_calls == 1


def test_a_timeout_is_not_retried_so_nothing_queues_behind_the_abandoned_call(chat_server: Any) -> None:
    server = chat_server([tool_reply("conclude", {}, delay_s=1.5), CALL])
    sleeps: list[float] = []
    account = LLMAccount()
    with pytest.raises(LLMTimeout, match="did not"):
        _chat(server, sleeps, account, timeout_s=0.3).complete(MESSAGES)
    assert sleeps == [] and len(server.requests) == 1
    [line] = account.report().usage
    assert line.timed_out_calls == 1 and line.input_tokens > 0  # the server spent the prompt: counted


@pytest.mark.parametrize("reply", [tool_reply("conclude", {}, delay_s=5.0), drip_reply(0.5)],
                         ids=["slow", "drips-a-byte-every-half-second"])  # a drip never lets a read time out
def test_no_call_waits_past_the_runs_deadline(chat_server: Any, reply: Any) -> None:
    server = chat_server([], default=reply)
    account = LLMAccount()
    deadline = time.monotonic() + 1.0
    account.bind_deadline(lambda: deadline - time.monotonic())
    started = time.monotonic()
    with pytest.raises(LLMTimeout):
        _chat(server, account=account, timeout_s=60.0).complete(MESSAGES)
    assert time.monotonic() - started < 1.5 and len(server.requests) == 1


def test_no_retry_sleeps_past_the_runs_deadline(chat_server: Any) -> None:
    server = chat_server([error_reply(429, headers={"retry-after": "5"}), CALL])
    account = LLMAccount()
    account.bind_deadline(lambda: 2.0)
    sleeps: list[float] = []
    with pytest.raises(LLMUnavailable, match="429"):
        _chat(server, sleeps, account).complete(MESSAGES)
    assert sleeps == [] and len(server.requests) == 1


def test_a_bad_key_is_not_retried_and_not_echoed(chat_server: Any) -> None:
    server = chat_server([error_reply(401, "Incorrect API key provided: sk-proj-abcdef1234567890")])
    sleeps: list[float] = []
    with pytest.raises(LLMRejected) as caught:
        _chat(server, sleeps).complete(MESSAGES)
    assert "401" in str(caught.value) and "abcdef1234567890" not in str(caught.value)
    assert sleeps == [] and len(server.requests) == 1


def test_usage_and_cost_are_accounted_per_purpose(chat_server: Any) -> None:
    usage = {"prompt_tokens": 1000, "completion_tokens": 200, "total_tokens": 1200,
             "prompt_tokens_details": {"cached_tokens": 400}}
    server = chat_server([tool_reply("conclude", {}, usage=usage)])
    account = LLMAccount()
    _chat(server, account=account).complete(MESSAGES)
    assert account.total == TokenUsage(input_tokens=1000, output_tokens=200, cached_tokens=400)
    # gpt-4o-mini: 600 fresh input at $0.15/M, 400 cached at $0.075/M, 200 output at $0.60/M
    assert account.cost_usd == pytest.approx((600 * 0.15 + 400 * 0.075 + 200 * 0.60) / 1e6)
    [line] = account.report().usage
    assert (line.purpose, line.model, line.calls, line.input_tokens) == ("planner", "gpt-4o-mini", 1, 1000)


def test_prices_match_dated_model_names_and_can_be_overridden() -> None:
    assert price_for("gpt-4o-mini-2024-07-18", DEFAULT_PRICES) == DEFAULT_PRICES["gpt-4o-mini"]
    assert price_for("llama3.1:8b", DEFAULT_PRICES) is None
    account = LLMAccount(prices={"llama3.1": ModelPrice(input=1.0, output=2.0)})
    account.record("planner", "llama3.1:8b", TokenUsage(input_tokens=1_000_000, output_tokens=500_000))
    account.record("judge", "mystery-model", TokenUsage(input_tokens=10))
    assert account.cost_usd == pytest.approx(2.0)
    assert account.report().unpriced_models == ["mystery-model"]
    assert any("mystery-model" in note for note in account.notes())


def test_a_call_past_the_token_budget_is_never_sent(chat_server: Any) -> None:
    server = chat_server([CALL])
    with pytest.raises(LLMBudgetExhausted, match="token budget of 500"):
        _chat(server, account=LLMAccount(token_budget=500)).complete(MESSAGES)
    assert server.requests == []


def test_a_call_past_the_cost_budget_is_never_sent(chat_server: Any) -> None:
    server = chat_server([CALL])
    account = LLMAccount(cost_budget_usd=0.01)
    account.record("planner", "gpt-4o", TokenUsage(input_tokens=4000))  # $0.01 spent
    with pytest.raises(LLMBudgetExhausted, match="cost budget"):
        _chat(server, account=account, model="gpt-4o").complete(MESSAGES)
    assert server.requests == []


def test_azure_style_configuration(chat_server: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ARGUS_TEST_AZURE_KEY", "azure-secret-1")
    server = chat_server([CALL])
    options = LLMOptions(provider="azure", model="gpt-4o", azure_endpoint=server.root,
                         azure_deployment="argus-gpt4o", api_version="2024-10-21", api_key_env="ARGUS_TEST_AZURE_KEY")
    chat = OpenAIChat(build_client(options), model="gpt-4o", options=options, account=LLMAccount())
    assert action_from(chat.complete(MESSAGES)).action == "run_query"
    [request] = server.requests
    assert request.path == "/openai/deployments/argus-gpt4o/chat/completions"
    assert request.query["api-version"] == ["2024-10-21"]
    assert request.headers["api-key"] == "azure-secret-1"
    assert "max_completion_tokens" in request.body  # hosted endpoints take the newer parameter name


def test_the_key_can_come_from_a_file(chat_server: Any, tmp_path: Path) -> None:
    (tmp_path / "key").write_text("file-secret-2\n")
    server = chat_server([CALL])
    _chat(server, api_key_file=tmp_path / "key").complete(MESSAGES)
    assert server.requests[0].headers["authorization"] == "Bearer file-secret-2"


def test_openai_without_a_key_says_which_variable_to_set(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(ArgusError, match="set OPENAI_API_KEY"):
        build_client(LLMOptions(model="gpt-4o-mini"))


def test_a_200_whose_body_is_not_json_is_an_outage_not_a_crash(chat_server: Any) -> None:
    server = chat_server([], default=raw_reply(b"<html>502 Bad Gateway</html>"))
    sleeps: list[float] = []
    with pytest.raises(LLMUnavailable, match="not a JSON chat completion"):
        _chat(server, sleeps, max_retries=2).complete(MESSAGES)
    assert len(server.requests) == 3 and len(sleeps) == 2

