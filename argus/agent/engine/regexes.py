"""MongoDB regular expressions (``$regex``, ``$regexMatch``) read as the server's PCRE2 reads them.

``compile_regex`` refuses what PCRE2 refuses, translates the rest for the ``regex`` module, and
bounds every search by the read's deadline; the filter language and the expressions share it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import regex as regex_module
from bson import Regex
from pymongo.errors import OperationFailure

from argus.agent.engine.deadline import Deadline
from argus.agent.engine.errors import bad_value
from argus.agent.engine.pcre import translate
from argus.agent.pcre import pcre2_problem

__all__ = ["compile_regex"]

_REGEX_FLAGS = {"i": regex_module.IGNORECASE, "m": regex_module.MULTILINE, "s": regex_module.DOTALL,
                "x": regex_module.VERBOSE, "u": 0}
_PY_FLAGS = ((re.IGNORECASE, regex_module.IGNORECASE), (re.MULTILINE, regex_module.MULTILINE),
             (re.DOTALL, regex_module.DOTALL), (re.VERBOSE, regex_module.VERBOSE))
_REGEX_MEMO = 65_536  # strings remembered per regex and read; the timeout costs ~10 µs a call, a lookup far less


def _python_flags(flags: int) -> int:
    return sum(py_flag for py_flag, flag in _PY_FLAGS if flags & flag)


def compile_regex(pattern: Any, options: Any, deadline: Deadline) -> Callable[[str], bool]:
    """``search`` of a MongoDB regular expression on one string, bounded by the read's deadline."""
    flags = 0
    if isinstance(pattern, Regex | re.Pattern):
        raw_flags = pattern.flags if isinstance(pattern.flags, int) else 0
        for py_flag, flag in _PY_FLAGS:
            if raw_flags & py_flag:
                flags |= flag
        if isinstance(pattern, Regex) and isinstance(pattern.flags, str):
            options = f"{pattern.flags}{options or ''}"
        pattern = pattern.pattern
    if isinstance(pattern, bytes):
        pattern = pattern.decode("utf-8", "replace")
    if not isinstance(pattern, str):
        raise bad_value("$regex has to be a string")
    if not isinstance(options, str):
        raise bad_value("$options has to be a string")
    for letter in options:
        if letter not in _REGEX_FLAGS:
            raise bad_value(f"invalid flag in regex options: {letter}")
        flags |= _REGEX_FLAGS[letter]
    refused = pcre2_problem(pattern, _python_flags(flags))
    if refused:  # the server compiles with PCRE2: what it refuses, the engine refuses as it does
        raise OperationFailure(f"Regular expression is invalid: {refused}", 51091)
    try:
        compiled = regex_module.compile(translate(pattern), flags)
    except (regex_module.error, ValueError, OverflowError) as exc:
        raise OperationFailure(f"Regular expression is invalid: {exc}", 51091) from None
    search = compiled.search
    seen: dict[str, bool] = {}  # a field's values repeat (statuses, devices): each is matched once per read

    def run(text: str) -> bool:
        known = seen.get(text)
        if known is not None:
            return known
        while True:
            try:
                found = search(text, timeout=deadline.regex_timeout_s()) is not None
                break
            except TimeoutError:
                # The CPU seconds given were spent before the wall-clock limit (the read's share of a
                # core was underestimated): search again in the time left; only the limit ends a read.
                if deadline.passed():
                    raise deadline.expired() from None
        if len(seen) < _REGEX_MEMO:
            seen[text] = found
        return found
    return run
