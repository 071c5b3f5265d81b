"""The LLM planner: a language model proposes each step, behind the same seam as the heuristic planner.

Each turn sends the system prompt and the bounded state summary (``PromptBuilder``) in the richest
request shape the server supports: tool calling, else a JSON-schema response format, else JSON
mode with the schemas in the prompt, else plain text with the schemas in the prompt
(``structured_output`` picks where to start; ``auto`` is tools). A server that says it does not
support a shape (a 400, 422 or 500 naming the parameter) moves the run one shape down at once,
without retries, and the report's notes say so in one line.

Failures never lose a run. An answer that is no valid action is sent back as a critique (and kept,
masked, in the trace of the step that follows); an outage is retried by the client and then
counted; an action the gate rejects is counted too. After ``fallback_after`` consecutive failed
turns, at once when the endpoint refuses the configuration (bad key, unknown model), and at once
when a call times out (a single-slot server is still busy with it; more calls would queue), the
heuristic planner takes over for the rest of the run and the report says why, counting invalid
answers and gate rejections apart. Only a spent token or USD budget ends the run early, as partial.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import structlog

from argus.agent.llm.client import ChatModel, refuses_tools
from argus.agent.llm.errors import LLMRejected, LLMTimeout, LLMUnavailable
from argus.agent.llm.options import SHAPES, LLMOptions, RequestShape
from argus.agent.llm.prompts.summary import PromptBuilder
from argus.agent.llm.tools import InvalidAnswer, action_from, masked_answer, response_format, tool_definitions
from argus.agent.llm.usage import LLMAccount
from argus.agent.planners.base import Planner
from argus.agent.privacy import Masker
from argus.agent.state import AgentAction, AgentState

__all__ = ["LLMPlanner"]

log = structlog.get_logger("argus.planner.llm")
_LOG_MASK = Masker("strict")


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
        self.shape: RequestShape = "tools" if options.structured_output == "auto" else options.structured_output
        self.shape_notes: list[str] = []
        self._authored: set[int] = set()
        self._last_own: int | None = None
        self._failures = 0
        self._invalid = 0  # of the consecutive failed turns: answers that were no action
        self._rejected = 0  # ... and actions the gates refused
        self._fallback: Planner | None = None
        self.notes: Sequence[str] = ()

    @property
    def fell_back(self) -> bool:
        return self._fallback is not None

    def propose(self, state: AgentState) -> AgentAction:
        if self._fallback is not None:
            return self._fallback.propose(state).model_copy(update={"proposed_by": "heuristic"})
        if state.schema is None:
            # The gates demand a sample first: no tokens are spent on a step with one answer.
            return self._own(state, AgentAction(action="schema_sample", reasoning="survey the schema first",
                                                action_input={"sample_size": state.options.sample_size},
                                                proposed_by="heuristic"))
        self._count_rejection(state)
        critique: str | None = None
        reason = ""
        failed_answers: list[str] = []
        while self._failures < self.options.fallback_after:
            tools, fmt = self._request_shape()
            prompt = self._builder.build(state, authored=self._authored, critique=critique, notes=self.notes,
                                         tools=tools, response_format=fmt, shape=self.shape)
            try:
                completion = self.chat.complete(prompt.messages, tools=tools, response_format=fmt)
            except LLMTimeout as exc:
                return self._fall_back(state, f"{exc}; no further calls, so none queue behind it", failed_answers)
            except LLMRejected as exc:
                if refuses_tools(exc) and self._step_down(exc):
                    continue
                return self._fall_back(state, str(exc), failed_answers)
            except LLMUnavailable as exc:
                self._failures += 1
                reason = str(exc)
                continue
            try:
                action = action_from(completion)
            except InvalidAnswer as exc:
                self._failures += 1
                self._invalid += 1
                self.account.summary.invalid_answers += 1
                failed_answers.append(masked_answer(completion, self._builder.masker(state)))
                reason = ""
                critique = f"Your last answer was not a valid action: {exc}"
                # Logs never carry document values, whatever the privacy mode: literals masked always.
                log.info("llm_answer_invalid", model=self.chat.model, problem=str(exc)[:200],
                         answer=masked_answer(completion, _LOG_MASK))
                continue
            return self._own(state, action.model_copy(update={"proposed_by": "model",
                                                              "failed_answers": failed_answers}))
        return self._fall_back(state, reason or self._failure_reason(), failed_answers)

    def _request_shape(self) -> tuple[list[dict[str, Any]] | None, dict[str, Any] | None]:
        if self.shape == "tools":
            return tool_definitions(), None
        if self.shape == "json_schema":
            return None, response_format()
        if self.shape == "json_object":
            return None, {"type": "json_object"}
        return None, None

    def _step_down(self, exc: LLMRejected) -> bool:
        """The next simpler request shape after a refusal; False when there is none."""
        position = SHAPES.index(self.shape)
        if position + 1 >= len(SHAPES):
            return False
        refused, self.shape = self.shape, SHAPES[position + 1]
        note = f"the model endpoint does not support {refused} ({str(exc).split(': ', 1)[-1][:160]}); " \
               f"switched to {self.shape}"
        self.shape_notes.append(note)
        self.account.summary.request_shape = self.shape
        self.account.summary.shape_notes = list(self.shape_notes)
        log.info("llm_request_shape_refused", model=self.chat.model, refused=refused, switching_to=self.shape)
        return True

    def _failure_reason(self) -> str:
        parts = []
        if self._invalid:
            parts.append(f"{self._invalid} answer{'s were' if self._invalid != 1 else ' was'} no valid action")
        if self._rejected:
            parts.append(f"{self._rejected} action{'s were' if self._rejected != 1 else ' was'} rejected by the gates")
        return f"{self._failures} consecutive turns failed: " + (" and ".join(parts) or "no usable answer")

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
            self._rejected += 1
        else:
            self._failures = self._invalid = self._rejected = 0

    def _fall_back(self, state: AgentState, reason: str, failed_answers: list[str]) -> AgentAction:
        self.account.summary.fallback = reason[:300]
        self.account.summary.fallback_iteration = state.iteration
        log.warning("llm_planner_fallback", model=self.chat.model, iteration=state.iteration, reason=reason[:300])
        planner = self._fallback_factory()
        self._fallback = planner
        action = planner.propose(state)
        if action.action == "schema_sample" and state.schema is not None:
            action = planner.propose(state)  # the sample is in the state already; go on from there
        return action.model_copy(update={"proposed_by": "heuristic", "failed_answers": failed_answers})
