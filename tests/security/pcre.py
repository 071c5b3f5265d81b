"""PCRE2, the engine family MongoDB runs ``$regex`` with, called through ctypes from the system library
(``libpcre2-8``, on every Debian machine). Its match limit caps the engine's backtracking steps, so
"this pattern backtracks on that text" is a count the test can assert, not a timing."""

from __future__ import annotations

import ctypes
import ctypes.util
from functools import cache

from argus.agent.pcre import library

__all__ = ["available", "exceeds", "steps"]

_UTF = 0x00080000
_ERROR_MATCHLIMIT = -47


@cache
def _library() -> ctypes.CDLL | None:
    lib = library()  # the one Argus itself judges patterns with
    if lib is None:
        return None
    lib.pcre2_match_data_create_from_pattern_8.restype = ctypes.c_void_p
    lib.pcre2_match_data_create_from_pattern_8.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
    lib.pcre2_match_context_create_8.restype = ctypes.c_void_p
    lib.pcre2_match_context_create_8.argtypes = [ctypes.c_void_p]
    lib.pcre2_set_match_limit_8.argtypes = [ctypes.c_void_p, ctypes.c_uint32]
    lib.pcre2_match_8.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t, ctypes.c_size_t, ctypes.c_uint32,
                                  ctypes.c_void_p, ctypes.c_void_p]
    for free in ("pcre2_code_free_8", "pcre2_match_data_free_8", "pcre2_match_context_free_8"):
        getattr(lib, free).argtypes = [ctypes.c_void_p]
    return lib


def available() -> bool:
    return _library() is not None


def exceeds(pattern: str, subject: str, steps: int) -> bool:
    """Whether PCRE2 (interpreter, UTF mode, as MongoDB compiles ``$regex``) needs more than ``steps``
    backtracking steps to search ``subject`` for ``pattern``."""
    lib = _library()
    assert lib is not None, "libpcre2-8 is not installed"
    error, offset = ctypes.c_int(), ctypes.c_size_t()
    raw = pattern.encode()
    code = lib.pcre2_compile_8(raw, len(raw), _UTF, ctypes.byref(error), ctypes.byref(offset), None)
    assert code, f"PCRE2 refused {pattern!r} (error {error.value} at {offset.value})"
    data = lib.pcre2_match_data_create_from_pattern_8(code, None)
    context = lib.pcre2_match_context_create_8(None)
    try:
        lib.pcre2_set_match_limit_8(context, steps)
        text = subject.encode()
        result: int = lib.pcre2_match_8(code, text, len(text), 0, 0, data, context)
    finally:
        lib.pcre2_match_context_free_8(context)
        lib.pcre2_match_data_free_8(data)
        lib.pcre2_code_free_8(code)
    assert result >= -2 or result == _ERROR_MATCHLIMIT, f"PCRE2 failed with error {result}"
    return result == _ERROR_MATCHLIMIT


def steps(pattern: str, subject: str, *, ceiling: int = 10_000_000) -> int | None:
    """The fewest backtracking steps PCRE2 needs for the search (None: more than ``ceiling``)."""
    if exceeds(pattern, subject, ceiling):
        return None
    low, high = 1, ceiling
    while low < high:
        middle = (low + high) // 2
        if exceeds(pattern, subject, middle):
            low = middle + 1
        else:
            high = middle
    return low
