"""Pure statistics over sampled documents: the field walk behind ``schema_sample``.

``profile_documents`` takes plain documents (as pymongo returns them) and returns one
``FieldStats`` per dot-notation path. It never touches a database, so hostile documents
(deep nesting, ``$``-prefixed or dotted keys, NaN, Decimal128, huge arrays, binary) are
tested here directly. Arrays of objects are descended with MongoDB dot notation
(``items.qty``), so a filter on a reported path works as written.

Work per value is bounded: at most ``MAX_ARRAY_ELEMENTS`` elements of an array and
``MAX_EXAMINED_CHARS`` characters of a string are examined for distinctness, formats and units,
and every pattern run here is linear, so one hostile value cannot stall an audit.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

from bson import Binary, Code, Decimal128, ObjectId
from bson.dbref import DBRef

from argus.agent.clock import epoch_seconds
from argus.agent.ejson import encode
from argus.agent.tools.formats import MAX_EXAMINED_CHARS, is_placeholder, matching_formats, unit_of
from argus.agent.tools.models import ArrayStats, DateStats, FieldStats, NumericStats, Spread, StringStats
from argus.agent.tools.value_shape import SHAPE_CHARS, bson_type, exact_shape_of, shape_of

__all__ = [
    "MAX_ARRAY_ELEMENTS",
    "MAX_DEPTH",
    "MAX_EXAMINED_CHARS",
    "MAX_PATHS",
    "Profile",
    "bson_type",
    "exact_shape_of",
    "profile",
    "profile_documents",
    "shape_of",
    "values_at",
]

MAX_DEPTH = 20
MAX_PATHS = 2000
_UNPROFILED_CAP = 100_000
MAX_ARRAY_ELEMENTS = 1000
CARDINALITY_CAP = 100
SAMPLE_VALUES = 5
TAIL = 25
TOP_VALUES = 20



def _as_float(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, Decimal128):
        value = value.to_decimal()
    if isinstance(value, Decimal):
        try:
            return float(value)
        except (OverflowError, ValueError):
            return math.nan
    return None


def _as_utc(value: datetime) -> datetime:
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def _hashable(value: Any) -> Any:
    if type(value) is str:
        return value if len(value) <= MAX_EXAMINED_CHARS else ("long", len(value), value[:MAX_EXAMINED_CHARS])
    if isinstance(value, int | float | bool | type(None)):
        if isinstance(value, float) and math.isnan(value):
            return ("nan",)
        return (type(value) is bool, value) if isinstance(value, bool) else value
    if isinstance(value, datetime | ObjectId):
        return value
    if isinstance(value, list) and len(value) > MAX_ARRAY_ELEMENTS:
        value = [*value[:MAX_ARRAY_ELEMENTS], f"<{len(value)} elements>"]
    elif isinstance(value, dict) and len(value) > MAX_ARRAY_ELEMENTS:
        value = {**dict(list(value.items())[:MAX_ARRAY_ELEMENTS]), "<keys>": len(value)}
    try:
        return repr(encode(value))
    except Exception:  # a value the encoder cannot represent still counts as one distinct value
        return repr(value)


def _display(value: Any) -> Any:
    """A short JSON-safe rendering for sample values (long strings and binaries are cut)."""
    if isinstance(value, str) and len(value) > 100:
        return value[:100] + "…"
    if isinstance(value, Binary | bytes):
        return f"<binData {len(value)} bytes>"
    if isinstance(value, list) and len(value) > 5:
        return f"<array of {len(value)}>"
    if isinstance(value, dict | DBRef):
        return f"<object with {len(value.as_doc() if isinstance(value, DBRef) else value)} keys>"
    if isinstance(value, Code):
        return f"<{bson_type(value)}>"
    try:
        return encode(value)
    except Exception:
        return f"<{bson_type(value)}>"


class _Acc:
    """Everything gathered for one path over the sample."""

    __slots__ = (
        "arrays",
        "dates",
        "distinct",
        "doc_present",
        "first_seen",
        "in_array",
        "last_doc",
        "null_doc_mark",
        "null_docs",
        "numbers",
        "path",
        "queryable",
        "samples",
        "strings",
        "types",
        "values",
    )

    def __init__(self, path: str, order: int, in_array: bool, queryable: bool) -> None:
        self.path = path
        self.first_seen = order
        self.in_array = in_array
        self.queryable = queryable
        self.types: Counter[str] = Counter()
        self.doc_present = 0
        self.null_docs = 0
        self.last_doc = -1
        self.null_doc_mark = -1
        self.values = 0
        self.distinct: Counter[Any] = Counter()
        self.samples: list[Any] = []
        self.numbers: list[float] = []
        self.dates: list[datetime] = []
        self.strings: list[str] = []
        self.arrays: list[int] = []


class _Walker:
    def __init__(self) -> None:
        self.fields: dict[str, _Acc] = {}
        self.parent_present: Counter[str] = Counter()
        self.truncated_paths: set[str] = set()
        self.paths_dropped = 0
        self.unprofiled: set[str] = set()  # distinct paths past MAX_PATHS, counted up to _UNPROFILED_CAP
        self.arrays_cut = 0
        self._parent_mark: dict[str, int] = {}

    def acc(self, path: str, in_array: bool, queryable: bool) -> _Acc | None:
        acc = self.fields.get(path)
        if acc is None:
            if len(self.fields) >= MAX_PATHS:
                self.paths_dropped += 1
                if len(self.unprofiled) < _UNPROFILED_CAP:
                    self.unprofiled.add(path)
                return None
            acc = self.fields[path] = _Acc(path, len(self.fields), in_array, queryable)
        return acc

    def walk(self, doc: dict[str, Any], index: int, prefix: str, depth: int, in_array: bool,
             queryable: bool) -> None:
        if prefix:
            parent = prefix[:-1]
            if self._parent_mark.get(parent) != index:
                self._parent_mark[parent] = index
                self.parent_present[parent] += 1
        for key, value in doc.items():
            key = str(key)
            path = prefix + key
            ok = queryable and bool(key) and not key.startswith("$") and "." not in key and "\x00" not in key
            self.record(path, value, index, depth, in_array, ok)

    def record(self, path: str, value: Any, index: int, depth: int, in_array: bool, queryable: bool) -> None:
        acc = self.acc(path, in_array, queryable)
        if acc is None:
            return
        if acc.last_doc != index:
            acc.last_doc = index
            acc.doc_present += 1
        kind = bson_type(value)
        acc.types[kind] += 1
        acc.values += 1
        if kind == "null":
            if acc.null_doc_mark != index:
                acc.null_doc_mark = index
                acc.null_docs += 1
            return
        key = _hashable(value)
        if len(acc.samples) < SAMPLE_VALUES and key not in acc.distinct:
            acc.samples.append(_display(value))
        acc.distinct[key] += 1
        number = _as_float(value)
        if number is not None:
            acc.numbers.append(number)
        elif kind == "date":
            if isinstance(value, datetime):
                acc.dates.append(_as_utc(value))
        elif kind == "string":
            acc.strings.append(value)
        elif kind == "array":
            acc.arrays.append(len(value))
            objects = [v for v in value[:MAX_ARRAY_ELEMENTS] if isinstance(v, dict)]
            if len(value) > MAX_ARRAY_ELEMENTS:
                self.arrays_cut += 1
            if objects:
                if depth + 1 >= MAX_DEPTH:
                    self.truncated_paths.add(path)
                    return
                for item in objects:
                    self.walk(item, index, path + ".", depth + 1, True, queryable)
        elif kind == "object":
            if depth + 1 >= MAX_DEPTH:
                self.truncated_paths.add(path)
                return
            fields = value.as_doc() if isinstance(value, DBRef) else value
            self.walk(fields, index, path + ".", depth + 1, in_array, queryable)


def _quantile(sorted_values: list[Any], q: float) -> Any:
    return sorted_values[round(q * (len(sorted_values) - 1))]


_QUANTILES = {"p01": 0.01, "p05": 0.05, "p10": 0.10, "p25": 0.25, "p50": 0.50, "p75": 0.75,
              "p90": 0.90, "p95": 0.95, "p99": 0.99}


def _tails(sorted_values: list[Any]) -> tuple[list[tuple[Any, int]], list[tuple[Any, int]]]:
    low: list[tuple[Any, int]] = []
    for v in sorted_values:
        if low and low[-1][0] == v:
            low[-1] = (v, low[-1][1] + 1)
        elif len(low) < TAIL:
            low.append((v, 1))
        else:
            break
    high: list[tuple[Any, int]] = []
    for v in reversed(sorted_values):
        if high and high[-1][0] == v:
            high[-1] = (v, high[-1][1] + 1)
        elif len(high) < TAIL:
            high.append((v, 1))
        else:
            break
    return low, high


def _mean(values: list[float]) -> float:
    try:
        return math.fsum(values) / len(values)
    except OverflowError:  # values near the float maximum: an incremental mean cannot overflow
        mean = 0.0
        for k, v in enumerate(values, 1):
            mean += v / k - mean / k
        return mean


def _spread(ordered: list[float]) -> Spread | None:
    """Median and median absolute deviation of sorted finite values (and of their log10 when all are positive)."""
    if not ordered:
        return None
    median = _quantile(ordered, 0.5)
    mad = _quantile(sorted(abs(v - median) for v in ordered), 0.5)
    log_median = log_mad = None
    if ordered[0] > 0:
        logs = [math.log10(v) for v in ordered]
        log_median = _quantile(logs, 0.5)
        log_mad = _quantile(sorted(abs(v - log_median) for v in logs), 0.5)
    return Spread(count=len(ordered), median=median, mad=mad, log_median=log_median, log_mad=log_mad,
                  quantiles={k: _quantile(ordered, q) for k, q in _QUANTILES.items()})


def _spreads(finite: list[float]) -> dict[str, Spread]:
    """Spreads of the values a sign rule would keep: a field where negatives (or zeros) are
    violations has its bulk measured without them, so they cannot widen it as they grow."""
    subsets = (("all", finite), ("nonnegative", [v for v in finite if v >= 0]),
               ("positive", [v for v in finite if v > 0]))
    negated = [-v for v in reversed(finite) if v < 0]
    out: dict[str, Spread] = {}
    previous: tuple[int, Spread | None] = (-1, None)
    for name, values in subsets:
        # each subset holds the next: one as long as the one before is the same values, as in most
        # fields, which have neither negatives nor zeros
        spread = previous[1] if len(values) == previous[0] else _spread(values)
        previous = (len(values), spread)
        if spread is not None:
            out[name] = spread
    if negated:  # the negatives' magnitudes: a sign flipped on some positive values mirrors the positive bulk
        spread = _spread(negated)
        if spread is not None:
            out["negated"] = spread
    return out


def _numeric_stats(values: list[float]) -> NumericStats | None:
    if not values:
        return None
    nan = sum(1 for v in values if math.isnan(v))
    inf = sum(1 for v in values if math.isinf(v))
    finite = sorted(v for v in values if math.isfinite(v))
    if not finite:
        return NumericStats(count=len(values), nan_count=nan, inf_count=inf)
    low, high = _tails(finite)
    return NumericStats(
        count=len(values), nan_count=nan, inf_count=inf,
        min=finite[0], max=finite[-1], mean=_mean(finite),
        quantiles={k: _quantile(finite, q) for k, q in _QUANTILES.items()},
        negative_count=sum(1 for v in finite if v < 0), zero_count=sum(1 for v in finite if v == 0),
        integer_share=sum(1 for v in finite if v == int(v)) / len(finite),
        low_tail=low, high_tail=high, spreads=_spreads(finite), log_bins=_log_bins(finite),
    )


def _log_bins(finite: list[float]) -> list[tuple[int, int]]:
    """Positive values counted per tenth of a decade: the sample's shape on a log scale, coarse
    enough to stay small (a few dozen bins) and fine enough to show an empty band between clusters."""
    bins: Counter[int] = Counter(math.floor(10 * math.log10(v)) for v in finite if v > 0)
    return sorted(bins.items())


def _value_space(counts: Counter[str]) -> float | None:
    """log10 of how many strings the characters seen at each position allow, summed over the
    values' lengths: ``02134``-like codes drawn at random fill every digit everywhere (5.0), a
    counter written ``E100123`` keeps its leading digits (far fewer). An estimate of the space the
    values are drawn from, so the chance that two of them coincide can be judged. None for values
    longer than the shape limit."""
    by_length: dict[int, list[set[str]]] = {}
    for value in counts:
        if len(value) > SHAPE_CHARS:
            return None
        seen = by_length.setdefault(len(value), [set() for _ in value])
        for position, ch in enumerate(value):
            seen[position].add(ch)
    space = sum(math.prod(len(chars) for chars in seen) for seen in by_length.values())
    return round(math.log10(space), 3) if space > 0 else None


def _date_stats(values: list[datetime]) -> DateStats | None:
    if not values:
        return None
    ordered = sorted(values)
    low, high = _tails(ordered)
    return DateStats(count=len(ordered), min=ordered[0], max=ordered[-1],
                     quantiles={k: _quantile(ordered, q) for k, q in _QUANTILES.items()},
                     low_tail=low, high_tail=high, spread=_spread([epoch_seconds(d) for d in ordered]))


def _string_stats(values: list[str]) -> StringStats | None:
    if not values:
        return None
    counts = Counter(values)
    lengths = [len(v) for v in values]
    shapes = Counter(shape_of(v) for v in values)
    exact_shapes: Counter[str] = Counter()
    formats: Counter[str] = Counter()
    units: Counter[str] = Counter()
    for value, n in counts.items():
        exact_shapes[exact_shape_of(value)] += n
        for name in matching_formats(value):
            formats[name] += n
        unit = unit_of(value)
        if unit is not None:
            units[unit[:20]] += n
    return StringStats(
        count=len(values),
        empty_count=counts.get("", 0),
        blank_count=sum(c for v, c in counts.items() if v and not v.strip()),
        placeholder_count=sum(c for v, c in counts.items() if v.strip() and is_placeholder(v)),
        min_length=min(lengths), max_length=max(lengths), mean_length=sum(lengths) / len(lengths),
        distinct_count=len(counts),
        shapes=shapes.most_common(10), shape_count=len(shapes), exact_shapes=exact_shapes.most_common(10),
        formats=dict(formats), units=units.most_common(10), unit_count=len(units),
        top_values=[(_display(v), c) for v, c in counts.most_common(CARDINALITY_CAP if len(counts) <= CARDINALITY_CAP
                                                                      else TOP_VALUES)],
        value_space=_value_space(counts),
    )


def _array_stats(lengths: list[int]) -> ArrayStats | None:
    if not lengths:
        return None
    return ArrayStats(count=len(lengths), empty_count=sum(1 for n in lengths if n == 0),
                      min_length=min(lengths), max_length=max(lengths))


@dataclass(frozen=True)
class Profile:
    """What the profiler saw: the fields it recorded, and what it had to leave out."""

    fields: list[FieldStats]
    truncated_paths: list[str]  # paths cut at the depth cap (20): nothing below them was recorded
    paths_dropped: int  # values whose path was not recorded because MAX_PATHS paths were seen first
    unprofiled: list[tuple[str, int]]  # where those paths are: parent path ("" for the top) and distinct paths


def profile_documents(documents: list[dict[str, Any]]) -> tuple[list[FieldStats], list[str], int]:
    """Return ``(fields, truncated_paths, paths_dropped)`` for a list of documents (see ``profile``)."""
    found = profile(documents)
    return found.fields, found.truncated_paths, found.paths_dropped


def profile(documents: list[dict[str, Any]]) -> Profile:
    """Profile a list of documents. ``fields`` are in order of first appearance."""
    walker = _Walker()
    for index, doc in enumerate(documents):
        walker.walk(doc, index, "", 0, False, True)
    total = len(documents)
    fields: list[FieldStats] = []
    for acc in sorted(walker.fields.values(), key=lambda a: a.first_seen):
        parent = acc.path.rsplit(".", 1)[0] if "." in acc.path else ""
        parent_present = walker.parent_present[parent] if parent else total
        missing = max(total - acc.doc_present, 0)
        distinct = len(acc.distinct)
        non_null_values = acc.values - acc.types.get("null", 0)
        fields.append(FieldStats(
            path=acc.path,
            types=dict(acc.types.most_common()),
            present_count=acc.doc_present,
            missing_count=missing,
            null_count=acc.null_docs,
            null_rate=(acc.null_docs + missing) / total if total else 0.0,
            parent_present_count=parent_present,
            in_array=acc.in_array,
            queryable=acc.queryable,
            value_count=acc.values,
            cardinality=min(distinct, CARDINALITY_CAP),
            cardinality_capped=distinct > CARDINALITY_CAP,
            distinct_ratio=distinct / non_null_values if non_null_values else 0.0,
            sample_values=acc.samples,
            numeric=_numeric_stats(acc.numbers),
            dates=_date_stats(acc.dates),
            strings=_string_stats(acc.strings),
            arrays=_array_stats(acc.arrays),
        ))
    parents = Counter(path.rsplit(".", 1)[0] if "." in path else "" for path in walker.unprofiled)
    return Profile(fields, sorted(walker.truncated_paths), walker.paths_dropped, parents.most_common())


def values_at(doc: Any, path: str) -> list[Any]:
    """The values at a dot path, descending arrays of objects as the profile does (an example of a
    finding or a broken rule, read from a document the evidence query returned)."""
    return _values_at(doc, path.split("."))


def _values_at(doc: Any, parts: list[str]) -> list[Any]:
    if not parts:
        return [doc]
    if isinstance(doc, list):
        return [v for item in doc for v in _values_at(item, parts)]
    if isinstance(doc, dict) and parts[0] in doc:
        return _values_at(doc[parts[0]], parts[1:])
    return []
