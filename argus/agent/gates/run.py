"""Run gate: may the audit conclude? Only after a sample and enough field coverage."""

from __future__ import annotations

from argus.agent.gates.base import RuleGate, fail
from argus.agent.state import AgentAction, AgentState, RuleResult

__all__ = ["run_gate"]


def _sample_taken(action: AgentAction, state: AgentState) -> RuleResult | None:
    if state.schema is None:
        return fail("sample_taken", "conclude needs a schema_sample first")
    return None


def _min_field_coverage(action: AgentAction, state: AgentState) -> RuleResult | None:
    fields = state.auditable_fields()
    if not fields:
        return None
    # A field whose planned check the server would not answer was attempted: the run ends partial and
    # names it, rather than being held back until a query that tests nothing touches the field.
    attempted = state.fields_investigated | state.unanswered_fields()
    covered = [f for f in fields if f in attempted]
    need = state.options.min_field_coverage
    share = len(covered) / len(fields)
    if share + 1e-9 < need:
        missing = [f for f in fields if f not in attempted]
        shown = ", ".join(missing[:15]) + (f" and {len(missing) - 15} more" if len(missing) > 15 else "")
        return fail("min_field_coverage", f"only {len(covered)}/{len(fields)} fields ({share:.0%}) were "
                                          f"checked by a query; at least {need:.0%} needed. Not yet checked: {shown}")
    return None


def run_gate() -> RuleGate[AgentAction]:
    return RuleGate("run", [_sample_taken, _min_field_coverage])
