"""What segments add to a run's findings: each finding's breakdown, and null rates a segment hides.

A finding whose evidence query was counted in a batched pass carries that pass's ``$group`` by
segment (``SegmentBreakdown``): "157 documents; 150 of them tenant=acme". A field missing in 40% of
one segment's documents and in none of the others' is a ``null_rate`` finding of its own when the
collection's mix hides it (no finding on the field already): judged from the totals the run's
first batched pass counted per segment, with its exact counts.
"""

from __future__ import annotations

import math
from typing import Any

from argus.agent.ejson import decode, encode, filter_key
from argus.agent.findings import Category, Finding, Severity
from argus.agent.health.baseline import Anomaly
from argus.agent.health.findings import anomaly_findings
from argus.agent.health.models import HealthSnapshot
from argus.agent.history import HistoricalContext, fingerprint
from argus.agent.segments.health import Change, segment_field
from argus.agent.segments.models import OTHER, SegmentBreakdown
from argus.agent.segments.passes import SegmentPass, SegmentTotals, fold

__all__ = ["CONCENTRATED", "breakdown", "hidden_null_rates", "segment_health_findings", "with_breakdown"]

CONCENTRATED = 0.9     # one segment holding this share of a finding's documents, where the collection has others
MIN_DOCUMENTS = 30     # a segment's null rate is judged only over at least this many of its documents
MIN_SHARE = 0.1        # ... when at least this share of them lack the field
MIN_GAP = 0.1          # ... this much more than the other segments do
Z_LIMIT = 5.0          # ... and more than chance: this many standard errors above the others' rate


def breakdown(segments: SegmentPass, counts: dict[str, int]) -> SegmentBreakdown:
    folded = fold(counts, segments.options.top)
    total = sum(c.documents for c in folded)
    others = segments.totals is not None and len(segments.totals.segments) > 1
    head = folded[0] if folded else None
    concentrated = head.segment if head is not None and head.segment != OTHER and total and others \
        and head.documents >= CONCENTRATED * total else None
    return SegmentBreakdown(by=list(segments.options.by), counts=folded, concentrated_in=concentrated)


def with_breakdown(finding: Finding, segments: SegmentPass) -> Finding:
    """``finding`` with its documents per segment, where its evidence query was counted in a batch."""
    if finding.segments is not None:
        return finding
    try:
        counts = segments.breakdowns.get(filter_key(finding.evidence_query))
    except (ValueError, TypeError):
        return finding
    if counts is None:
        return finding
    split = breakdown(segments, counts)
    update: dict[str, object] = {"segments": split}
    if split.concentrated_in is not None:
        update["description"] = f"{finding.description}; {split.text(finding.affected_count)}"
    return finding.model_copy(update=update)


def hidden_null_rates(segments: SegmentPass, *, where: tuple[str, str, str], size: int,
                      existing: set[tuple[str, Category]], context: HistoricalContext | None) -> list[Finding]:
    """A ``null_rate`` finding per field whose nulls one segment holds far more of than the others."""
    totals = segments.totals
    if totals is None:
        return []
    out: list[Finding] = []
    for i, path in enumerate(totals.fields):
        if (path, Category.NULL_RATE) in existing:
            continue  # the field's finding stands, and its breakdown says where its documents are
        worst = _worst(totals, i)
        if worst is None:
            continue
        label, documents, nulls, rest_rate = worst
        share = nulls / max(size, 1)
        fp = fingerprint(*where, path, Category.NULL_RATE)
        if context is not None and context.suppressed(fp, share) is not None:
            continue
        selector = segments.evidence(label)
        evidence = {"$and": [selector, {path: None}]} if selector else {path: None}
        rate = nulls / documents
        out.append(Finding(
            field=path, category=Category.NULL_RATE, severity=Severity.HIGH if rate >= 0.5 else Severity.MEDIUM,
            description=(f"{nulls:,} of {documents:,} documents of {label} ({rate:.1%}) have no value for {path}, "
                         f"against {rest_rate:.1%} in the other segments: the collection's {_overall(totals, i)} "
                         f"hides it"),
            hypothesis=f"a writer of {label} omits the field or writes null",
            evidence_query=encode(evidence), affected_count=nulls, affected_pct=round(min(share, 1.0), 6),
            segments=SegmentBreakdown(by=list(segments.options.by), counts=fold({label: nulls}, 1),
                                      concentrated_in=label)))
    return out


def _worst(totals: SegmentTotals, i: int) -> tuple[str, int, int, float] | None:
    best: tuple[float, tuple[str, int, int, float]] | None = None
    for seg in totals.segments:
        documents, nulls = seg.documents, seg.nulls[i]
        rest_documents = totals.documents - documents
        if documents < MIN_DOCUMENTS or rest_documents < MIN_DOCUMENTS or seg.segment == OTHER:
            continue
        rate = nulls / documents
        rest_rate = (totals.nulls[i] - nulls) / rest_documents
        if rate < MIN_SHARE or rate - rest_rate < MIN_GAP:
            continue
        # The others' rate, with one null's worth of doubt, as the chance of a null in this segment.
        p = max(rest_rate, 1 / rest_documents)
        z = (nulls - documents * p) / math.sqrt(documents * p * (1 - p))
        if z > Z_LIMIT and (best is None or z > best[0]):
            best = (z, (seg.segment, documents, nulls, rest_rate))
    return best[1] if best else None


def _overall(totals: SegmentTotals, i: int) -> str:
    return f"{totals.nulls[i] / max(totals.documents, 1):.1%} overall"


def segment_health_findings(anomalies: list[Anomaly], changes: list[Change], today: HealthSnapshot,
                            segments: SegmentPass, *, where: tuple[str, str, str],
                            context: HistoricalContext | None) -> tuple[list[Finding], list[str]]:
    """Findings for segments' anomalies (as the collection's, with the segment's selector in their
    evidence) and for segments that appeared or disappeared; and notes for those a label suppressed."""
    findings, notes = anomaly_findings(anomalies, today, where=where, context=context)
    out: list[Finding] = []
    for finding in findings:
        label = finding.field.removeprefix("(segment ").removesuffix(")")
        selector = segments.evidence(label)
        update: dict[str, Any] = {"description": f"{label}: {finding.description}"}
        if selector is not None:
            update["evidence_query"] = encode({"$and": [selector, decode(finding.evidence_query)]}) \
                if finding.evidence_query else encode(selector)
        out.append(finding.model_copy(update=update))
    for change in changes:
        field = segment_field(change.label)
        fp = fingerprint(*where, field, Category.SEGMENT_CHANGE)
        why = context.suppressed(fp, 1.0) if context is not None else None
        if why is not None:
            notes.append(f"segment_change on {field} not reported: {why}")
            continue
        selector = segments.evidence(change.label)
        if change.kind == "appeared":
            description = (f"a new segment appeared: {change.label}, {change.documents:,} documents, none in any "
                           f"earlier run")
        else:
            description = (f"segment {change.label} disappeared: no document left where the previous run counted "
                           f"{change.before:,}")
        out.append(Finding(
            field=field, category=Category.SEGMENT_CHANGE,
            severity=Severity.MEDIUM if change.kind == "appeared" else Severity.HIGH, description=description,
            hypothesis="a new tenant, region or source began writing" if change.kind == "appeared"
            else "a tenant, region or source was removed, or its documents deleted",
            evidence_query=encode(selector) if selector is not None else {},
            affected_count=change.documents or change.before, affected_pct=1.0, confirmed=False))
    return out, notes
