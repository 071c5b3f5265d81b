"""Severity from the category and the share of the collection affected.

Each category has a base level (a value of the wrong type breaks consumers; an empty string
mostly does not). Ten percent or more affected raises it one step, under 0.1% lowers it one.
``critical`` is never given under 1% affected, matching the finding gate.
"""

from __future__ import annotations

from argus.agent.findings import Category, Severity

__all__ = ["severity_for"]

_BASE = {
    Category.TYPE_MISMATCH: Severity.HIGH,
    Category.OUTLIER_VALUE: Severity.HIGH,
    Category.DUPLICATE_VALUE: Severity.HIGH,
    Category.SCHEMA_DRIFT: Severity.HIGH,
    Category.NULL_RATE: Severity.MEDIUM,
    Category.ENUM_VIOLATION: Severity.MEDIUM,
    Category.FORMAT_VIOLATION: Severity.MEDIUM,
    Category.CROSS_FIELD: Severity.MEDIUM,
    Category.ORPHAN_REFERENCE: Severity.HIGH,
    Category.EMPTY_VALUE: Severity.LOW,
    Category.VOLUME_ANOMALY: Severity.HIGH,
    Category.FRESHNESS: Severity.HIGH,
    Category.DISTRIBUTION_DRIFT: Severity.MEDIUM,
    Category.METRIC_BREACH: Severity.HIGH,
}
_LADDER = [Severity.LOW, Severity.MEDIUM, Severity.HIGH, Severity.CRITICAL]


def severity_for(category: Category, share: float, *, critical_min_share: float = 0.01,
                 identifier: bool = True) -> Severity:
    level = _LADDER.index(_BASE[category])
    if category == Category.DUPLICATE_VALUE and not identifier:
        level -= 1
    if share >= 0.10:
        level += 1
    elif share < 0.001:
        level -= 1
    level = max(0, min(level, len(_LADDER) - 1))
    if _LADDER[level] == Severity.CRITICAL and share < critical_min_share:
        level -= 1
    return _LADDER[level]
