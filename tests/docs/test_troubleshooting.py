"""Each message docs/troubleshooting.md explains is still one Argus can print: a reworded or
removed message fails here until the page follows.

A message is the code span in the first column of the page's tables. ``…`` stands for what varies,
or for a seam where the code joins two strings (a prefix and a reason); each part between must
appear in a string literal or f-string of agent/, daemon/ or config/ (implicitly concatenated
literals count as one; an f-string's replacement fields are holes, except module constants,
which are read in)."""

from __future__ import annotations

import ast
import re
from functools import cache

import pytest

from tests.docs.pages import DOCS, ROOT

PAGE = DOCS / "troubleshooting.md"
_HOLE = "\x00"


def _messages() -> list[tuple[int, str]]:
    found = []
    for number, line in enumerate(PAGE.read_text().splitlines(), start=1):
        m = re.match(r"^\| (``?)(.+?)\1 \|", line)
        if m and m.group(2) != "message":
            found.append((number, m.group(2)))
    return found


@cache
def _templates() -> tuple[str, ...]:
    """Every string the code can build, with ``_HOLE`` where an f-string inserts a value."""
    found: list[str] = []
    for package in ("argus/agent", "argus/daemon", "argus/config"):
        for path in sorted((ROOT / package).rglob("*.py")):
            tree = ast.parse(path.read_text())
            constants = {t.id: n.value.value for n in tree.body if isinstance(n, ast.Assign)
                         and isinstance(n.value, ast.Constant) and isinstance(n.value.value, str)
                         for t in n.targets if isinstance(t, ast.Name)}
            for node in ast.walk(tree):
                if isinstance(node, ast.Constant) and isinstance(node.value, str):
                    found.append(node.value)
                elif isinstance(node, ast.JoinedStr):
                    found.append("".join(_piece(v, constants) for v in node.values))
    return tuple(found)


def _piece(value: ast.expr, constants: dict[str, str]) -> str:
    if isinstance(value, ast.Constant):
        return str(value.value)
    if isinstance(value, ast.FormattedValue) and isinstance(value.value, ast.Name) and value.value.id in constants:
        return constants[value.value.id]
    return _HOLE


def _parts(message: str) -> list[str]:
    return [p.strip() for p in message.split("…") if p.strip()]


def _found(message: str) -> list[str]:
    """The parts of ``message`` that no string of the code holds."""
    return [part for part in _parts(message) if not any(part in t for t in _templates())]


def test_the_page_lists_messages_from_every_group() -> None:
    assert len(_messages()) >= 50


@pytest.mark.parametrize(("line", "message"), _messages(), ids=lambda v: str(v)[:60])
def test_a_documented_message_is_still_in_the_code(line: int, message: str) -> None:
    missing = _found(message)
    assert not missing, (f"docs/troubleshooting.md:{line}: no string in agent/, daemon/ or config/ reads "
                         f"{missing[0]!r}; the message changed: update the page")


def test_a_reworded_message_is_caught() -> None:
    assert _found("environment variable … is not set") == []
    assert _found("environment variable … was never set") == ["was never set"]
