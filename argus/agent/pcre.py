"""Whether PCRE2, the engine MongoDB runs ``$regex`` with, compiles a pattern: judged when a contract is
read and when a query is sent, so a pattern the server would refuse is named at its line, not left
unchecked in the audit.

Python's parser (what the guard and the cost check read) and the in-process engine's ``regex``
module accept patterns PCRE2 refuses: a lookbehind of unbounded or variable length (``(?<=a+)b``;
PCRE2 10.42, as MongoDB ships it, takes only branches of fixed lengths), ``\\U0001F600``, ``\\u00e9``,
``\\N{name}``, ``\\L`` and ``\\l`` escapes, and the inline flags ``(?a)``, ``(?L)``, ``(?u)``. The
system's ``libpcre2-8`` (on every Debian machine) is asked through ctypes when it can be loaded;
without it a fallback refuses exactly those known differences. Both compile in UTF mode, as MongoDB does.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import re
from functools import cache
from re import _constants as sre_constants  # type: ignore[attr-defined]
from re import _parser as sre_parse  # type: ignore[attr-defined]
from typing import Any

__all__ = ["library", "pcre2_problem"]

_UTF, _CASELESS, _MULTILINE, _DOTALL, _EXTENDED = 0x00080000, 0x00000008, 0x00000400, 0x00000020, 0x00000080


@cache
def library() -> Any:
    """The system's ``libpcre2-8`` with its compile functions declared, or None where it is missing."""
    name = ctypes.util.find_library("pcre2-8") or "libpcre2-8.so.0"
    try:
        lib = ctypes.CDLL(name)
    except OSError:
        return None
    lib.pcre2_compile_8.restype = ctypes.c_void_p
    lib.pcre2_compile_8.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_uint32, ctypes.POINTER(ctypes.c_int),
                                    ctypes.POINTER(ctypes.c_size_t), ctypes.c_void_p]
    lib.pcre2_code_free_8.argtypes = [ctypes.c_void_p]
    lib.pcre2_get_error_message_8.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_size_t]
    return lib


def _options(flags: int) -> int:
    options = _UTF
    for python, pcre in ((re.IGNORECASE, _CASELESS), (re.MULTILINE, _MULTILINE), (re.DOTALL, _DOTALL),
                         (re.VERBOSE, _EXTENDED)):
        if flags & python:
            options |= pcre
    return options


@cache
def pcre2_problem(pattern: str, flags: int = 0, *, native: bool = True) -> str | None:
    """Why PCRE2 refuses ``pattern`` with Python ``re`` ``flags`` (i, m, s, x), or None. ``native=False``
    judges with the fallback even where the library is installed (tests compare the two)."""
    try:
        raw = pattern.encode("utf-8")
    except UnicodeEncodeError:
        return "the pattern is not valid UTF-8 (an unpaired surrogate)"
    if _OPEN_REPEAT.search(pattern):
        return ("'{,n}' is a repeat to Python but the text '{,n}' to PCRE2 (MongoDB): write {0,n} for the repeat, "
                "\\{,n} for the text")
    lib = library() if native else None
    if lib is None:
        return _fallback(pattern, flags)
    error, offset = ctypes.c_int(), ctypes.c_size_t()
    code = lib.pcre2_compile_8(raw, len(raw), _options(flags), ctypes.byref(error), ctypes.byref(offset), None)
    if code:
        lib.pcre2_code_free_8(code)
        return None
    buffer = ctypes.create_string_buffer(256)
    lib.pcre2_get_error_message_8(error.value, buffer, len(buffer))
    return f"{_REFUSED}: {buffer.value.decode('utf-8', 'replace')}"


_REFUSED = "the server's engine (PCRE2) refuses it"
_OPEN_REPEAT = re.compile(r"(?<!\\)\{,\d+\}")
_UNSUPPORTED_ESCAPE = re.compile(r"\\(?:\\|(?P<letter>[ULlu]|N\{))")
_PYTHON_FLAGS = re.compile(r"\(\?[imsx]*[aLu]")


def _fallback(pattern: str, flags: int) -> str | None:
    for match in _UNSUPPORTED_ESCAPE.finditer(pattern):
        if match.group("letter"):
            return f"{_REFUSED}: PCRE2 does not support \\F, \\L, \\l, \\N{{name}}, \\U, or \\u"
    flag = _PYTHON_FLAGS.search(pattern)
    if flag:
        return f"{_REFUSED}: unrecognized character after (? or (?-"
    try:
        tree = sre_parse.parse(pattern, flags)
    except (re.error, OverflowError, RecursionError, ValueError):
        return None  # Python's own refusal is reported by the caller
    if _unbounded_lookbehind(tree):
        return f"{_REFUSED}: lookbehind assertion is not fixed length"
    return None


def _unbounded_lookbehind(tree: Any) -> bool:
    """Whether a lookbehind has a branch of variable length (PCRE2 10.42 allows branches of different
    fixed lengths, each one fixed)."""
    stack = [tree]
    while stack:
        node = stack.pop()
        for op, arg in getattr(node, "data", ()):
            if op in (sre_constants.ASSERT, sre_constants.ASSERT_NOT):
                direction, body = arg
                if direction < 0:
                    branches = body.data[0][1][1] if len(body.data) == 1 and body.data[0][0] == sre_constants.BRANCH \
                        else [body]
                    for branch in branches:
                        low, high = branch.getwidth()
                        if low != high:
                            return True
                stack.append(body)
            elif op == sre_constants.BRANCH:
                stack.extend(arg[1])
            elif op in (sre_constants.MAX_REPEAT, sre_constants.MIN_REPEAT, sre_constants.POSSESSIVE_REPEAT):
                stack.append(arg[2])
            elif op == sre_constants.SUBPATTERN:
                stack.append(arg[-1])
            elif op == sre_constants.ATOMIC_GROUP:
                stack.append(arg)
            elif op == sre_constants.GROUPREF_EXISTS:
                stack.extend(part for part in arg[1:] if part is not None)
    return False
