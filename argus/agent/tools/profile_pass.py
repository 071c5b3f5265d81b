"""The profile pass of a batch (``argus.agent.tools.field_profile``): when and how ``count_many`` takes it.

A batch too large for one pass on a live server, whose checks mostly have the form a profile answers,
reads the profile of their paths first (one pass, costing documents times paths rather than documents times
checks) and answers from it every check it decides exactly; the others go to the batch as before,
now fewer. A server that refuses the profile or lets it time out costs that one pass: the report
says so once, and the batch asks every check. The profile is kept on the target, and later
``min``/``max`` statistics inside a fence are answered from it without a pass of their own.

Counts are answered only from a profile read in their own batch: a count asked later in the run (the
evidence of a finding) is read again, never repeated from an earlier pass.
"""

from __future__ import annotations

import time
from typing import Any

from argus.agent.ejson import decode, encode
from argus.agent.errors import QueryRejected, QueryTimeout
from argus.agent.tools.field_profile import MAX_PATHS, answerable, profile_paths, profile_pipeline, read_profile
from argus.agent.tools.get_stats import build_pipeline, stats_result, value_condition
from argus.agent.tools.models import CountedQuery, CountQuery, GetStatsInput, StatsResult
from argus.agent.tools.target import AuditTarget

__all__ = ["from_profile"]

Check = CountQuery | GetStatsInput


def _fence(stat: GetStatsInput) -> dict[str, Any] | None:
    """A statistic a profile may answer: the min or max over every document inside a value condition."""
    if stat.filter or stat.operation not in ("min", "max"):
        return None
    return value_condition(stat.value_filter)


def _read(target: AuditTarget, paths: list[str]) -> bool:
    """Read the profile of ``paths`` onto the target; False when the server did not answer it. Its time
    sizes the batch that follows, when this server's is not known yet: a count costs a server about what
    a profiled path does (DocumentDB, products: 1.75 times), so a check is taken to cost two paths."""
    t0 = time.perf_counter()
    try:
        profile = read_profile(paths, target.aggregate(profile_pipeline(paths)))
    except (QueryRejected, QueryTimeout) as exc:
        target.refusals.learn("field profile", f"a profile of the checked fields was not answered "
                                               f"({type(exc).__name__}): its checks were batched as branches")
        return False
    if profile is None:
        return False
    target.field_profile = profile
    if target.sizing.known("counts") is None:
        target.sizing.learn("counts", max(1, len(paths) // 2), (time.perf_counter() - t0) * 1000, target.max_time_ms)
    return True


def from_profile(target: AuditTarget, checks: list[tuple[int, Check]], *,
                 one_pass: bool) -> dict[int, CountedQuery | StatsResult]:
    """The checks (by slot) a profile answers exactly. A profile pass is read first when the batch
    would not fit ``one_pass`` and at least half its checks are counts of a form a profile may answer;
    fence statistics are answered from the run's last profile."""
    counts = [(slot, c, decode(c.filter)) for slot, c in checks if isinstance(c, CountQuery)]
    counts = [(slot, c, query) for slot, c, query in counts if answerable(query)]
    fences = [(slot, s, condition) for slot, s in checks if isinstance(s, GetStatsInput)
              and (condition := _fence(s)) is not None]
    fresh = False
    if not one_pass and counts and 2 * len(counts) >= len(checks):
        paths = profile_paths((query for _, _, query in counts), (s.field for _, s, _ in fences))
        if len(paths) <= MAX_PATHS:
            fresh = _read(target, paths)
    profile = target.field_profile
    answers: dict[int, CountedQuery | StatsResult] = {}
    if profile is None:
        return answers
    if fresh:
        for slot, check, query in counts:
            n = profile.count(query)
            if n is not None and (n == 0 or check.examples_of is None):
                answers[slot] = CountedQuery(filter=encode(query), matched_count=n)
    for slot, stat, condition in fences:
        known, value = profile.extreme(stat.field, stat.operation, condition)
        if known:
            branch = build_pipeline(stat.field, stat.operation, None, condition)
            answers[slot] = stats_result(stat, target.name, [{"r": value}] if value is not None else [], None, branch)
    return answers
