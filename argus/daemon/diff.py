"""A run compared with the earlier runs of the same collection (``PostgresStore`` picks them).

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

from collections.abc import Mapping
from uuid import UUID

from argus.agent.history import DiffEntry, DiffStatus, PastFinding, RunDiff, fingerprint
from argus.agent.report import AuditReport

__all__ = ["diff_report"]

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
