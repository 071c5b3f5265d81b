"""The position automaton of a regular expression, and the ambiguity it shows: the half of
``argus.agent.tools.regex_cost`` that judges how many ways one text can be matched (exponential and
polynomial degrees of ambiguity, runs of one character read many ways).

Each search spends ``Work``; a pattern that needs more than the guard may spend is refused
(``Costly``), so the guard is never itself the slow part.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass, field
from typing import TypeVar

from argus.agent.tools.regex_syntax import (
    Alt,
    Chars,
    CharSet,
    Node,
    Repeat,
    Seq,
    intersects,
)

__all__ = ["ADJACENT", "AMBIGUOUS", "CHOICES", "POLYNOMIAL", "TOO_COMPLEX", "Automaton", "Costly", "Work"]

T = TypeVar("T", bound=Hashable)

_MAX_CHOICES = 12  # runs that part and meet again, one after another: 2**12 ways to match one text
_MAX_RUNS = 1 << 14  # ways to read one run of a character
_MAX_WORK = 300_000  # steps of the searches below (a fraction of a second); a pattern that needs more is refused

AMBIGUOUS = ("it has a repeated group that can split one text into repetitions in more than one way "
             "(like (ab?|b)+), which takes exponential time; make each repetition end where the next cannot start")
ADJACENT = ("it has adjacent quantifiers over the same characters (like \\s*\\s*), which take quadratic time; "
            "merge them into one")
POLYNOMIAL = ("it has quantifiers over the same characters with only those characters between them (like "
              ".*a.*b), which take polynomial time; narrow each class to what it must match (like [^a]*a)")
CHOICES = ("it can match one text in thousands of ways (like a?a?a?…a, or (a|a)(a|a)…), which takes exponential "
           "time; write each part so that it matches a text one way only (like a{0,30})")
TOO_COMPLEX = "it is too complex to judge how long it runs; write it shorter"


class Costly(Exception):
    """A pattern refused for what judging it showed; the message says why, in a user's words."""


class Work:
    """The steps one judgement may take: the guard must not itself be the slow part."""

    def __init__(self, limit: int = _MAX_WORK) -> None:
        self.left = limit

    def spend(self, steps: int = 1) -> None:
        self.left -= steps
        if self.left < 0:
            raise Costly(TOO_COMPLEX)


def _contains(chars: CharSet, code: int) -> bool:
    return any(lo <= code <= hi for lo, hi in chars)


def _meet(a: CharSet, b: CharSet) -> CharSet:
    out: list[tuple[int, int]] = []
    i = j = 0
    while i < len(a) and j < len(b):
        lo, hi = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
        if lo <= hi:
            out.append((lo, hi))
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return tuple(out)


# --- the position automaton -----------------------------------------------------------------------

@dataclass
class _Fragment:
    first: set[int] = field(default_factory=set)
    last: set[int] = field(default_factory=set)
    nullable: bool = True
    ends: set[int] = field(default_factory=set)  # positions after which the match may end, no assertion left
    clean: bool = True  # matches the empty string with no assertion on the way


class Automaton:
    """The Glushkov automaton of a pattern: one state per character position, an edge from each
    position to every position that may read the next character. A repeat is one copy of its body
    with a loop (a single character repeated an exact number of times: up to four copies, no loop),
    so the automaton stays as small as the pattern and loops stand for every repetition."""

    def __init__(self, work: Work) -> None:
        self.work = work
        self.chars: list[CharSet] = []
        self.follow: list[set[int]] = []

    def build(self, node: Node) -> _Fragment:
        if isinstance(node, Chars):
            self.work.spend()
            self.chars.append(node.chars)
            self.follow.append(set())
            p = len(self.chars) - 1
            return _Fragment({p}, {p}, False, {p}, False)
        if isinstance(node, Seq):
            result = _Fragment()
            for item in node.items:
                result = self._then(result, self.build(item))
            return result
        if isinstance(node, Alt):
            result = _Fragment(nullable=False, clean=False)
            for option in node.options:
                part = self.build(option)
                result.first |= part.first
                result.last |= part.last
                result.ends |= part.ends
                result.nullable = result.nullable or part.nullable
                result.clean = result.clean or part.clean
            return result
        if isinstance(node, Repeat):
            return self._repeat(node)
        return _Fragment(clean=False)  # an assertion: zero-width, and it may fail

    def _then(self, a: _Fragment, b: _Fragment) -> _Fragment:
        self.work.spend(len(a.last))
        for p in a.last:
            self.follow[p] |= b.first
        return _Fragment(first=a.first | (b.first if a.nullable else set()),
                         last=b.last | (a.last if b.nullable else set()),
                         nullable=a.nullable and b.nullable,
                         ends=b.ends | (a.ends if b.clean else set()),
                         clean=a.clean and b.clean)

    def _repeat(self, node: Repeat) -> _Fragment:
        if node.high == 0:
            return _Fragment()
        single = isinstance(node.body, Chars)
        if node.high is not None and node.high <= 1:
            return self._optional(self.build(node.body)) if node.low == 0 else self.build(node.body)
        if single and node.high == node.low:
            result = _Fragment()
            for _ in range(min(node.low, 4)):
                result = self._then(result, self.build(node.body))
            return result
        result = _Fragment()
        for _ in range(min(node.low, 2 if single else 1) - 1):
            result = self._then(result, self.build(node.body))
        loop = self.build(node.body)
        for p in loop.last:
            self.follow[p] |= loop.first
        return self._then(result, self._optional(loop) if node.low == 0 else loop)

    @staticmethod
    def _optional(part: _Fragment) -> _Fragment:
        return _Fragment(part.first, part.last, True, part.ends, True)

    # ambiguity

    def _loops(self, nodes: set[int]) -> list[list[int]]:
        """The components of the automaton restricted to ``nodes`` that hold a cycle."""
        found = _strong_components(sorted(nodes), lambda p: sorted(self.follow[p] & nodes))
        return [c for c in found if len(c) > 1 or c[0] in self.follow[c[0]]]

    def check_exponential(self) -> None:
        """Refuse a pattern that can match one text in exponentially many ways: two runs on the same text
        that part and meet again are a choice, a cycle through such a choice repeats it without bound
        (``(ab?|b)+``), and a chain of ``_MAX_CHOICES`` of them multiplies (``a?a?a?…a``)."""
        edges: dict[tuple[int, int], list[tuple[int, int]]] = {}
        todo = [(p, p) for p in range(len(self.chars))]
        seen = set(todo)
        while todo:
            x, y = todo.pop()
            out = edges.setdefault((x, y), [])
            targets = self.follow[y]
            for nx in self.follow[x]:
                self.work.spend(len(targets))
                for ny in targets:
                    if (x != y or nx <= ny) and intersects(self.chars[nx], self.chars[ny]):
                        out.append((nx, ny) if nx <= ny else (ny, nx))
                        if out[-1] not in seen:
                            seen.add(out[-1])
                            todo.append(out[-1])
        components = _strong_components(list(edges), lambda pair: edges.get(pair, []))
        owner = {pair: i for i, component in enumerate(components) for pair in component}
        choices = [0] * len(components)
        for i, component in enumerate(components):  # Tarjan finds a component after all it leads to
            diagonal = [a == b for a, b in component]
            if len(component) > 1 and any(diagonal) and not all(diagonal):
                raise Costly(AMBIGUOUS)
            for a, b in component:
                for nxt in edges[(a, b)]:
                    j = owner[nxt]
                    if j != i:
                        choices[i] = max(choices[i], choices[j] + (a != b and nxt[0] == nxt[1]))
            if choices[i] >= _MAX_CHOICES:
                raise Costly(CHOICES)

    def check_runs(self, first: set[int]) -> None:
        """Refuse a pattern with more than ``_MAX_RUNS`` ways to read a run of one character (``a?a?…a``:
        a backtracking engine tries each). Counted for the lowest character of every position's set."""
        preds: list[list[int]] = [[] for _ in self.chars]
        for p, targets in enumerate(self.follow):
            for q in targets:
                preds[q].append(p)
        for code in sorted({chars[0][0] for chars in self.chars if chars}):
            reads = [_contains(chars, code) for chars in self.chars]
            runs = {p: 1 for p, ok in enumerate(reads)
                    if ok and (p in first or not all(reads[q] for q in preds[p]))}
            for _ in range(len(self.chars)):
                if not runs:
                    break
                self.work.spend(len(runs) + 1)
                step: dict[int, int] = {}
                for p, n in runs.items():
                    for q in self.follow[p]:
                        if reads[q]:
                            step[q] = step.get(q, 0) + n
                if sum(step.values()) > _MAX_RUNS:
                    raise Costly(CHOICES)
                runs = step

    def check_polynomial(self, ends: set[int]) -> None:
        """Refuse two loops that can read the same text, with a path between them on that text too."""
        live = set(range(len(self.chars))) - ends  # after an end the match succeeds: nothing to backtrack
        loops = self._loops(live)
        for i, first in enumerate(loops):
            reach = self._reach(set(first), live)
            for j, second in enumerate(loops):
                if i == j or not reach & set(second):
                    continue
                for p in first:
                    for q in second:
                        if self._shared_text(p, q, set(first), set(second), live):
                            adjacent = any(self.follow[a] & set(second) for a in first)
                            raise Costly(ADJACENT if adjacent else POLYNOMIAL)

    def _reach(self, start: set[int], nodes: set[int]) -> set[int]:
        seen = set(start)
        todo = list(start)
        while todo:
            targets = self.follow[todo.pop()] & nodes
            self.work.spend(len(targets))
            for nxt in targets:
                if nxt not in seen:
                    seen.add(nxt)
                    todo.append(nxt)
        return seen

    def _shared_text(self, p: int, q: int, first: set[int], second: set[int], live: set[int]) -> bool:
        """Whether one text leads p back to p, p to q and q back to q (three walks in step)."""
        start = (p, p, q)
        todo = [start]
        seen = {start}
        while todo:
            x, y, z = todo.pop()
            middles, lasts = self.follow[y] & live, self.follow[z] & second
            for nx in self.follow[x] & first:
                self.work.spend(len(middles))
                for ny in middles:
                    shared = _meet(self.chars[nx], self.chars[ny])
                    if not shared:
                        continue
                    self.work.spend(len(lasts))
                    for nz in lasts:
                        if not intersects(shared, self.chars[nz]):
                            continue
                        if (nx, ny, nz) == (p, q, q):
                            return True
                        if (nx, ny, nz) not in seen:
                            seen.add((nx, ny, nz))
                            todo.append((nx, ny, nz))
        return False


def _strong_components(nodes: list[T], successors: Callable[[T], Iterable[T]]) -> list[list[T]]:
    """Tarjan's strongly connected components, without recursion (a pattern may be long)."""
    index: dict[T, int] = {}
    low: dict[T, int] = {}
    on_stack: set[T] = set()
    stack: list[T] = []
    found: list[list[T]] = []
    for root in nodes:
        if root in index:
            continue
        work = [(root, iter(successors(root)))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, out = work[-1]
            advanced = False
            for nxt in out:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(successors(nxt))))
                    advanced = True
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component: list[T] = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                found.append(component)
    return found
