"""The model planner honours the contract: the declared checks run before it plans, with the same
tools, gates and report, and it is told; a finding of its own on a declared field and category is refused."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from argus.agent.contracts.model import Contract
from argus.agent.llm.options import LLMOptions
from argus.agent.loop import run_audit
from argus.agent.planners.factory import make_planner
from argus.config.contracts import load_contract
from tests.doubles.model_server import tool_reply

DOCS = [{"age": i % 90, "email": f"user{i}@mail.org"} for i in range(100)] + [{"age": 999, "email": "n/a"}]
OUTLIERS = {"age": {"$gt": 130}}
INFERRED = {"field": "age", "category": "outlier_value", "severity": "high", "description": "impossible ages",
            "evidence_query": OUTLIERS, "affected_count": 1, "affected_pct": round(1 / 101, 6)}
SCRIPT = [tool_reply("run_query", {"filter": OUTLIERS, "limit": 0}),
          tool_reply("write_finding", INFERRED),
          tool_reply("conclude", {"summary": "done"})]


def _contract(tmp_path: Path) -> Contract:
    path = tmp_path / "people.yaml"
    path.write_text("fields:\n  age: {min: 0, max: 130}\n  email: {format: email, required: true}\n")
    return load_contract(path, shown_as="people.yaml")


def test_the_declared_checks_run_before_the_model_and_decide_their_categories(make_target: Any, chat_server: Any,
                                                                              tmp_path: Path) -> None:
    server = chat_server(SCRIPT)
    setup = make_planner("llm", llm=LLMOptions(model="gpt-4o-mini", base_url=server.base_url, timeout_s=2.0,
                                               max_retries=0), sleep=lambda _s: None)
    report = run_audit(make_target(DOCS), setup.planner, gates=setup.gates, llm=setup.account,
                       contract=_contract(tmp_path))
    declared = {(f.field, f.category.value): (f.affected_count, f.rule) for f in report.findings}
    assert declared == {("age", "outlier_value"): (1, "people.yaml:2 age max"),
                        ("email", "format_violation"): (1, "people.yaml:3 email format")}
    assert report.contract is not None and report.contract.summary() == "4 rules, 2 passed, 2 failed"
    # the model's own outlier finding on the declared field is refused by the gate, saying why
    assert [d.critique for d in report.dismissed_findings] == [
        "people.yaml declares min 0 (line 2), max 130 (line 2) for age: the declared rule decides outlier_value "
        "there, so Argus does not infer it"]
    # the contract stage ran first, in two passes of its own, before any model call
    # (the sample is the loop's first step, proposed without a model call)
    assert [(e.action, e.proposed_by) for e in report.trace[:6]] == [
        ("schema_sample", "heuristic"), ("count_many", "contract"), ("count_many", "contract"),
        ("write_finding", "contract"), ("write_finding", "contract"), ("run_query", "model")]
    prompt = server.requests[0].body["messages"][1]["content"]
    assert "# Contract" in prompt and "- age: max 130: failed (1 documents)" in prompt
    # the stage's two, the model's one count, and a first run's baseline read from the documents' arrival times
    assert report.database_cost.passes == 2 + 1 + 1
