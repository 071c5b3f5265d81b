"""What the run's counts say about each declared rule: passed, failed (with its exact count and the
evidence query that reproduces it), or not checked (and why).

A pure function of the compiled contract and what the loop recorded (``evidence_counts``, the
statistics and lookups of the run), so the planner that ran the checks and the report that shows
them read the same verdicts, whichever planner it was.
"""

from __future__ import annotations

import dataclasses
import difflib
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from argus.agent.contracts.compile import Declared, DeclaredCheck, stat_key
from argus.agent.contracts.model import ContractReport, Rule, RuleOutcome, RuleResult
from argus.agent.durations import format_duration
from argus.agent.ejson import decode, encode, filter_key
from argus.agent.findings import Finding
from argus.agent.tools.models import LookupResult, StatsResult

__all__ = ["Recorded", "Verdict", "contract_report", "group_evidence", "grouped", "lookup_key", "not_checked",
           "verdicts"]


@dataclass(frozen=True)
class Recorded:
    """What the loop has recorded so far in this run (read from ``AgentState``)."""

    counts: dict[str, int]                 # filter key -> exact count
    statistics: dict[str, StatsResult]     # stat key -> result
    lookups: dict[str, LookupResult]       # lookup_key -> result
    collection_size: int                   # the documents findings speak of: the window's in a scoped audit
    total_documents: int | None = None     # a scoped audit: the whole collection's, which `documents` judges


@dataclass(frozen=True)
class Verdict:
    check: DeclaredCheck
    result: RuleOutcome
    count: int | None = None
    detail: str = ""
    evidence: dict[str, Any] | None = None  # decoded filter of the documents that break it (failed only)

    @property
    def rule(self) -> Rule:
        return self.check.rule


def lookup_key(collection: str, field: str) -> str:
    return f"{collection}.{field}"


def verdicts(declared: Declared, recorded: Recorded) -> list[Verdict]:
    return [_verdict(declared, check, recorded) for check in declared.checks]


def _count(recorded: Recorded, query: dict[str, Any] | None) -> int | None:
    return None if query is None else recorded.counts.get(filter_key(encode(query)))


def _verdict(declared: Declared, check: DeclaredCheck, recorded: Recorded) -> Verdict:
    if check.presence is not None and _count(recorded, check.presence) == 0:
        path = check.rule.field
        close = difflib.get_close_matches(path, declared.sampled, n=1)
        return Verdict(check, "unmatched", detail=f"no document holds {path}, so nothing could break the rule"
                                                  + (f" (did you mean {close[0]!r}?)" if close else ""))
    return _thresholds(_undeclared_keys(declared, _decided(declared, check, recorded)), recorded)


def _undeclared_keys(declared: Declared, v: Verdict) -> Verdict:
    """An ``additional_fields`` rule names the undeclared keys the sample showed (keys, never values)."""
    rule = v.rule
    if rule.kind != "additional_fields" or v.result != "failed":
        return v
    prefix = f"{rule.field}."
    keys = sorted({p[len(prefix):].split(".")[0] for p in declared.sampled if p.startswith(prefix)} - set(rule.value))
    return dataclasses.replace(v, detail=f"undeclared keys in the sample: {', '.join(keys)}" if keys else
                               "the sample showed no undeclared key: see the evidence query")


def _thresholds(v: Verdict, recorded: Recorded) -> Verdict:
    """A broken rule with ``warn`` or ``fail`` thresholds judged by them: warned, failed or passed."""
    rule = v.rule
    if v.result != "failed" or v.count is None or (rule.warn is None and rule.fail is None):
        return v
    outcome = rule.outcome(v.count, recorded.collection_size)
    share = v.count / recorded.collection_size if recorded.collection_size else 0.0
    crossed = {"failed": f"past fail {rule.fail.text()}" if rule.fail else "",
               "warned": f"past warn {rule.warn.text()}" if rule.warn else "",
               "passed": "within its thresholds"}[outcome]
    if outcome == "warned" and rule.fail is not None:
        crossed += f", within fail {rule.fail.text()}"
    detail = "; ".join(p for p in (f"{v.count:,} documents ({share:.2%}) break it, {crossed}", v.detail) if p)
    if outcome == "passed":
        return dataclasses.replace(v, result="passed", detail=detail, evidence=None)
    return dataclasses.replace(v, result=outcome, detail=detail)


def _decided(declared: Declared, check: DeclaredCheck, recorded: Recorded) -> Verdict:
    rule = check.rule
    kind = rule.kind
    not_counted = "not counted: the database engine refused the query or the run ended before it"
    if kind == "documents":
        # The collection's size, also in a scoped audit (a window of recent documents is no collection);
        # with ``where``, the documents matching it that the audit reads.
        whole = recorded.total_documents if recorded.total_documents is not None else recorded.collection_size
        n = whole if check.scope is None else _count(recorded, check.scope)
        if n is None:
            return Verdict(check, "unchecked", detail=not_counted)
        low, high = rule.value
        matching = " matching where" if check.scope is not None else ""
        if low is not None and n < low:
            return Verdict(check, "failed", n, f"{n:,} documents{matching}, fewer than the minimum of {low:,}",
                           check.scope or {"_id": {"$exists": True}})
        if high is not None and n > high:
            return Verdict(check, "failed", n, f"{n:,} documents{matching}, more than the maximum of {high:,}",
                           check.scope or {"_id": {"$exists": True}})
        return Verdict(check, "passed", 0, f"{n:,} documents{matching}")
    if kind == "freshness":
        fresh = _count(recorded, check.expected)
        if fresh is None:
            return Verdict(check, "unchecked", detail=not_counted)
        time_field, max_age = rule.value
        if fresh:
            return Verdict(check, "passed", 0, f"{fresh:,} documents with {time_field} within the last "
                                               f"{format_duration(max_age)}")
        stale = declared.scoped(rule, {time_field: {"$lt": declared.now - max_age}})
        return Verdict(check, "failed", _count(recorded, stale),
                       f"no document has a {time_field} within the last {format_duration(max_age)}", stale)
    if kind == "unique":
        return _unique(declared, check, recorded)
    if kind == "references":
        return _references(declared, check, recorded)
    n = _count(recorded, check.violation)
    if n is None:
        return Verdict(check, "unchecked", detail=not_counted)
    if kind == "max_null_share":
        scope = recorded.collection_size if check.scope is None else _count(recorded, check.scope)
        if scope is None:
            return Verdict(check, "unchecked", detail=not_counted)
        share = n / scope if scope else 0.0
        detail = f"{share:.2%} null or missing ({n:,} of {scope:,} documents), limit {rule.value:.2%}"
        if share > rule.value:
            return Verdict(check, "failed", n, detail, check.violation)
        return Verdict(check, "passed", 0, detail)
    if n == 0:
        return Verdict(check, "passed", 0)
    return Verdict(check, "failed", n, _elements(check, recorded), check.violation)


def _elements(check: DeclaredCheck, recorded: Recorded) -> str:
    """``12 elements``: how many elements break a rule inside arrays, beside the documents holding them."""
    stats = recorded.statistics.get(stat_key(check.stat)) if check.stat is not None else None
    if stats is None or stats.error is not None or not isinstance(stats.value, list):
        return ""
    total = sum(int(item["count"]) for item in stats.value)
    return f"{'at least ' if stats.capped else ''}{total:,} element{'s' if total != 1 else ''}"


def _unique(declared: Declared, check: DeclaredCheck, recorded: Recorded) -> Verdict:
    assert check.stat is not None
    stats = recorded.statistics.get(stat_key(check.stat))
    if stats is None or stats.error is not None or stats.totals is None or not isinstance(stats.value, list):
        return Verdict(check, "unchecked", detail="the duplicates statistic was not computed"
                       + (f" ({stats.error})" if stats is not None and stats.error else ""))
    documents, values = stats.totals["documents"], stats.totals["values"]
    if not values:
        return Verdict(check, "passed", 0)
    shared = [decode(item["value"]) for item in stats.value]
    listed = "" if len(shared) == values else f"; the {len(shared):,} most repeated are in the evidence query"
    return Verdict(check, "failed", documents, f"{values:,} values used by {documents:,} documents{listed}",
                   declared.scoped(check.rule, {check.rule.field: {"$in": shared}}))


def _references(declared: Declared, check: DeclaredCheck, recorded: Recorded) -> Verdict:
    assert check.stat is not None
    rule = check.rule
    target = rule.value
    stats = recorded.statistics.get(stat_key(check.stat))
    if stats is None or stats.error is not None or not isinstance(stats.value, list):
        return Verdict(check, "unchecked", detail="the distinct values were not computed"
                       + (f" ({stats.error})" if stats is not None and stats.error else ""))
    if not stats.value:
        return Verdict(check, "passed", 0, "no value to look up")
    found = recorded.lookups.get(lookup_key(target.collection, target.field))
    if found is None:
        return Verdict(check, "unchecked", detail=f"{target.collection} was not read (lookups not sent)")
    if found.documents == 0:
        return Verdict(check, "unchecked", detail=f"{target.collection} has no documents: is it the right "
                                                  f"collection (with --file, load it too: --file "
                                                  f"{target.collection}.jsonl)?")
    how = (f"{found.checked:,} distinct values looked up in {found.lookups} $in lookup(s) on "
           f"{target.text()}" + (" (indexed)" if found.indexed else " (no index on it: each lookup scanned "
                                                                     f"{target.collection})"
                                 if found.indexed is False else ""))
    capped = f"; more than {found.checked:,} distinct values: only the first were looked up" if stats.capped else ""
    if not found.missing:
        if stats.capped:
            return Verdict(check, "unchecked", detail=how + capped)
        return Verdict(check, "passed", 0, how)
    evidence = declared.scoped(rule, {rule.field: {"$in": [decode(v) for v in found.missing]}})
    return Verdict(check, "failed", _count(recorded, evidence),
                   f"{len(found.missing):,} values name no {target.collection} document; {how}{capped}", evidence)


def not_checked(declared: Declared, recorded: Recorded) -> str | None:
    """Why the run cannot pass as clean for its contract, or None: a rule left unchecked, or unmatched on
    a field not declared optional (``required: false``), is a check that did not run."""
    missed = [v for v in verdicts(declared, recorded)
              if v.result == "unchecked" or (v.result == "unmatched" and v.rule.field not in declared.optional)]
    if not missed:
        return None
    by_reason: dict[str, list[str]] = {}
    for v in missed:
        reason = "no document holds the field" if v.result == "unmatched" else v.detail or "not checked"
        by_reason.setdefault(reason, []).append(f"{v.rule.shown_field} {v.rule.kind} (line {v.rule.line})")
    named = "; ".join(f"{', '.join(rules[:5])}{f' and {len(rules) - 5:,} more' if len(rules) > 5 else ''}: {reason}"
                      for reason, rules in sorted(by_reason.items()))
    return (f"{len(missed):,} declared rule(s) of {declared.contract.source} were not checked, so the run is partial "
            f"and passes none of them: {named}")


def grouped(failed: Iterable[Verdict]) -> dict[tuple[str, str], list[Verdict]]:
    """Broken rules by (field, category): one finding each, as every finding is keyed."""
    out: dict[tuple[str, str], list[Verdict]] = {}
    for v in failed:
        out.setdefault((v.rule.field, v.rule.category.value), []).append(v)
    return out


def group_evidence(group: list[Verdict]) -> dict[str, Any]:
    """The documents breaking any rule of the group (each evidence alone when there is one)."""
    queries = [v.evidence for v in group if v.evidence is not None]
    unique: dict[str, dict[str, Any]] = {filter_key(encode(q)): q for q in queries}
    values = list(unique.values())
    return values[0] if len(values) == 1 else {"$or": values}


def contract_report(declared: Declared, recorded: Recorded, findings: Iterable[Finding], *,
                    values: bool = True) -> ContractReport:
    """Each rule with its result, linked to the finding that reports it when it failed. ``values=False``
    (strict privacy): expectations without their literal values."""
    by_rule: dict[str, Finding] = {}
    for f in findings:
        for rule_id in (f.rule or "").split("; "):
            if rule_id:
                by_rule[rule_id] = f
    results = []
    for v in verdicts(declared, recorded):
        rule = v.rule
        finding = by_rule.get(rule.id)
        count = v.count
        if v.result in ("failed", "warned") and count is None and finding is not None:
            count = finding.affected_count
        results.append(RuleResult(id=rule.id, source=rule.source, line=rule.line, field=rule.field, rule=rule.kind,
                                  expect=rule.expectation(values=values), category=rule.category,
                                  severity=rule.severity, result=v.result, count=count, detail=v.detail,
                                  finding_id=finding.id if finding is not None else None))
    declarations = [f"{r.field}: {r.expectation(values=values)} ({r.source}:{r.line})" for r in declared.contract.rules
                    if not r.is_check]
    return ContractReport(source=declared.contract.source, rules=results, declared=declarations,
                          warnings=[*declared.warnings, *declared.contract.notes])
