"""LLM settings: ARGUS_LLM_* defaults, then schedules' llm: blocks merged key by key."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from argus.config.schedules import ScheduleError, ScheduleSet, load_schedules
from argus.config.settings import Settings

FILE = """\
connections:
  demo: {files: {orders: orders.jsonl}}
defaults:
  trigger: {every: 1h}
  planner: hybrid
  llm: {model: gpt-4o-mini, evaluators: balanced}
schedules:
  - {name: cheap, connection: demo, database: shop, collection: orders}
  - name: azure
    connection: demo
    database: shop
    collection: orders
    planner: llm
    llm:
      provider: azure
      model: gpt-4o
      azure_endpoint: https://argus.openai.azure.com
      azure_deployment: argus-gpt4o
      api_version: "2024-10-21"
      run_cost_budget_usd: 0.25
"""


def _load(tmp_path: Path, text: str) -> ScheduleSet:
    (tmp_path / "schedules.yaml").write_text(textwrap.dedent(text))
    return load_schedules(tmp_path / "schedules.yaml")


def test_schedule_llm_settings_merge_over_defaults_and_environment(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ARGUS_LLM_TIMEOUT_S", "12")
    monkeypatch.setenv("ARGUS_LLM_MODEL", "from-env")
    loaded = _load(tmp_path, FILE)
    settings = Settings()
    cheap = loaded.schedules["cheap"].settings
    azure = loaded.schedules["azure"].settings
    assert (cheap.planner, azure.planner) == ("hybrid", "llm")
    a = settings.llm_options(cheap.llm)
    assert (a.model, a.evaluators, a.timeout_s, a.provider) == ("gpt-4o-mini", "balanced", 12.0, "openai")
    b = settings.llm_options(azure.llm)
    assert (b.provider, b.model, b.azure_deployment, b.evaluators, b.run_cost_budget_usd, b.timeout_s) == \
        ("azure", "gpt-4o", "argus-gpt4o", "balanced", 0.25, 12.0)


def test_without_an_llm_block_the_environment_decides(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ARGUS_LLM_BASE_URL", "http://localhost:11434/v1")
    monkeypatch.setenv("ARGUS_LLM_MODEL", "llama3.1:8b")
    options = Settings().llm_options(None)
    assert (options.base_url, options.model, options.prompt_token_budget) == ("http://localhost:11434/v1",
                                                                              "llama3.1:8b", 8000)


def test_an_unknown_llm_key_names_file_line_and_a_suggestion(tmp_path: Path) -> None:
    with pytest.raises(ScheduleError) as caught:
        _load(tmp_path, FILE.replace("evaluators: balanced", "evaluator: balanced"))
    assert any(p.endswith("schedules.yaml:6 defaults.llm.evaluator: unknown key (did you mean 'evaluators'?)")
               for p in caught.value.problems), caught.value.problems


def test_an_unknown_planner_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ScheduleError, match="planner"):
        _load(tmp_path, FILE.replace("planner: hybrid", "planner: gpt"))


def test_every_llm_setting_has_an_environment_variable() -> None:
    from argus.agent.llm.options import LLMOptions

    from_env = {name.removeprefix("llm_") for name in Settings.model_fields if name.startswith("llm_")}
    assert from_env == set(LLMOptions.model_fields) - {"prices"}
