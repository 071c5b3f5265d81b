"""Which regular expressions may run: a static cost check for patterns a planner sends.

A backtracking engine (MongoDB's PCRE, Python's ``re`` behind the in-memory engine) can take
exponential time on nested quantifiers (``^(a+)+$``) or on alternatives that overlap under a
quantifier (``^(a|ab)+$``), and quadratic time on adjacent quantifiers over the same characters
(``\\s*\\s*$``). A server bounds a query with ``maxTimeMS``; a regex inside Python's ``re`` cannot be
interrupted at all. So these shapes are refused before a pattern is sent, on every engine, from
the parsed pattern (Python's own parser: what it refuses as invalid is refused too).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache
from re import _constants as sre  # type: ignore[attr-defined]
from re import _parser as sre_parse  # type: ignore[attr-defined]
from typing import Any

__all__ = ["MAX_PATTERN_LENGTH", "regex_problem"]

MAX_PATTERN_LENGTH = 1000

# Characters probed to decide whether two character classes overlap: ASCII plus a few letters,
# digits and spaces from outside it, so \w, \d and \s are told apart as the engines tell them apart.
_ALPHABET = frozenset(chr(c) for c in range(128)) | frozenset("éßΩж中٣\u00a0\u2003")
_REPEATS = (sre.MAX_REPEAT, sre.MIN_REPEAT, getattr(sre, "POSSESSIVE_REPEAT", sre.MAX_REPEAT))
_CATEGORIES = {
    "CATEGORY_DIGIT": str.isdigit,
    "CATEGORY_NOT_DIGIT": lambda c: not c.isdigit(),
    "CATEGORY_SPACE": str.isspace,
    "CATEGORY_NOT_SPACE": lambda c: not c.isspace(),
    "CATEGORY_WORD": lambda c: c.isalnum() or c == "_",
    "CATEGORY_NOT_WORD": lambda c: not (c.isalnum() or c == "_"),
}


class _Costly(Exception):
    pass


@lru_cache(maxsize=2048)
def regex_problem(pattern: str, flags: int = 0) -> str | None:
    """Why ``pattern`` is refused (invalid, too long, or catastrophic backtracking), or None.

    The verdict depends on the pattern and flags alone, and a planner sends the same few patterns
    in every audit (each checked by the gate and again by the tool), while judging one costs about
    a millisecond: verdicts are remembered (patterns are at most ``MAX_PATTERN_LENGTH`` long)."""
    if len(pattern) > MAX_PATTERN_LENGTH:
        return f"the pattern is longer than {MAX_PATTERN_LENGTH} characters"
    try:
        parsed = sre_parse.parse(pattern, flags)
    except (re.error, OverflowError, RecursionError) as exc:
        return f"the pattern is not a valid regular expression ({getattr(exc, 'msg', type(exc).__name__)})"
    try:
        _check_sequence(list(parsed), in_repeat=False)
    except _Costly as exc:
        return str(exc)
    return None


def _chars(op: Any, av: Any) -> frozenset[str] | None:
    """The characters one single-character node matches (over the probe alphabet), else None."""
    if op == sre.LITERAL:
        ch = chr(av)
        return frozenset({ch, ch.swapcase()})  # case-insensitive flags only widen the set
    if op == sre.NOT_LITERAL:
        return _ALPHABET - {chr(av)}
    if op == sre.ANY:
        return _ALPHABET
    if op == sre.IN:
        negate = False
        members: set[str] = set()
        for item_op, item_av in av:
            if item_op == sre.NEGATE:
                negate = True
            elif item_op == sre.LITERAL:
                members |= {chr(item_av), chr(item_av).swapcase()}
            elif item_op == sre.RANGE:
                members |= {c for c in _ALPHABET if item_av[0] <= ord(c) <= item_av[1]}
            elif item_op == sre.CATEGORY:
                test = _CATEGORIES.get(getattr(item_av, "name", ""), lambda c: True)
                members |= {c for c in _ALPHABET if test(c)}
            else:
                members |= _ALPHABET
        return frozenset(_ALPHABET - members if negate else members)
    return None


def _first(items: Iterable[tuple[Any, Any]]) -> tuple[frozenset[str], bool]:
    """Characters that can start a match of a sequence, and whether it can match the empty string."""
    chars: frozenset[str] = frozenset()
    for op, av in items:
        first, nullable = _first_of(op, av)
        chars |= first
        if not nullable:
            return chars, False
    return chars, True


def _first_of(op: Any, av: Any) -> tuple[frozenset[str], bool]:
    single = _chars(op, av)
    if single is not None:
        return single, False
    if op in _REPEATS:
        first, nullable = _first(av[2])
        return first, nullable or av[0] == 0
    if op == sre.SUBPATTERN:
        return _first(av[3])
    if op == sre.ATOMIC_GROUP:
        return _first(av)
    if op == sre.BRANCH:
        chars: frozenset[str] = frozenset()
        nullable = False
        for alternative in av[1]:
            first, empty = _first(alternative)
            chars |= first
            nullable = nullable or empty
        return chars, nullable
    if op in (sre.AT, sre.ASSERT, sre.ASSERT_NOT):
        return frozenset(), True
    return _ALPHABET, True  # back-references and conditionals: assume the worst


def _single_repeat(op: Any, av: Any) -> frozenset[str] | None:
    """The character set of an unbounded single-character repeat (``\\s*``, ``[a-z]+``), else None."""
    if op in _REPEATS and av[1] == sre.MAXREPEAT and len(av[2]) == 1:
        inner_op, inner_av = next(iter(av[2]))
        return _chars(inner_op, inner_av)
    return None


def _check_sequence(items: list[tuple[Any, Any]], *, in_repeat: bool) -> None:
    loose: frozenset[str] | None = None  # characters an earlier unbounded repeat could give back
    for op, av in items:
        _check_node(op, av, in_repeat=in_repeat)
        repeat = _single_repeat(op, av)
        if repeat is not None:
            if loose is not None and loose & repeat:
                raise _Costly("it has adjacent quantifiers over the same characters (like \\s*\\s*), "
                              "which take quadratic time; merge them into one")
            loose = repeat
            continue
        if not _first_of(op, av)[1]:
            loose = None  # a required step between two repeats keeps them apart


def _check_node(op: Any, av: Any, *, in_repeat: bool) -> None:
    if op in _REPEATS:
        low, high, body = av
        repeats = high > 1 and low != high
        if in_repeat and repeats:
            raise _Costly("it has nested quantifiers (like (a+)+), which take exponential time; "
                          "write the inner pattern once")
        _check_sequence(list(body), in_repeat=in_repeat or high > 1)
    elif op == sre.SUBPATTERN:
        _check_sequence(list(av[3]), in_repeat=in_repeat)
    elif op == sre.ATOMIC_GROUP:
        _check_sequence(list(av), in_repeat=in_repeat)
    elif op in (sre.ASSERT, sre.ASSERT_NOT):
        _check_sequence(list(av[1]), in_repeat=in_repeat)
    elif op == sre.GROUPREF_EXISTS:
        for branch in av[1:]:
            if branch is not None:
                _check_sequence(list(branch), in_repeat=in_repeat)
    elif op == sre.BRANCH:
        firsts = [_first(alternative) for alternative in av[1]]
        if in_repeat:
            seen: frozenset[str] = frozenset()
            for chars, nullable in firsts:
                if nullable or chars & seen:
                    raise _Costly("it has alternatives that overlap under a quantifier (like (a|ab)+), "
                                  "which take exponential time; make the alternatives start differently")
                seen |= chars
        for alternative in av[1]:
            _check_sequence(list(alternative), in_repeat=in_repeat)
