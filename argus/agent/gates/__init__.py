"""Deterministic gates around every action, finding and conclusion."""

from dataclasses import dataclass, field

from argus.agent.findings import Finding
from argus.agent.gates.action import ProposedAction, action_gate, action_key, parse_action
from argus.agent.gates.base import Gate, RuleGate
from argus.agent.gates.finding import finding_gate
from argus.agent.gates.run import run_gate
from argus.agent.state import AgentAction

__all__ = ["Gate", "GateSet", "ProposedAction", "RuleGate", "action_key", "parse_action"]


@dataclass
class GateSet:
    """The three gates the loop consults; evaluators added later layer onto these."""

    action: Gate[ProposedAction] = field(default_factory=action_gate)
    finding: Gate[Finding] = field(default_factory=finding_gate)
    run: Gate[AgentAction] = field(default_factory=run_gate)
