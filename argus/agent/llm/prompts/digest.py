"""Deterministic digests: what a field's statistics or a tool's result look like in a prompt.

Same input, same text, byte for byte. Every document value passes the run's ``Masker`` first,
so the privacy mode decides what a prompt may carry: ``strict`` keeps types, counts and
statistics; ``shapes`` adds string shapes and the values of low-cardinality categorical fields;
``full`` adds raw sample values. Numbers and dates enter only as statistics (ranges, quantiles;
dates to the month) except in ``full`` mode, and a result's rows are bounded to a head and a tail.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from datetime import datetime
from typing import Any

from argus.agent.privacy import Masker, json_kind
from argus.agent.tools.models import FieldStats, RunQueryResult, StatsResult
from argus.agent.tools.profiling import shape_of

__all__ = ["compact_json", "field_line", "interest", "number", "query_digest", "stats_digest"]

HEAD_TAIL = 5
ROW_CHARS = 240
_QUANTILES_SHOWN = ("p01", "p25", "p50", "p75", "p99")


def number(x: float | None, *, exact: bool = True) -> str:
    """``exact``: as it is (counts; ``full`` mode). Otherwise three significant digits: a range
    statistic, not a value a document holds (a quantile of phone numbers is some phone number)."""
    if x is None:
        return "?"
    if isinstance(x, float) and (math.isnan(x) or math.isinf(x)):
        return str(x)
    if not exact and abs(x) >= 1000:
        return f"{x:.3g}"
    if float(x).is_integer() and abs(x) < 1e15:
        return str(int(x))
    return f"{x:.4g}" if exact else f"{x:.3g}"


def compact_json(value: Any, limit: int = ROW_CHARS) -> str:
    text = json.dumps(value, separators=(",", ":"), sort_keys=True, ensure_ascii=False, default=str)
    return text if len(text) <= limit else text[:limit - 1] + "…"


def _date(value: datetime) -> str:
    """Dates are statistics at month precision: enough to see a year 2100 or 1900, too coarse to
    repeat a document's date (or a date written as text)."""
    return value.strftime("%Y-%m")


def _families(f: FieldStats) -> list[tuple[str, int]]:
    return sorted(f.types.items(), key=lambda kv: (-kv[1], kv[0]))


def interest(f: FieldStats) -> int:
    """How suspicious a field's sample looks; the schema section lists the highest first."""
    score = 0
    kinds = {t for t in f.non_null_types if t not in ("int", "long", "double", "decimal")}
    numeric = any(t in f.non_null_types for t in ("int", "long", "double", "decimal"))
    if len(kinds) + (1 if numeric else 0) > 1:
        score += 4
    absent = f.missing_count + f.null_count
    if absent > 0 and f.null_rate <= 0.35:
        score += 3
    s = f.strings
    if s is not None:
        if s.empty_count or s.blank_count or s.placeholder_count:
            score += 3
        if s.shape_count > 1 and s.shapes and s.shapes[0][1] < 0.98 * s.count:
            score += 2
        if s.unit_count > 1:
            score += 2
        if not f.cardinality_capped and 2 < s.distinct_count <= 20 and s.top_values \
                and s.top_values[-1][1] <= max(1, s.count // 100):
            score += 2
    n = f.numeric
    if n is not None and (n.nan_count or n.inf_count or n.negative_count):
        score += 1
    if n is not None and n.max is not None and n.quantiles.get("p99") not in (None, 0) \
            and abs(n.max) > 10 * abs(n.quantiles["p99"]):
        score += 2
    if f.dates is not None and f.dates.high_tail and f.dates.max.year >= 2100:
        score += 2
    if 0.9 <= f.distinct_ratio < 1.0:
        score += 1
    return score


def _ranked(counted: list[tuple[Any, int]]) -> list[tuple[Any, int]]:
    """Most frequent first, ties by value: the same text whatever order the sample came in."""
    return sorted(counted, key=lambda vc: (-vc[1], compact_json(vc[0])))


def field_line(f: FieldStats, masker: Masker, *, detail: bool = True) -> str:
    """One line per field: types, presence, cardinality, then statistics the mode allows."""
    types = ", ".join(f"{t} {n}" for t, n in _families(f))
    parts = [f"{f.path}: {types}"]
    absent = f.missing_count + f.null_count
    if absent:
        parts.append(f"missing {f.missing_count} null {f.null_count} ({f.null_rate:.1%})")
    parts.append(f"distinct {f.cardinality}{'+' if f.cardinality_capped else ''}")
    if not detail:
        return " | ".join(parts)
    if f.in_array:
        parts.append("in array")
    if not f.queryable:
        parts.append("not queryable")
    n = f.numeric
    if n is not None and n.count:
        exact = masker.mode == "full"
        q = " ".join(f"{k} {number(n.quantiles[k], exact=exact)}" for k in _QUANTILES_SHOWN if k in n.quantiles)
        text = (f"num {number(n.min, exact=exact)}..{number(n.max, exact=exact)} {q} "
                f"mean {number(n.mean, exact=exact)} int {n.integer_share:.0%}")
        extras = [f"{name} {v}" for name, v in (("neg", n.negative_count), ("zero", n.zero_count),
                                                ("nan", n.nan_count), ("inf", n.inf_count)) if v]
        if masker.mode == "full" and n.high_tail:
            extras.append("top " + ", ".join(f"{number(v)} x{c}" for v, c in n.high_tail[-3:]))
        parts.append(" ".join([text, *extras]))
    d = f.dates
    if d is not None and d.count:
        mid = d.quantiles.get("p50")
        parts.append(f"dates {_date(d.min)}..{_date(d.max)}" + (f" p50 {_date(mid)}" if mid else ""))
    s = f.strings
    if s is not None and s.count:
        text = f"len {s.min_length}-{s.max_length}"
        extras = [f"{name} {v}" for name, v in (("empty", s.empty_count), ("blank", s.blank_count),
                                                ("placeholder", s.placeholder_count)) if v]
        if s.formats:
            extras.append("formats " + ", ".join(f"{k} {v}" for k, v in sorted(s.formats.items())))
        if masker.mode == "strict":
            extras.append(f"{s.shape_count} distinct shapes")
        else:
            extras.append("shapes " + "; ".join(f"{compact_json(sh, 40)} {c}" for sh, c in _ranked(s.shapes)[:3])
                          + (f" (+{s.shape_count - 3})" if s.shape_count > 3 else ""))
            if s.units:  # unit text is part of a value: its shape unless the mode is full
                units = Counter[str]()
                for u, c in s.units:
                    units[u if masker.mode == "full" else shape_of(u)] += c
                extras.append("units " + ", ".join(f"{compact_json(u, 20)} {c}" for u, c in units.most_common(3)))
        shown: list[tuple[Any, int]] = []
        if masker.mode == "full":
            shown = _ranked(s.top_values)[:10]
        elif masker.mode == "shapes" and f.path in masker.categorical:
            shown = [(v, c) for v, c in _ranked(s.top_values) if masker.value(f.path, v) == v]
        if shown:
            extras.append("values " + ", ".join(f"{compact_json(v, 40)} {c}" for v, c in shown[:20]))
        parts.append("; ".join([text, *extras]))
    a = f.arrays
    if a is not None and a.count:
        parts.append(f"arrays len {a.min_length}-{a.max_length}" + (f" empty {a.empty_count}" if a.empty_count else ""))
    if masker.mode == "full" and f.sample_values:
        parts.append("e.g. " + compact_json(f.sample_values[:3], 120))
    return " | ".join(parts)


def _flatten(doc: Any, prefix: str, out: dict[str, list[Any]]) -> None:
    if isinstance(doc, dict) and not (len(doc) == 1 and next(iter(doc), "").startswith("$")):
        for key, value in doc.items():
            _flatten(value, f"{prefix}.{key}" if prefix else key, out)
    elif isinstance(doc, list) and doc and all(isinstance(v, dict) for v in doc):
        for item in doc:
            _flatten(item, prefix, out)
    else:
        out.setdefault(prefix, []).append(doc)


def _columns(docs: list[dict[str, Any]], limit: int) -> list[str]:
    columns: dict[str, list[Any]] = {}
    for doc in docs:
        _flatten(doc, "", columns)
    lines = []
    for path in sorted(columns)[:limit]:
        values = columns[path]
        kinds = Counter(json_kind(v) for v in values)
        distinct = len({compact_json(v) for v in values})
        lines.append(f"  {path}: " + ", ".join(f"{k} {n}" for k, n in sorted(kinds.items())) + f"; distinct {distinct}")
    if len(columns) > limit:
        lines.append(f"  … and {len(columns) - limit} more columns (project the fields you need)")
    return lines


def _rows(docs: list[dict[str, Any]], masker: Masker, rows: int) -> list[str]:
    if masker.mode == "strict" or rows <= 0:
        return []
    picked = list(enumerate(docs))
    if len(picked) > 2 * rows:
        picked = picked[:rows] + picked[-rows:]
    return [f"  #{i + 1} {compact_json(masker.document(doc))}" for i, doc in picked]


def query_digest(result: RunQueryResult, masker: Masker, *, rows: int = HEAD_TAIL, columns: int = 30) -> str:
    head = f"run_query matched {result.matched_count:,} documents; returned {result.returned_count}"
    if not result.documents:
        return head
    lines = [head + " (columns of the returned documents:)", *_columns(result.documents, columns)]
    shown = _rows(result.documents, masker, rows)
    if shown:
        lines.append(f"rows ({'values masked by privacy mode ' + masker.mode if masker.mode != 'full' else 'raw'}):")
        lines += shown
    return "\n".join(lines)


def _scalar(field: str, value: Any, masker: Masker, *, count: bool = False) -> str:
    if isinstance(value, bool) or value is None:
        return compact_json(masker.value(field, value))
    if isinstance(value, int | float):
        return number(value, exact=count or masker.mode == "full")  # a statistic over the whole collection
    if isinstance(value, dict) and set(value) == {"$date"}:
        text = str(value["$date"])
        return f"date {text[:7]}" if masker.mode != "full" else compact_json(value)
    return compact_json(masker.value(field, value))


def stats_digest(result: StatsResult, masker: Masker, *, rows: int = HEAD_TAIL) -> str:
    head = f"get_stats {result.operation} of {result.field}"
    value = result.value
    if not isinstance(value, list):
        return f"{head}: {_scalar(result.field, value, masker, count=result.operation == 'count')}"
    size = f"{len(value)}{'+' if result.capped else ''} values"
    if result.totals is not None:
        size += f"; {result.totals['values']:,} duplicated values in {result.totals['documents']:,} documents"
    if not value:
        return f"{head}: {size}"
    counted = [v for v in value if isinstance(v, dict) and set(v) == {"value", "count"}]
    if masker.mode == "strict":
        if counted:
            counts = [int(v["count"]) for v in counted]
            return f"{head}: {size}; counts (values hidden, privacy strict): " + \
                ", ".join(str(c) for c in counts[:rows * 2]) + (" …" if len(counts) > rows * 2 else "")
        return f"{head}: {size} (values hidden, privacy strict)"
    items = [(masker.value(result.field, v["value"]), int(v["count"])) for v in counted] if counted else \
        [(masker.value(result.field, v), None) for v in value]
    picked = items if len(items) <= 2 * rows else [*items[:rows], ("…", None), *items[-rows:]]
    text = ", ".join(compact_json(v, 60) if c is None else f"{compact_json(v, 60)} x{c}" for v, c in picked)
    return f"{head}: {size}: {text}"
