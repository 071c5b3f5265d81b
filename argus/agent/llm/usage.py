"""Token and cost accounting for one run, per purpose (planner, self-evaluation, judge) and model.

Prices are US dollars per million tokens from a table with defaults for common models (list
prices; override or extend them per deployment). A model matches its longest prefix in the table
(``gpt-4o-mini-2024-07-18`` → ``gpt-4o-mini``); a model with no price costs 0 and the report says
so. Budgets are checked *before* a call with the call's estimated size, so a run never spends
past them: it ends as partial instead.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from argus.agent.llm.errors import LLMBudgetExhausted
from argus.agent.state import TokenUsage

__all__ = ["DEFAULT_PRICES", "LLMAccount", "LLMSummary", "ModelPrice", "Purpose", "UsageLine", "price_for"]

Purpose = Literal["planner", "self_eval", "judge"]


class ModelPrice(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    input: float = Field(ge=0, description="USD per million input tokens")
    output: float = Field(ge=0, description="USD per million output tokens")
    cached_input: float | None = Field(None, ge=0, description="USD per million cached input tokens "
                                                               "[default: the input price]")

    def cost(self, usage: TokenUsage) -> float:
        cached = min(usage.cached_tokens, usage.input_tokens)
        cached_price = self.input if self.cached_input is None else self.cached_input
        return ((usage.input_tokens - cached) * self.input + cached * cached_price
                + usage.output_tokens * self.output) / 1_000_000


DEFAULT_PRICES: dict[str, ModelPrice] = {
    "gpt-4o": ModelPrice(input=2.50, output=10.00, cached_input=1.25),
    "gpt-4o-mini": ModelPrice(input=0.15, output=0.60, cached_input=0.075),
    "gpt-4.1": ModelPrice(input=2.00, output=8.00, cached_input=0.50),
    "gpt-4.1-mini": ModelPrice(input=0.40, output=1.60, cached_input=0.10),
    "gpt-4.1-nano": ModelPrice(input=0.10, output=0.40, cached_input=0.025),
    "gpt-5": ModelPrice(input=1.25, output=10.00, cached_input=0.125),
    "gpt-5-mini": ModelPrice(input=0.25, output=2.00, cached_input=0.025),
    "gpt-5-nano": ModelPrice(input=0.05, output=0.40, cached_input=0.005),
    "o3": ModelPrice(input=2.00, output=8.00, cached_input=0.50),
    "o4-mini": ModelPrice(input=1.10, output=4.40, cached_input=0.275),
}


def price_for(model: str, table: dict[str, ModelPrice]) -> ModelPrice | None:
    """The price of ``model``: an exact entry, else the longest table key it starts with."""
    if model in table:
        return table[model]
    prefixes = [k for k in table if model.startswith(k + "-") or model.startswith(k + ":")]
    return table[max(prefixes, key=len)] if prefixes else None


class UsageLine(BaseModel):
    purpose: Purpose
    model: str
    calls: int = 0
    failed_calls: int = Field(0, description="calls that raised after their retries")
    timed_out_calls: int = Field(0, description="calls abandoned without an answer; their estimated prompt tokens "
                                                "are counted in input_tokens (the server spent them)")
    estimated_input_tokens: int = Field(0, description="Argus's own estimate of input_tokens, beside the "
                                                       "provider's figure")
    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0
    cost_usd: float = 0.0


class LLMSummary(BaseModel):
    """What the language model did in a run: the report's ``llm`` section."""

    usage: list[UsageLine] = Field(default_factory=list)
    fallback: str | None = Field(None, description="why the heuristic planner took over, when it did")
    fallback_iteration: int | None = None
    budget_exhausted: str | None = None
    invalid_answers: int = Field(0, description="answers that were no valid action and came back as a critique")
    request_shape: str | None = Field(None, description="the request shape the run ended with, when the server "
                                                        "refused a richer one")
    shape_notes: list[str] = Field(default_factory=list, description="each shape the server refused, and why")
    largest_prompt_tokens: int = Field(0, description="estimated tokens of the largest prompt sent")
    unpriced_models: list[str] = Field(default_factory=list)


class LLMAccount:
    """The ledger of one run's language-model use, shared by its planner and evaluators."""

    def __init__(self, *, prices: dict[str, ModelPrice] | None = None, token_budget: int | None = None,
                 cost_budget_usd: float | None = None) -> None:
        self.prices = {**DEFAULT_PRICES, **(prices or {})}
        self.token_budget = token_budget
        self.cost_budget_usd = cost_budget_usd
        self._lines: dict[tuple[str, str], UsageLine] = {}
        self.summary = LLMSummary()
        self._time_left: Callable[[], float] | None = None
        self.deadline_reached = False  # a call went unanswered because the run's budget bounded its wait

    def bind_deadline(self, time_left: Callable[[], float]) -> None:
        """The run's clock: seconds left of its wall-clock budget, which bounds every model call."""
        self._time_left = time_left

    def time_left(self) -> float | None:
        return None if self._time_left is None else self._time_left()

    @property
    def total(self) -> TokenUsage:
        lines = self._lines.values()
        return TokenUsage(input_tokens=sum(x.input_tokens for x in lines),
                          output_tokens=sum(x.output_tokens for x in lines),
                          cached_tokens=sum(x.cached_tokens for x in lines))

    @property
    def cost_usd(self) -> float:
        return sum(x.cost_usd for x in self._lines.values())

    def _line(self, purpose: Purpose, model: str) -> UsageLine:
        return self._lines.setdefault((purpose, model), UsageLine(purpose=purpose, model=model))

    def reserve(self, model: str, *, prompt_tokens: int, max_output_tokens: int) -> None:
        """Raise ``LLMBudgetExhausted`` when a call of this size could take the run past a budget."""
        used = self.total.total_tokens
        if self.token_budget is not None and used + prompt_tokens + max_output_tokens > self.token_budget:
            raise LLMBudgetExhausted(f"LLM token budget of {self.token_budget:,} would be exceeded "
                                     f"({used:,} used, next call up to {prompt_tokens + max_output_tokens:,})")
        price = price_for(model, self.prices)
        if self.cost_budget_usd is not None and price is not None:
            worst = price.cost(TokenUsage(input_tokens=prompt_tokens, output_tokens=max_output_tokens))
            if self.cost_usd + worst > self.cost_budget_usd:
                raise LLMBudgetExhausted(f"LLM cost budget of ${self.cost_budget_usd:g} would be exceeded "
                                         f"(${self.cost_usd:.4f} spent, next call up to ${worst:.4f})")
        self.summary.largest_prompt_tokens = max(self.summary.largest_prompt_tokens, prompt_tokens)

    def record(self, purpose: Purpose, model: str, usage: TokenUsage, *, estimate: int = 0) -> None:
        line = self._line(purpose, model)
        line.calls += 1
        line.estimated_input_tokens += estimate
        line.input_tokens += usage.input_tokens
        line.output_tokens += usage.output_tokens
        line.cached_tokens += usage.cached_tokens
        price = price_for(model, self.prices)
        if price is None:
            if model not in self.summary.unpriced_models:
                self.summary.unpriced_models.append(model)
        else:
            line.cost_usd += price.cost(usage)

    def record_timeout(self, purpose: Purpose, model: str, estimated_prompt_tokens: int) -> None:
        """A call abandoned without an answer still cost the server its prompt: count the estimate."""
        line = self._line(purpose, model)
        line.timed_out_calls += 1
        line.input_tokens += estimated_prompt_tokens
        line.estimated_input_tokens += estimated_prompt_tokens
        price = price_for(model, self.prices)
        if price is not None:
            line.cost_usd += price.cost(TokenUsage(input_tokens=estimated_prompt_tokens))

    def record_failure(self, purpose: Purpose, model: str) -> None:
        self._line(purpose, model).failed_calls += 1

    def report(self) -> LLMSummary:
        """A snapshot for the report, lines in a stable order."""
        lines = sorted(self._lines.values(), key=lambda x: (x.purpose, x.model))
        return self.summary.model_copy(update={"usage": [x.model_copy() for x in lines]}, deep=True)

    def notes(self) -> list[str]:
        out: list[str] = []
        if self.summary.fallback:
            out.append(f"the LLM planner gave up at iteration {self.summary.fallback_iteration} "
                       f"({self.summary.fallback}); the heuristic planner finished the run")
        out += self.summary.shape_notes
        if self.summary.budget_exhausted:
            out.append(self.summary.budget_exhausted)
        if self.summary.unpriced_models:
            out.append(f"no price known for {', '.join(self.summary.unpriced_models)}: its cost is counted as $0 "
                       f"(set prices in the LLM settings)")
        return out
