"""LLM evaluators, layered after the rule gates, in profiles ``fast``, ``balanced`` and ``thorough``.

``fast`` is rules only. ``balanced`` adds self-evaluation (the planner's model reviews its own
candidate finding, and the conclusion) at the finding and run gates. ``thorough`` adds an
independent judge model at the run gate. An evaluator runs only when the rules passed, so it
never spends tokens on what the rules already refused. It fails open: an unavailable model, an
unreadable verdict or a spent budget leaves the rules' verdict with a WARN saying why. At the run
gate an evaluator may refuse a conclusion once; later refusals become warnings, so a run never
loops on a reviewer it cannot satisfy.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Generic, Literal, TypeVar

import structlog

from argus.agent.ejson import MAX_NESTING, NestedTooDeep, parse_json
from argus.agent.errors import BudgetExhausted
from argus.agent.findings import Finding
from argus.agent.gates.base import Gate
from argus.agent.llm.client import ChatModel
from argus.agent.llm.errors import LLMError, LLMUnsupported
from argus.agent.llm.prompts.digest import compact_json, field_line
from argus.agent.llm.tools import strip_fence
from argus.agent.privacy import Masker, categorical_values
from argus.agent.state import AgentAction, AgentState, EvaluationRecord, RuleResult, Verdict
from argus.agent.text import clean

__all__ = ["FindingReview", "LayeredGate", "RunReview"]

log = structlog.get_logger("argus.gates.llm")

S = TypeVar("S")
_ORDER: dict[Verdict, int] = {"PASS": 0, "WARN": 1, "FAIL": 2}
_VERDICT_FORMAT = {"type": "json_schema", "json_schema": {"name": "verdict", "schema": {
    "type": "object", "additionalProperties": False, "required": ["verdict", "critique"],
    "properties": {"verdict": {"type": "string", "enum": ["PASS", "WARN", "FAIL"]},
                   "critique": {"type": "string", "description": "what is wrong and what to do; empty on PASS"}}}}}
_SYSTEM = {
    "self_eval": "You review your own data-quality audit step before it is committed. Be strict but fair: FAIL only "
                 "for a concrete flaw (wrong category, evidence that does not support the claim, a severity out of "
                 "line with the share affected, an expected pattern reported as a defect), WARN for doubts, else "
                 "PASS.",
    "judge": "You are an independent reviewer of a data-quality audit another model ran. You see its findings and "
             "coverage, never document values. FAIL only when the audit plainly missed or misjudged something it "
             "can still fix with its tools; WARN for doubts; else PASS.",
}


class _Reviewer:
    """Asks a model for ``{"verdict", "critique"}`` about a subject rendered as text."""

    def __init__(self, chat: ChatModel, *, rule: str, role: Literal["self_eval", "judge"]) -> None:
        self.chat = chat
        self.rule = rule
        self.role = role
        self._formats: list[dict[str, Any] | None] = [_VERDICT_FORMAT, {"type": "json_object"}, None]

    def _complete(self, messages: list[dict[str, Any]]) -> str:
        """The answer in the richest response format the server takes (a refused one is not asked again)."""
        while True:
            try:
                return self.chat.complete(messages, response_format=self._formats[0]).content or ""
            except LLMUnsupported:
                if len(self._formats) == 1:
                    raise
                self._formats.pop(0)

    def ask(self, question: str) -> RuleResult:
        answer = ' Answer with one JSON object: {"verdict": "PASS|WARN|FAIL", "critique": "..."}'
        messages = [{"role": "system", "content": _SYSTEM[self.role] + answer}, {"role": "user", "content": question}]
        try:
            verdict, critique = _parse(self._complete(messages))
        except (LLMError, BudgetExhausted, ValueError) as exc:
            log.info("llm_evaluator_unavailable", rule=self.rule, error=type(exc).__name__)
            return RuleResult(rule=self.rule, verdict="WARN", message=f"{self.rule} skipped: {str(exc)[:160]}")
        return RuleResult(rule=self.rule, verdict=verdict, message=critique[:600])


def _parse(text: str) -> tuple[Verdict, str]:
    try:
        data = parse_json(strip_fence(text))
    except json.JSONDecodeError:
        raise ValueError("the verdict was not JSON") from None
    except NestedTooDeep:
        raise ValueError(f"the verdict was nested deeper than {MAX_NESTING} levels") from None
    verdict = str(data.get("verdict", "")).upper() if isinstance(data, dict) else ""
    if verdict not in ("PASS", "WARN", "FAIL"):
        raise ValueError("the verdict was not PASS, WARN or FAIL")
    critique = data.get("critique", "")
    return verdict, clean(critique) if isinstance(critique, str) else ""  # type: ignore[return-value]


class FindingReview:
    """Self-evaluation of a candidate finding the rules accepted."""

    def __init__(self, chat: ChatModel) -> None:
        self._reviewer = _Reviewer(chat, rule="self_eval", role="self_eval")

    def __call__(self, finding: Finding, state: AgentState) -> RuleResult:
        masker = Masker(state.options.privacy, categorical_values(state.schema))
        stats = state.schema.field(finding.field) if state.schema else None
        size = max(state.collection_size, 1)
        question = "\n".join([
            f"Collection {state.database}.{state.collection}: {state.collection_size:,} documents.",
            f"Candidate finding: {finding.category.value} on {finding.field}, severity {finding.severity.value}, "
            f"{finding.affected_count:,} documents ({finding.affected_count / size:.2%}).",
            f"Description: {finding.description[:400]}",
            f"Evidence filter (values masked by privacy mode {masker.mode}): "
            f"{compact_json(masker.filter(finding.evidence_query), 400)}",
            f"Field statistics: {field_line(stats, masker) if stats else 'not in the sample'}",
            "Should this finding be committed?"])
        return self._reviewer.ask(question)


class RunReview:
    """Self-evaluation or an independent judge of a conclusion the rules accepted."""

    def __init__(self, chat: ChatModel, *, role: Literal["self_eval", "judge"]) -> None:
        self._reviewer = _Reviewer(chat, rule="judge" if role == "judge" else "self_eval", role=role)
        self._refused = False

    def __call__(self, action: AgentAction, state: AgentState) -> RuleResult:
        size = max(state.collection_size, 1)
        fields = state.auditable_fields()
        untouched = [f for f in fields if f not in state.fields_investigated]
        lines = [f"Collection {state.database}.{state.collection}: {state.collection_size:,} documents, "
                 f"{len(fields)} fields, {len(fields) - len(untouched)} touched by a query.",
                 f"Findings ({len(state.findings)}):"]
        lines += [f"- {f.field} {f.category.value} {f.severity.value}: {f.affected_count:,} "
                  f"({f.affected_count / size:.2%}) {f.description[:160]}" for f in list(state.findings)[:40]]
        if state.dismissed_findings:
            lines.append("Dismissed by the rules:")
            lines += [f"- {d.finding.field} {d.finding.category.value}: {d.critique[:120]}"
                      for d in state.dismissed_findings[-15:]]
        if untouched:
            lines.append("Never touched by a query: " + ", ".join(untouched[:40]))
        lines.append("May the audit conclude with these findings?")
        result = self._reviewer.ask("\n".join(lines))
        if result.verdict == "FAIL":
            if self._refused:
                return result.model_copy(update={"verdict": "WARN"})
            self._refused = True
        return result


class LayeredGate(Generic[S]):
    """Rules first; when they do not fail, each evaluator in turn (stopping at a FAIL)."""

    def __init__(self, rules: Gate[S], evaluators: Sequence[Any], *, label: str) -> None:
        self.rules = rules
        self.evaluators = list(evaluators)
        self.label = label

    def evaluate(self, subject: S, state: AgentState) -> EvaluationRecord:
        record = self.rules.evaluate(subject, state)
        if record.verdict == "FAIL" or not self.evaluators:
            return record
        results = list(record.rules)
        for evaluator in self.evaluators:
            result: RuleResult = evaluator(subject, state)
            results.append(result)
            if result.verdict == "FAIL":
                break
        verdict: Verdict = max((r.verdict for r in results), key=_ORDER.__getitem__, default="PASS")
        return record.model_copy(update={"verdict": verdict, "rules": results, "evaluator": self.label})
