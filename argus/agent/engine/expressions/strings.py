"""String operators: lengths, case, trimming, ``$concat``, ``$substrCP``, ``$regexMatch``,
``$split``; a type the server refuses raises its ``OperationFailure``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from bson import Regex

from argus.agent.engine.deadline import Deadline
from argus.agent.engine.errors import failure
from argus.agent.engine.expressions.compiler import Evaluate, args, compile_node, nullish
from argus.agent.engine.expressions.dates import to_string
from argus.agent.engine.regexes import compile_regex
from argus.agent.engine.values import bson_type, is_number, number_value

__all__ = ["OPERATORS"]


def _string_of(value: Any, op: str) -> str:
    if isinstance(value, str):
        return value
    raise failure(f"{op} requires a string argument, found: {bson_type(value)}", 34471)


def _str_len(op: str, measure: Callable[[str], int]) -> Callable[[Any, Deadline], Evaluate]:
    def build(arg: Any, deadline: Deadline) -> Evaluate:
        (item,) = args(arg, deadline, 1, op)
        return lambda doc: measure(_string_of(item(doc), op))
    return build


def _case(op: str, upper: bool) -> Callable[[Any, Deadline], Evaluate]:
    def build(arg: Any, deadline: Deadline) -> Evaluate:
        (item,) = args(arg, deadline, 1, op)

        def run(doc: Any) -> str:
            value = item(doc)
            text = "" if nullish(value) else value if isinstance(value, str) else to_string(value)
            return "".join(c.upper() if upper and c.isascii() else c.lower() if not upper and c.isascii() else c
                           for c in text)
        return run
    return build


def _trim(op: str, left: bool, right: bool) -> Callable[[Any, Deadline], Evaluate]:
    def build(arg: Any, deadline: Deadline) -> Evaluate:
        if not isinstance(arg, Mapping) or "input" not in arg:
            raise failure(f"{op} requires an 'input' field", 50696)
        item = compile_node(arg["input"], deadline)
        chars = compile_node(arg["chars"], deadline) if "chars" in arg else None

        def run(doc: Any) -> Any:
            value = item(doc)
            if nullish(value):
                return None
            text = _string_of(value, op)
            strip = None if chars is None else chars(doc)
            if strip is not None and not isinstance(strip, str):
                raise failure(f"{op} requires 'chars' to be a string", 50700)
            strip = " \t\n\r\x0b\x0c\x00\u00a0\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a" \
                if strip is None else strip
            if left and right:
                return text.strip(strip)
            return text.lstrip(strip) if left else text.rstrip(strip)
        return run
    return build


def _concat(arg: Any, deadline: Deadline) -> Evaluate:
    items = args(arg, deadline)

    def run(doc: Any) -> Any:
        values = [f(doc) for f in items]
        if any(nullish(v) for v in values):
            return None
        return "".join(_string_of(v, "$concat") for v in values)
    return run


def _substr_cp(arg: Any, deadline: Deadline) -> Evaluate:
    text, start, count = args(arg, deadline, 3, "$substrCP")

    def run(doc: Any) -> str:
        value = text(doc)
        value = "" if nullish(value) else value if isinstance(value, str) else to_string(value)
        a, n = start(doc), count(doc)
        if not is_number(a) or not is_number(n):
            raise failure("$substrCP needs numeric start and length", 34450)
        i, k = int(number_value(a)), int(number_value(n))
        if i < 0 or k < 0:
            raise failure("$substrCP needs non-negative start and length", 34455)
        return value[i:i + k]
    return run


def _regex_match(arg: Any, deadline: Deadline) -> Evaluate:
    if not isinstance(arg, Mapping) or "input" not in arg or "regex" not in arg:
        raise failure("$regexMatch needs 'input' and 'regex'", 51105)
    item = compile_node(arg["input"], deadline)
    pattern = arg["regex"]
    if not isinstance(pattern, str | Regex):
        raise failure("$regexMatch needs a constant regex", 51105)
    run_regex = compile_regex(pattern, arg.get("options", ""), deadline)

    def run(doc: Any) -> bool:
        value = item(doc)
        if nullish(value):
            return False
        return run_regex(_string_of(value, "$regexMatch"))
    return run


def _split(arg: Any, deadline: Deadline) -> Evaluate:
    text, delimiter = args(arg, deadline, 2, "$split")

    def run(doc: Any) -> Any:
        value, sep = text(doc), delimiter(doc)
        if nullish(value):
            return None
        if not isinstance(sep, str) or not sep:
            raise failure("$split requires a non-empty string delimiter", 40087)
        return _string_of(value, "$split").split(sep)
    return run

OPERATORS: dict[str, Callable[[Any, Deadline], Evaluate]] = {
    "$strLenCP": _str_len("$strLenCP", len), "$strLenBytes": _str_len("$strLenBytes", lambda s: len(s.encode())),
    "$toLower": _case("$toLower", False), "$toUpper": _case("$toUpper", True),
    "$trim": _trim("$trim", True, True), "$ltrim": _trim("$ltrim", True, False),
    "$rtrim": _trim("$rtrim", False, True), "$concat": _concat, "$substrCP": _substr_cp,
    "$regexMatch": _regex_match, "$split": _split,
}
