"""A run compared with the earlier runs of the same collection (``compared_runs`` picks them).

What a run is compared with: the findings of the earlier runs that did not fail, newest first,
back to and including the last full audit that succeeded, which alone says what is gone. A
partial run is a baseline for what it found; a pattern it did not find is taken from the runs
before it. Shares are compared only between runs of the same kind (the same window of a scoped
audit, or the whole collection); a pattern last seen in the other kind is tracked, not new.

Patterns are matched by fingerprint. ``regressed``: severity went up, or the affected share grew
by more than the growth factor since the previous run, or it grew since the previous run and
stands above the growth factor times the smallest share the pattern had in the earlier runs
(``baseline``): a defect creeping up by less than the factor per run is regressed too, not
persisting. ``improved``: severity went down or the share shrank by the factor. A pattern last
counted in another kind of run (a window against the whole collection) is ``persisting``: its
shares are of different documents. ``resolved`` is reported only when the current run succeeded
over the whole collection: a partial run did not look everywhere and a scoped run looked at a
window, so absence proves nothing. A pattern gone because users labelled it a false positive is ``suppressed``, not
``resolved``: the data was not fixed, the planner was told to stop reporting it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from uuid import UUID

from argus.agent.history import DiffEntry, DiffStatus, PastFinding, RunDiff, fingerprint
from argus.agent.report import AuditReport

__all__ = ["compared_runs", "diff_report", "tracked"]


def compared_runs(earlier: Sequence[tuple[UUID, str, str | None]], kind: str | None) -> list[tuple[UUID, bool]]:
    """Of the earlier runs (id, outcome, scope; newest first, none failed), those a run of ``kind``
    is compared with, each with whether it is of the same kind."""
    walked: list[tuple[UUID, bool]] = []
    for run_id, outcome, scope in earlier:
        walked.append((run_id, scope == kind))
        if outcome == "succeeded" and scope is None:
            break  # a full audit that completed: what it did not find is gone
    return walked


def tracked(walked: Sequence[tuple[UUID, bool]], found: Mapping[UUID, list[PastFinding]],
            ) -> tuple[UUID | None, list[PastFinding] | None]:
    """The latest run of the same kind, and every pattern still tracked from ``walked``
    (``compared_runs``): each with its latest state from a run of the same kind where one exists,
    else marked not comparable. (None, None) when there is no earlier run."""
    if not walked:
        return None, None
    patterns: dict[str, PastFinding] = {}
    for run_id, same_kind in walked:
        for past in found[run_id]:
            if past.dismissed:
                continue
            known = patterns.get(past.fingerprint)
            if known is None or (same_kind and not known.comparable):
                patterns[past.fingerprint] = past.model_copy(update={"comparable": same_kind})
    previous = next((run_id for run_id, same_kind in walked if same_kind), None)
    return previous, list(patterns.values())


def diff_report(report: AuditReport, previous: list[PastFinding] | None, *, previous_run_id: UUID | None,
                growth_factor: float = 1.5, newly_persistent: frozenset[str] = frozenset(),
                suppressed: frozenset[str] = frozenset(), baseline: Mapping[str, float] | None = None) -> RunDiff:
    """Compare ``report`` with the findings still tracked from earlier runs (None: no earlier run);
    ``baseline``: fingerprint -> the smallest share the pattern was committed at in earlier runs."""
    before = {f.fingerprint: f for f in (previous or []) if not f.dismissed}
    entries: list[DiffEntry] = []
    for f in report.findings:
        fp = fingerprint(report.connection, report.database, report.collection, f.field, f.category)
        old = before.pop(fp, None)
        status: DiffStatus
        if old is None:
            status = "new"
        elif not old.comparable:
            status = "persisting"
        elif f.severity.rank > old.severity.rank or _grew(f.affected_pct, old.affected_pct,
                                                          (baseline or {}).get(fp, old.affected_pct), growth_factor):
            status = "regressed"
        elif f.severity.rank < old.severity.rank or f.affected_pct * growth_factor < old.affected_pct:
            status = "improved"
        else:
            status = "persisting"
        entries.append(DiffEntry(
            fingerprint=fp, field=f.field, category=f.category, status=status, severity=f.severity,
            previous_severity=old.severity if old else None, affected_count=f.affected_count,
            affected_pct=f.affected_pct, previous_affected_pct=old.affected_pct if old else None,
            finding_id=f.id, new_persistent=fp in newly_persistent))
    complete = report.outcome == "succeeded" and report.window is None
    if complete:
        for fp, old in before.items():
            entries.append(DiffEntry(fingerprint=fp, field=old.field, category=old.category,
                                     status="suppressed" if fp in suppressed else "resolved",
                                     severity=old.severity, previous_severity=old.severity, affected_count=0,
                                     affected_pct=0.0, previous_affected_pct=old.affected_pct))
    return RunDiff(previous_run_id=previous_run_id, complete=complete, scoped=report.window is not None,
                   entries=entries, unseen=0 if complete else len(before))


def _grew(share: float, previous: float, smallest: float, factor: float) -> bool:
    """Up since the previous run, and by more than ``factor`` over the smallest share seen (or the previous)."""
    return share > previous and share > min(previous, smallest) * factor
