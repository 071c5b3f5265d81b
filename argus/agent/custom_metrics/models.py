"""What a metric declares (``MetricSpec``), what one run measured of it (``MetricResult``), and
what earlier runs measured (``MetricPoint``, the baseline's history).

A spec's pipeline is judged stage by stage by the read-only guard when the schedules file is
read, so a refused stage is named at its own line (``schedules.yaml:14
schedules[0].metrics[1].pipeline[0]: operator $out is refused ...``).
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, model_validator

from argus.agent.errors import QueryRefused
from argus.agent.tools.guard_pipeline import check_pipeline

__all__ = ["Bound", "MetricPoint", "MetricResult", "MetricSpec", "MetricValue", "MetricVerdict", "verdict_rank"]

MetricVerdict = Literal["ok", "learning", "excluded", "no_value", "warn", "anomaly", "fail", "error"]
_RANK: dict[str, int] = {"ok": 0, "learning": 0, "excluded": 0, "no_value": 1, "warn": 2, "anomaly": 3, "fail": 3,
                         "error": 4}
BREACHES: frozenset[str] = frozenset({"warn", "anomaly", "fail"})


def verdict_rank(verdict: str) -> int:
    return _RANK.get(verdict, 0)


def _guarded(stage: dict[str, Any]) -> dict[str, Any]:
    """One stage as the guard judges it on the wire; stages are judged alike alone or together."""
    try:
        check_pipeline([stage])
    except QueryRefused as exc:
        raise ValueError(f"refused by the read-only guard: {exc}") from None
    return stage


Stage = Annotated[dict[str, Any], AfterValidator(_guarded)]


class Bound(BaseModel):
    """A threshold: the value is beyond it above ``above`` or below ``below``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    above: float | None = Field(None, description="a value above this crosses the threshold")
    below: float | None = Field(None, description="a value below this crosses the threshold")

    @model_validator(mode="after")
    def _given(self) -> Bound:
        if self.above is None and self.below is None:
            raise ValueError("give 'above', 'below' or both (e.g. {above: 500})")
        if self.above is not None and self.below is not None and self.below > self.above:
            raise ValueError(f"below ({self.below:g}) is larger than above ({self.above:g}): no value could pass")
        return self

    def crossed(self, value: float) -> bool:
        return (self.above is not None and value > self.above) or (self.below is not None and value < self.below)

    def describe(self) -> str:
        parts = ([f"below {self.below:g}"] if self.below is not None else []) + \
                ([f"above {self.above:g}"] if self.above is not None else [])
        return " or ".join(parts)


class MetricSpec(BaseModel):
    """One ``metrics:`` entry of a schedule: a name, a read-only pipeline, and what to expect of it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(pattern=r"^[A-Za-z][A-Za-z0-9_.-]{0,79}$", description="letters, digits, _ . - (a letter "
                                                                             "first); unique in the schedule")
    pipeline: list[Stage] = Field(min_length=1, description="a read-only aggregation pipeline returning one "
                                  "document {_id: null, v: N}, or one per group {_id: <group>, v: N}")
    between: tuple[float, float] | None = Field(None, description="[low, high]: a value outside fails")
    warn: Bound | None = Field(None, description="{above: N} and/or {below: N}: crossing it warns")
    fail: Bound | None = Field(None, description="{above: N} and/or {below: N}: crossing it fails")
    anomaly: bool = Field(False, description="judge each value against a baseline learned from earlier runs (the "
                                             "schedule's health window, sensitivity, seasonality and exclude)")

    @model_validator(mode="after")
    def _one_expectation(self) -> MetricSpec:
        kinds = [k for k, given in (("between", self.between is not None),
                                    ("warn/fail", self.warn is not None or self.fail is not None),
                                    ("anomaly", self.anomaly)) if given]
        if not kinds:
            raise ValueError("say what to expect: 'between: [low, high]', 'warn'/'fail' thresholds "
                             "(e.g. fail: {above: 500}) or 'anomaly: true'")
        if len(kinds) > 1:
            raise ValueError(f"give one kind of expectation, not {' and '.join(kinds)}")
        if self.between is not None and self.between[0] > self.between[1]:
            raise ValueError(f"between: the low end ({self.between[0]:g}) is above the high end "
                             f"({self.between[1]:g})")
        return self

    @property
    def field(self) -> str:
        """The finding's field: a metric is named, not a document path."""
        return f"metric:{self.name}"


class MetricValue(BaseModel):
    """One number a metric's pipeline returned (one per group for a grouped pipeline), judged."""

    segment: str | None = Field(None, description="the group's key as a label: 'seg_' and a digest of the group "
                                                  "(never its value), or 'other'; None for a single value")
    group: str | None = Field(None, description="the group itself, as the privacy mode allows (none in strict)")
    value: float | None = None
    verdict: MetricVerdict
    expected: str | None = Field(None, description="what was expected: the range, the threshold crossed, or the "
                                                   "baseline")
    z: float | None = Field(None, description="robust z-score against the baseline (anomaly: true)")


class MetricResult(BaseModel):
    """One metric's read in one run: its values, or why there are none."""

    name: str
    values: list[MetricValue] = Field(default_factory=list)
    error: str | None = Field(None, description="why the metric was not measured (refused, timed out, budget spent, "
                                                "a result that holds no number)")
    folded: int = Field(0, description="groups beyond the cap, summed into the 'other' segment")
    duration_ms: float = 0.0

    @property
    def verdict(self) -> MetricVerdict:
        if self.error is not None:
            return "error"
        worst: MetricVerdict = "ok"
        for v in self.values:
            if verdict_rank(v.verdict) > verdict_rank(worst):
                worst = v.verdict
        return worst


class MetricPoint(BaseModel):
    """A value an earlier run stored: what a baseline is learned from."""

    at: datetime
    segment: str | None = None
    value: float
    verdict: MetricVerdict
