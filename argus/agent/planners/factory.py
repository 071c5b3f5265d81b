"""One place that turns a planner choice into what ``run_audit`` needs: planner, gates, LLM account.

The CLI and the daemon's runner both call ``make_planner``, so ``argus audit --planner llm`` and
a schedule with ``planner: llm`` build the same thing. Every planner is wrapped in ``ReplayFirst``
(persistent patterns are re-checked without a model call) and runs a contract's declared checks
(``DeclaredFirst``: folded into the heuristic sweep's passes, or alone before a model plans); LLM
planners fall back to the heuristic planner; evaluators follow the profile in the LLM options.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from argus.agent.clock import Clock, SystemClock
from argus.agent.contracts.stage import DeclaredFirst
from argus.agent.errors import ArgusError
from argus.agent.gates import GateSet
from argus.agent.gates.finding import finding_gate
from argus.agent.gates.run import run_gate
from argus.agent.llm.extra import require_llm_extra
from argus.agent.llm.options import LLMOptions, PlannerKind
from argus.agent.llm.usage import LLMAccount, Purpose
from argus.agent.planners.base import Planner
from argus.agent.planners.heuristic import HeuristicPlanner
from argus.agent.planners.replay import ReplayFirst

if TYPE_CHECKING:
    from argus.agent.llm.client import OpenAIChat

__all__ = ["PlannerSetup", "make_planner"]


@dataclass
class PlannerSetup:
    planner: Planner
    gates: GateSet = field(default_factory=GateSet)
    account: LLMAccount | None = None


def make_planner(kind: PlannerKind, *, llm: LLMOptions | None = None, clock: Clock | None = None,
                 http_client: Any | None = None, sleep: Callable[[float], None] = time.sleep) -> PlannerSetup:
    """Build the planner for one run (planners keep per-run state: never reuse one)."""
    clock = clock or SystemClock()
    if kind == "heuristic":
        return PlannerSetup(ReplayFirst(DeclaredFirst(HeuristicPlanner(clock=clock), fold=True)))
    require_llm_extra(kind)
    if llm is None:
        raise ArgusError(f"planner {kind!r} needs LLM settings (at least a model)")
    # Imported here: the openai package takes a second or more to import, which every heuristic run
    # (a file audit, most schedules) would pay for nothing.
    from argus.agent.gates.llm import FindingReview, LayeredGate, RunReview
    from argus.agent.llm.client import OpenAIChat, build_client
    from argus.agent.planners.hybrid import HybridPlanner
    from argus.agent.planners.llm import LLMPlanner

    account = LLMAccount(prices=llm.prices, token_budget=llm.run_token_budget, cost_budget_usd=llm.run_cost_budget_usd)
    client = build_client(llm, http_client=http_client)

    def chat(purpose: Purpose, model: str) -> OpenAIChat:
        return OpenAIChat(client, model=model, options=llm, account=account, purpose=purpose, sleep=sleep)

    planner: Planner
    if kind == "llm":
        planner = DeclaredFirst(LLMPlanner(chat("planner", llm.model), options=llm, account=account,
                                           fallback=lambda: HeuristicPlanner(clock=clock)), fold=False)
    else:
        planner = HybridPlanner(DeclaredFirst(HeuristicPlanner(clock=clock), fold=True), lambda sweep: LLMPlanner(
            chat("planner", llm.model), options=llm, account=account, fallback=lambda: sweep, hybrid=True))
    gates = GateSet()
    if llm.evaluators in ("balanced", "thorough"):
        own = chat("self_eval", llm.model)
        gates.finding = LayeredGate(finding_gate(), [FindingReview(own)], label="rules+self")
        reviews = [RunReview(own, role="self_eval")]
        if llm.evaluators == "thorough":
            reviews.append(RunReview(chat("judge", llm.judge_model or llm.model), role="judge"))
        gates.run = LayeredGate(run_gate(), reviews, label="rules+self" + ("+judge" if len(reviews) > 1 else ""))
    return PlannerSetup(ReplayFirst(planner), gates, account)
