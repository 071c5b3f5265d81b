"""Errors at the language-model boundary; openai's exceptions are translated here and nowhere else.

Hierarchy::

    ArgusError
    ├── LLMError                  a call to the language model failed
    │   ├── LLMUnavailable        transient (connection, 429, 5xx, a 200 that is not JSON): retried with
    │   │   │                     backoff, raised once the retries are spent
    │   │   └── LLMTimeout        no answer in time: never retried (a self-hosted server is likely still
    │   │                         computing it, and a retry would queue behind it)
    │   └── LLMRejected           permanent (bad key, no such model, bad request, nothing listening at the
    │       │                     base URL): retrying cannot help
    │       └── LLMUnsupported    the server does not support this request shape (tools, a response format)
    └── BudgetExhausted
        └── LLMBudgetExhausted    the run's token or USD budget would be exceeded by the next call

Messages name the status and the provider's short reason, never the API key (anything that
looks like one is masked) and never the prompt.
"""

from __future__ import annotations

import email.utils
import math
import re
import time
from typing import TYPE_CHECKING

from argus.agent.errors import ArgusError, BudgetExhausted
from argus.agent.text import clean

if TYPE_CHECKING:
    import openai

__all__ = ["LLMBudgetExhausted", "LLMError", "LLMRejected", "LLMTimeout", "LLMUnavailable", "LLMUnsupported",
           "retry_after", "translate"]

_KEYISH = re.compile(r"\b(sk-[A-Za-z0-9_*-]{4,}|[A-Fa-f0-9]{32,}|[A-Za-z0-9_-]{40,})\b")
_MESSAGE_CHARS = 240


class LLMError(ArgusError):
    """A language-model call failed; ``status`` is the HTTP status when there was one."""

    retryable = False

    def __init__(self, message: str, *, status: int | None = None, retry_after_s: float | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.retry_after_s = retry_after_s


class LLMUnavailable(LLMError):
    """Transient: the endpoint is down, slow or rate limiting; worth retrying later."""

    retryable = True


class LLMTimeout(LLMUnavailable):
    """No answer within the call's time (its timeout, or what is left of the run's budget)."""

    retryable = False


class LLMRejected(LLMError):
    """Permanent for this configuration: authentication, permissions, model name, request shape."""


class LLMUnsupported(LLMRejected):
    """The server refused the request's shape (tool calling or a response format): a simpler shape may work."""


class LLMBudgetExhausted(BudgetExhausted):
    """The next call would take the run past its token or USD budget."""


_TRACEBACK = re.compile(r'\s+(File "|Traceback \(most recent call last\))')
_PYDANTIC_MSG = re.compile(r"""'msg': (['"])(.*?)\1""")
# A server that does not support a request shape says so in a validation message naming the parameter.
_SHAPE_WORDS = ("response_format", "json_schema", "json_object", "tool_choice", "tools", "tool call", "function call",
                "grammar")
_NOTHING_THERE = ("connection refused", "name or service not known", "nodename nor servname",
                  "temporary failure in name resolution", "no address associated", "network is unreachable")
_REFUSAL_WORDS = ("validation", "not supported", "unsupported", "does not support", "invalid", "input should be",
                  "unknown", "not allowed", "expected")


def _clean(text: str) -> str:
    text = _TRACEBACK.split(clean(str(text)), maxsplit=1)[0]  # a server's stack trace is noise in a note
    short = _PYDANTIC_MSG.search(text)
    if short is not None and "validation error" in text:
        loc = re.search(r"'loc': \(([^)]*)\)", text)
        where = ".".join(p.strip(" '") for p in loc.group(1).split(",") if p.strip(" '")) if loc else ""
        text = f"{where}: {short.group(2)}" if where else short.group(2)
    text = _KEYISH.sub("***", " ".join(text.split()))
    return text if len(text) <= _MESSAGE_CHARS else text[:_MESSAGE_CHARS] + "…"


def retry_after(headers: object) -> float | None:
    """Seconds to wait from ``retry-after-ms`` or ``retry-after`` (seconds or an HTTP date)."""
    get = getattr(headers, "get", None)
    if get is None:
        return None
    for header, divisor in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        raw = get(header)
        if raw is None:
            continue
        try:
            value = float(raw) / divisor
        except ValueError:
            parsed = email.utils.parsedate_to_datetime(raw) if header == "retry-after" else None
            if parsed is None:
                continue
            value = parsed.timestamp() - time.time()
        if math.isfinite(value):
            return max(value, 0.0)
    return None


def _refuses_shape(status: int, message: str) -> bool:
    text = message.lower()
    return status in (400, 422, 500, 501) and any(w in text for w in _SHAPE_WORDS) and \
        any(w in text for w in _REFUSAL_WORDS)


def translate(exc: openai.OpenAIError) -> LLMError:
    """The Argus error for an openai exception (use with ``raise ... from exc``)."""
    import openai  # here, not at the top: the openai package takes a second to import, and a file audit
    # with the heuristic planner (most runs) never needs it

    if isinstance(exc, openai.APITimeoutError):
        return LLMTimeout("the model endpoint did not answer within the timeout")
    if isinstance(exc, openai.APIConnectionError):
        reason = _clean(str(exc.__cause__ or exc))
        if any(words in reason.lower() for words in _NOTHING_THERE):
            # nothing listens there, or the name does not resolve: waiting and asking again cannot help
            return LLMRejected(f"cannot reach the model endpoint: {reason}; nothing answers at the base URL (check "
                               f"base_url, and that the server runs)")
        return LLMUnavailable(f"cannot reach the model endpoint: {reason}")
    if isinstance(exc, openai.APIStatusError):
        status = exc.status_code
        reason = _clean(getattr(exc, "message", "") or str(exc))
        wait = retry_after(exc.response.headers)
        raw = str(getattr(exc, "message", "") or exc)
        if _refuses_shape(status, raw):
            return LLMUnsupported(f"the model endpoint does not support this request ({status}): {reason}",
                                  status=status)
        if status == 429 or status == 408 or status == 409 or status >= 500:
            return LLMUnavailable(f"the model endpoint answered {status}: {reason}", status=status,
                                  retry_after_s=wait)
        if status in (401, 403):
            return LLMRejected(f"the model endpoint refused the credentials ({status}): {reason}; check the API key "
                               f"setting (api_key_env / api_key_file)", status=status)
        if status == 404:
            return LLMRejected(f"the model endpoint has no such model or path (404): {reason}; check model, "
                               f"base_url or the Azure deployment", status=status)
        return LLMRejected(f"the model endpoint rejected the request ({status}): {reason}", status=status)
    return LLMRejected(f"the openai client failed: {type(exc).__name__}: {_clean(str(exc))}")
