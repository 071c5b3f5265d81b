"""Knobs of the language model behind an audit: endpoint, model, retries, budgets, evaluators.

``config.Settings`` (``ARGUS_LLM_*``) builds the defaults and a schedule's ``llm:`` block overrides
them. The API key itself is never held here: only where to read it (an environment variable or a
file), read when the client is built.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr

from argus.agent.errors import ArgusError
from argus.agent.llm.usage import ModelPrice

__all__ = ["SHAPES", "EvaluatorProfile", "LLMOptions", "PlannerKind", "RequestShape", "StructuredOutput"]

PlannerKind = Literal["heuristic", "llm", "hybrid"]
EvaluatorProfile = Literal["fast", "balanced", "thorough"]
RequestShape = Literal["tools", "json_schema", "json_object", "text"]
StructuredOutput = Literal["auto", "tools", "json_schema", "json_object", "text"]
SHAPES: tuple[RequestShape, ...] = ("tools", "json_schema", "json_object", "text")  # richest first


class LLMOptions(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    provider: Literal["openai", "azure"] = Field("openai", description="openai: OpenAI or any compatible server "
                                                                       "by base_url; azure: Azure OpenAI")
    model: str = Field("gpt-4o-mini", description="model name (Azure: the model behind the deployment, for prices)")
    base_url: str | None = Field(None, description="OpenAI-compatible endpoint, e.g. http://localhost:11434/v1")
    api_key_env: str | None = Field(None, description="environment variable holding the API key "
                                                      "[default: OPENAI_API_KEY, or AZURE_OPENAI_API_KEY for azure]")
    api_key_file: Path | None = Field(None, description="file holding the API key (a mounted secret)")
    azure_endpoint: str | None = Field(None, description="https://NAME.openai.azure.com")
    azure_deployment: str | None = Field(None, description="the Azure OpenAI deployment that serves the model")
    api_version: str | None = Field(None, description="Azure OpenAI API version, e.g. 2024-10-21")
    timeout_s: float | None = Field(None, gt=0, description="per request, and never more than what is left of "
                                                            "the run's budget [default: 60 for OpenAI and Azure, "
                                                            "300 for a self-hosted base_url: CPU servers take "
                                                            "minutes on a long prompt]")
    max_retries: int = Field(3, ge=0, description="retries on 429, 5xx and timeouts")
    backoff_s: float = Field(1.0, ge=0, description="first retry delay; doubles each retry")
    max_backoff_s: float = Field(30.0, ge=0, description="longest delay between two retries")
    max_retry_after_s: float = Field(60.0, ge=0, description="a longer Retry-After gives up instead of waiting")
    structured_output: StructuredOutput = Field(
        "auto", description="the request shape to start with: tools (tool calling), json_schema (a JSON-schema "
                            "response format), json_object (JSON mode, the schema in the prompt) or text (the schema "
                            "in the prompt); auto is tools. Each steps down that list when the server says it does "
                            "not support it")
    temperature: float | None = Field(0.0, ge=0, le=2, description="sampling temperature; null for reasoning "
                                                                   "models (o-series, gpt-5), which take none")
    max_output_tokens: int = Field(1024, ge=16, description="tokens the model may answer with per call")
    prompt_token_budget: int = Field(8000, ge=4000, description="estimated tokens per prompt, never exceeded")
    run_token_budget: int | None = Field(1_000_000, ge=1, description="tokens per run (all purposes)")
    run_cost_budget_usd: float | None = Field(1.0, gt=0, description="US dollars per run (all purposes)")
    fallback_after: int = Field(3, ge=1, description="consecutive failed turns before the heuristic planner "
                                                     "takes over")
    evaluators: EvaluatorProfile = Field("fast", description="fast: rule gates only; balanced: + self-evaluation "
                                                             "at the finding and run gates; thorough: + a judge")
    judge_model: str | None = Field(None, description="the judge of the thorough profile [default: model]")
    prices: dict[str, ModelPrice] = Field(default_factory=dict, description="model -> USD per million tokens, "
                                                                            "over the built-in table")

    @property
    def call_timeout_s(self) -> float:
        if self.timeout_s is not None:
            return self.timeout_s
        return 300.0 if self.provider == "openai" and self.base_url else 60.0

    @property
    def key_env(self) -> str:
        return self.api_key_env or ("AZURE_OPENAI_API_KEY" if self.provider == "azure" else "OPENAI_API_KEY")

    def api_key(self) -> SecretStr | None:
        """The key, read now from the file or the environment; None when neither holds one."""
        if self.api_key_file is not None:
            try:
                text = self.api_key_file.read_text().strip()
            except OSError as exc:
                raise ArgusError(f"cannot read the API key from the file api_key_file names: {exc.strerror}") from None
            return SecretStr(text) if text else None
        value = os.environ.get(self.key_env, "").strip()
        return SecretStr(value) if value else None

    def merged(self, overrides: LLMOptions | None) -> LLMOptions:
        """These options with the fields ``overrides`` set explicitly (a schedule's ``llm:`` block) on top."""
        if overrides is None:
            return self
        given = overrides.model_dump(include=overrides.model_fields_set)
        return LLMOptions.model_validate({**self.model_dump(), **given})

    def describe(self) -> str:
        where = self.azure_endpoint if self.provider == "azure" else (self.base_url or "api.openai.com")
        return f"{self.provider} {self.model} at {where}"
