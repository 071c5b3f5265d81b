"""The contract stage: every planner checks the declared rules, with the same tools, gates and report.

``DeclaredFirst`` wraps a planner. Once the sample is in (the loop compiles the contract then), it
runs the declared checks in four phases: count every rule's filter; compute the statistics
(duplicates of ``unique`` fields, distinct values of ``references``); look the references up in
the collections they name; count the evidence of the broken rules with a few examples and write
one finding per field and category, marked with the rules it reports.

``fold=True`` (the heuristic planner, whose audit is three batched passes) adds each phase's
queries to the wrapped planner's own pass of the same kind (its first count, its statistics, its
evidence), so a contract costs no pass of its own; a phase the planner has no pass for runs
alone, before the planner's next step. The planner sees only its own part of each result.
``fold=False`` (a language model, whose steps are not batched) runs the phases alone right after
the sample, then hands over. Either way the planner is asked for nothing while the stage runs
its own steps, and always gets the observation of its own last step.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from argus.agent.contracts.compile import Declared, stat_key
from argus.agent.contracts.model import COLLECTION, Rule
from argus.agent.contracts.results import Verdict, group_evidence, grouped, lookup_key, verdicts
from argus.agent.ejson import canonical_key, encode, filter_key
from argus.agent.findings import Category, Severity
from argus.agent.planners.base import Planner
from argus.agent.severity import severity_for
from argus.agent.state import AgentAction, AgentState, Observation
from argus.agent.tools.models import COUNT_MANY_MAX, CountManyResult
from argus.agent.tools.profiling import values_at

__all__ = ["DeclaredFirst"]

EXAMPLES = 5
_COUNTS, _STATS, _LOOKUPS, _EVIDENCE, _WRITES, _DONE = range(6)


class DeclaredFirst:
    """Wraps a planner; a no-op for a run without a contract."""

    def __init__(self, inner: Planner, *, fold: bool) -> None:
        self.inner = inner
        self.name = inner.name
        self.model = inner.model
        self.fold = fold
        self._phase = _COUNTS
        self._queue: list[AgentAction] = []
        self._held: AgentAction | None = None          # the planner's step, waiting for the stage's own
        self._inner_obs: Observation | None = None     # the observation of the planner's own last step
        self._last: str | None = None                  # who proposed the last step: "inner", "own", "folded"
        self._split: tuple[int, int] = (0, 0)          # the planner's queries and stats in a folded batch
        self._examples: dict[str, list[dict[str, Any]]] = {}  # evidence key -> example documents

    def propose(self, state: AgentState) -> AgentAction:
        self._observe(state)
        declared = state.declared
        if declared is None or not declared.checks:
            return self._ask(state, self._held)
        while True:
            if self._queue:
                self._last = "own"
                return self._queue.pop(0)
            if self._phase == _LOOKUPS:
                self._queue = self._lookups(declared, state)
                self._phase = _EVIDENCE
                continue
            if self._phase == _DONE:
                return self._ask(state, self._held)
            if not self.fold:
                self._alone(declared, state)
                continue
            action = self._held or self.inner.propose(self._view(state))
            self._held = None
            if self._phase == _WRITES and action.action in ("count_many", "write_finding"):
                self._last = "inner"  # the planner's evidence and findings first; the stage's before it concludes
                return action
            folded = self._fold(declared, state, action)
            if folded is not None:
                self._last = "folded"
                return folded
            # The step does not fit the phase: run the phase alone first, keep the step for later.
            self._held = action
            self._alone(declared, state)

    # --- observations ---------------------------------------------------------------------------

    def _observe(self, state: AgentState) -> None:
        obs = state.last_observation
        if self._last == "inner":
            self._inner_obs = obs
        elif self._last == "folded" and obs is not None:
            mine = obs
            if obs.kind == "result" and isinstance(obs.result, CountManyResult):
                queries, stats = self._split
                self._keep_examples(obs.result, queries)
                mine = dataclasses.replace(obs, result=obs.result.model_copy(update={
                    "counts": obs.result.counts[:queries], "stats": obs.result.stats[:stats]}))
            self._inner_obs = mine
        elif self._last == "own" and obs is not None and obs.kind == "result" \
                and isinstance(obs.result, CountManyResult):
            self._keep_examples(obs.result, 0)
        self._last = None

    def _keep_examples(self, result: CountManyResult, start: int) -> None:
        for counted in result.counts[start:]:
            if counted.documents:
                self._examples[filter_key(counted.filter)] = counted.documents

    def _view(self, state: AgentState) -> AgentState:
        """The state as the planner left it: its own last observation, not the stage's."""
        if self._inner_obs is None or self._inner_obs is state.last_observation:
            return state
        return dataclasses.replace(state, last_observation=self._inner_obs)

    def _ask(self, state: AgentState, held: AgentAction | None) -> AgentAction:
        self._held = None
        self._last = "inner"
        return held or self.inner.propose(self._view(state))

    # --- phases ---------------------------------------------------------------------------------

    def _fold(self, declared: Declared, state: AgentState, action: AgentAction) -> AgentAction | None:
        """The planner's step with the phase's queries added, when it is a pass of the phase's kind."""
        if action.action != "count_many":
            return None
        queries = list(action.action_input.get("queries") or [])
        stats = list(action.action_input.get("stats") or [])
        examples = any(q.get("examples_of") for q in queries)
        if self._phase == _COUNTS and queries and not stats and not examples:
            extra_q, extra_s, following = self._count_items(declared), [], _STATS
        elif self._phase == _STATS and stats and not queries:
            extra_q, extra_s, following = [], declared.stats(), _LOOKUPS
        elif self._phase == _EVIDENCE and queries and examples and not stats:
            extra_q, extra_s, following = self._evidence_items(declared, state), [], _WRITES
        else:
            return None
        if len(queries) + len(extra_q) > COUNT_MANY_MAX or len(stats) + len(extra_s) > COUNT_MANY_MAX:
            return None  # too many to ride along: the phase runs alone, in passes of its own
        self._phase = following
        self._split = (len(queries), len(stats))
        why = "; with the contract's declared checks"
        return action.model_copy(update={"action_input": {**action.action_input, "queries": queries + extra_q,
                                                          "stats": stats + extra_s},
                                         "reasoning": action.reasoning + why})

    def _alone(self, declared: Declared, state: AgentState) -> None:
        """Queue the current phase as the stage's own steps, and move to the next phase."""
        if self._phase == _COUNTS and not self.fold:  # counts and statistics in one pass
            self._queue = self._batch(self._count_items(declared), declared.stats(),
                                      "check the contract's declared rules in one pass")
            self._phase = _LOOKUPS
        elif self._phase == _COUNTS:
            self._queue = self._batch(self._count_items(declared), [], "count the contract's declared rules")
            self._phase = _STATS
        elif self._phase == _STATS:
            self._queue = self._batch([], declared.stats(), "compute the statistics the contract's rules need")
            self._phase = _LOOKUPS
        elif self._phase == _EVIDENCE:
            self._queue = self._batch(self._evidence_items(declared, state), [],
                                      "count and show the evidence of the broken declared rules")
            self._phase = _WRITES
        elif self._phase == _WRITES:
            self._queue = self._writes(declared, state)
            self._phase = _DONE
            self._tell(declared, state)

    def _tell(self, declared: Declared, state: AgentState) -> None:
        """A model planning after the stage reads what the contract decided (its ``notes``)."""
        if not hasattr(self.inner, "notes"):
            return
        lines = [f"# Contract\nThe contract {declared.contract.source} declares these rules, already checked over "
                 f"the whole collection. Each decides its field and category: a finding of your own there is "
                 f"refused. Spend your turns on everything else."]
        for v in verdicts(declared, state.recorded()):
            count = f" ({v.count:,} documents)" if v.result in ("failed", "warned") and v.count else ""
            lines.append(f"- {v.rule.field}: {v.rule.expectation(values=state.options.privacy != 'strict')}: "
                         f"{v.result}{count}")
        self.inner.notes = [*self.inner.notes, "\n".join(lines)]

    @staticmethod
    def _batch(queries: list[dict[str, Any]], stats: list[dict[str, Any]], why: str) -> list[AgentAction]:
        """One pass, or as many as a pass's limit (``COUNT_MANY_MAX`` queries and statistics) needs: a
        contract of thousands of rules is checked in several passes, never refused as one."""
        passes = max(-(-len(queries) // COUNT_MANY_MAX), -(-len(stats) // COUNT_MANY_MAX))
        return [AgentAction(action="count_many", proposed_by="contract",
                            reasoning=why + (f" (pass {i + 1} of {passes})" if passes > 1 else ""),
                            action_input={"queries": queries[i * COUNT_MANY_MAX:(i + 1) * COUNT_MANY_MAX],
                                          "stats": stats[i * COUNT_MANY_MAX:(i + 1) * COUNT_MANY_MAX]})
                for i in range(passes)]

    @staticmethod
    def _count_items(declared: Declared) -> list[dict[str, Any]]:
        return [{"filter": encode(q)} for q in declared.counts()]

    def _lookups(self, declared: Declared, state: AgentState) -> list[AgentAction]:
        out = []
        for v in verdicts(declared, state.recorded()):
            rule = v.rule
            if rule.kind != "references" or v.result != "unchecked" or v.check.stat is None:
                continue
            target = rule.value
            if lookup_key(target.collection, target.field) in state.lookups:
                continue
            stats = state.statistics.get(stat_key(v.check.stat))
            if stats is None or stats.error is not None or not isinstance(stats.value, list) or not stats.value:
                continue
            out.append(AgentAction(action="lookup_references", proposed_by="contract",
                                   reasoning=f"{rule.field} references {target.text()}: look its values up there",
                                   action_input={"collection": target.collection, "field": target.field,
                                                 "values": stats.value}))
        return out

    def _evidence_items(self, declared: Declared, state: AgentState) -> list[dict[str, Any]]:
        items = []
        for (path, _), group in sorted(grouped(self._failed(declared, state)).items()):
            item: dict[str, Any] = {"filter": encode(group_evidence(group))}
            if path != COLLECTION:
                item.update(examples_of=path, examples=EXAMPLES)
            items.append(item)
        return items

    @staticmethod
    def _failed(declared: Declared, state: AgentState) -> list[Verdict]:
        return [v for v in verdicts(declared, state.recorded())
                if v.result in ("failed", "warned") and v.evidence is not None]

    def _writes(self, declared: Declared, state: AgentState) -> list[AgentAction]:
        size = max(state.collection_size, 1)
        out = []
        for (path, category), group in sorted(grouped(self._failed(declared, state)).items()):
            evidence = encode(group_evidence(group))
            key = filter_key(evidence)
            count = state.evidence_counts.get(key)
            if count is None or (count == 0 and path != COLLECTION):
                continue  # not counted (refused), or fixed while the audit ran
            share = count / size
            rules = [v.rule for v in group]
            examples: list[Any] = []
            for doc in self._examples.get(key, []):
                examples.extend(values_at(doc, path))
            if all(r.kind == "shape" for r in rules):  # an undeclared shape: its discriminator's values, once
                examples = list({canonical_key(e): e for e in examples}.values())
            elif category == Category.SCHEMA_DRIFT.value:
                examples = _shapes(examples, rules)
            elif all(r.element for r in rules):  # the elements breaking the rule, not whole arrays
                examples = [e for value in examples for e in (value if isinstance(value, list) else [value])]
            out.append(AgentAction(action="write_finding", proposed_by="contract",
                                   reasoning=f"{len(rules)} declared rule(s) broken", action_input={
                "field": path, "category": category, "severity": _severity(group, Category(category), share,
                                                                           state).value,
                "description": _describe(group, count, size, values=state.options.privacy != "strict")
                + _undeclared(rules, self._examples.get(key, []), path),
                "hypothesis": "a writer breaks the contract",
                "evidence_query": evidence, "affected_count": count, "affected_pct": round(share, 6),
                "sample_values": examples[:EXAMPLES], "rule": "; ".join(r.id for r in rules)}))
        return out


def _severity(group: list[Verdict], category: Category, share: float, state: AgentState) -> Severity:
    """As declared, else the category's by share; a group of warned rules only is low, and a rule
    past its declared ``fail`` threshold at least high (it fails the audit at the default --fail-on)."""
    rules = [v.rule for v in group if v.result == "failed"]
    if not rules:
        return Severity.LOW
    given = [r.severity for r in rules if r.severity is not None]
    if given:
        return max(given, key=lambda s: s.rank)
    if rules[0].collection_rule:
        return Severity.HIGH
    found = severity_for(category, share, critical_min_share=state.options.critical_min_share)
    if any(r.fail is not None for r in rules) and found.rank < Severity.HIGH.rank:
        return Severity.HIGH
    return found


def _shapes(values: list[Any], rules: list[Rule]) -> list[Any]:
    """An array's or an object's shape instead of its values: an element count, the keys; with
    ``additional_fields``, only the keys not declared (a key's value never shows)."""
    allowed = {k for r in rules if r.kind == "additional_fields" for k in r.value}
    out: list[Any] = []
    for value in values:
        if isinstance(value, dict):
            keys = sorted(k for k in value if not allowed or k not in allowed)
            if keys:
                out.append(("undeclared keys: " if allowed else "keys: ") + ", ".join(keys))
        elif isinstance(value, list):
            out.append(f"{len(value)} elements")
    return list(dict.fromkeys(out))


def _undeclared(rules: list[Rule], documents: list[dict[str, Any]], path: str) -> str:
    """The keys an ``additional_fields`` rule did not declare, as the example documents hold them."""
    allowed = {k for r in rules if r.kind == "additional_fields" for k in r.value}
    if not allowed:
        return ""
    keys = sorted({k for doc in documents for value in values_at(doc, path) if isinstance(value, dict)
                   for k in value if k not in allowed})
    return f"; undeclared keys in the examples: {', '.join(keys)}" if keys else ""


def _describe(group: list[Verdict], count: int, size: int, *, values: bool) -> str:
    rules = [v.rule for v in group]
    said = " or ".join(r.expectation(values=values) for r in rules)
    where = "; ".join(f"{r.source}:{r.line}" for r in rules)
    details = "; ".join(v.detail for v in group if v.detail)
    if rules[0].collection_rule:
        return f"the collection breaks {said} ({details}; declared at {where})"
    return (f"{count:,} of {size:,} documents ({count / size:.2%}) break {said} (declared at {where})"
            + (f": {details}" if details else ""))


