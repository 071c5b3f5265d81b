"""Text Argus can write anywhere: an unpaired surrogate (``"\\ud800"``, which JSON's escapes can carry
but UTF-8 cannot encode) becomes U+FFFD, the replacement character.

A model's answer is text from outside: a lone surrogate in any string it supplies (a tool's argument,
its reasoning, a tool name, an error message of its endpoint) once reached the report and ended
``--format json`` with an internal error. ``clean`` is applied where a model's answer becomes an
action, a verdict or an error, so every later reader (report, store, logs, alerts) gets valid text.
"""

from __future__ import annotations

import re
from typing import TypeVar

__all__ = ["REPLACEMENT", "clean", "printable"]

REPLACEMENT = "\ufffd"
_SURROGATE = re.compile("[\ud800-\udfff]")
# Control characters (NUL, which PostgreSQL cannot keep; escapes a terminal obeys; line breaks), bidi
# overrides and lone surrogates, which UTF-8 cannot encode.
_UNPRINTABLE = re.compile("[\x00-\x1f\x7f-\x9f\u200e\u200f\u2028-\u202e\u2066-\u2069\ud800-\udfff]")
T = TypeVar("T")


def clean(value: T) -> T:
    """``value`` with every unpaired surrogate of every string in it (dict keys included) replaced;
    other values unchanged. Containers are rebuilt only when something changed."""
    if isinstance(value, str):
        return _SURROGATE.sub(REPLACEMENT, value) if _SURROGATE.search(value) else value  # type: ignore[return-value]
    if isinstance(value, dict):
        return {clean(k): clean(v) for k, v in value.items()}  # type: ignore[return-value]
    if isinstance(value, list):
        return [clean(v) for v in value]  # type: ignore[return-value]
    if isinstance(value, tuple):
        return tuple(clean(v) for v in value)  # type: ignore[return-value]
    return value


def printable(text: str) -> str:
    """``text`` with each character of ``_UNPRINTABLE`` written as its ``\\uXXXX`` escape: a value
    shown as a name (a segment, a metric's group) reads the same in a report, a terminal and the
    history database, which keeps a NUL as U+FFFD."""
    return _UNPRINTABLE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
