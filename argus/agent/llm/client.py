"""The chat seam and its one real implementation: the ``openai`` client against any compatible endpoint.

``build_client`` makes an ``OpenAI`` client (OpenAI itself, or vLLM / Ollama / LiteLLM by
``base_url``) or an ``AzureOpenAI`` client from ``LLMOptions``. ``OpenAIChat`` sends one chat
request with its own retry loop (the client's is switched off so the policy is ours and testable):
429, 5xx and bodies that are not JSON are retried with exponential backoff, honouring
``Retry-After``; every answer's usage goes to the run's ``LLMAccount``; openai exceptions leave as
``LLMError``.

Every call is bounded by what is left of the run's wall-clock budget (``LLMAccount.time_left``)
as a total deadline, not a per-read timeout: a server that never answers, or sends one byte every
few seconds, is abandoned when the time is up (the request runs in a daemon thread the run stops
waiting for). A timed-out call is not retried: a single-slot self-hosted server is most likely
still computing it, and a retry would only queue behind it. No retry waits past the deadline.
"""

from __future__ import annotations

import functools
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

import openai
import structlog

from argus.agent.errors import ArgusError
from argus.agent.llm.errors import LLMError, LLMRejected, LLMTimeout, LLMUnavailable, LLMUnsupported, translate
from argus.agent.llm.options import LLMOptions
from argus.agent.llm.tokens import estimate_messages
from argus.agent.llm.usage import LLMAccount, Purpose
from argus.agent.state import TokenUsage

__all__ = ["ChatModel", "Completion", "OpenAIChat", "ToolCall", "build_client", "refuses_tools"]

log = structlog.get_logger("argus.llm")

_LOCAL_KEY = "not-needed"  # self-hosted servers ignore the key, the client insists on one


@dataclass(frozen=True)
class ToolCall:
    name: str
    arguments: str


@dataclass(frozen=True)
class Completion:
    content: str | None
    tool_calls: list[ToolCall] = field(default_factory=list)
    usage: TokenUsage = field(default_factory=TokenUsage)
    finish_reason: str | None = None


class ChatModel(Protocol):
    model: str

    def complete(self, messages: list[dict[str, Any]], *, tools: list[dict[str, Any]] | None = None,
                 response_format: dict[str, Any] | None = None) -> Completion:
        """One chat completion; raises ``LLMError`` (or ``LLMBudgetExhausted`` before sending)."""
        ...


def build_client(options: LLMOptions, *, http_client: Any | None = None) -> openai.OpenAI:
    """An ``OpenAI`` or ``AzureOpenAI`` client for ``options``, without client-side retries."""
    key = options.api_key()
    secret = key.get_secret_value() if key is not None else None
    extra: dict[str, Any] = {"http_client": http_client} if http_client is not None else {}
    try:
        if options.provider == "azure":
            if secret is None:
                raise ArgusError(f"Azure OpenAI needs an API key: set {options.key_env} or api_key_file")
            if options.base_url:
                return openai.AzureOpenAI(base_url=options.base_url, api_version=options.api_version,
                                          api_key=secret, timeout=options.call_timeout_s, max_retries=0, **extra)
            if not options.azure_endpoint:
                raise ArgusError("provider azure needs azure_endpoint (https://NAME.openai.azure.com) or base_url")
            return openai.AzureOpenAI(azure_endpoint=options.azure_endpoint,
                                      azure_deployment=options.azure_deployment,
                                      api_version=options.api_version, api_key=secret,
                                      timeout=options.call_timeout_s, max_retries=0, **extra)
        if secret is None and options.base_url is None:
            raise ArgusError(f"OpenAI needs an API key: set {options.key_env} or api_key_file, or point base_url "
                             f"at a self-hosted server")
        return openai.OpenAI(api_key=secret or _LOCAL_KEY, base_url=options.base_url, timeout=options.call_timeout_s,
                             max_retries=0, **extra)
    except openai.OpenAIError as exc:
        raise translate(exc) from exc


def _within(call: Callable[[], Any], seconds: float) -> Any:
    """``call()``, or ``LLMTimeout`` after ``seconds`` whatever the socket does (the call is abandoned)."""
    outcome: dict[str, Any] = {}

    def run() -> None:
        try:
            outcome["value"] = call()
        except BaseException as exc:  # handed back to the caller's thread
            outcome["error"] = exc

    worker = threading.Thread(target=run, name="llm-call", daemon=True)
    worker.start()
    worker.join(max(seconds, 0.0))
    if worker.is_alive():
        raise LLMTimeout(f"the model endpoint did not finish answering within {seconds:.1f}s")
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


def _usage(raw: Any) -> TokenUsage:
    if raw is None:
        return TokenUsage()
    details = getattr(raw, "prompt_tokens_details", None)
    cached = getattr(details, "cached_tokens", None) if details is not None else None
    return TokenUsage(input_tokens=int(getattr(raw, "prompt_tokens", 0) or 0),
                      output_tokens=int(getattr(raw, "completion_tokens", 0) or 0),
                      cached_tokens=int(cached or 0))


class OpenAIChat:
    """One model for one purpose, accounted to one run."""

    def __init__(self, client: openai.OpenAI, *, model: str, options: LLMOptions, account: LLMAccount,
                 purpose: Purpose = "planner", sleep: Callable[[float], None] = time.sleep) -> None:
        self.client = client
        self.model = model
        self.options = options
        self.account = account
        self.purpose = purpose
        self._sleep = sleep

    def complete(self, messages: list[dict[str, Any]], *, tools: list[dict[str, Any]] | None = None,
                 response_format: dict[str, Any] | None = None) -> Completion:
        estimate = estimate_messages(messages, tools, response_format)
        self.account.reserve(self.model, prompt_tokens=estimate, max_output_tokens=self.options.max_output_tokens)
        hosted = self.options.base_url is None  # OpenAI and Azure take the newer parameter names
        request: dict[str, Any] = {"model": self.model, "messages": messages,
                                   "max_completion_tokens" if hosted else "max_tokens": self.options.max_output_tokens}
        if self.options.temperature is not None:
            request["temperature"] = self.options.temperature
        if tools:
            request["tools"] = tools
            request["tool_choice"] = "required" if hosted else "auto"
        if response_format is not None:
            request["response_format"] = response_format
        attempt = 0
        while True:
            left = self.account.time_left()
            if left is not None and left <= 0:
                self.account.deadline_reached = True
                raise LLMTimeout("the run's time budget ran out before the model call")
            timeout = self.options.call_timeout_s if left is None else min(self.options.call_timeout_s, left)
            bounded_by_run = left is not None and left < self.options.call_timeout_s
            started = time.perf_counter()
            try:
                raw = _within(functools.partial(self.client.chat.completions.create, **request, timeout=timeout),
                              timeout)
                if not hasattr(raw, "choices"):  # a body that is not JSON arrives as text
                    raise ValueError("the answer is not a chat completion")
            except (openai.OpenAIError, LLMTimeout, ValueError, RecursionError) as exc:
                error = _error(exc)
                if isinstance(error, LLMTimeout):
                    # The server spent tokens on the prompt even if we never see the answer.
                    self.account.record_timeout(self.purpose, self.model, estimate)
                    if bounded_by_run:  # the run's time is up (less its wrap-up): the run ends partial
                        self.account.deadline_reached = True
                wait = self._wait(error, attempt)
                log.warning("llm_call_failed", purpose=self.purpose, model=self.model, status=error.status,
                            error=type(error).__name__, attempt=attempt + 1,
                            seconds=round(time.perf_counter() - started, 3),
                            retry_in_s=None if wait is None else round(wait, 3))
                if wait is None:
                    self.account.record_failure(self.purpose, self.model)
                    raise error from exc
                self._sleep(wait)
                attempt += 1
                continue
            return self._completion(raw, estimate, time.perf_counter() - started)

    def _wait(self, error: LLMError, attempt: int) -> float | None:
        """Seconds before the next attempt, or None to give up (also when the wait would pass the deadline)."""
        if not error.retryable or attempt >= self.options.max_retries:
            return None
        if error.retry_after_s is not None:
            if error.retry_after_s > self.options.max_retry_after_s:
                return None
            wait = error.retry_after_s
        else:
            wait = float(min(self.options.max_backoff_s, self.options.backoff_s * 2 ** attempt))
        left = self.account.time_left()
        return None if left is not None and wait >= left else wait

    def _completion(self, raw: Any, estimate: int, seconds: float) -> Completion:
        usage = _usage(getattr(raw, "usage", None))
        if usage.input_tokens == 0 and usage.output_tokens == 0:
            usage = TokenUsage(input_tokens=estimate)  # servers that report nothing still cost something
        self.account.record(self.purpose, self.model, usage, estimate=estimate)
        choices = getattr(raw, "choices", None) or []
        if not choices:
            raise LLMUnavailable("the model endpoint answered without a choice")
        choice = choices[0]
        message = choice.message
        calls = [ToolCall(name=c.function.name, arguments=c.function.arguments or "")
                 for c in (message.tool_calls or []) if getattr(c, "function", None) is not None]
        log.info("llm_call", purpose=self.purpose, model=self.model, input_tokens=usage.input_tokens,
                 output_tokens=usage.output_tokens, cached_tokens=usage.cached_tokens,
                 estimated_prompt_tokens=estimate, seconds=round(seconds, 3), tool_calls=len(calls),
                 finish_reason=choice.finish_reason)
        return Completion(content=message.content, tool_calls=calls, usage=usage, finish_reason=choice.finish_reason)


def _error(exc: Exception) -> LLMError:
    if isinstance(exc, LLMError):
        return exc
    if isinstance(exc, openai.APIResponseValidationError | ValueError | RecursionError):
        # A proxy's error page, a truncated body under status 200, or JSON nested past what the parser
        # recurses into: transient, like a 502.
        return LLMUnavailable("the model endpoint answered with a body that is not a JSON chat completion")
    assert isinstance(exc, openai.OpenAIError)
    return translate(exc)


def refuses_tools(error: LLMError) -> bool:
    """A server that does not do tool calling says so with a 400 that mentions tools."""
    return isinstance(error, LLMUnsupported) or (
        isinstance(error, LLMRejected) and error.status in (400, 422) and "tool" in str(error).lower())

