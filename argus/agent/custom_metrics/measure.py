"""Each metric's pipeline as one read, its answer as number(s), each judged.

A pipeline answers one document (``{_id: null, v: 12.5}``, or ``$count``'s ``{n: 3}``): one value.
It answers one document per group (``{_id: "EU", v: 400}``): one value per group, a *segment*.
Segments are capped at ``MAX_SEGMENTS``, the largest values first; the rest are summed into one
``other`` segment, so a metric never has more than ``MAX_SEGMENTS + 1`` series. A segment's label
is a digest of its group (``seg_3fa2c1d09e``), never the group's value; the report and the store
keep the group itself as the privacy mode allows (none in ``strict``).

Every metric reads the whole collection (the audit's window, if any, is not applied: a metric is
the user's own question) through the audit's target, so the read is guarded, carries maxTimeMS
cut to the run's remaining time, and is counted in the run's database cost as its own line
(``kind`` ``metric``). A metric not measured (refused, timed out, the run's time or request units
spent, an answer without a number) makes the run partial: absence of a breach proves nothing then.
"""

from __future__ import annotations

import hashlib
import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from bson import Decimal128, Int64

from argus.agent.custom_metrics.judge import breach_finding, judge_value
from argus.agent.custom_metrics.models import MetricPoint, MetricResult, MetricSpec, MetricValue
from argus.agent.ejson import canonical_key, encode
from argus.agent.errors import ArgusError, QueryRefused, QueryRejected, QueryTimeout, TargetUnavailable
from argus.agent.findings import Finding
from argus.agent.health.models import HealthOptions
from argus.agent.options import PrivacyMode
from argus.agent.privacy import identifier_like, mask_value
from argus.agent.text import printable
from argus.agent.tools.target import AuditTarget

__all__ = ["MAX_GROUPS_READ", "MAX_SEGMENTS", "METRIC_READ", "MeasuredMetrics", "measure_metrics", "segment_key"]

MAX_SEGMENTS = 50
MAX_GROUPS_READ = 10_000  # a pipeline answering more groups than this is cut (and says so)
METRIC_READ = "metric"    # the operation kind each metric's read is counted under
_GROUP_TEXT_MAX = 80


@dataclass
class MeasuredMetrics:
    results: list[MetricResult] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def unmeasured(self) -> list[str]:
        return [r.name for r in self.results if r.error is not None]


class _NoNumber(ArgusError):
    """The pipeline's answer holds no number where one is expected."""


def segment_key(group: Any) -> str:
    """A segment's label: a digest of the group, stable across runs, which no reader can invert."""
    return "seg_" + hashlib.sha256(canonical_key(group).encode()).hexdigest()[:10]


def measure_metrics(target: AuditTarget, specs: Sequence[MetricSpec], *, at: datetime,
                    history: Mapping[str, Sequence[MetricPoint]], options: HealthOptions,
                    privacy: PrivacyMode) -> MeasuredMetrics:
    """Read and judge every metric of ``specs``; never raises for a metric that cannot be read."""
    out = MeasuredMetrics()
    whole = target.whole_collection()
    for spec in specs:
        result = _read(whole, spec, privacy)
        if result.error is None:
            judged = [judge_value(spec, v, history.get(spec.name, ()), at, options) for v in result.values]
            result = result.model_copy(update={"values": judged})
            finding = breach_finding(spec, result)
            if finding is not None:
                out.findings.append(finding)
        else:
            out.notes.append(f"metric {spec.name} was not measured: {result.error}")
        unvalued = sum(1 for v in result.values if v.value is None and v.segment is not None)
        if result.error is None and unvalued:
            out.notes.append(f"metric {spec.name}: {unvalued} group(s) answered no finite number (null, NaN, "
                             f"infinite or not a number) and have no value; the others were judged")
        if result.folded:
            out.notes.append(f"metric {spec.name}: {result.folded} groups beyond the largest {MAX_SEGMENTS} were "
                             f"summed into the segment 'other'")
        out.results.append(result)
    return out


def _read(target: AuditTarget, spec: MetricSpec, privacy: PrivacyMode) -> MetricResult:
    spent = target.exhausted()
    if spent is not None:
        return MetricResult(name=spec.name, error=f"{spent} before its read")
    t0 = time.perf_counter()
    try:
        docs = target.aggregate([*spec.pipeline, {"$limit": MAX_GROUPS_READ + 1}], kind=METRIC_READ)
        values, folded = _values(docs, privacy)
    except QueryRejected as exc:  # the server's own words may quote a document value: only in full
        text = str(exc) if privacy == "full" else \
            f"the server refused the pipeline{f' (code {exc.code})' if exc.code is not None else ''}"
        return MetricResult(name=spec.name, error=text, duration_ms=_ms(t0))
    except (QueryRefused, QueryTimeout, TargetUnavailable, _NoNumber) as exc:
        return MetricResult(name=spec.name, error=str(exc), duration_ms=_ms(t0))
    except ArgusError as exc:  # the in-process engine's fault on this pipeline: named, not quoted
        return MetricResult(name=spec.name, error=f"the read failed ({type(exc).__name__})", duration_ms=_ms(t0))
    return MetricResult(name=spec.name, values=values, folded=folded, duration_ms=_ms(t0))


def _ms(t0: float) -> float:
    return round((time.perf_counter() - t0) * 1000, 3)


def _values(docs: list[Any], privacy: PrivacyMode) -> tuple[list[MetricValue], int]:
    if len(docs) > MAX_GROUPS_READ:
        raise _NoNumber(f"the pipeline answered more than {MAX_GROUPS_READ:,} documents; group by fewer keys")
    if not docs:
        return [MetricValue(value=None, verdict="no_value")], 0
    numbers = [(doc.get("_id") if isinstance(doc, Mapping) else None, _field(doc, i)) for i, doc in enumerate(docs)]
    if len(numbers) == 1 and numbers[0][0] is None:
        return [MetricValue(value=_finite(docs[0]), verdict="ok")], 0
    seen: set[str] = set()
    for group, _ in numbers:
        key = segment_key(group)
        if key in seen:
            raise _NoNumber("the pipeline answered two documents with the same _id; a metric gives one number "
                            "per group")
        seen.add(key)
    # One group without a finite number (a NaN average, a null sum) has no value; the others are judged.
    valued = [(g, _finite_or_none(raw)) for g, raw in numbers]
    if all(v is None for _, v in valued):  # none at all: the pipeline is wrong, say how
        _finite(docs[0])
    ranked = sorted(valued, key=lambda n: (n[1] is None, -(n[1] or 0.0), segment_key(n[0])))
    kept, rest = ranked[:MAX_SEGMENTS], ranked[MAX_SEGMENTS:]
    values = [MetricValue(segment=segment_key(g), group=_shown(g, privacy), value=v, verdict="ok") for g, v in kept]
    if rest:
        values.append(MetricValue(segment="other", group="other",
                                  value=sum(v for _, v in rest if v is not None), verdict="ok"))
    return values, len(rest)


def _field(doc: Any, index: int) -> Any:
    """The one value of a result document: its only field beside ``_id``."""
    if not isinstance(doc, Mapping):
        raise _NoNumber(f"result document {index + 1} is not a document")
    fields = [k for k in doc if k != "_id"]
    if len(fields) != 1:
        raise _NoNumber(f"result document {index + 1} holds {len(fields)} fields beside _id "
                        f"({', '.join(fields[:5]) or 'none'}); a metric's pipeline returns _id and one number, "
                        f"e.g. {{$group: {{_id: null, v: {{$avg: \"$total\"}}}}}}")
    return doc[fields[0]]


def _finite_or_none(raw: Any) -> float | None:
    if isinstance(raw, Decimal128):
        raw = float(raw.to_decimal())
    if isinstance(raw, bool) or not isinstance(raw, int | float | Int64) or not math.isfinite(float(raw)):
        return None
    return float(raw)


def _finite(doc: Mapping[str, Any]) -> float:
    """The number of the first result document: anything but a finite number is an error naming its type."""
    raw = _field(doc, 0)
    number = _finite_or_none(raw)
    if number is None:
        name = next(k for k in doc if k != "_id")
        kind = "null" if raw is None else type(raw).__name__
        raise _NoNumber(f"field {name!r} of result document 1 is {kind}, not a finite number")
    return number


def _shown(group: Any, privacy: PrivacyMode) -> str | None:
    """The group as reports may show it: none in ``strict``; in ``shapes`` a string that is not
    identifier-like as itself (the key of a group the user's pipeline formed is the vocabulary it
    groups by: a region, a status), anything else as its shape; in ``full`` as itself. Cut to 80
    characters."""
    if privacy == "strict":
        return None
    if privacy == "shapes" and not (isinstance(group, str) and not identifier_like(group)) \
            and not isinstance(group, bool | None):
        return str(mask_value(encode(group), mode="shapes"))
    text = printable(group if isinstance(group, str) else canonical_key(group))
    return text if len(text) <= _GROUP_TEXT_MAX else text[:_GROUP_TEXT_MAX - 1] + "\N{HORIZONTAL ELLIPSIS}"
