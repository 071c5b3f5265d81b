"""Shapes from sampled documents (pure): the discriminator, each shape's paths, type mixes, renames.

The discriminator is found from values, never from names: among the low-cardinality scalar
fields nearly every document holds, the one whose value best explains which other paths (and
which forms of them: ``coordinates`` as ``array<number>`` or ``array<array<number>>``) a document
has, measured as the entropy of each path's presence that knowing the value removes (the
decision-tree split of Gallinucci et al., "Schema Profiling of Document Stores"). A field that
explains less than half of that variation is no discriminator: the collection has one shape.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

from bson import ObjectId

from argus.agent.engine.values import bson_type as engine_bson_type
from argus.agent.shapes.models import Rename, Shape, ShapePath, Shapes, TypeMix

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
MAX_RENAME_SIBLINGS = 300  # an object with more optional keys than this is a map keyed by data: no renames in it
MAX_RENAME_PAIRS = 100_000  # pairs of names compared in one sample, whatever its keys ...
MAX_RENAME_CHECKS = 200    # ... and of those nearly disjoint, read value by value
MAX_FORM_DEPTH = 4
MAX_ELEMENTS = 50

_FAMILY = {"int": "number", "long": "number", "double": "number", "decimal": "number"}


_PLAIN = {str: "string", int: "number", float: "number", bool: "bool"}


def _family(value: Any) -> str:
    plain = _PLAIN.get(type(value))
    if plain is not None:
        return plain
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
    """One sampled document as shape discovery sees it. Few objects per document: a sample of
    10,000 documents of 200 paths would otherwise keep the garbage collector busy."""

    __slots__ = ("elements", "form", "more", "raw", "scalars", "time")

    def __init__(self, raw: dict[str, Any]) -> None:
        self.raw = raw
        self.form: dict[str, str] = {}                        # path -> the form of its (first) non-null value
        self.more: dict[str, set[str]] = {}                   # path -> every form, where an array gives several
        self.scalars: dict[str, Any] = {}                     # path -> value, for paths outside arrays
        self.elements: dict[str, Counter[str]] = {}           # array path -> element types
        self.time: datetime | None = None

    def add(self, path: str, form: str) -> None:
        first = self.form.setdefault(path, form)
        if first != form:
            self.more.setdefault(path, {first}).add(form)


def _values(doc: Any, parts: list[str]) -> Iterable[Any]:
    """The scalar values at a dotted path, through arrays (as a filter reaches them)."""
    if isinstance(doc, list):
        for item in doc[:MAX_ELEMENTS]:
            yield from _values(item, parts)
        return
    if not parts:
        if doc is not None and not isinstance(doc, dict):
            yield doc
        return
    if isinstance(doc, dict) and parts[0] in doc:
        yield from _values(doc[parts[0]], parts[1:])


def _digest(value: Any) -> int:
    try:
        return hash((type(value).__name__, value))
    except TypeError:  # an unhashable BSON value (a binary's bytes are hashable; a regex may not be)
        return hash(repr(value))


def _walk(doc: dict[str, Any], prefix: str, out: _Doc, in_array: bool, depth: int) -> None:
    if depth > 20:
        return
    for key, value in doc.items():
        path = prefix + str(key)
        if value is None:
            continue
        form = _PLAIN.get(type(value)) or form_of(value)
        out.add(path, form)
        if not in_array and type(value) in (str, int, bool):
            out.scalars[path] = value
        if isinstance(value, dict):
            _walk(value, path + ".", out, in_array, depth + 1)
        elif isinstance(value, list):
            kinds = out.elements.setdefault(path, Counter())
            for item in value[:MAX_ELEMENTS]:
                kinds[_family(item)] += 1
                if isinstance(item, dict):
                    _walk(item, path + ".", out, True, depth + 1)


def _read(documents: Iterable[dict[str, Any]], time_field: str | None = None) -> list[_Doc]:
    """``time_field``: a date field saying when each document was written (a scoped audit's), read
    before ``_id``'s ObjectId time."""
    docs = []
    for document in documents:
        d = _Doc(document)
        _walk(document, "", d, False, 0)
        written = next(iter(_values(document, time_field.split("."))), None) if time_field else None
        oid = document.get("_id")
        if isinstance(written, datetime):
            d.time = written.astimezone(UTC) if written.tzinfo else written.replace(tzinfo=UTC)
        elif isinstance(oid, ObjectId):
            d.time = oid.generation_time.astimezone(UTC)
        docs.append(d)
    return docs


def _h(p: float) -> float:
    return 0.0 if p <= 0.0 or p >= 1.0 else -(p * math.log2(p) + (1 - p) * math.log2(1 - p))


def _features(docs: list[_Doc]) -> dict[str, int]:
    """Per feature (a path, or a path's form when the path has several), the documents holding it
    as a bit mask (bit ``i``: document ``i``): counting within a shape is one ``&`` and a popcount."""
    forms: dict[str, set[str]] = defaultdict(set)
    masks: dict[str, int] = defaultdict(int)
    for i, d in enumerate(docs):
        bit = 1 << i
        for path, form in d.form.items():
            fs = d.more.get(path) or (form,)
            forms[path].update(fs)
            masks[path] |= bit
            for one in fs:
                masks[f"{path}: {one}"] |= bit
    out: dict[str, int] = {}
    for path in sorted(forms):
        if path == "_id" or path.startswith("_id."):
            continue
        out[path] = masks[path]
        if len(forms[path]) > 1:
            for form in sorted(forms[path]):
                out[f"{path}: {form}"] = masks[f"{path}: {form}"]
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


def _groups(docs: list[_Doc], path: str) -> dict[Any, int]:
    """The documents of each value of ``path`` (absent: its own group), as bit masks."""
    groups: dict[Any, int] = defaultdict(int)
    for i, d in enumerate(docs):
        value = d.scalars.get(path)
        groups[(type(value).__name__, value)] |= 1 << i
    return groups


def _own(name: str, path: str) -> bool:
    return name == path or name.startswith(path + ".") or name.startswith(path + ":")


def _explained(docs: list[_Doc], path: str, features: dict[str, int]) -> tuple[float, float]:
    """(entropy removed, entropy there was) over ``features`` by knowing ``path``'s value; the removal
    expected by chance from as many values is taken off each feature's."""
    groups = [(mask, mask.bit_count()) for mask in _groups(docs, path).values()]
    n = len(docs)
    chance = (len(groups) - 1) / (2 * n * math.log(2))
    removed = total = 0.0
    for name, held in features.items():
        if _own(name, path):
            continue
        before = _h(held.bit_count() / n)
        if before == 0.0:
            continue
        after = sum(size / n * _h((held & mask).bit_count() / size) for mask, size in groups)
        total += before
        removed += max(0.0, before - after - chance)
    return removed, total


def _shapes(docs: list[_Doc], path: str, features: dict[str, int]) -> list[Shape]:
    groups: dict[Any, list[int]] = defaultdict(list)
    for i, d in enumerate(docs):
        if path in d.scalars:
            groups[d.scalars[path]].append(i)
    n = len(docs)
    order = sorted(groups.items(), key=lambda kv: (-len(kv[1]), str(kv[0])))
    out = []
    for value, ix in order:
        inside = 0
        for i in ix:
            inside |= 1 << i
        others = n - len(ix)
        specific = []
        for name, held in features.items():
            if _own(name, path):
                continue
            here = (held & inside).bit_count()
            there = (held.bit_count() - here) / others if others else 0.0
            if here / len(ix) >= SPECIFIC_IN and there <= SPECIFIC_OUT:
                specific.append(name)
        paths: dict[str, Counter[str]] = defaultdict(Counter)
        present: Counter[str] = Counter()
        for i in ix:
            d = docs[i]
            for p, form in d.form.items():
                if p != "_id":
                    present[p] += 1
                    paths[p].update(d.more.get(p) or (form,))
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
        for path, first in d.form.items():
            for form in d.more.get(path) or (first,):
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
        for path in d.form:
            held[path].append(i)
    parents: Counter[str] = Counter()
    for d in timed:
        parents.update({_parent(p) for p in d.form})
    parents[""] = len(timed)
    found: list[Rename] = []
    # A name in (nearly) every document its parent holds was not renamed within the sample.
    siblings: dict[str, list[str]] = defaultdict(list)
    for p in sorted(held):
        if p != "_id" and p != discriminator and p not in shaped \
                and max(3, 0.02 * len(timed)) <= len(held[p]) <= (1 - RENAME_OVERLAP) * parents[_parent(p)]:
            siblings[_parent(p)].append(p)
    masks = {p: sum(1 << i for i in held[p]) for names in siblings.values() if len(names) <= MAX_RENAME_SIBLINGS
             for p in names}
    pairs = checked = 0
    for parent, paths in sorted(siblings.items()):
        # An object with hundreds of optional keys is a map keyed by data (dates, ids), not fields
        # that get renamed; and the pairs are quadratic: both caps keep a hostile sample bounded.
        if len(paths) > MAX_RENAME_SIBLINGS:
            continue
        for j, a in enumerate(paths):
            for b in paths[j + 1:]:
                pairs += 1
                if pairs > MAX_RENAME_PAIRS:
                    break
                if a.startswith(b + ".") or b.startswith(a + ".") \
                        or len(held[a]) + len(held[b]) < RENAME_COVER * parents[parent] \
                        or (masks[a] & masks[b]).bit_count() > RENAME_OVERLAP * (masks[a] | masks[b]).bit_count():
                    continue
                checked += 1
                if checked > MAX_RENAME_CHECKS:
                    break
                rename = _rename(timed, a, b, held, parents[parent])
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
    kinds_a = Counter(docs[i].form[a].split("<", 1)[0] for i in sa)
    kinds_b = Counter(docs[i].form[b].split("<", 1)[0] for i in sb)
    if kinds_a.most_common(1)[0][0] != kinds_b.most_common(1)[0][0]:
        return None
    values_a = {_digest(v) for i in sa for v in _values(docs[i].raw, a.split("."))}
    values_b = {_digest(v) for i in sb for v in _values(docs[i].raw, b.split("."))}
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


def discover(documents: list[dict[str, Any]], *, time_field: str | None = None) -> Shapes:
    """The shapes of ``documents`` (a sample): never raises on odd documents, says ``one shape`` when unsure.
    Documents are dated by ``time_field`` where they hold a date there, else by their ObjectId."""
    docs = _read(documents, time_field)
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
