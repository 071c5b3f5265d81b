"""A ``$regex`` pattern rewritten so the ``regex`` module reads it as MongoDB's PCRE2 does.

MongoDB compiles every pattern with ``PCRE2_UTF`` and without ``PCRE2_UCP``
(``src/mongo/util/pcre_util.cpp``, ``flagsToOptions``): ``.`` is one code point and case-insensitive
matching folds Unicode letters, but ``\\d``, ``\\w``, ``\\s``, ``\\b`` and the POSIX classes
(``[[:alpha:]]``) are ASCII (``[0-9]``, ``[A-Za-z0-9_]``, ``[ \\t\\n\\v\\f\\r]``). Python's ``regex`` module
reads those classes as Unicode, and its ASCII flag would also stop Unicode case folding, so each
class is wrapped in a scoped ASCII group (``(?a:\\d)``) instead; a pattern that opens with
``(*UCP)`` asks for Unicode classes and keeps them (``jstests/core/query/regex/regex_unicode.js``).
PCRE2 forms Python lacks are rewritten too: the leading ``(*UTF)``/``(*UCP)``/limit verbs,
``\\Q...\\E`` (a quoted literal), ``\\x{hhh}``, ``\\z`` and ``\\Z``.
"""

from __future__ import annotations

import re

import regex as regex_module

__all__ = ["translate"]

_SHORTHANDS = frozenset("dDwWsS")
# Start-of-pattern verbs that change nothing the regex module would read differently, or ask for UCP.
_VERB = re.compile(r"\(\*(UTF8?|UCP|NO_AUTO_POSSESS|NO_START_OPT|NO_DOTSTAR_ANCHOR|NO_JIT|"
                   r"LIMIT_(?:MATCH|DEPTH|HEAP|RECURSION)=\d+)\)")
# PCRE2's POSIX classes without PCRE2_UCP: ASCII only (pcre2pattern, "Posix character classes")
_POSIX = {
    "alnum": "A-Za-z0-9", "alpha": "A-Za-z", "ascii": "\\x00-\\x7f", "blank": "\\t ", "cntrl": "\\x00-\\x1f\\x7f",
    "digit": "0-9", "graph": "\\x21-\\x7e", "lower": "a-z", "print": "\\x20-\\x7e",
    "punct": "!-/:-@\\[-`{-~", "space": "\\t\\n\\x0b\\x0c\\r ", "upper": "A-Z", "word": "A-Za-z0-9_",
    "xdigit": "0-9A-Fa-f",
}


# PCRE2's own properties (pcre2pattern, "PCRE2 special category properties"), as Unicode sets.
_SPECIAL = {"Xan": "\\p{L}\\p{N}", "Xwd": "\\p{L}\\p{N}_", "Xsp": "\\p{Z}\\t\\n\\x0b\\x0c\\r",
            "Xps": "\\p{Z}\\t\\n\\x0b\\x0c\\r"}


def _special(escape: str) -> str | None:
    """The set a ``\\p{Xan}``-style escape names (``[^...]`` for ``\\P``), or None for any other escape."""
    if escape[1] in "pP" and len(escape) > 4 and escape[2] == "{":
        members = _SPECIAL.get(escape[3:-1])
        if members is not None:
            return f"[{'^' if escape[1] == 'P' else ''}{members}]"
    return None


def _posix_end(pattern: str, i: int) -> int:
    """The index after a POSIX class (``[:alpha:]``, ``[:^digit:]``) starting at ``i``, or -1."""
    if not pattern.startswith("[:", i):
        return -1
    close = pattern.find(":]", i + 2)
    name = pattern[i + 2:close].lstrip("^") if close != -1 else ""
    return close + 2 if name.isalpha() else -1


def _escape_end(pattern: str, i: int) -> int:
    """The index after the escape starting at ``pattern[i] == '\\\\'`` (``\\x{41}`` is one escape)."""
    if pattern.startswith(("x{", "p{", "P{"), i + 1):
        close = pattern.find("}", i)
        if close != -1:
            return close + 1
    return min(i + 2, len(pattern))


def _hex_escape(text: str) -> str:
    """``\\x{hhh}`` as the code point it names, escaped for the ``regex`` module."""
    try:
        return regex_module.escape(chr(int(text[3:-1], 16)))
    except (ValueError, OverflowError):
        return text  # left for the compiler to refuse


def _class(pattern: str, start: int, ucp: bool) -> tuple[int, str]:
    """The character class at ``start`` and the index after it. A class holding shorthands or POSIX
    classes becomes an alternation of ASCII-scoped terms; any other class is kept as written."""
    i = start + 1
    negated = i < len(pattern) and pattern[i] == "^"
    if negated:
        i += 1
    plain: list[str] = []
    terms: list[str] = []
    first = True
    while i < len(pattern):
        ch = pattern[i]
        if ch == "]" and not first:
            break
        first = False
        if ch == "\\" and i + 1 < len(pattern):
            end = _escape_end(pattern, i)
            escape = pattern[i:end]
            if escape[1] in _SHORTHANDS and not ucp:
                terms.append(f"(?a:{escape})")
            elif _special(escape):
                terms.append(str(_special(escape)))
            elif escape.startswith("\\x{"):
                plain.append(_hex_escape(escape))
            else:
                plain.append(escape)
            i = end
            continue
        posix = _posix_end(pattern, i) if not ucp else -1
        if posix != -1:
            name = pattern[i + 2:posix - 2]
            ascii_set = _POSIX.get(name.lstrip("^"))
            if ascii_set is not None:
                terms.append(f"[{'^' if name.startswith('^') else ''}{ascii_set}]")
            else:
                plain.append(pattern[i:posix])  # an unknown name: the compiler refuses it
            i = posix
            continue
        plain.append(ch)
        i += 1
    if i >= len(pattern):
        return len(pattern), pattern[start:]  # unterminated: the compiler reports it
    body = "".join(plain)
    if not terms:
        return i + 1, f"[{'^' if negated else ''}{body}]"
    if not negated:
        return i + 1, "(?:" + "|".join(([f"[{body}]"] if body else []) + terms) + ")"
    excluded = "".join(f"(?!{t})" for t in terms)
    return i + 1, f"(?:{excluded}{f'[^{body}]' if body else '(?s:.)'})"


def translate(pattern: str) -> str:
    """``pattern`` (PCRE2 syntax, as MongoDB compiles it) in the ``regex`` module's syntax."""
    out: list[str] = []
    i = 0
    ucp = False
    while verb := _VERB.match(pattern, i):
        ucp = ucp or verb.group(1) == "UCP"
        i = verb.end()
    n = len(pattern)
    while i < n:
        ch = pattern[i]
        if ch == "\\" and i + 1 < n:
            end = _escape_end(pattern, i)
            escape = pattern[i:end]
            letter = escape[1]
            if (letter in _SHORTHANDS or letter in "bB") and not ucp:
                out.append(f"(?a:{escape})")
            elif letter == "Q":
                close = pattern.find("\\E", end)
                stop = n if close == -1 else close
                out.append(regex_module.escape(pattern[end:stop]))
                end = n if close == -1 else close + 2
            elif letter == "E":
                pass  # a \E with no \Q before it is ignored
            elif letter == "z":
                out.append("\\Z")  # Python's \Z is PCRE's \z: the very end
            elif letter == "Z":
                out.append("(?=\\n?\\Z)")  # PCRE's \Z: the end, or before a final newline
            elif escape.startswith("\\x{"):
                out.append(_hex_escape(escape))
            else:
                out.append(_special(escape) or escape)
            i = end
        elif ch == "[":
            i, text = _class(pattern, i, ucp)
            out.append(text)
        elif pattern.startswith("(?#", i):
            close = pattern.find(")", i)
            end = n if close == -1 else close + 1
            out.append(pattern[i:end])
            i = end
        else:
            out.append(ch)
            i += 1
    return "".join(out)
