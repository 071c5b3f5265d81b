"""The import graph of a package, read with ``ast`` (nothing is imported): its cycles and its
upward imports between floors.

Each import is an edge ``(importer, imported, kind)`` with ``kind`` one of ``module`` (runs at
import time), ``function`` (inside a function body: runs on the first call, so a lazy import that
closes a circle still makes a circle) and ``type_checking`` (under ``if TYPE_CHECKING:``: never runs,
so it closes no circle at run time). ``from a.b import c`` points at the module ``a.b.c`` when there is
one, else at ``a.b``. Run ``python -m tests.import_graph [ROOT]`` to print what it finds in ``argus``.
"""

from __future__ import annotations

import ast
import sys
from collections import deque
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path

__all__ = ["Edge", "ImportGraph", "read_package"]

RUNTIME_KINDS = frozenset({"module", "function"})


@dataclass(frozen=True)
class Edge:
    importer: str
    imported: str
    kind: str
    line: int


def _module_name(root: Path, path: Path) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


class _Collector(ast.NodeVisitor):
    def __init__(self, module: str, is_package: bool, modules: set[str]) -> None:
        self._module = module
        self._package = module if is_package else module.rpartition(".")[0]
        self._modules = modules
        self._kind = "module"
        self.edges: list[Edge] = []

    def _add(self, target: str, line: int) -> None:
        while target and target not in self._modules:
            target = target.rpartition(".")[0]
        if target and target != self._module:
            self.edges.append(Edge(self._module, target, self._kind, line))

    def _within(self, kind: str, nodes: list[ast.stmt]) -> None:
        outer, self._kind = self._kind, (self._kind if self._kind == "type_checking" else kind)
        for node in nodes:
            self.visit(node)
        self._kind = outer

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        self._within("function", node.body)

    def visit_AsyncFunctionDef(self, node: ast.AsyncFunctionDef) -> None:
        self._within("function", node.body)

    def visit_If(self, node: ast.If) -> None:
        if _is_type_checking(node.test):
            self._within("type_checking", node.body)
            self._within(self._kind, node.orelse)
        else:
            self.generic_visit(node)

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self._add(alias.name, node.lineno)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if node.level:
            base = self._package
            for _ in range(node.level - 1):
                base = base.rpartition(".")[0]
            source = f"{base}.{node.module}" if node.module else base
        else:
            source = node.module or ""
        for alias in node.names:
            candidate = f"{source}.{alias.name}"
            self._add(candidate if candidate in self._modules else source, node.lineno)


@dataclass
class ImportGraph:
    modules: set[str]
    edges: list[Edge]

    def _adjacency(self, kinds: frozenset[str]) -> dict[str, set[str]]:
        adjacency: dict[str, set[str]] = {module: set() for module in self.modules}
        for edge in self.edges:
            if edge.kind in kinds:
                adjacency[edge.importer].add(edge.imported)
        return adjacency

    def cycles(self, kinds: frozenset[str] = RUNTIME_KINDS) -> list[list[str]]:
        """One shortest cycle through each module that sits on one, as ``[a, b, a]``, deduplicated
        (a cycle is the same whichever of its modules it is written from)."""
        adjacency = self._adjacency(kinds)
        found: dict[frozenset[tuple[str, str]], list[str]] = {}
        for start in sorted(self.modules):
            cycle = _shortest_cycle(adjacency, start)
            if cycle:
                found.setdefault(frozenset(pairwise(cycle)), _rotated(cycle))
        return sorted(found.values())

    def upward(self, floors: list[str]) -> list[Edge]:
        """Imports from a lower floor to a higher one; ``floors`` lists packages bottom first.
        Every kind counts: a type-only import upward still makes the lower floor know the upper."""
        def floor(module: str) -> int | None:
            for index, prefix in enumerate(floors):
                if module == prefix or module.startswith(prefix + "."):
                    return index
            return None

        wrong = []
        for edge in self.edges:
            low, high = floor(edge.importer), floor(edge.imported)
            if low is not None and high is not None and high > low:
                wrong.append(edge)
        return wrong

    def why(self, cycle: list[str], kinds: frozenset[str] = RUNTIME_KINDS) -> list[Edge]:
        """The import statements that make up a cycle, one per step."""
        steps = []
        for importer, imported in pairwise(cycle):
            steps.append(next(edge for edge in self.edges
                              if edge.importer == importer and edge.imported == imported and edge.kind in kinds))
        return steps


def _shortest_cycle(adjacency: dict[str, set[str]], start: str) -> list[str] | None:
    parent: dict[str, str] = {}
    queue = deque([start])
    seen = {start}
    while queue:
        current = queue.popleft()
        for following in sorted(adjacency[current]):
            if following == start:
                path = [current]
                while path[-1] != start:
                    path.append(parent[path[-1]])
                return [*reversed(path), start]
            if following not in seen:
                seen.add(following)
                parent[following] = current
                queue.append(following)
    return None


def _rotated(cycle: list[str]) -> list[str]:
    ring = cycle[:-1]
    first = ring.index(min(ring))
    ring = ring[first:] + ring[:first]
    return [*ring, ring[0]]


def read_package(root: Path) -> ImportGraph:
    """Every module under the package directory ``root`` and the imports among them."""
    paths = sorted(root.rglob("*.py"))
    modules = {_module_name(root, path) for path in paths}
    edges: list[Edge] = []
    for path in paths:
        name = _module_name(root, path)
        collector = _Collector(name, path.name == "__init__.py", modules)
        collector.visit(ast.parse(path.read_text(encoding="utf-8"), filename=str(path)))
        edges.extend(collector.edges)
    return ImportGraph(modules=modules, edges=edges)


def main(argv: list[str]) -> int:
    root = Path(argv[0]) if argv else Path(__file__).resolve().parent.parent / "argus"
    graph = read_package(root)
    for title, kinds in (("module-level imports", frozenset({"module"})),
                         ("module- and function-level imports (what runs)", RUNTIME_KINDS),
                         ("all imports, TYPE_CHECKING included", RUNTIME_KINDS | {"type_checking"})):
        cycles = graph.cycles(kinds)
        print(f"{len(cycles)} cycle(s) over {title}:")
        for cycle in cycles:
            steps = ", ".join(f"{e.importer.rpartition('.')[2]}:{e.line} {e.kind}" for e in graph.why(cycle, kinds))
            print(f"  {' -> '.join(cycle)}   [{steps}]")
    upward = graph.upward([root.name + ".agent", root.name + ".config", root.name + ".daemon"])
    print(f"{len(upward)} upward import(s):")
    for edge in upward:
        print(f"  {edge.importer}:{edge.line} -> {edge.imported} ({edge.kind})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
