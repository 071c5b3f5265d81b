"""Action gate: is this proposed step well-formed, read-only, new, and in the right order?"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ValidationError

from argus.agent.ejson import canonical_key, decode
from argus.agent.errors import QueryRefused
from argus.agent.gates.base import RuleGate, fail, warn
from argus.agent.state import AgentAction, AgentState, RuleResult
from argus.agent.tools.count_pipeline import count_many_pipeline
from argus.agent.tools.get_stats import value_condition
from argus.agent.tools.guard import check_field_path, check_filter
from argus.agent.tools.guard_pipeline import check_projection
from argus.agent.tools.models import CountManyInput, GetStatsInput, LookupInput, RunQueryInput
from argus.agent.tools.registry import ALL_TOOLS

__all__ = ["ProposedAction", "action_gate", "action_key", "parse_action"]


@dataclass(frozen=True)
class ProposedAction:
    action: AgentAction
    params: BaseModel | None
    shape_error: str | None = None


def parse_action(action: AgentAction) -> ProposedAction:
    """Validate ``action_input`` against the tool's input model; keep the error for the gate."""
    spec = ALL_TOOLS[action.action]
    try:
        return ProposedAction(action, spec.input_model.model_validate(action.action_input))
    except ValidationError as exc:
        problems = "; ".join(
            f"{action.action}.{'.'.join(str(p) for p in err['loc']) or 'input'}: {err['msg']}"
            for err in exc.errors()[:5]
        )
        return ProposedAction(action, None, problems)


def action_key(name: str, params: BaseModel) -> str:
    """Identity of a read for the no-repeat rule: the tool plus its canonical input."""
    data: Any = params.model_dump(mode="json")
    for key in ("filter", "value_filter"):
        if isinstance(data.get(key), dict):
            data[key] = decode(data[key])
    return f"{name}:{canonical_key(data)}"


def _input_shape(p: ProposedAction, state: AgentState) -> RuleResult | None:
    if p.shape_error:
        return fail("input_shape", f"invalid input: {p.shape_error}")
    return None


def _sample_first(p: ProposedAction, state: AgentState) -> RuleResult | None:
    if state.schema is None and p.action.action != "schema_sample":
        return fail("sample_first", "schema_sample must run before any other action")
    return None


def _read_only(p: ProposedAction, state: AgentState) -> RuleResult | None:
    try:
        if isinstance(p.params, RunQueryInput):
            check_filter(decode(p.params.filter))
            check_projection(p.params.projection)
        elif isinstance(p.params, GetStatsInput):
            check_field_path(p.params.field)
            if p.params.filter is not None:
                check_filter(decode(p.params.filter))
            value_condition(p.params.value_filter)
        elif isinstance(p.params, CountManyInput):
            count_many_pipeline(p.params)
        elif isinstance(p.params, LookupInput):
            check_field_path(p.params.field)
            check_filter({p.params.field: {"$in": [decode(v) for v in p.params.values]}})
    except QueryRefused as exc:
        return fail("read_only", str(exc))
    except (ValueError, TypeError) as exc:
        return fail("read_only", f"the filter is not valid Extended JSON: {type(exc).__name__}")
    return None


def _no_repeat_query(p: ProposedAction, state: AgentState) -> RuleResult | None:
    if p.params is None or not ALL_TOOLS[p.action.action].reads_database:
        return None
    try:
        key = action_key(p.action.action, p.params)
    except (ValueError, TypeError):
        return None  # the read_only rule has already reported an undecodable filter
    if key in state.executed_keys:
        return fail("no_repeat_query", f"this exact {p.action.action} already ran at iteration "
                                       f"{state.executed_keys[key]}; use its result or ask something new")
    return None


def _known_field(p: ProposedAction, state: AgentState) -> RuleResult | None:
    if isinstance(p.params, GetStatsInput) and state.schema is not None \
            and state.schema.field(p.params.field) is None:
        return warn("known_field", f"field {p.params.field!r} was not seen in the sample")
    return None


def action_gate() -> RuleGate[ProposedAction]:
    return RuleGate("action", [_input_shape, _sample_first, _read_only, _no_repeat_query, _known_field],
                    stop_after=frozenset({"input_shape"}))
