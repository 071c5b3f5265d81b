"""Shapes from sampled documents (pure): the discriminator, each shape's paths, type mixes, renames.

The discriminator is found from values, never from names: among the low-cardinality scalar
fields nearly every document holds, the one whose value best explains which other paths (and
which forms of them: ``coordinates`` as ``array<number>`` or ``array<array<number>>``) a document
has, measured as the entropy of each path's presence that knowing the value removes (the
decision-tree split of Gallinucci et al., "Schema Profiling of Document Stores"). A field that
explains less than half of that variation is no discriminator: the collection has one shape.
"""

from __future__ import annotations

import hashlib
import math
from collections import Counter, defaultdict
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

from bson import ObjectId

from agent.engine.values import bson_type as engine_bson_type
from agent.shapes.models import Rename, Shape, ShapePath, Shapes, TypeMix

__all__ = ["MIN_DOCUMENTS", "discover", "form_of"]

MIN_DOCUMENTS = 20        # fewer sampled documents say nothing about shapes
MAX_VALUES = 20           # a discriminator has at most this many values in the sample ...
VALUES_PER_DOCUMENT = 0.2  # ... and at most one per five sampled documents
CANDIDATE_PRESENCE = 0.95  # held by nearly every document
MIN_EXPLAINED = 0.5       # explains at least half the presence variation of the other paths
SPECIFIC_IN = 0.5         # a path specific to a shape: held by at least half its documents ...
SPECIFIC_OUT = 0.1        # ... and by at most a tenth of the others
MIX_SHARE = 0.05          # a form is part of a mix when it is at least this share of the values (else a stray)
RENAME_OVERLAP = 0.02     # two names hardly ever in the same document
RENAME_COVER = 0.9        # ... and between them in nearly every document holding their parent
RENAME_SEPARATION = 0.9   # ... the old name before a time, the new one after, for this share of them
MAX_FORM_DEPTH = 4
MAX_ELEMENTS = 50

_FAMILY = {"int": "number", "long": "number", "double": "number", "decimal": "number"}


def _family(value: Any) -> str:
    try:
        kind = engine_bson_type(value)
    except TypeError:
        kind = "unknown"
    return _FAMILY.get(kind, kind)


def form_of(value: Any, depth: int = 0) -> str:
    """A value's type with an array's element forms: ``array<array<number>>`` for a LineString's coordinates."""
    kind = _family(value)
    if kind != "array" or depth >= MAX_FORM_DEPTH:
        return kind
    inner = sorted({form_of(v, depth + 1) for v in value[:MAX_ELEMENTS]})
    return f"array<{'|'.join(inner)}>" if inner else "array<>"


class _Doc:
    """One sampled document as shape discovery sees it."""

    __slots__ = ("elements", "forms", "scalars", "time", "values")

    def __init__(self) -> None:
        self.forms: dict[str, set[str]] = defaultdict(set)   # path -> forms of its non-null values
        self.scalars: dict[str, Any] = {}                     # path -> value, for paths outside arrays
        self.values: dict[str, set[str]] = defaultdict(set)  # path -> hashes of its values
        self.elements: dict[str, Counter[str]] = defaultdict(Counter)  # array path -> element types
        self.time: datetime | None = None


def _digest(value: Any) -> str:
    return hashlib.blake2b(repr(value).encode(), digest_size=8).hexdigest()


def _walk(doc: dict[str, Any], prefix: str, out: _Doc, in_array: bool, depth: int) -> None:
    if depth > 20:
        return
    for key, value in doc.items():
        path = prefix + str(key)
        if value is None:
            continue
        form = form_of(value)
        out.forms[path].add(form)
        if not isinstance(value, dict | list):
            out.values[path].add(_digest(value))
            if not in_array and isinstance(value, str | int | bool) and not isinstance(value, float):
                out.scalars[path] = value
        if isinstance(value, dict):
            _walk(value, path + ".", out, in_array, depth + 1)
        elif isinstance(value, list):
            for item in value[:MAX_ELEMENTS]:
                out.elements[path][_family(item)] += 1
                if isinstance(item, dict):
                    _walk(item, path + ".", out, True, depth + 1)


def _read(documents: Iterable[dict[str, Any]]) -> list[_Doc]:
    docs = []
    for document in documents:
        d = _Doc()
        _walk(document, "", d, False, 0)
        oid = document.get("_id")
        if isinstance(oid, ObjectId):
            d.time = oid.generation_time.astimezone(UTC)
        docs.append(d)
    return docs


def _h(p: float) -> float:
    return 0.0 if p <= 0.0 or p >= 1.0 else -(p * math.log2(p) + (1 - p) * math.log2(1 - p))


def _features(docs: list[_Doc]) -> dict[str, list[bool]]:
    """Per feature (a path, or a path's form when the path has several), which documents hold it."""
    forms: dict[str, set[str]] = defaultdict(set)
    for d in docs:
        for path, fs in d.forms.items():
            forms[path] |= fs
    out: dict[str, list[bool]] = {}
    for path in sorted(forms):
        if path == "_id" or path.startswith("_id."):
            continue
        out[path] = [path in d.forms for d in docs]
        if len(forms[path]) > 1:
            for form in sorted(forms[path]):
                out[f"{path}: {form}"] = [form in d.forms.get(path, ()) for d in docs]
    return out


def _candidates(docs: list[_Doc]) -> list[str]:
    n = len(docs)
    held: Counter[str] = Counter()
    values: dict[str, set[Any]] = defaultdict(set)
    for d in docs:
        for path, value in d.scalars.items():
            held[path] += 1
            if len(values[path]) <= MAX_VALUES:
                values[path].add((type(value).__name__, value))
    return sorted(p for p, c in held.items() if p != "_id" and c >= CANDIDATE_PRESENCE * n
                  and 2 <= len(values[p]) <= min(MAX_VALUES, VALUES_PER_DOCUMENT * n))


def _explained(docs: list[_Doc], path: str, features: dict[str, list[bool]]) -> tuple[float, float]:
    """(entropy removed, entropy there was) over ``features`` by knowing ``path``'s value; the removal
    expected by chance from as many values is taken off each feature's."""
    groups: dict[Any, list[int]] = defaultdict(list)
    for i, d in enumerate(docs):
        groups[(type(d.scalars.get(path)).__name__, d.scalars.get(path))].append(i)
    n = len(docs)
    chance = (len(groups) - 1) / (2 * n * math.log(2))
    removed = total = 0.0
    for name, held in features.items():
        if name == path or name.startswith(path + ".") or name.startswith(path + ":"):
            continue
        before = _h(sum(held) / n)
        if before == 0.0:
            continue
        after = sum(len(ix) / n * _h(sum(held[i] for i in ix) / len(ix)) for ix in groups.values())
        total += before
        removed += max(0.0, before - after - chance)
    return removed, total


def _shapes(docs: list[_Doc], path: str, features: dict[str, list[bool]]) -> list[Shape]:
    groups: dict[Any, list[int]] = defaultdict(list)
    for i, d in enumerate(docs):
        if path in d.scalars:
            groups[d.scalars[path]].append(i)
    n = len(docs)
    order = sorted(groups.items(), key=lambda kv: (-len(kv[1]), str(kv[0])))
    out = []
    for value, ix in order:
        inside = set(ix)
        others = n - len(ix)
        specific = []
        for name, held in features.items():
            if name == path or name.startswith(path + ".") or name.startswith(path + ":"):
                continue
            here = sum(held[i] for i in ix) / len(ix)
            there = (sum(held) - sum(held[i] for i in ix)) / others if others else 0.0
            if here >= SPECIFIC_IN and there <= SPECIFIC_OUT:
                specific.append(name)
        paths: dict[str, Counter[str]] = defaultdict(Counter)
        present: Counter[str] = Counter()
        for i in inside:
            for p, forms in docs[i].forms.items():
                if p != "_id":
                    present[p] += 1
                    paths[p].update(forms)
        # A path's forms are named only where they are what sets the shape apart.
        specific = [s for s in specific if ": " not in s or s.split(": ", 1)[0] not in specific]
        out.append(Shape(
            label=str(value), value=value, sampled=len(ix), share=round(len(ix) / n, 4), specific=specific,
            paths=[ShapePath(path=p, presence=round(present[p] / len(ix), 4), types=dict(paths[p]))
                   for p in sorted(present, key=lambda p: (-present[p], p))]))
    return out


def _mixes(docs: list[_Doc]) -> list[TypeMix]:
    values: dict[str, Counter[str]] = defaultdict(Counter)
    elements: dict[str, Counter[str]] = defaultdict(Counter)
    newest: dict[tuple[str, bool, str], datetime] = {}
    for d in docs:
        for path, forms in d.forms.items():
            for form in forms:
                kind = form.split("<", 1)[0]
                values[path][kind] += 1
                _newer(newest, (path, False, kind), d.time)
        for path, kinds in d.elements.items():
            elements[path].update(kinds)
            for kind in kinds:
                _newer(newest, (path, True, kind), d.time)
    out = []
    for is_elements, table in ((False, values), (True, elements)):
        for path in sorted(table):
            counts = table[path]
            total = sum(counts.values())
            kept = {k: c for k, c in counts.items() if k != "null" and c >= 2 and c >= MIX_SHARE * total}
            if len(kept) < 2 or path == "_id":
                continue
            out.append(TypeMix(path=path, elements=is_elements, sampled=dict(sorted(counts.items())),
                               last_written={k: newest[(path, is_elements, k)] for k in sorted(counts)
                                             if (path, is_elements, k) in newest}))
    return out


def _newer(newest: dict[tuple[str, bool, str], datetime], key: tuple[str, bool, str], at: datetime | None) -> None:
    if at is not None and (key not in newest or at > newest[key]):
        newest[key] = at


def _parent(path: str) -> str:
    return path.rsplit(".", 1)[0] if "." in path else ""


def _renames(docs: list[_Doc], shaped: set[str], discriminator: str | None) -> list[Rename]:
    timed = [d for d in docs if d.time is not None]
    if len(timed) < MIN_DOCUMENTS:
        return []
    held: dict[str, list[int]] = defaultdict(list)
    for i, d in enumerate(timed):
        for path in d.forms:
            held[path].append(i)
    parents: Counter[str] = Counter()
    for d in timed:
        parents.update({_parent(p) for p in d.forms})
    parents[""] = len(timed)
    found: list[Rename] = []
    paths = sorted(p for p in held if p != "_id" and p != discriminator and p not in shaped
                   and len(held[p]) >= max(3, 0.02 * len(timed)))
    for a in paths:
        for b in paths:
            if a >= b or _parent(a) != _parent(b) or a.startswith(b + ".") or b.startswith(a + "."):
                continue
            rename = _rename(timed, a, b, held, parents[_parent(a)])
            if rename is not None:
                found.append(rename)
    found.sort(key=lambda r: (-r.separation, r.old, r.new))
    used: set[str] = set()
    out = []
    for r in found:  # each name in one rename: the best separated
        if r.old not in used and r.new not in used:
            used |= {r.old, r.new}
            out.append(r)
    return out


def _rename(docs: list[_Doc], a: str, b: str, held: dict[str, list[int]], parent: int) -> Rename | None:
    sa, sb = set(held[a]), set(held[b])
    union = sa | sb
    if len(sa & sb) > RENAME_OVERLAP * len(union) or len(union) < RENAME_COVER * parent:
        return None
    kinds_a = Counter(f.split("<", 1)[0] for i in sa for f in docs[i].forms[a])
    kinds_b = Counter(f.split("<", 1)[0] for i in sb for f in docs[i].forms[b])
    if kinds_a.most_common(1)[0][0] != kinds_b.most_common(1)[0][0]:
        return None
    values_a = set().union(*(docs[i].values.get(a, set()) for i in sa))
    values_b = set().union(*(docs[i].values.get(b, set()) for i in sb))
    if values_a and values_b:  # as varied: an id does not turn into a flag
        ratio_a, ratio_b = len(values_a) / len(sa), len(values_b) / len(sb)
        if max(ratio_a, ratio_b) > 3 * min(ratio_a, ratio_b) + 0.05:
            return None
    # The time that best puts one name before and the other after it.
    ordered = sorted(union, key=lambda i: (docs[i].time, i))
    (separation, at), old, new = max((_best_split(docs, ordered, sa), a, b), (_best_split(docs, ordered, sb), b, a),
                                     key=lambda t: t[0][0])
    if separation < RENAME_SEPARATION:
        return None
    olds, news = (sa, sb) if old == a else (sb, sa)
    values_old, values_new = (values_a, values_b) if old == a else (values_b, values_a)
    overlap = len(values_old & values_new) / len(values_new) if values_new else 0.0
    before, after = docs[ordered[at - 1]].time, docs[ordered[at]].time if at < len(ordered) else None
    boundary = before + (after - before) / 2 if before is not None and after is not None else None  # between them
    return Rename(old=old, new=new, boundary=boundary, old_sampled=len(olds), new_sampled=len(news),
                  value_overlap=round(overlap, 4), separation=round(separation, 4))


def _best_split(docs: list[_Doc], ordered: list[int], first: set[int]) -> tuple[float, int]:
    """(the smaller of the shares of ``first`` before the split and of the rest after it, index of
    the first document after the split) for the best split between two distinct times."""
    n_first = sum(1 for i in ordered if i in first)
    n_rest = len(ordered) - n_first
    if not n_first or not n_rest:
        return 0.0, 0
    before_first, after_rest = 0, n_rest
    best = (0.0, 0)
    for k, i in enumerate(ordered):
        if i in first:
            before_first += 1
        else:
            after_rest -= 1
        if k + 1 < len(ordered) and docs[ordered[k + 1]].time == docs[i].time:
            continue  # no boundary between documents written in the same second
        score = min(before_first / n_first, after_rest / n_rest)
        if score > best[0]:
            best = (score, k + 1)
    return best


def discover(documents: list[dict[str, Any]]) -> Shapes:
    """The shapes of ``documents`` (a sample): never raises on odd documents, says ``one shape`` when unsure."""
    docs = _read(documents)
    n = len(docs)
    if n < MIN_DOCUMENTS:
        return Shapes(sampled=n)
    features = _features(docs)
    best: tuple[float, int, int, str] | None = None
    for path in _candidates(docs):
        removed, total = _explained(docs, path, features)
        if total < 0.05 or removed < MIN_EXPLAINED * total:
            continue
        values = len({d.scalars.get(path) for d in docs})
        key = (removed / total, -values, -path.count("."), path)
        if best is None or key[:3] > best[:3] or (key[:3] == best[:3] and path < best[3]):
            best = key
    shapes: list[Shape] = []
    discriminator = None
    explained = 0.0
    if best is not None:
        explained, discriminator = best[0], best[3]
        shapes = _shapes(docs, discriminator, features)
    shaped = {s.split(": ", 1)[0] for shape in shapes for s in shape.specific}
    return Shapes(discriminator=discriminator, explained=round(explained, 4), sampled=n, shapes=shapes,
                  mixes=_mixes(docs), renames=_renames(docs, shaped, discriminator))
