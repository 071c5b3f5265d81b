"""YAML files people edit by hand, read safely and with line numbers: ``schedules.yaml`` and contracts.

``read_yaml`` decodes (UTF-8, no control characters), composes the node tree, bounds it (an alias
bomb or deep nesting is refused before anything is built), constructs it with YAML 1.2 booleans,
and maps every key path to its line, so a validator can say ``schedules.yaml:14
schedules[2].trigger.cron: ...``. Problems are raised as ``YamlError`` with one
``file:line: message`` per problem; callers re-raise them as their own error class.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from argus.agent.errors import ArgusError
from argus.agent.secrets import SECRETS
from argus.config.yaml_syntax import describe_syntax_error

__all__ = ["MAX_NODES", "Lines", "TooManyValues", "YamlDocument", "YamlError", "line_for", "nearest", "problem_order",
           "read_yaml", "where"]

Lines = dict[tuple[Any, ...], int]


class YamlError(ArgusError):
    """A YAML file cannot be read; ``problems`` holds one ``file:line: message`` per problem."""

    def __init__(self, problems: list[str]) -> None:
        problems = [SECRETS.redact(p) for p in problems]  # a problem quotes the file, which may hold a secret
        super().__init__("\n".join(problems))
        self.problems = problems


class TooManyValues(YamlError):
    """The file holds more than ``MAX_NODES`` values; ``line`` is where composing stopped."""

    def __init__(self, file: Path, line: int) -> None:
        super().__init__([f"{file}:{line}: the file holds more than {MAX_NODES:,} values, the most a file may "
                          f"hold; refused"])
        self.line = line


@dataclass(frozen=True)
class YamlDocument:
    text: str
    data: Any
    lines: Lines  # key path -> line; (*path, "__key__") -> the line of the key itself


class _TooManyNodes(Exception):
    def __init__(self, line: int) -> None:
        super().__init__(line)
        self.line = line


class _Loader(yaml.SafeLoader):
    """YAML 1.2 booleans: only true/false. PyYAML's 1.1 rules read ``yes``, ``no``, ``on`` and
    ``off`` as booleans, so ``pager: yes`` or a country code ``NO`` would change meaning.

    Composing stops at ``max_nodes`` values: a file of 20,000 schedules is refused after the
    first few thousand, not after composing all of it."""

    composed = 0

    def compose_node(self, parent: Any, index: Any) -> Any:
        self.composed += 1
        if self.composed > MAX_NODES:
            raise _TooManyNodes(self.peek_event().start_mark.line + 1)
        return super().compose_node(parent, index)

    def construct_object(self, node: Any, deep: bool = False) -> Any:
        """A scalar YAML reads but cannot build (``2030-02-31``, ``!!int 12x``) is a YAML error at its
        line: PyYAML lets the ValueError of ``date()`` or ``int()`` through."""
        try:
            return super().construct_object(node, deep)
        except (ValueError, OverflowError, TypeError) as exc:
            shown = repr(node.value)[:80] if isinstance(node, yaml.ScalarNode) else "the value"
            raise yaml.constructor.ConstructorError(None, None, f"{shown} is no {node.tag.rsplit(':', 1)[-1]}: {exc}",
                                                    node.start_mark) from None


_Loader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:bool"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
_Loader.add_implicit_resolver("tag:yaml.org,2002:bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"),
                              list("tTfF"))


def read_yaml(file: Path, raw: bytes) -> YamlDocument:
    """Decode, bound and parse ``raw`` (the bytes of ``file``); raise ``YamlError`` naming the line
    (``TooManyValues``, a ``YamlError``, for a file of more than ``MAX_NODES`` values)."""
    text = _decode(file, raw)
    node, data = _parse(file, text)
    lines: Lines = {}
    if node is not None:
        _lines(node, (), lines)
    return YamlDocument(text, data, lines)


def _lines(node: yaml.Node, path: tuple[Any, ...], out: Lines) -> None:
    out[path] = node.start_mark.line + 1
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            k = key.value if isinstance(key, yaml.ScalarNode) else str(key.start_mark)
            out[(*path, k, "__key__")] = key.start_mark.line + 1
            _lines(value, (*path, k), out)
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            _lines(item, (*path, i), out)


_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def where(loc: tuple[Any, ...]) -> str:
    """``("schedules", 2, "trigger")`` → ``schedules[2].trigger``; a control character in a key is
    written as its escape (``a\\x00b``), never raw into a message or a terminal."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
            continue
        text = _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", str(part))
        out += f".{text}" if out else text
    return out or "(top level)"


def line_for(loc: tuple[Any, ...], lines: Lines, *, key: bool = False) -> int:
    """The line of ``loc`` (of its key, with ``key``), else of its nearest enclosing node."""
    if key and (*loc, "__key__") in lines:
        return lines[(*loc, "__key__")]
    for end in range(len(loc), -1, -1):
        if loc[:end] in lines:
            return lines[loc[:end]]
    return 1


def nearest(word: str, allowed: Iterable[str]) -> str:
    """`` (did you mean 'fields'?)`` or `` (expected one of: ...)``, for an unknown key."""
    options = list(allowed)
    hint = difflib.get_close_matches(str(word), options, n=1)
    if hint:
        return f" (did you mean '{hint[0]}'?)"
    return f" (expected one of: {', '.join(options)})" if options else ""


def problem_order(problem: str) -> tuple[int, str]:
    m = re.search(r":(\d+) ", problem)
    return (int(m.group(1)) if m else 0, problem)


MAX_NODES = 20_000  # a schedules file of a thousand schedules has far fewer; an alias bomb has billions
_MAX_DEPTH = 64
_NOT_TEXT = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def _decode(file: Path, raw: bytes) -> str:
    """The file as text: UTF-8 without control characters, or an error naming the line."""
    if raw.startswith((b"\xff\xfe", b"\xfe\xff")) or (len(raw) > 1 and b"\x00" in raw[:2]):
        raise YamlError([f"{file}:1: the file is UTF-16; save it as UTF-8"])
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[:exc.start].count(b"\n") + 1
        raise YamlError([f"{file}:{line}: not UTF-8 (byte 0x{raw[exc.start]:02x} at offset {exc.start}); "
                         f"save the file as UTF-8"]) from None
    bad = _NOT_TEXT.search(text)
    if bad:
        line = text.count("\n", 0, bad.start()) + 1
        raise YamlError([f"{file}:{line}: control character U+{ord(bad.group()):04X} in the file; remove it"])
    return text.removeprefix("\ufeff")


def _parse(file: Path, text: str) -> tuple[yaml.Node | None, Any]:
    """Compose, bound, then construct: an alias bomb or deep nesting is refused before it costs anything."""
    loader = _Loader(text)
    try:
        node = loader.get_single_node()
        if node is not None:
            _check_size(file, node)
            _check_keys(file, node)
            return node, loader.construct_document(node)
        return None, None
    except yaml.MarkedYAMLError as exc:
        line, what = describe_syntax_error(exc)
        raise YamlError([f"{file}:{line}: not valid YAML: {what}"]) from None
    except yaml.YAMLError as exc:
        raise YamlError([f"{file}:1: not valid YAML: {str(exc).splitlines()[0][:200]}"]) from None
    except RecursionError:
        raise YamlError([f"{file}:1: nested too deeply (at most {_MAX_DEPTH} levels)"]) from None
    except _TooManyNodes as exc:
        raise TooManyValues(file, exc.line) from None
    finally:
        loader.dispose()


_NULL = "tag:yaml.org,2002:null"
_MERGE = "tag:yaml.org,2002:merge"


def _check_keys(file: Path, root: yaml.Node) -> None:
    """A key given twice in one mapping, or a null key, is an error at its line: YAML's loader keeps
    the last of two equal keys (the first declaration is dropped without a word) and reads ``~:`` as
    a key named None."""
    problems: list[str] = []
    stack: list[tuple[yaml.Node, tuple[Any, ...]]] = [(root, ())]
    while stack:
        node, path = stack.pop()
        if isinstance(node, yaml.MappingNode):
            seen: dict[tuple[str, str], int] = {}
            for key, value in node.value:
                line = key.start_mark.line + 1
                if not isinstance(key, yaml.ScalarNode) or key.tag == _MERGE:
                    stack.append((value, path))
                    continue
                if key.tag == _NULL:
                    problems.append(f"{file}:{line} {where(path)}: a key is null ({key.value or 'empty'}); "
                                    f"give it a name")
                elif (key.tag, key.value) in seen:
                    problems.append(f"{file}:{line} {where((*path, key.value))}: given twice in one mapping "
                                    f"(first at line {seen[(key.tag, key.value)]}); YAML would keep only this "
                                    f"one: merge the two or remove one")
                else:
                    seen[(key.tag, key.value)] = line
                stack.append((value, (*path, key.value)))
        elif isinstance(node, yaml.SequenceNode):
            stack.extend((item, (*path, i)) for i, item in enumerate(node.value))
    if problems:
        raise YamlError(sorted(problems, key=problem_order))


def _check_size(file: Path, root: yaml.Node) -> None:
    """Count nodes as construction would see them (an alias counts its whole subtree again)."""
    count = 0
    stack: list[tuple[yaml.Node, int]] = [(root, 1)]
    while stack:
        node, depth = stack.pop()
        count += 1
        if count > MAX_NODES:
            raise YamlError([f"{file}:{node.start_mark.line + 1}: the file expands to more than {MAX_NODES:,} "
                             f"values (YAML aliases referring to aliases?); refused"])
        if depth > _MAX_DEPTH:
            raise YamlError([f"{file}:{node.start_mark.line + 1}: nested more than {_MAX_DEPTH} levels deep"])
        if isinstance(node, yaml.MappingNode):
            stack.extend((part, depth + 1) for pair in node.value for part in pair)
        elif isinstance(node, yaml.SequenceNode):
            stack.extend((item, depth + 1) for item in node.value)
