"""Finding gate: is a candidate finding backed by a query that ran, and calibrated?"""

from __future__ import annotations

from argus.agent.contracts.model import Rule
from argus.agent.ejson import filter_key
from argus.agent.findings import Finding, Severity
from argus.agent.gates.base import RuleGate, fail, warn
from argus.agent.history import HistoricalContext, fingerprint
from argus.agent.state import AgentState, RuleResult

__all__ = ["SHARE_TOLERANCE", "finding_gate"]

SHARE_TOLERANCE = 0.0005


def _declared_rules(f: Finding, state: AgentState) -> list[Rule] | None:
    """The contract rules a finding reports (None when it reports none, or names one the contract lacks)."""
    if f.rule is None or state.contract is None:
        return None
    known = {r.id: r for r in state.contract.rules}
    rules = [known.get(rule_id) for rule_id in f.rule.split("; ")]
    if any(r is None or r.field != f.field or r.category != f.category for r in rules):
        return None
    return [r for r in rules if r is not None]


def _declared(f: Finding, state: AgentState) -> RuleResult | None:
    """Where the contract declares a field's rule of a category, the declared rule decides it: an
    inferred finding there is refused, and a finding that claims a rule must name one of this run's
    contract, on its field and category."""
    if state.contract is None:
        return fail("declared", f"rule {f.rule!r} is claimed, but this run has no contract") if f.rule else None
    if f.rule is not None:
        if _declared_rules(f, state) is None:
            return fail("declared", f"rule {f.rule!r} is not a rule of {state.contract.source} on {f.field} "
                                    f"({f.category.value})")
        return None
    rules = state.contract.declares(f.field, f.category)
    if rules:
        values = state.options.privacy != "strict"
        said = ", ".join(f"{r.expectation(values=values)} (line {r.line})" for r in rules)
        return fail("declared", f"{state.contract.source} declares {said} for {f.field}: the declared rule decides "
                                f"{f.category.value} there, so Argus does not infer it")
    return None


def _evidence_required(f: Finding, state: AgentState) -> RuleResult | None:
    declared = _declared_rules(f, state)
    if declared and all(r.collection_rule for r in declared) and f.evidence_query:
        return None  # an empty collection breaks documents: {min: 1} with no document to show
    if f.affected_count <= 0:
        return fail("evidence_required", "affected_count must be above 0: a finding needs affected documents")
    if not f.evidence_query:
        return fail("evidence_required", "evidence_query is empty: give the filter that matches the affected documents")
    return None


def _evidence_confirmed(f: Finding, state: AgentState) -> RuleResult | None:
    if not f.evidence_query:
        return None
    try:
        key = filter_key(f.evidence_query)
    except (ValueError, TypeError):
        return fail("evidence_confirmed", "evidence_query is not valid Extended JSON")
    matched = state.evidence_counts.get(key)
    if matched is None:
        return fail("evidence_confirmed", "the evidence_query was never run: run it with run_query first "
                                          "and use its matched_count as affected_count")
    if matched != f.affected_count:
        return fail("evidence_confirmed", f"affected_count {f.affected_count} differs from the evidence "
                                          f"query's matched_count {matched}")
    return None


def _share_consistent(f: Finding, state: AgentState) -> RuleResult | None:
    if state.collection_size <= 0:
        return None
    expected = f.affected_count / state.collection_size
    if abs(f.affected_pct - expected) > SHARE_TOLERANCE:
        return fail("share_consistent", f"affected_pct {f.affected_pct:.4f} should be affected_count / "
                                        f"collection size = {expected:.4f} (a fraction, not a percentage)")
    return None


def _severity_calibration(f: Finding, state: AgentState) -> RuleResult | None:
    declared = _declared_rules(f, state)
    if declared and any(r.severity == f.severity for r in declared):
        return None  # the contract's author chose this severity for this rule
    floor = state.options.critical_min_share
    if f.severity == Severity.CRITICAL and f.affected_pct < floor:
        return fail("severity_calibration", f"critical needs at least {floor:.0%} of documents affected; "
                                            f"this finding affects {f.affected_pct:.2%}: use high or lower")
    return None


def _not_marked_false_positive(f: Finding, state: AgentState) -> RuleResult | None:
    context = state.historical_context
    if not isinstance(context, HistoricalContext):
        return None
    why = context.suppressed(fingerprint(state.connection_name, state.database, state.collection, f.field,
                                         f.category), f.affected_pct)
    return fail("not_marked_false_positive", why) if why else None


def _field_known(f: Finding, state: AgentState) -> RuleResult | None:
    if state.schema is not None and state.schema.field(f.field) is None:
        return warn("field_known", f"field {f.field!r} was not seen in the sample")
    return None


def finding_gate() -> RuleGate[Finding]:
    return RuleGate("finding", [_declared, _evidence_required, _evidence_confirmed, _share_consistent,
                                _severity_calibration, _not_marked_false_positive, _field_known])
