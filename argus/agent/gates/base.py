"""A gate runs deterministic rules over a subject and returns an ``EvaluationRecord``.

Rules are small functions ``(subject, state) -> RuleResult | None``; ``None`` means nothing to
say. The worst verdict wins: any FAIL fails the gate, and its messages become the critique the
loop injects into the state for the planner's next turn.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Generic, Literal, Protocol, TypeVar

from argus.agent.state import AgentState, EvaluationRecord, RuleResult, Verdict

__all__ = ["Gate", "Rule", "RuleGate", "fail", "warn"]

S = TypeVar("S")
S_contra = TypeVar("S_contra", contravariant=True)

Rule = Callable[[S, AgentState], RuleResult | None]


class Gate(Protocol[S_contra]):
    def evaluate(self, subject: S_contra, state: AgentState) -> EvaluationRecord: ...


_ORDER: dict[Verdict, int] = {"PASS": 0, "WARN": 1, "FAIL": 2}


class RuleGate(Generic[S]):
    """A gate made of rules, evaluated in order; a FAIL from a rule marked ``stop`` ends the pass."""

    def __init__(self, name: Literal["action", "finding", "run"], rules: Sequence[Rule[S]],
                 *, stop_after: frozenset[str] = frozenset()) -> None:
        self.name = name
        self.rules = list(rules)
        self.stop_after = stop_after

    def evaluate(self, subject: S, state: AgentState) -> EvaluationRecord:
        results: list[RuleResult] = []
        for rule in self.rules:
            result = rule(subject, state)
            if result is None:
                continue
            results.append(result)
            if result.verdict == "FAIL" and result.rule in self.stop_after:
                break
        verdict: Verdict = max((r.verdict for r in results), key=_ORDER.__getitem__, default="PASS")
        return EvaluationRecord(gate=self.name, iteration=state.iteration, verdict=verdict, rules=results)


def fail(rule: str, message: str) -> RuleResult:
    return RuleResult(rule=rule, verdict="FAIL", message=message)


def warn(rule: str, message: str) -> RuleResult:
    return RuleResult(rule=rule, verdict="WARN", message=message)
