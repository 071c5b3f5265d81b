"""Segments ride in the passes an audit already makes: a ``$group`` by the segment inside them.

``SegmentPass`` is what a run knows of its segments while it reads: the fields they are named by,
the fields whose nulls are counted per segment, and the labels it has seen. ``count_many`` adds to
its one ``$facet`` a branch per counted filter (``[$match, $group by segment]``: the filter's
documents per segment) and, once a run, the totals (documents and nulls per field, per segment and
overall). Nothing is read that the batch did not read already: a ``$facet`` visits each document
once whatever its branches (the batch carrying the totals has no leading ``$match``, so its branches
see every document, as a batch of statistics does).

Labels are built here from the values the server returned, and nowhere else: ``tenant=acme``, or in
``strict`` privacy ``tenant=#3f2a9c01d4`` (the first ten hex digits of a SHA-256 of the value, the
same every run so baselines still hold; a pseudonym, not anonymity: a short list of known tenants
can be hashed and compared).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from argus.agent.ejson import encode
from argus.agent.segments.models import OTHER, SegmentCount, SegmentNulls, SegmentOptions, SegmentTotals
from argus.agent.text import printable

if TYPE_CHECKING:
    from argus.agent.contracts.model import Contract
    from argus.agent.options import AuditOptions, PrivacyMode
    from argus.agent.tools.models import SchemaSampleResult

__all__ = ["GROUPS_KEPT", "SegmentPass", "SegmentTotals", "fold", "null_fields", "segment_label", "segment_pass"]

GROUPS_KEPT = 1000  # groups a branch returns at most (largest first): the rest are known only as a sum
NULL_FIELDS = 50    # fields whose nulls are counted per segment
NULL_SHARE = 0.1    # ... when at least this share of the sample lacks them (see null_fields)
_VALUE_CHARS = 64


def segment_label(by: list[str], values: list[Any], privacy: PrivacyMode) -> str:
    """``tenant=acme`` (``region=eu,pipeline=batch`` for several fields); a missing field reads ``(none)``."""
    return ",".join(f"{path}={_value_text(value, privacy)}" for path, value in zip(by, values, strict=True))


def _value_text(value: Any, privacy: PrivacyMode) -> str:
    if value is None:
        return "(none)"
    text = value if isinstance(value, str) else json.dumps(encode(value), sort_keys=True, separators=(",", ":"))
    if privacy == "strict":
        return "#" + hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:10]
    text = printable(text)  # the name a run stores is the name the next run computes (a NUL was not)
    return text if len(text) <= _VALUE_CHARS else text[:_VALUE_CHARS - 1] + "…"


def fold(counts: Mapping[str, int], top: int, *, rest: int = 0) -> list[SegmentCount]:
    """The ``top`` largest segments by name, the others (and ``rest``, documents of groups not
    returned) as one ``other``: never more than ``top + 1`` entries."""
    ranked = sorted(((s, n) for s, n in counts.items() if n), key=lambda item: (-item[1], item[0]))
    out = [SegmentCount(segment=s, documents=n) for s, n in ranked[:top]]
    folded = sum(n for _, n in ranked[top:]) + rest
    if folded:
        out.append(SegmentCount(segment=OTHER, documents=folded))
    return out


@dataclass
class SegmentPass:
    """A run's segments while it reads (see the module docstring). Only the loop changes it."""

    options: SegmentOptions
    privacy: PrivacyMode
    null_fields: list[str] = field(default_factory=list)
    totals_counted: bool = False
    scoped: bool = False  # a scoped audit: its totals are of the window, not of the collection's segments
    totals: SegmentTotals | None = None
    breakdowns: dict[str, dict[str, int]] = field(default_factory=dict)  # filter key -> label -> documents
    values: dict[str, dict[str, Any]] = field(default_factory=dict)  # label -> the raw values (evidence only)

    @property
    def key(self) -> Any:
        """The ``$group`` ``_id`` of a segment."""
        if len(self.options.by) == 1:
            return f"${self.options.by[0]}"
        return {f"k{i}": f"${path}" for i, path in enumerate(self.options.by)}

    def branch(self, query: Mapping[str, Any]) -> list[dict[str, Any]]:
        """The documents ``query`` matches, per segment (largest first)."""
        return [{"$match": dict(query)}, {"$group": {"_id": self.key, "n": {"$sum": 1}}},
                {"$sort": {"n": -1}}, {"$limit": GROUPS_KEPT}]

    def totals_branches(self) -> dict[str, list[dict[str, Any]]]:
        """Documents and nulls per field, per segment and over all of them."""
        accumulators: dict[str, Any] = {"n": {"$sum": 1}}
        for i, path in enumerate(self.null_fields):
            accumulators[f"m{i}"] = {"$sum": {"$cond": [{"$eq": [{"$ifNull": [f"${path}", None]}, None]}, 1, 0]}}
        return {"segt": [{"$group": {"_id": self.key, **accumulators}}, {"$sort": {"n": -1}},
                         {"$limit": GROUPS_KEPT}],
                "sega": [{"$group": {"_id": None, **accumulators}}]}

    def label(self, key: Any) -> str:
        if len(self.options.by) == 1:
            values = [key]
        else:
            values = [key.get(f"k{i}") if isinstance(key, Mapping) else None for i in range(len(self.options.by))]
        text = segment_label(self.options.by, values, self.privacy)
        if len(self.values) < GROUPS_KEPT:
            self.values.setdefault(text, dict(zip(self.options.by, values, strict=True)))
        return text

    def counts(self, rows: list[Any]) -> dict[str, int]:
        out: dict[str, int] = {}
        for row in rows:
            text = self.label(row.get("_id"))
            out[text] = out.get(text, 0) + int(row.get("n", 0))
        return out

    def count_totals(self, rows: list[Any], overall: list[Any]) -> SegmentTotals:
        every = overall[0] if overall else {}
        documents = int(every.get("n", 0))
        segments: dict[str, SegmentNulls] = {}
        for row in rows:
            text = self.label(row.get("_id"))
            nulls = [int(row.get(f"m{i}", 0)) for i in range(len(self.null_fields))]
            seen = segments.get(text)
            if seen is not None:  # two raw values with one label (a cut or a hash): counted together
                nulls = [a + b for a, b in zip(seen.nulls, nulls, strict=True)]
            segments[text] = SegmentNulls(segment=text, documents=int(row.get("n", 0)) + (seen.documents if seen
                                                                                            else 0), nulls=nulls)
        return SegmentTotals(fields=list(self.null_fields), segments=list(segments.values()), documents=documents,
                             nulls=[int(every.get(f"m{i}", 0)) for i in range(len(self.null_fields))],
                             complete=len(rows) < GROUPS_KEPT)

    def evidence(self, text: str) -> dict[str, Any] | None:
        """The filter selecting a segment's documents (raw values: the masker judges it like any evidence)."""
        values = self.values.get(text)
        if values is None:
            return None
        return {path: value for path, value in values.items()}


def segment_pass(options: AuditOptions, contract: Contract | None) -> SegmentPass | None:
    """The run's segments: its options', else its contract's; None without any."""
    declared = options.segments or (contract.segments if contract is not None else None)
    return SegmentPass(declared, options.privacy) if declared is not None else None


def null_fields(schema: SchemaSampleResult, options: SegmentOptions) -> list[str]:
    """Fields whose nulls are counted per segment: those most documents of the sample carry (a
    field most lack is optional everywhere) but not all (``NULL_SHARE``: a field the sample finds
    in nearly every document is counted by the audit's own null check, and its finding's breakdown
    shows the segment), outside arrays, not naming a segment themselves. Each is one more
    accumulator in the run's first batched pass."""
    sampled = max(schema.documents_sampled, 1)
    chosen = [f for f in schema.fields if f.queryable and not f.in_array and f.path != "_id"
              and not any(f.path == p or f.path.startswith(f"{p}.") or p.startswith(f"{f.path}.")
                          for p in options.by)
              and f.present_count - f.null_count >= sampled / 2 and f.null_rate >= NULL_SHARE]
    chosen.sort(key=lambda f: (-f.present_count, f.path))
    return [f.path for f in chosen[:NULL_FIELDS]]
