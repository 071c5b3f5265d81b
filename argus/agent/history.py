"""Cross-run memory: what earlier audits of the same collection found, dismissed and were told.

``HistoricalContext`` is built from the last N runs of one collection (the store loads them) and
user labels. Planners read it: patterns of earlier runs are re-checked first; a pattern users
marked as a false positive is not reported again unless its affected share grows past the
configured factor; ``healthy`` holds what each field looked like in the latest run that found
nothing wrong with it, a baseline a growing defect cannot move. ``render()`` gives the bounded
text block an LLM planner sees.
"""

from __future__ import annotations

import hashlib
from datetime import datetime
from typing import Any, Literal
from uuid import UUID

from pydantic import BaseModel, Field

from argus.agent.custom_metrics.models import MetricPoint
from argus.agent.findings import Category, Severity
from argus.agent.health.models import FieldHealth, HealthSnapshot
from argus.agent.shapes.models import Shapes

__all__ = [
    "DiffEntry",
    "DiffStatus",
    "HistoricalContext",
    "LabelSummary",
    "PastFinding",
    "PastRun",
    "Pattern",
    "RunDiff",
    "build_context",
    "fingerprint",
]


def fingerprint(connection: str, database: str, collection: str, field: str, category: str) -> str:
    """Stable identity of a pattern: the same defect on the same field of the same collection."""
    raw = "\x00".join((connection, database, collection, field, str(category)))
    return hashlib.sha256(raw.encode()).hexdigest()[:32]


# suppressed: gone from this run because users labelled the pattern a false positive (not a fix)
DiffStatus = Literal["new", "resolved", "persisting", "regressed", "improved", "suppressed"]


class DiffEntry(BaseModel):
    fingerprint: str
    field: str
    category: Category
    status: DiffStatus
    severity: Severity
    previous_severity: Severity | None = None
    affected_count: int
    affected_pct: float
    previous_affected_pct: float | None = None
    finding_id: UUID | None = Field(None, description="the finding in this run (none when resolved)")
    new_persistent: bool = Field(False, description="this run is the first in which the pattern is persistent")


class RunDiff(BaseModel):
    previous_run_id: UUID | None = Field(None, description="the latest earlier run that did not fail, of the same "
                                                           "kind (the same window, or the whole collection)")
    complete: bool = Field(True, description="False when this run was partial or scoped: nothing is called resolved "
                                             "(only a full audit that completed says a defect is gone)")
    scoped: bool = Field(False, description="this run read a window of recent documents")
    entries: list[DiffEntry] = Field(default_factory=list)
    unseen: int = Field(0, description="earlier findings this partial or scoped run did not report (not called "
                                       "resolved)")

    def by_status(self, status: DiffStatus) -> list[DiffEntry]:
        return [e for e in self.entries if e.status == status]

    @property
    def new_persistent(self) -> list[DiffEntry]:
        return [e for e in self.entries if e.new_persistent]

    def counts(self) -> dict[str, int]:
        out = {s: 0 for s in ("new", "resolved", "persisting", "regressed", "improved")}
        for e in self.entries:  # "suppressed" only when a label hid a pattern
            out[e.status] = out.get(e.status, 0) + 1
        return out


class PastFinding(BaseModel):
    fingerprint: str
    field: str
    category: Category
    severity: Severity
    affected_count: int
    affected_pct: float
    evidence_query: dict[str, Any]
    dismissed: bool = False
    critique: str | None = None
    comparable: bool = Field(True, description="counted in the same kind of run (the same window, or the whole "
                                               "collection): its share can be compared")


class PastRun(BaseModel):
    run_id: UUID
    started_at: datetime
    outcome: str
    findings: list[PastFinding] = Field(default_factory=list)
    health: HealthSnapshot | None = Field(None, description="the run's health measurements, if kept")


class LabelSummary(BaseModel):
    """Users' verdicts on one pattern: the net verdict and the share they judged."""

    true_positives: int = 0
    false_positives: int = 0
    last_note: str | None = None
    labelled_share: float | None = Field(None, description="largest affected share among false-positive labels")

    @property
    def verdict(self) -> Literal["true_positive", "false_positive", "mixed"]:
        if self.false_positives > self.true_positives:
            return "false_positive"
        if self.true_positives > self.false_positives:
            return "true_positive"
        return "mixed"


class Pattern(BaseModel):
    fingerprint: str
    field: str
    category: Category
    runs_seen: int = Field(description="runs in the window where the pattern was committed or dismissed")
    committed_runs: int
    last_severity: Severity
    shares: list[float] = Field(description="affected share per run it was seen in, oldest first")
    last_evidence_query: dict[str, Any]
    last_critique: str | None = None
    drifting: bool = False
    label: LabelSummary | None = None

    @property
    def last_share(self) -> float:
        return self.shares[-1] if self.shares else 0.0


class HistoricalContext(BaseModel):
    runs_considered: int = 0
    persistent: list[Pattern] = Field(default_factory=list, description="seen in 2 or more runs")
    one_off: list[Pattern] = Field(default_factory=list)
    dismissed: list[Pattern] = Field(default_factory=list, description="dismissed by a gate in the latest run seen")
    labels: dict[str, LabelSummary] = Field(default_factory=dict, description="fingerprint -> users' verdicts")
    healthy: dict[str, FieldHealth] = Field(
        default_factory=dict,
        description="field -> its health measurements (type and null shares, quantiles unless strict) in the "
                    "latest run of the window that succeeded and committed no finding on it: what the field looked "
                    "like when healthy. A field flagged in every run has none. A planner compares today's sample "
                    "with it (a type share or a fence that moved since) instead of with statistics the defect "
                    "itself has moved")
    growth_factor: float = 1.5
    health: list[HealthSnapshot] = Field(default_factory=list, description="earlier runs' health, oldest first")
    batch_checks: dict[str, int] = Field(default_factory=dict, description="checks a batched pass of each kind "
                                         "carried within the time limit in the latest run that learned it: this "
                                         "run's first pass sizes")
    metrics: dict[str, list[MetricPoint]] = Field(default_factory=dict, description="metric name -> the values "
                                                  "earlier runs of the schedule stored (the baselines of "
                                                  "anomaly: true)")
    shapes: list[Shapes] = Field(default_factory=list, description="earlier runs' shapes (as stored), newest first")

    def label_for(self, fp: str) -> LabelSummary | None:
        return self.labels.get(fp)

    def suppressed(self, fp: str, share: float) -> str | None:
        """Why a candidate must not be reported again, or None: users called it a false
        positive and its share has not grown past ``growth_factor`` times what they judged."""
        label = self.labels.get(fp)
        if label is None or label.verdict != "false_positive":
            return None
        judged = label.labelled_share or 0.0
        if share > judged * self.growth_factor:
            return None
        return (f"users marked this pattern a false positive at {judged:.2%} affected; it is reported "
                f"again only above {judged * self.growth_factor:.2%} (now {share:.2%})")

    def render(self, max_chars: int = 2400) -> str:
        """The context as a bounded text block, most useful lines first."""
        if not self.runs_considered:
            return "No earlier runs of this collection."
        lines = [f"Earlier runs considered: {self.runs_considered}."]
        if self.persistent:
            lines.append("Persistent patterns (re-check these first):")
            lines += [_line(p) for p in self.persistent]
        flagged = sorted({p.field for p in [*self.persistent, *self.one_off]} & self.healthy.keys())
        if flagged:
            lines.append("Flagged fields when they were last healthy (compare today's sample with these):")
            lines += [f"- {name}: {_health_line(self.healthy[name])}" for name in flagged]
        fps = {fp: lab for fp, lab in self.labels.items() if lab.verdict == "false_positive"}
        if fps:
            lines.append("Marked false positive by users (do not report again unless the share grows "
                         f"past {self.growth_factor:g}x):")
            by_fp = {p.fingerprint: p for p in [*self.persistent, *self.one_off, *self.dismissed]}
            for fp, lab in fps.items():
                p = by_fp.get(fp)
                what = f"{p.field} {p.category.value}" if p else fp
                note = f": {lab.last_note}" if lab.last_note else ""
                lines.append(f"- {what} at {lab.labelled_share or 0:.2%}{note}")
        if self.dismissed:
            lines.append("Dismissed by the gates before (do not re-propose without stronger evidence):")
            lines += [f"- {p.field} {p.category.value}: {p.last_critique or 'dismissed'}" for p in self.dismissed]
        if self.one_off:
            lines.append("Seen once:")
            lines += [_line(p) for p in self.one_off]
        out: list[str] = []
        size = 0
        for line in lines:
            if size + len(line) + 1 > max_chars:
                out.append(f"… {len(lines) - len(out)} more lines omitted")
                break
            out.append(line)
            size += len(line) + 1
        return "\n".join(out)


def _line(p: Pattern) -> str:
    trend = "drifting" if p.drifting else "stable"
    label = f", users say {p.label.verdict.replace('_', ' ')}" if p.label else ""
    return (f"- {p.field} {p.category.value}: {p.runs_seen} runs, last {p.last_severity.value} at "
            f"{p.last_share:.2%} ({trend}{label})")


def build_context(runs: list[PastRun], labels: dict[str, LabelSummary], *, drift_tolerance: float = 0.5,
                  growth_factor: float = 1.5) -> HistoricalContext:
    """Patterns over ``runs`` (any order); a pattern is persistent when seen in two or more."""
    ordered = sorted(runs, key=lambda r: r.started_at)
    seen: dict[str, list[tuple[PastRun, PastFinding]]] = {}
    for run in ordered:
        for f in run.findings:
            seen.setdefault(f.fingerprint, []).append((run, f))
    latest = ordered[-1] if ordered else None
    persistent: list[Pattern] = []
    one_off: list[Pattern] = []
    dismissed: list[Pattern] = []
    for fp, hits in seen.items():
        run_ids = {run.run_id for run, _ in hits}
        last = hits[-1][1]
        shares = [f.affected_pct for _, f in hits if not f.dismissed] or [f.affected_pct for _, f in hits]
        lo, hi = min(shares), max(shares)
        pattern = Pattern(
            fingerprint=fp, field=last.field, category=last.category, runs_seen=len(run_ids),
            committed_runs=len({run.run_id for run, f in hits if not f.dismissed}), last_severity=last.severity,
            shares=shares, last_evidence_query=last.evidence_query,
            last_critique=next((f.critique for _, f in reversed(hits) if f.dismissed), None),
            drifting=hi > 0 and (hi - lo) / hi > drift_tolerance, label=labels.get(fp))
        (persistent if len(run_ids) >= 2 else one_off).append(pattern)
        if latest is not None and any(run.run_id == latest.run_id and f.dismissed for run, f in hits):
            dismissed.append(pattern)
    key = lambda p: (-p.runs_seen, p.field, p.category.value)  # noqa: E731
    return HistoricalContext(runs_considered=len(ordered), persistent=sorted(persistent, key=key),
                             one_off=sorted(one_off, key=key), dismissed=sorted(dismissed, key=key),
                             labels=labels, healthy=_healthy(ordered), growth_factor=growth_factor)


def _healthy(ordered: list[PastRun]) -> dict[str, FieldHealth]:
    """Each field's measurements from the latest succeeded run (of ``ordered``, oldest first) that
    committed no finding on it."""
    out: dict[str, FieldHealth] = {}
    for run in reversed(ordered):
        if run.outcome != "succeeded" or run.health is None:
            continue
        flagged = {f.field for f in run.findings if not f.dismissed}
        for field in run.health.fields:
            if field.path not in flagged:
                out.setdefault(field.path, field)
    return out


def _health_line(f: FieldHealth) -> str:
    """``int 100%, null 0.0%, p05..p95 10..90``: shares, and quantiles where the privacy mode kept them."""
    parts = [", ".join(f"{t} {share:.0%}" for t, share in sorted(f.types.items(), key=lambda kv: -kv[1]))]
    parts.append(f"null {f.null_share:.1%}")
    if "p05" in f.quantiles and "p95" in f.quantiles:
        parts.append(f"p05..p95 {f.quantiles['p05']:g}..{f.quantiles['p95']:g}")
    return ", ".join(p for p in parts if p)
