"""Offline token estimates: deterministic, no tokenizer download, and on the high side.

BPE tokenizers give common English about four letters per token, split digit runs into groups
of up to three and mostly spend a token per punctuation mark. The estimate counts a token per
three letters, per three digits and per symbol, which overestimates prose and is close for the
JSON-and-statistics text prompts are made of; budgets computed with it hold with real tokenizers.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable
from typing import Any

__all__ = ["MESSAGE_OVERHEAD", "estimate_messages", "estimate_tokens"]

MESSAGE_OVERHEAD = 4  # role and separators of one chat message
_PIECES = re.compile(r"[^\W\d_]+|\d+|\n|[ \t]+|.", re.UNICODE | re.DOTALL)


def estimate_tokens(text: str) -> int:
    total = 0
    for piece in _PIECES.findall(text):
        first = piece[0]
        if first == " " or first == "\t":
            total += 0 if len(piece) == 1 else 1
        elif first.isalpha() or first.isdigit():
            total += math.ceil(len(piece) / 3)
        else:
            total += 1
    return total


def estimate_messages(messages: Iterable[dict[str, Any]], tools: list[dict[str, Any]] | None = None,
                      response_format: dict[str, Any] | None = None) -> int:
    """Estimated prompt tokens of a chat request: messages, tool schemas and response format."""
    total = 3
    for message in messages:
        total += MESSAGE_OVERHEAD + estimate_tokens(str(message.get("content") or ""))
        if message.get("tool_calls"):
            total += estimate_tokens(json.dumps(message["tool_calls"], separators=(",", ":")))
    if tools:
        total += estimate_tokens(json.dumps(tools, separators=(",", ":")))
    if response_format:
        total += estimate_tokens(json.dumps(response_format, separators=(",", ":")))
    return total
