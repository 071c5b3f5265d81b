"""A regular expression as a backtracking engine walks it: a syntax tree that keeps every alternative.

Python's own parser rewrites a pattern before anyone sees it: ``a|[ab]`` becomes the one class
``[ab]`` and ``ab|ac`` becomes ``a(?:b|c)``. MongoDB's engine (PCRE) does neither, so ``^(a|[ab])+$``
that Python runs in linear time backtracks exponentially on the server. The cost check
(``regex_cost``) therefore reads the pattern with this parser, which builds the tree as written:
characters as exact sets of code points, groups, alternatives, repeats with their bounds, and
zero-width assertions.

Where the engines read a character set differently, it takes the widest reading of any of them:
PCRE (MongoDB, in UTF mode without UCP) reads ``\\d \\w \\s`` as ASCII classes, Python's ``re`` and
the in-process engine's ``regex`` as Unicode ones, so ``\\d \\w \\s`` are the Unicode (and ``regex``'s)
sets and ``\\D \\W \\S`` the complements of the ASCII ones (``\\W`` holds ``é`` on the server); a
negated class ``[^...]`` is the complement of its members' narrowest reading; ``\\v`` is every
vertical space, as PCRE reads it (Python: the one character VT). A POSIX class (``[[:digit:]]``),
which PCRE reads as a class and Python as the characters ``[:digt`` and then ``]``, has no
reading both share: ``posix_class`` finds it so the cost check can refuse it.

It expects a pattern Python's ``re`` has already accepted (the guard refuses the others first), so
it reports no syntax errors of its own: what it does not know it reads as the widest thing it
could be (a back-reference matches any text).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache

__all__ = ["ANY", "Alt", "Assertion", "CharSet", "Chars", "Node", "Repeat", "Seq", "char_union", "intersects",
           "parse", "posix_class"]

MAX_CODE_POINT = 0x10FFFF

CharSet = tuple[tuple[int, int], ...]  # sorted, disjoint, inclusive code point intervals
ANY: CharSet = ((0, MAX_CODE_POINT),)


@dataclass(frozen=True)
class Chars:
    """One character from ``chars``."""

    chars: CharSet


@dataclass(frozen=True)
class Seq:
    items: tuple[Node, ...]


@dataclass(frozen=True)
class Alt:
    options: tuple[Node, ...]


@dataclass(frozen=True)
class Repeat:
    body: Node
    low: int
    high: int | None  # None: unbounded


@dataclass(frozen=True)
class Assertion:
    """Zero width and able to fail: an anchor, a word boundary, or a lookaround (its ``body``)."""

    body: Node | None = None


Node = Chars | Seq | Alt | Repeat | Assertion

EMPTY = Seq(())


# --- character sets ------------------------------------------------------------------------------

def char_union(intervals: list[tuple[int, int]]) -> CharSet:
    """Code point intervals merged into a sorted, disjoint ``CharSet``."""
    merged: list[tuple[int, int]] = []
    for lo, hi in sorted(intervals):
        if merged and lo <= merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], max(merged[-1][1], hi))
        else:
            merged.append((lo, hi))
    return tuple(merged)


def _complement(chars: CharSet) -> CharSet:
    out: list[tuple[int, int]] = []
    start = 0
    for lo, hi in chars:
        if lo > start:
            out.append((start, lo - 1))
        start = hi + 1
    if start <= MAX_CODE_POINT:
        out.append((start, MAX_CODE_POINT))
    return tuple(out)


def intersects(a: CharSet, b: CharSet) -> bool:
    """Whether one character is in both sets."""
    i = j = 0
    while i < len(a) and j < len(b):
        if a[i][1] < b[j][0]:
            i += 1
        elif b[j][1] < a[i][0]:
            j += 1
        else:
            return True
    return False


def _matching(test: Callable[[str], bool]) -> CharSet:
    found: list[tuple[int, int]] = []
    start: int | None = None
    for code in range(MAX_CODE_POINT + 1):
        if test(chr(code)):
            if start is None:
                start = code
        elif start is not None:
            found.append((start, code - 1))
            start = None
    if start is not None:
        found.append((start, MAX_CODE_POINT))
    return tuple(found)


def _regex_word(ch: str) -> bool:
    """``\\w`` as the ``regex`` module reads it (Unicode TR 18): letters, digits, marks, connectors."""
    return ch.isalnum() or unicodedata.category(ch)[0] == "M" or unicodedata.category(ch) == "Pc" or \
        ch in "\u200c\u200d"


_ASCII: dict[str, CharSet] = {"d": ((48, 57),), "w": ((48, 57), (65, 90), (95, 95), (97, 122)),
                              "s": ((9, 13), (32, 32))}
_VERTICAL: CharSet = ((10, 13), (0x85, 0x85), (0x2028, 0x2029))  # PCRE's \v; Python's is VT (11) alone


@cache
def _category(name: str) -> CharSet:
    """``\\d``, ``\\w`` or ``\\s`` at its widest: Unicode, as Python and ``regex`` read it in a text
    pattern (PCRE's ASCII reading is a subset)."""
    test = {"d": str.isdecimal, "w": lambda c: _regex_word(c) or c == "_", "s": str.isspace}[name]
    return char_union([*_matching(test), *_ASCII[name]])


def _readings(escape: str) -> tuple[CharSet, CharSet]:
    """The widest and the narrowest set any engine reads a class escape (``dDwWsSv``) as."""
    if escape == "v":
        return _VERTICAL, ((11, 11),)
    wide, narrow = _category(escape.lower()), _ASCII[escape.lower()]
    return (wide, narrow) if escape.islower() else (_complement(narrow), _complement(wide))


def posix_class(pattern: str) -> str | None:
    """The first POSIX class (``[:digit:]``, also ``[.x.]`` and ``[=x=]``) inside a character class."""
    at, in_class = 0, False
    while at < len(pattern):
        ch = pattern[at]
        if ch == "\\":
            at += 2
            continue
        if not in_class and ch == "[":
            in_class = True
            at += 1
            at += pattern.startswith("^", at)
            at += pattern.startswith("]", at)  # a "]" first in a class is a member
            continue
        if in_class and ch == "[" and pattern[at + 1:at + 2] in (":", ".", "="):
            end = pattern.find(pattern[at + 1] + "]", at + 2)
            if end >= 0:
                return pattern[at:end + 2]
        elif in_class and ch == "]":
            in_class = False
        at += 1
    return None


def _with_cases(chars: CharSet) -> CharSet:
    """``chars`` and every other case of its characters (wide ranges hold their other cases already)."""
    extra: list[tuple[int, int]] = list(chars)
    for lo, hi in chars:
        if hi - lo > 5000:
            continue
        for code in range(lo, hi + 1):
            ch = chr(code)
            for other in (ch.lower(), ch.upper(), ch.swapcase(), ch.casefold()):
                if len(other) == 1:
                    extra.append((ord(other), ord(other)))
    return char_union(extra)


# --- the parser -------------------------------------------------------------------------------

_SIMPLE_ESCAPES = {"a": 7, "b": 8, "f": 12, "n": 10, "r": 13, "t": 9, "\\": 92}
_CATEGORY_ESCAPES = "dDwWsSv"
_ASSERTION_ESCAPES = "AbBZ"
_OCTAL = "01234567"
_HEX = "0123456789abcdefABCDEF"
_FLAG_LETTERS = "aiLmsux"


class _Parser:
    def __init__(self, pattern: str, *, ignore_case: bool, verbose: bool) -> None:
        self.text = pattern
        self.at = 0
        self.ignore_case = ignore_case
        self.verbose = verbose

    # lexing

    def _peek(self, n: int = 0) -> str:
        i = self.at + n
        return self.text[i] if i < len(self.text) else ""

    def _skip_verbose(self) -> None:
        while self.verbose and self.at < len(self.text):
            ch = self.text[self.at]
            if ch in " \t\n\r\f\v":
                self.at += 1
            elif ch == "#":
                end = self.text.find("\n", self.at)
                self.at = len(self.text) if end < 0 else end + 1
            else:
                return

    def _chars(self, chars: CharSet) -> Chars:
        return Chars(_with_cases(chars) if self.ignore_case else chars)

    # grammar

    def alternation(self) -> Node:
        options = [self.sequence()]
        while self._peek() == "|":
            self.at += 1
            options.append(self.sequence())
        return options[0] if len(options) == 1 else Alt(tuple(options))

    def sequence(self) -> Node:
        items: list[Node] = []
        while True:
            self._skip_verbose()
            ch = self._peek()
            if ch in ("", "|", ")"):
                break
            atom = self.atom()
            if atom is None:
                continue
            items.append(self.quantified(atom))
        return items[0] if len(items) == 1 else Seq(tuple(items))

    def quantified(self, atom: Node) -> Node:
        while True:
            self._skip_verbose()
            bounds = self._quantifier()
            if bounds is None:
                return atom
            if self._peek() in ("?", "+"):  # lazy or possessive: the same paths, tried in another order
                self.at += 1
            atom = Repeat(atom, *bounds)

    def _quantifier(self) -> tuple[int, int | None] | None:
        ch = self._peek()
        if ch in "*+?" and ch:
            self.at += 1
            return {"*": (0, None), "+": (1, None), "?": (0, 1)}[ch]
        if ch != "{":
            return None
        end = self.text.find("}", self.at)
        body = self.text[self.at + 1:end] if end > 0 else ""
        low, comma, high = body.partition(",")
        if end < 0 or not (low.isdigit() or (comma and high.isdigit() and not low)) or \
                (high and not high.isdigit()) or not (low.isascii() and high.isascii()):
            return None  # not a repeat: a literal "{"
        self.at = end + 1
        lo = int(low) if low else 0
        return lo, (lo if not comma else int(high) if high else None)

    def atom(self) -> Node | None:
        ch = self.text[self.at]
        self.at += 1
        if ch == "(":
            return self.group()
        if ch == "[":
            return self._chars(self.char_class())
        if ch == ".":
            return Chars(ANY)
        if ch in "^$":
            return Assertion()
        if ch == "\\":
            return self.escape()
        return self._chars(((ord(ch), ord(ch)),))

    def group(self) -> Node | None:
        if self._peek() != "?":
            return self._close(self.alternation())
        self.at += 1
        kind = self._peek()
        if kind == "#":
            end = self.text.find(")", self.at)
            self.at = len(self.text) if end < 0 else end + 1
            return None
        if kind == "P" and self._peek(1) == "=":  # (?P=name): a back-reference
            self.at = self.text.find(")", self.at) + 1
            return Repeat(Chars(ANY), 0, None)
        if kind == "P" and self._peek(1) == "<":
            self.at = self.text.find(">", self.at) + 1
            return self._close(self.alternation())
        if kind in ("=", "!"):
            self.at += 1
            return Assertion(self._close(self.alternation()))
        if kind == "<" and self._peek(1) in ("=", "!"):
            self.at += 2
            return Assertion(self._close(self.alternation()))
        if kind in (":", ">"):
            self.at += 1
            return self._close(self.alternation())
        if kind == "(":  # (?(group)yes|no): either branch
            self.at = self.text.find(")", self.at) + 1
            return self._close(self.alternation(), either=True)
        return self._flags()

    def _flags(self) -> Node | None:
        on, off = "", ""
        while self._peek() and self._peek() in _FLAG_LETTERS:
            on += self.text[self.at]
            self.at += 1
        if self._peek() == "-":
            self.at += 1
            while self._peek() and self._peek() in _FLAG_LETTERS:
                off += self.text[self.at]
                self.at += 1
        saved = self.ignore_case, self.verbose
        self.ignore_case = ("i" in on or self.ignore_case) and "i" not in off
        self.verbose = ("x" in on or self.verbose) and "x" not in off
        if self._peek() == ")":  # (?i) at the start: for the whole pattern
            self.at += 1
            return None
        self.at += 1  # ":"
        body = self._close(self.alternation())
        self.ignore_case, self.verbose = saved
        return body

    def _close(self, body: Node, *, either: bool = False) -> Node:
        if self._peek() == ")":
            self.at += 1
        if either and not isinstance(body, Alt):
            return Alt((body, EMPTY))
        return body

    def escape(self) -> Node:
        ch = self._peek()
        self.at += 1
        if ch in _CATEGORY_ESCAPES:
            return Chars(_readings(ch)[0])
        if ch in _ASSERTION_ESCAPES:
            return Assertion()
        if ch.isdigit() and ch != "0":
            return self._group_reference_or_octal(ch)
        code = self._escaped_code(ch)
        return self._chars(((code, code),))

    def _group_reference_or_octal(self, first: str) -> Node:
        digits = first
        if self._peek().isdigit():
            digits += self._peek()
            self.at += 1
            if digits[0] in _OCTAL and digits[1] in _OCTAL and self._peek() and self._peek() in _OCTAL:
                digits += self._peek()
                self.at += 1
                code = int(digits, 8)
                return self._chars(((code, code),))
        return Repeat(Chars(ANY), 0, None)  # a back-reference: any text, as far as cost goes

    def _escaped_code(self, ch: str) -> int:
        """The code point of an escape inside or outside a class, ``ch`` already read."""
        if ch in _SIMPLE_ESCAPES:
            return _SIMPLE_ESCAPES[ch]
        width = {"x": 2, "u": 4, "U": 8}.get(ch)
        if width is not None:
            digits = self.text[self.at:self.at + width]
            self.at += width
            return int(digits, 16)
        if ch == "N" and self._peek() == "{":
            end = self.text.find("}", self.at)
            name = self.text[self.at + 1:end]
            self.at = end + 1
            return ord(unicodedata.lookup(name))
        if ch == "0" or (ch in _OCTAL and ch):
            digits = ch
            while len(digits) < 3 and self._peek() and self._peek() in _OCTAL:
                digits += self._peek()
                self.at += 1
            return int(digits, 8)
        return ord(ch) if ch else ord("\\")

    def char_class(self) -> CharSet:
        negate = self._peek() == "^"
        if negate:
            self.at += 1
        wide: list[tuple[int, int]] = []  # the members at their widest, and at their narrowest reading
        narrow: list[tuple[int, int]] = []
        first = True
        while self.at < len(self.text) and (first or self.text[self.at] != "]"):
            first = False
            lo = self._class_item()
            if isinstance(lo, tuple):  # a class escape
                wide.extend(lo[0])
                narrow.extend(lo[1])
                continue
            if self._peek() == "-" and self._peek(1) not in ("]", ""):
                self.at += 1
                hi = self._class_item()
                if isinstance(hi, int):
                    wide.append((lo, hi))
                    narrow.append((lo, hi))
                    continue
                for members in (wide, narrow):
                    members.append((ord("-"), ord("-")))
                wide.extend(hi[0])
                narrow.extend(hi[1])
            wide.append((lo, lo))
            narrow.append((lo, lo))
        self.at += 1  # "]"
        chars = char_union(narrow if negate else wide)
        if self.ignore_case:
            chars = _with_cases(chars)
        return _complement(chars) if negate else chars

    def _class_item(self) -> int | tuple[CharSet, CharSet]:
        ch = self.text[self.at]
        self.at += 1
        if ch != "\\":
            return ord(ch)
        esc = self._peek()
        self.at += 1
        if esc in _CATEGORY_ESCAPES:
            return _readings(esc)
        return self._escaped_code(esc)


def parse(pattern: str, *, ignore_case: bool = False, verbose: bool = False) -> Node:
    """The syntax tree of ``pattern`` (one Python's ``re`` accepts), every alternative as written."""
    parser = _Parser(pattern, ignore_case=ignore_case, verbose=verbose)
    tree = parser.alternation()
    while parser.at < len(parser.text):  # a stray ")" Python would have refused: read on
        parser.at += 1
        tree = Seq((tree, parser.alternation()))
    return tree
