"""Which regular expressions may run: a static cost check for patterns a planner sends.

A backtracking engine (MongoDB's PCRE, the ``regex`` module behind the in-process engine) takes
exponential time when one text can be matched by a repeated part in many ways, and polynomial time
when several repeats over the same characters can share a text between them. A server checks
``maxTimeMS`` between documents, not inside one PCRE match, so one value can hold a query far past
its limit (the in-process engine's ``regex`` runs under a timeout, but the same pattern would reach
a server on the next audit). So these shapes are refused before a pattern is sent, on every engine:

- nested quantifiers: ``^(a+)+$``, ``(\\w+\\s?)*``;
- a repeated part that can match nothing: ``^(?:a?){28}a{28}$``;
- alternatives under a quantifier whose first characters overlap: ``(a|ab)+``, ``(a|[ab])+``,
  ``(\\d|[0-9])+``;
- a repeated group that can split one text into repetitions in two ways: ``^(ab?|b)+$``
  (exponential degree of ambiguity of the pattern's position automaton);
- repeats over the same characters with nothing but those characters between them: ``\\s*\\s*``,
  ``^.*a.*a.*b$`` (polynomial degree of ambiguity, counted per starting position and only where
  the match can still fail).

The pattern is judged as the server's engine reads it (``regex_syntax``: every alternative as
written, characters as exact sets at the widest reading of any engine), not as Python compiles
it: Python folds ``a|[ab]`` into ``[ab]`` and runs it in linear time, PCRE does not. Python's parser
still decides validity: what it refuses is refused on every engine, and so is a POSIX class
(``[[:digit:]]``), which Python and PCRE read as different patterns. The rules on the pattern's
tree are here; the ambiguity of its position automaton is judged in ``regex_automaton``.
"""

from __future__ import annotations

import re
from functools import lru_cache
from re import _parser as sre_parse  # type: ignore[attr-defined]

from argus.agent.pcre import pcre2_problem
from argus.agent.tools.regex_automaton import TOO_COMPLEX, Automaton, Costly, Work
from argus.agent.tools.regex_syntax import (
    Alt,
    Assertion,
    Chars,
    CharSet,
    Node,
    Repeat,
    Seq,
    char_union,
    intersects,
    parse,
    posix_class,
)

__all__ = ["MAX_PATTERN_LENGTH", "regex_problem"]

MAX_PATTERN_LENGTH = 1000

NESTED = ("it has nested quantifiers (like (a+)+), which take exponential time; write the inner pattern once")
EMPTY_REPEAT = ("it repeats a part that can match nothing (like (a?){28}), which takes exponential time; make the "
                "repeated part match at least one character")
OVERLAPPING = ("it has alternatives that overlap under a quantifier (like (a|ab)+ or (a|[ab])+), which take "
               "exponential time; make no alternative match the start of another")
POSIX = ("it has a POSIX class ({}), which MongoDB reads as a class and Python as the characters in it; write the "
         "characters out (like [0-9] for [:digit:], [a-zA-Z] for [:alpha:])")


@lru_cache(maxsize=4096)
def regex_problem(pattern: str, flags: int = 0) -> str | None:
    """Why ``pattern`` is refused (invalid, too long, or catastrophic backtracking), or None.
    Cached: a planner sends the same few patterns again and again."""
    if len(pattern) > MAX_PATTERN_LENGTH:
        return f"the pattern is longer than {MAX_PATTERN_LENGTH} characters"
    posix = posix_class(pattern)  # before Python's parser, which warns of a nested set on stderr
    if posix is not None:
        return POSIX.format(posix)
    try:
        sre_parse.parse(pattern, flags)
    except (re.error, OverflowError, RecursionError, ValueError) as exc:
        return f"the pattern is not a valid regular expression ({getattr(exc, 'msg', type(exc).__name__)})"
    server = pcre2_problem(pattern, flags & (re.IGNORECASE | re.MULTILINE | re.DOTALL | re.VERBOSE))
    if server:
        return server
    try:
        tree = parse(pattern, ignore_case=bool(flags & re.IGNORECASE), verbose=bool(flags & re.VERBOSE))
        _judge(tree)
    except Costly as exc:
        return str(exc)
    except RecursionError:
        return TOO_COMPLEX
    return None


def _judge(tree: Node) -> None:
    work = Work()
    _check_nesting(tree, in_repeat=False)
    _check_repeats(tree, in_repeat=False, work=work)
    for part in [tree, *_lookarounds(tree)]:
        automaton = Automaton(work)
        fragment = automaton.build(part)
        automaton.check_exponential()
        automaton.check_runs(fragment.first)
        automaton.check_polynomial(set(fragment.ends))


# --- rules on the tree --------------------------------------------------------------------------

def _children(node: Node) -> tuple[Node, ...]:
    if isinstance(node, Seq):
        return node.items
    if isinstance(node, Alt):
        return node.options
    if isinstance(node, Repeat):
        return (node.body,)
    if isinstance(node, Assertion) and node.body is not None:
        return (node.body,)
    return ()


def _lookarounds(tree: Node) -> list[Node]:
    found: list[Node] = []
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, Assertion) and node.body is not None:
            found.append(node.body)
        stack.extend(_children(node))
    return found


def _repeats(node: Repeat) -> bool:
    return node.high is None or node.high > 1


def _check_nesting(node: Node, *, in_repeat: bool) -> None:
    if isinstance(node, Repeat):
        if in_repeat and _repeats(node) and node.low != node.high:
            raise Costly(NESTED)
        in_repeat = in_repeat or _repeats(node)
    for child in _children(node):
        _check_nesting(child, in_repeat=in_repeat)


def _check_repeats(node: Node, *, in_repeat: bool, work: Work) -> None:
    if isinstance(node, Repeat) and _repeats(node):
        if _nullable(node.body):
            raise Costly(OVERLAPPING if _has_empty_alternative(node.body) else EMPTY_REPEAT)
        in_repeat = True
    if isinstance(node, Alt) and in_repeat:
        firsts = [_first(option)[0] for option in node.options]
        for i, option in enumerate(node.options):
            work.spend(i + 1)
            if _nullable(option) or any(intersects(firsts[i], firsts[j]) and _prefix_overlap(option, other, work)
                                        for j, other in enumerate(node.options[:i])):
                raise Costly(OVERLAPPING)
    for child in _children(node):
        _check_repeats(child, in_repeat=in_repeat, work=work)


def _prefix_overlap(a: Node, b: Node, work: Work) -> bool:
    """Whether a text one alternative matches starts a text the other can read (``a`` and ``ab``,
    ``a`` and ``[ab]``): under a quantifier the engine then tries both at every repetition. ``ab``
    and ``ac`` part after one character, so trying one costs a step before the other."""
    automaton = Automaton(work)
    one, other = automaton.build(a), automaton.build(b)
    todo = [(x, y) for x in one.first for y in other.first if intersects(automaton.chars[x], automaton.chars[y])]
    seen = set(todo)
    while todo:
        x, y = todo.pop()
        if x in one.last or y in other.last:
            return True
        for nx in automaton.follow[x]:
            work.spend(len(automaton.follow[y]))
            for ny in automaton.follow[y]:
                if (nx, ny) not in seen and intersects(automaton.chars[nx], automaton.chars[ny]):
                    seen.add((nx, ny))
                    todo.append((nx, ny))
    return False


def _has_empty_alternative(node: Node) -> bool:
    while isinstance(node, Seq) and len(node.items) == 1:
        node = node.items[0]
    return isinstance(node, Alt) and any(_nullable(option) for option in node.options)


def _nullable(node: Node) -> bool:
    if isinstance(node, Chars):
        return False
    if isinstance(node, Seq):
        return all(_nullable(item) for item in node.items)
    if isinstance(node, Alt):
        return any(_nullable(option) for option in node.options)
    if isinstance(node, Repeat):
        return node.low == 0 or _nullable(node.body)
    return True  # an assertion is zero-width


def _first(node: Node) -> tuple[CharSet, bool]:
    """The characters a match of ``node`` can start with, and whether it can match the empty string."""
    if isinstance(node, Chars):
        return node.chars, False
    if isinstance(node, Seq):
        found: list[tuple[int, int]] = []
        for item in node.items:
            chars, nullable = _first(item)
            found.extend(chars)
            if not nullable:
                return char_union(found), False
        return char_union(found), True
    if isinstance(node, Alt):
        found = []
        any_nullable = False
        for option in node.options:
            chars, nullable = _first(option)
            found.extend(chars)
            any_nullable = any_nullable or nullable
        return char_union(found), any_nullable
    if isinstance(node, Repeat):
        chars, nullable = _first(node.body)
        return chars, nullable or node.low == 0
    return (), True


