"""Projections (``find``'s and ``$project``'s) and ``$addFields``, as MongoDB applies them.

Inclusion keeps the named paths (through arrays of documents, element by element) and ``_id``
unless it is excluded; exclusion drops the named paths; a computed field (``"v": "$a.b"``) is an
aggregation expression, and a missing result leaves the field out. A new document is built for
every input, so the stored documents are never changed.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from argus.agent.engine.deadline import Deadline
from argus.agent.engine.errors import bad_value
from argus.agent.engine.expressions import Evaluate, compile_expression
from argus.agent.engine.values import MISSING, is_number, truthy

__all__ = ["Projection"]

_Tree = dict[str, Any]  # path segment -> True (the field) or a subtree


def _flag(value: Any) -> bool | None:
    """True or False for an inclusion or exclusion flag, None for a computed field."""
    if isinstance(value, bool):
        return value
    if is_number(value):
        return bool(truthy(value))
    return None


def _insert(tree: _Tree, path: str, leaf: Any) -> None:
    parts = path.split(".")
    node = tree
    for part in parts[:-1]:
        child = node.get(part)
        if not isinstance(child, dict):
            child = node[part] = {}
        node = child
    node[parts[-1]] = leaf


def _include(value: Any, tree: _Tree) -> Any:
    if isinstance(value, list):
        return [_include(v, tree) for v in value if isinstance(v, dict | list)]
    out: dict[str, Any] = {}
    for key, item in value.items():
        rule = tree.get(key)
        if rule is True:
            out[key] = item
        elif isinstance(rule, dict) and isinstance(item, dict | list):
            out[key] = _include(item, rule)
    return out


def _exclude(value: Any, tree: _Tree) -> Any:
    if isinstance(value, list):
        return [_exclude(v, tree) if isinstance(v, dict | list) else v for v in value]
    out: dict[str, Any] = {}
    for key, item in value.items():
        rule = tree.get(key)
        if rule is True:
            continue
        out[key] = _exclude(item, rule) if isinstance(rule, dict) and isinstance(item, dict | list) else item
    return out


def _set(doc: dict[str, Any], path: str, value: Any) -> None:
    parts = path.split(".")
    node = doc
    for part in parts[:-1]:
        child = node.get(part)
        child = dict(child) if isinstance(child, dict) else {}
        node[part] = child
        node = child
    if value is MISSING:
        node.pop(parts[-1], None)
    else:
        node[parts[-1]] = value


class Projection:
    """``spec`` applied to one document: ``Projection(spec, deadline)(doc)``."""

    def __init__(self, spec: Mapping[str, Any], deadline: Deadline | None = None, *, add: bool = False) -> None:
        deadline = deadline or Deadline(None)
        self.add = add
        self.computed: list[tuple[str, Evaluate]] = []
        self.included: _Tree = {}
        self.excluded: _Tree = {}
        self.keep_id = True
        id_included = False
        for path, value in spec.items():
            flag = None if add else _flag(value)
            if flag is None:
                self.computed.append((path, compile_expression(value, deadline)))
            elif path == "_id":
                self.keep_id = id_included = flag
            elif flag:
                _insert(self.included, path, True)
            else:
                _insert(self.excluded, path, True)
        if self.included and self.excluded:
            raise bad_value("Cannot do exclusion on a field in inclusion projection")
        if self.computed and self.excluded:
            raise bad_value("Cannot do exclusion on a field in an inclusion projection with computed fields")
        # {"_id": 1} alone is an inclusion projection too: only _id is kept
        self.inclusion = bool(self.included or self.computed or (id_included and not self.excluded)) and not add

    def __call__(self, doc: dict[str, Any]) -> dict[str, Any]:
        if self.add:
            out = dict(doc)
        elif self.inclusion:
            out = {"_id": doc["_id"]} if self.keep_id and "_id" in doc else {}
            out.update(_include(doc, self.included) if self.included else {})
        else:
            out = _exclude(doc, self.excluded) if self.excluded else dict(doc)
            if not self.keep_id:
                out.pop("_id", None)
        for path, evaluate in self.computed:
            _set(out, path, evaluate(doc))
        return out
