"""Aggregation pipelines run as streams over batches of documents, without copying them.

Each stage takes a batch (``feed``) and returns what it lets through; blocking stages (``$group``,
``$sort``, ``$count``, ``$sample``) keep state and give their output at ``finish``. The store
decodes the collection a batch at a time, so a read holds one batch of documents, not the
collection. ``$facet`` runs its sub-pipelines on the same batches as a tree of shared prefixes:
the ``get_stats`` pipelines of one field (``$project``, ``$unwind``, ``$match``) are computed
once for min, max, distinct and duplicates alike, and every ``[$match, $count]`` branch reads the
batch as it stands. Stages cover the guard's allow-list (``$match``, ``$project``,
``$addFields``, ``$unwind``, ``$group``, ``$sort``, ``$limit``, ``$skip``, ``$count``,
``$sample``, ``$facet``, ``$sortByCount``); anything else is refused as a server refuses it.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from decimal import Decimal
from typing import Any

import bson
from bson import Decimal128

from argus.agent.engine.deadline import Deadline
from argus.agent.engine.errors import bad_value
from argus.agent.engine.expressions import Evaluate, compile_expression, field_getter
from argus.agent.engine.match import compile_filter
from argus.agent.engine.projection import Projection
from argus.agent.engine.values import MISSING, group_key, is_number, number_value, sort_key

__all__ = ["Pipeline", "Stage", "build_pipeline", "sort_documents", "sort_value"]

Docs = list[Any]
_CHECK_EVERY = 4096


class Stage:
    """One stage of a stream: ``feed`` a batch, ``finish`` once at the end."""

    def feed(self, docs: Docs) -> Docs:
        return docs

    def finish(self) -> Docs:
        return []


class Pipeline(Stage):
    """Stages in sequence: what one lets through is the next one's batch."""

    def __init__(self, stages: list[Stage]) -> None:
        self.stages = stages

    def feed(self, docs: Docs) -> Docs:
        for stage in self.stages:
            docs = stage.feed(docs)
            if not docs:
                return []
        return docs

    def finish(self) -> Docs:
        carried: Docs = []
        for stage in self.stages:
            out = stage.feed(carried) if carried else []
            carried = out + stage.finish()
        return carried

    @property
    def done(self) -> bool:
        """True once a ``$limit`` at the front is full: later batches cannot change the answer."""
        return any(isinstance(s, _Limit) and s.left <= 0 for s in self.stages[:1])


class _Match(Stage):
    def __init__(self, query: Any, deadline: Deadline) -> None:
        self.test = compile_filter(query, deadline)

    def feed(self, docs: Docs) -> Docs:
        return list(filter(self.test, docs))


class _Project(Stage):
    def __init__(self, spec: Any, deadline: Deadline, *, add: bool = False) -> None:
        if not isinstance(spec, Mapping) or not spec:
            raise bad_value("$project specification must be an object")
        self.project = Projection(spec, deadline, add=add)

    def feed(self, docs: Docs) -> Docs:
        return [self.project(d) for d in docs]


class _Unwind(Stage):
    def __init__(self, spec: Any, deadline: Deadline) -> None:
        spec = {"path": spec} if isinstance(spec, str) else spec
        if not isinstance(spec, Mapping) or not isinstance(spec.get("path"), str) or not spec["path"].startswith("$"):
            raise bad_value("$unwind needs a field path")
        self.parts = spec["path"][1:].split(".")
        self.preserve = bool(spec.get("preserveNullAndEmptyArrays", False))
        self.index = spec.get("includeArrayIndex")
        self.deadline = deadline

    def _get(self, doc: Any) -> Any:
        value = doc
        for part in self.parts:
            if not isinstance(value, dict):
                return MISSING
            value = value.get(part, MISSING)
        return value

    def _with(self, doc: dict[str, Any], value: Any, index: Any) -> dict[str, Any]:
        out = dict(doc)
        node = out
        for part in self.parts[:-1]:
            node[part] = dict(node[part])
            node = node[part]
        if value is MISSING:
            node.pop(self.parts[-1], None)
        else:
            node[self.parts[-1]] = value
        if self.index:
            out[self.index] = index
        return out

    def feed(self, docs: Docs) -> Docs:
        out: Docs = []
        for doc in docs:
            value = self._get(doc)
            if isinstance(value, list):
                if value:
                    if len(value) > _CHECK_EVERY:
                        self.deadline.check()
                    if self.index or len(self.parts) > 1:
                        out.extend(self._with(doc, v, i) for i, v in enumerate(value))
                    else:
                        key = self.parts[0]
                        out.extend({**doc, key: v} for v in value)
                    if len(out) > _CHECK_EVERY:
                        self.deadline.check()
                elif self.preserve:
                    out.append(self._with(doc, MISSING, None))
            elif value is None or value is MISSING:
                if self.preserve:
                    out.append(self._with(doc, value, None) if self.index else doc)
            else:
                out.append(self._with(doc, value, None) if self.index else doc)
        return out


class _Accumulator:
    def __init__(self, op: str, expr: Evaluate) -> None:
        self.op, self.expr = op, expr

    def start(self) -> list[Any]:
        starts: dict[str, list[Any]] = {"$sum": [0, False, False], "$avg": [0, 0, False], "$push": [[]],
                                        "$addToSet": [{}], "$count": [0]}
        return starts.get(self.op, [MISSING])

    def add(self, state: list[Any], doc: Any) -> None:
        op = self.op
        if op == "$count":
            state[0] += 1
            return
        value = self.expr(doc)
        if op == "$sum" or op == "$avg":
            if is_number(value):
                number = number_value(value)
                if isinstance(number, Decimal) or state[2]:
                    state[2] = True
                    state[0] = Decimal(state[0]) + Decimal(number)
                else:
                    if op == "$sum" and isinstance(number, float):
                        state[1] = True
                    state[0] += number
                if op == "$avg":
                    state[1] += 1
        elif op == "$min" or op == "$max":
            if value is None or value is MISSING:
                return
            if state[0] is MISSING:
                state[0] = value
            else:
                new, current = sort_key(value), sort_key(state[0])
                if (new > current) if op == "$max" else (new < current):
                    state[0] = value
        elif op == "$first":
            if len(state) == 1:
                state[0] = None if value is MISSING else value
                state.append(True)
        elif op == "$last":
            state[0] = None if value is MISSING else value
        elif op == "$push":
            if value is not MISSING:
                state[0].append(value)
        elif op == "$addToSet" and value is not MISSING:
            state[0].setdefault(group_key(value), value)

    def result(self, state: list[Any]) -> Any:
        op = self.op
        if op == "$sum":
            total = state[0]
            if state[2]:
                return Decimal128(Decimal(total))
            if state[1]:
                return float(total)
            return total if -(2 ** 63) <= total < 2 ** 63 else float(total)
        if op == "$avg":
            if not state[1]:
                return None
            if state[2]:
                return Decimal128(Decimal(state[0]) / state[1])
            return float(state[0]) / state[1]
        if op in ("$min", "$max", "$first", "$last"):
            return None if state[0] is MISSING else state[0]
        if op == "$addToSet":
            return list(state[0].values())
        return state[0]


_ACCUMULATORS = frozenset({"$sum", "$avg", "$min", "$max", "$first", "$last", "$push", "$addToSet", "$count"})


class _Group(Stage):
    def __init__(self, spec: Any, deadline: Deadline) -> None:
        if not isinstance(spec, Mapping) or "_id" not in spec:
            raise bad_value("a group specification must include an _id")
        self.key = compile_expression(spec["_id"], deadline)
        self.outputs: list[tuple[str, _Accumulator]] = []
        for name, acc in spec.items():
            if name == "_id":
                continue
            if not isinstance(acc, Mapping) or len(acc) != 1:
                raise bad_value(f"the group aggregate field '{name}' must be defined as an expression inside an object")
            if next(iter(acc)) not in _ACCUMULATORS:
                raise bad_value(f"unknown group operator '{next(iter(acc))}'")
            (op, expr), = acc.items()
            self.outputs.append((name, _Accumulator(op, compile_expression(expr, deadline))))
        self.groups: dict[Any, tuple[Any, list[list[Any]]]] = {}
        self.deadline = deadline

    def feed(self, docs: Docs) -> Docs:
        groups, outputs = self.groups, self.outputs
        for doc in docs:
            value = self.key(doc)
            if value is MISSING:
                value = None
            key = group_key(value)
            entry = groups.get(key)
            if entry is None:
                entry = groups[key] = (value, [acc.start() for _, acc in outputs])
            for (_, acc), state in zip(outputs, entry[1], strict=True):
                acc.add(state, doc)
        return []

    def finish(self) -> Docs:
        out = []
        for value, states in self.groups.values():
            row = {"_id": value}
            for (name, acc), state in zip(self.outputs, states, strict=True):
                row[name] = acc.result(state)
            out.append(row)
        self.groups = {}
        return out


def sort_value(value: Any, descending: bool) -> tuple[Any, ...]:
    if value is MISSING:
        value = None
    if isinstance(value, list):
        if not value:
            return (-2,)
        keys = [sort_key(v) for v in value]
        return max(keys) if descending else min(keys)
    return sort_key(value)


def _sort_by(get: Evaluate, descending: bool) -> Callable[[Any], tuple[Any, ...]]:
    return lambda doc: sort_value(get(doc), descending)


def sort_documents(docs: Docs, spec: Mapping[str, int]) -> Docs:
    """``docs`` in MongoDB's order for ``spec`` (stable; arrays sort by their least or greatest element)."""
    out = list(docs)
    for path, direction in reversed(list(spec.items())):
        out.sort(key=_sort_by(field_getter(path), direction == -1), reverse=direction == -1)
    return out


class _Sort(Stage):
    def __init__(self, spec: Any) -> None:
        if not isinstance(spec, Mapping) or not spec or any(d not in (1, -1) for d in spec.values()):
            raise bad_value("$sort key ordering must be 1 (for ascending) or -1 (for descending)")
        self.spec = dict(spec)
        self.rows: Docs = []

    def feed(self, docs: Docs) -> Docs:
        self.rows.extend(docs)
        return []

    def finish(self) -> Docs:
        rows, self.rows = self.rows, []
        return sort_documents(rows, self.spec)


class _Limit(Stage):
    def __init__(self, n: Any) -> None:
        if not is_number(n) or number_value(n) <= 0:
            raise bad_value("the limit must be positive")
        self.left = int(number_value(n))

    def feed(self, docs: Docs) -> Docs:
        if self.left <= 0:
            return []
        taken = docs[:self.left]
        self.left -= len(taken)
        return taken


class _Skip(Stage):
    def __init__(self, n: Any) -> None:
        if not is_number(n) or number_value(n) < 0:
            raise bad_value("the skip must be non-negative")
        self.left = int(number_value(n))

    def feed(self, docs: Docs) -> Docs:
        if self.left <= 0:
            return docs
        dropped = docs[:self.left]
        self.left -= len(dropped)
        return docs[len(dropped):]


class _Count(Stage):
    def __init__(self, name: Any) -> None:
        if not isinstance(name, str) or not name or name.startswith("$") or "." in name:
            raise bad_value("the count field must be a non-empty string without '$' or '.'")
        self.name, self.n = name, 0

    def feed(self, docs: Docs) -> Docs:
        self.n += len(docs)
        return []

    def finish(self) -> Docs:
        return [{self.name: self.n}] if self.n else []


class _Sample(Stage):
    """Reservoir sampling: ``size`` documents drawn uniformly, in one pass."""

    def __init__(self, spec: Any, rng: random.Random) -> None:
        if not isinstance(spec, Mapping) or not is_number(spec.get("size")) or number_value(spec["size"]) < 0:
            raise bad_value("size argument to $sample must be a non-negative number")
        self.size, self.rng, self.seen = int(number_value(spec["size"])), rng, 0
        self.kept: Docs = []

    def feed(self, docs: Docs) -> Docs:
        for doc in docs:
            self.seen += 1
            if len(self.kept) < self.size:
                self.kept.append(doc)
            else:
                j = self.rng.randrange(self.seen)
                if j < self.size:
                    self.kept[j] = doc
        return []

    def finish(self) -> Docs:
        self.rng.shuffle(self.kept)
        return self.kept


class _SortByCount(Stage):
    def __init__(self, expr: Any, deadline: Deadline) -> None:
        self.inner = Pipeline([_Group({"_id": expr, "count": {"$sum": 1}}, deadline), _Sort({"count": -1})])

    def feed(self, docs: Docs) -> Docs:
        return self.inner.feed(docs)

    def finish(self) -> Docs:
        return self.inner.finish()


class _Node:
    def __init__(self, stage: Stage) -> None:
        self.stage = stage
        self.children: dict[bytes, _Node] = {}
        self.ends: list[str] = []
        self.rows: Docs = []


def _stage_key(spec: Any) -> bytes:
    try:
        return bson.encode({"s": spec})
    except Exception:  # a value BSON cannot hold: not shared
        return repr(id(spec)).encode()


class _Facet(Stage):
    """Every sub-pipeline on the same batches; equal stage prefixes are computed once."""

    def __init__(self, spec: Any, build: Callable[[Any], Stage]) -> None:
        if not isinstance(spec, Mapping) or not spec:
            raise bad_value("$facet requires at least one pipeline")
        self.names = list(spec)
        self.root = _Node(Stage())
        for name, stages in spec.items():
            if not isinstance(stages, list):
                raise bad_value(f"$facet output '{name}' must be an array of stages")
            node = self.root
            for stage_spec in stages:
                key = _stage_key(stage_spec)
                child = node.children.get(key)
                if child is None:
                    child = node.children[key] = _Node(build(stage_spec))
                node = child
            node.ends.append(name)

    def _feed(self, node: _Node, docs: Docs) -> None:
        if node.ends:
            node.rows.extend(docs)
        for child in node.children.values():
            out = child.stage.feed(docs)
            if out:
                self._feed(child, out)

    def feed(self, docs: Docs) -> Docs:
        self._feed(self.root, docs)
        return []

    def _finish(self, node: _Node) -> None:
        for child in node.children.values():
            out = child.stage.finish()
            if out:
                self._feed(child, out)
            self._finish(child)

    def finish(self) -> Docs:
        self._finish(self.root)
        result: dict[str, Docs] = {name: [] for name in self.names}
        stack = [self.root]
        while stack:
            node = stack.pop()
            for name in node.ends:
                result[name] = node.rows
            stack.extend(node.children.values())
        return [result]


def build_pipeline(pipeline: Any, deadline: Deadline, *, rng: random.Random | None = None,
                   in_facet: bool = False) -> Pipeline:
    """``pipeline`` (a list of stage documents) as a runnable stream."""
    if not isinstance(pipeline, list):
        raise bad_value("a pipeline must be an array of stages")
    rng = rng or random.Random()

    def build(spec: Any) -> Stage:
        if not isinstance(spec, Mapping) or len(spec) != 1:
            raise bad_value("a pipeline stage specification object must contain exactly one field")
        (name, body), = spec.items()
        if name == "$match":
            return _Match(body, deadline)
        if name == "$project":
            return _Project(body, deadline)
        if name == "$addFields":
            return _Project(body, deadline, add=True)
        if name == "$unwind":
            return _Unwind(body, deadline)
        if name == "$group":
            return _Group(body, deadline)
        if name == "$sort":
            return _Sort(body)
        if name == "$limit":
            return _Limit(body)
        if name == "$skip":
            return _Skip(body)
        if name == "$count":
            return _Count(body)
        if name == "$sample":
            return _Sample(body, rng)
        if name == "$sortByCount":
            return _SortByCount(body, deadline)
        if name == "$facet":
            if in_facet:
                raise bad_value("$facet is not allowed to be used within a $facet stage")
            return _Facet(body, lambda sub: build_pipeline([sub], deadline, rng=rng, in_facet=True).stages[0])
        raise bad_value(f"Unrecognized pipeline stage name: '{name}'")

    return Pipeline([build(spec) for spec in pipeline])
