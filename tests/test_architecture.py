"""The house's floors and walls: no import circle among ``argus`` modules, no import from a lower
floor to a higher one (``argus.agent`` at the bottom, ``argus.config`` above it, ``argus.daemon`` on
top). Every module is read with ``ast`` (``tests/import_graph.py``), nothing is imported.

An import inside a function still closes a circle (it runs on the first call); an import under
``if TYPE_CHECKING:`` never runs, so it is allowed to close one, but not to point upward.
"""

from __future__ import annotations

from pathlib import Path

from tests.import_graph import RUNTIME_KINDS, ImportGraph, read_package

ARGUS = Path(__file__).resolve().parent.parent / "argus"
FLOORS = ["argus.agent", "argus.config", "argus.daemon"]  # bottom first

# Circles tolerated for now, each the set of its modules with the issue that removes it; a new
# circle, or a known one that grows, still fails. Empty: when this test was written (issue 35) the
# store's incidents, outbox and metric_values met postgres only under TYPE_CHECKING, which is allowed.
ALLOWED: set[frozenset[str]] = set()


def _shown(graph: ImportGraph, cycle: list[str]) -> str:
    steps = graph.why(cycle)
    return " -> ".join(cycle) + "  (" + "; ".join(
        f"{edge.importer.replace('.', '/')}.py:{edge.line}" + (" inside a function" if edge.kind == "function" else "")
        for edge in steps) + ")"


def test_no_import_circle_among_argus_modules() -> None:
    graph = read_package(ARGUS)
    circles = [cycle for cycle in graph.cycles(RUNTIME_KINDS) if frozenset(cycle) not in ALLOWED]
    assert not circles, "import circles (move the shared piece to a module both import):\n" + "\n".join(
        _shown(graph, cycle) for cycle in circles)


def test_no_import_from_a_lower_floor_to_a_higher_one() -> None:
    upward = read_package(ARGUS).upward(FLOORS)
    assert not upward, "upward imports (agent < config < daemon):\n" + "\n".join(
        f"{edge.importer.replace('.', '/')}.py:{edge.line} imports {edge.imported}" for edge in upward)


def _package(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / "pkg" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root / "pkg"


def test_the_finder_sees_a_circle_closed_by_a_lazy_import_and_says_where(tmp_path: Path) -> None:
    root = _package(tmp_path, {
        "__init__.py": "",
        "a.py": "from pkg.b import helper\n",
        "b.py": "def helper():\n    from pkg import a\n    return a\n",
        "c.py": "from . import a\n",
    })
    graph = read_package(root)
    assert graph.cycles() == [["pkg.a", "pkg.b", "pkg.a"]]
    assert _shown(graph, graph.cycles()[0]) == "pkg.a -> pkg.b -> pkg.a  (pkg/a.py:1; pkg/b.py:2 inside a function)"
    assert graph.cycles(frozenset({"module"})) == []


def test_the_finder_lets_a_type_checking_import_close_a_circle_but_not_point_upward(tmp_path: Path) -> None:
    root = _package(tmp_path, {
        "__init__.py": "",
        "low/__init__.py": "",
        "low/a.py": "from typing import TYPE_CHECKING\nimport pkg.low.b\n"
                    "if TYPE_CHECKING:\n    from pkg.high.c import C\n",
        "low/b.py": "import typing\nif typing.TYPE_CHECKING:\n    from .a import x\n",
        "high/__init__.py": "",
        "high/c.py": "from ..low.a import thing\n",
    })
    graph = read_package(root)
    assert graph.cycles() == []
    assert graph.cycles(RUNTIME_KINDS | {"type_checking"}) == [["pkg.high.c", "pkg.low.a", "pkg.high.c"],
                                                               ["pkg.low.a", "pkg.low.b", "pkg.low.a"]]
    assert [(e.importer, e.imported, e.kind) for e in graph.upward(["pkg.low", "pkg.high"])] == [
        ("pkg.low.a", "pkg.high.c", "type_checking")]


def test_the_finder_sees_a_three_module_circle_once(tmp_path: Path) -> None:
    root = _package(tmp_path, {
        "__init__.py": "",
        "x.py": "import pkg.y\n",
        "y.py": "from pkg import z\n",
        "z.py": "from pkg.x import name\n",
    })
    assert read_package(root).cycles() == [["pkg.x", "pkg.y", "pkg.z", "pkg.x"]]
