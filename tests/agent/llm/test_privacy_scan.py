"""No document value reaches a prompt: scripted audits of every benchmark collection, every prompt scanned.

The scripted model (``Explorer``) drives each tool over the collection's fields (value counts, whole
documents, duplicates, maximum, distinct values, a failing query, an unsupported finding), so every
digest path renders real data. Then each string value of the collection is looked for in every
prompt sent, as written and as JSON escapes it. Excepted: in ``shapes`` mode, the values the
documented rule lets through, computed on the run's own sample (``categorical_values``: a small
vocabulary relative to the sample, no identifier-like value); strings shorter than
4 characters and letterless strings shorter than 7 such as ``100%`` (they collide with counts,
percentages and words of any text); strings that occur in the prompt templates themselves (system
prompt, tool schemas, field paths). Numbers and dates enter prompts only as statistics.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from bson import json_util

from argus.agent.llm.options import LLMOptions
from argus.agent.llm.prompts.system import system_prompt
from argus.agent.llm.tools import tool_definitions
from argus.agent.loop import run_audit
from argus.agent.options import AuditOptions
from argus.agent.planners.factory import make_planner
from argus.agent.privacy import categorical_values
from argus.agent.report import TraceEntry
from argus.agent.state import AgentState
from argus.agent.tools import schema_sample
from argus.agent.tools.models import SchemaSampleInput
from argus.daemon.sources import load_jsonl
from tests.doubles.explorer import Explorer
from tests.doubles.model_server import LocalChatServer

ROOT = Path(__file__).resolve().parents[3]
BENCH = ROOT.parent / "shared" / "bench"
DEMO = ROOT / "deploy" / "demo"
_NO_BENCH = pytest.mark.skipif(not BENCH.is_dir(), reason=f"benchmark collections not found in {BENCH} "
                               "(see docs/benchmarks.md for how to get them)")
# The benchmark collections beside the repository, and always the demo collections inside it.
COLLECTIONS = [pytest.param(BENCH / f"{name}.jsonl", id=name, marks=_NO_BENCH)
               for name in ("customers", "orders", "events", "products", "hospital", "beers")] + \
              [pytest.param(DEMO / f"{name}.jsonl", id=f"demo-{name}") for name in ("customers", "orders")]
STEPS = 8

pytestmark = [pytest.mark.slow]


def _strings(doc: Any, path: str, out: dict[str, set[str]]) -> None:
    if isinstance(doc, dict):
        for key, value in doc.items():
            _strings(value, f"{path}.{key}" if path else key, out)
    elif isinstance(doc, list):
        for value in doc:
            _strings(value, path, out)
    elif isinstance(doc, str):
        out.setdefault(path, set()).add(doc)


def _values(file: Path) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    with file.open() as handle:
        for line in handle:
            if line.strip():
                _strings(json_util.loads(line), "", out)
    return out


class _Vocabulary:
    """Observes the run's sample: what the categorical rule allows in ``shapes`` prompts."""

    def __init__(self) -> None:
        self.allowed: dict[str, frozenset[Any]] = {}

    def on_step(self, state: AgentState, entry: TraceEntry) -> None:
        self.allowed = categorical_values(state.schema)


def _prompts(file: Path, privacy: str) -> tuple[list[str], dict[str, frozenset[Any]]]:
    target = load_jsonl(file)
    fields = [f.path for f in schema_sample(target, SchemaSampleInput(sample_size=200)).fields if f.queryable]
    vocabulary = _Vocabulary()
    with LocalChatServer(Explorer(fields, steps=STEPS)) as server:
        setup = make_planner("llm", llm=LLMOptions(model="gpt-4o-mini", base_url=server.base_url,
                                                   evaluators="balanced"))
        report = run_audit(target, setup.planner, gates=setup.gates, llm=setup.account, observer=vocabulary,
                           options=AuditOptions(privacy=privacy))  # type: ignore[arg-type]
        assert report.outcome == "succeeded", report.notes
        return [r.prompt_text() for r in server.requests], vocabulary.allowed


@pytest.fixture(scope="module")
def template_text() -> str:
    return system_prompt(privacy="shapes", min_field_coverage=0.8) + json.dumps(tool_definitions())


def _leaks(values: dict[str, set[str]], prompts: list[str], *, allowed: dict[str, frozenset[Any]],
           template: str) -> Iterator[str]:
    lines = "\n".join(sorted({line for p in prompts for line in p.splitlines()}))
    for path, found in values.items():
        for value in found:
            letterless = not any(c.isalpha() for c in value)
            if len(value) < 4 or (letterless and len(value) < 7) or value in template or value in path \
                    or value in allowed.get(path, ()):
                continue
            escaped = json.dumps(value, ensure_ascii=False)[1:-1]
            if value in lines or escaped in lines:
                yield f"{path}={value!r}"


@pytest.mark.parametrize("file", COLLECTIONS)
def test_no_document_value_reaches_a_prompt(file: Path, template_text: str) -> None:
    values = _values(file)
    for privacy in ("strict", "shapes"):
        prompts, vocabulary = _prompts(file, privacy)
        assert len(prompts) > STEPS
        leaks = list(_leaks(values, prompts, allowed=vocabulary if privacy == "shapes" else {},
                            template=template_text))
        assert leaks == [], f"{privacy}: {leaks[:10]}"


def test_the_scan_finds_values_when_they_are_there(template_text: str) -> None:
    """The same scan over ``full``-mode prompts must find raw values, or it proves nothing."""
    demo = DEMO / "customers.jsonl"
    prompts, vocabulary = _prompts(demo, "full")
    leaks = list(_leaks(_values(demo), prompts, allowed=vocabulary, template=template_text))
    assert len(leaks) > 20
