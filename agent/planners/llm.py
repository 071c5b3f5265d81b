"""The LLM planner: a language model proposes each step, behind the same seam as the heuristic planner.

Each turn sends the system prompt and the bounded state summary (``PromptBuilder``) with the tool
schemas of the registry, and reads one tool call back (or, for servers without tool calling, one
JSON object under a JSON-schema response format; ``auto`` switches when the server refuses tools).

Failures never lose a run. An answer that is no valid action is sent back as a critique; an
outage is retried by the client and then counted; an action the gate rejects is counted too.
After ``fallback_after`` consecutive failed turns, or at once when the endpoint refuses the
configuration (bad key, unknown model), the heuristic planner takes over for the rest of the run
and the report says so. Only a spent token or USD budget ends the run early, as partial.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import structlog

from agent.llm.client import ChatModel, refuses_tools
from agent.llm.errors import LLMRejected, LLMUnavailable
from agent.llm.options import LLMOptions
from agent.llm.prompts.summary import PromptBuilder
from agent.llm.tools import InvalidAnswer, action_from, response_format, tool_definitions
from agent.llm.usage import LLMAccount
from agent.planners.base import Planner
from agent.state import AgentAction, AgentState

__all__ = ["LLMPlanner"]

log = structlog.get_logger("argus.planner.llm")


class LLMPlanner:
    name = "llm"

    def __init__(self, chat: ChatModel, *, options: LLMOptions, account: LLMAccount,
                 fallback: Callable[[], Planner], hybrid: bool = False) -> None:
        self.chat = chat
        self.model: str | None = chat.model
        self.options = options
        self.account = account
        self._fallback_factory = fallback
        self._builder = PromptBuilder(budget=options.prompt_token_budget, hybrid=hybrid)
        self._json_mode = options.structured_output == "json_schema"
        self._authored: set[int] = set()
        self._last_own: int | None = None
        self._failures = 0
        self._fallback: Planner | None = None
        self.notes: Sequence[str] = ()

    @property
    def fell_back(self) -> bool:
        return self._fallback is not None

    def propose(self, state: AgentState) -> AgentAction:
        if self._fallback is not None:
            return self._fallback.propose(state)
        if state.schema is None:
            # The gates demand a sample first: no tokens are spent on a step with one answer.
            return self._own(state, AgentAction(action="schema_sample", reasoning="survey the schema first",
                                                action_input={"sample_size": state.options.sample_size}))
        self._count_rejection(state)
        critique: str | None = None
        reason = ""
        while self._failures < self.options.fallback_after:
            tools = None if self._json_mode else tool_definitions()
            fmt = response_format() if self._json_mode else None
            prompt = self._builder.build(state, authored=self._authored, critique=critique, notes=self.notes,
                                         tools=tools, response_format=fmt)
            try:
                completion = self.chat.complete(prompt.messages, tools=tools, response_format=fmt)
            except LLMRejected as exc:
                if refuses_tools(exc) and self.options.structured_output == "auto" and not self._json_mode:
                    log.info("llm_tools_refused", model=self.chat.model, switching_to="json_schema")
                    self._json_mode = True
                    continue
                return self._fall_back(state, str(exc))
            except LLMUnavailable as exc:
                self._failures += 1
                reason = str(exc)
                continue
            try:
                action = action_from(completion)
            except InvalidAnswer as exc:
                self._failures += 1
                self.account.summary.invalid_answers += 1
                reason = f"the model's answers were not valid actions ({exc})"
                critique = f"Your last answer was not a valid action: {exc}"
                log.info("llm_answer_invalid", model=self.chat.model, problem=str(exc)[:200])
                continue
            return self._own(state, action)
        return self._fall_back(state, reason or f"{self._failures} consecutive steps were rejected by the gates")

    def _own(self, state: AgentState, action: AgentAction) -> AgentAction:
        self._authored.add(len(state.history))
        self._last_own = len(state.history)
        return action

    def _count_rejection(self, state: AgentState) -> None:
        """A turn whose action a gate refused (a step, or a conclusion) counts as failed; an accepted
        one resets the count."""
        if self._last_own is None or self._last_own != len(state.history) - 1:
            return
        obs = state.last_observation
        if obs is not None and obs.kind in ("rejected", "run_rejected"):
            self._failures += 1
        else:
            self._failures = 0

    def _fall_back(self, state: AgentState, reason: str) -> AgentAction:
        self.account.summary.fallback = reason[:300]
        self.account.summary.fallback_iteration = state.iteration
        log.warning("llm_planner_fallback", model=self.chat.model, iteration=state.iteration, reason=reason[:300])
        planner = self._fallback_factory()
        self._fallback = planner
        action = planner.propose(state)
        if action.action == "schema_sample" and state.schema is not None:
            action = planner.propose(state)  # the sample is in the state already; go on from there
        return action
