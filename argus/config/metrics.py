"""The ``metrics:`` of ``schedules.yaml`` beyond what each entry's model checks: names are unique
within a schedule (and within ``defaults``), each refused at the line of its second use."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from argus.agent.custom_metrics.models import MetricSpec
from argus.config.yaml_source import Lines, line_for, problem_order, where

__all__ = ["duplicate_metrics"]


def duplicate_metrics(file: Path, lines: Lines,
                      owners: Sequence[tuple[tuple[Any, ...], Sequence[MetricSpec] | None]]) -> list[str]:
    """``file:line schedules[0].metrics[2].name: ...`` for each metric name given twice in one list."""
    problems = []
    for base, specs in owners:
        first: dict[str, int] = {}
        for j, spec in enumerate(specs or ()):
            loc = (*base, "metrics", j, "name")
            if spec.name in first:
                problems.append(f"{file}:{line_for(loc, lines)} {where(loc)}: metric name {spec.name!r} is used "
                                f"twice in this schedule (first at {where((*base, 'metrics', first[spec.name]))}); "
                                f"each metric needs its own name")
            else:
                first[spec.name] = j
    return sorted(problems, key=problem_order)
