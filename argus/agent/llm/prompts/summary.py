"""The planner's prompt: system prompt, then the state summary as the user message, within a budget.

The user message puts the stable prefix first (collection identity, the ranked schema, earlier
runs), computed once per run so it is byte-identical on every call and providers can cache it;
then what changes every turn: progress, findings, a window of recent actions with a summary of
older ones, a digest of the last result, and the critique or schema-only hint to act on.

Every prompt fits the token budget (offline estimate, tool schemas included): the schema section
has a fixed share and ranks fields, listing the rest by name; the changing part shrinks its
window and rows step by step and is cut as a last resort.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any
from uuid import UUID

from argus.agent.ejson import decode
from argus.agent.errors import ArgusError
from argus.agent.history import HistoricalContext
from argus.agent.llm.options import RequestShape
from argus.agent.llm.prompts.digest import compact_json, field_line, interest, query_digest, stats_digest
from argus.agent.llm.prompts.shapes import shapes_section
from argus.agent.llm.prompts.system import system_prompt
from argus.agent.llm.tokens import STATE_FACTOR, estimate_messages, estimate_tokens
from argus.agent.privacy import QUERY_KEYS, Masker, categorical_values
from argus.agent.state import AgentState
from argus.agent.tools.guard import filter_fields
from argus.agent.tools.models import GetStatsInput, RunQueryResult, SchemaSampleResult, StatsResult

__all__ = ["Prompt", "PromptBuilder", "schema_hint"]

SCHEMA_SHARE = 0.5     # of what the system prompt and tools leave
HISTORY_SHARE = 0.08
SHAPES_SHARE = 0.25    # of the schema's: the sample's shapes (argus.agent.llm.prompts.shapes)
_LADDER = ((10, 5, 40, 20), (6, 3, 25, 10), (3, 2, 12, 5), (1, 1, 5, 3))  # window, rows, names, findings


@dataclass(frozen=True)
class Prompt:
    messages: list[dict[str, Any]]
    tokens: int


def _fit_lines(lines: Sequence[str], budget: int) -> tuple[list[str], int]:
    """As many of ``lines`` as fit in ``budget`` tokens (in order), and how many were left out."""
    out: list[str] = []
    used = 0
    for i, line in enumerate(lines):
        cost = estimate_tokens(line) + 1
        if used + cost > budget:
            return out, len(lines) - i
        out.append(line)
        used += cost
    return out, 0


def _cut(text: str, budget: int) -> str:
    """The longest prefix of ``text`` within ``budget`` tokens, marked as cut."""
    if estimate_tokens(text) <= budget:
        return text
    marker = "\n… (cut to fit the prompt budget)"
    lo, hi = 0, len(text)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if estimate_tokens(text[:mid] + marker) <= budget:
            lo = mid
        else:
            hi = mid - 1
    return text[:lo] + marker


def schema_hint(schema: SchemaSampleResult | None, fields: Sequence[str]) -> str | None:
    """Schema-only facts about fields a failed call touched: type, null share, cardinality. No values."""
    if schema is None:
        return None
    lines = []
    for path in fields:
        f = schema.field(path)
        if f is None:
            lines.append(f"- {path}: not in the sample (check the spelling against the Schema section)")
            continue
        types = ", ".join(f"{t} {n}" for t, n in sorted(f.types.items(), key=lambda kv: -kv[1]))
        lines.append(f"- {path}: types {types}; null or missing {f.null_rate:.1%}; "
                     f"distinct {f.cardinality}{'+' if f.cardinality_capped else ''}"
                     f"{'; inside an array' if f.in_array else ''}")
    return "\n".join(lines) if lines else None


class PromptBuilder:
    """Builds each planner turn's messages for one run."""

    def __init__(self, *, budget: int, hybrid: bool = False) -> None:
        self.budget = budget
        self.hybrid = hybrid
        self._stable_key: tuple[UUID, int, int] | None = None
        self._stable_text = ""
        self._seen: dict[int, str] = {}  # iteration -> one-line digest of its result, as first shown

    def masker(self, state: AgentState) -> Masker:
        return Masker(state.options.privacy, categorical_values(state.schema))

    def build(self, state: AgentState, *, authored: set[int], critique: str | None = None,
              notes: Sequence[str] = (), tools: list[dict[str, Any]] | None = None,
              response_format: dict[str, Any] | None = None, shape: RequestShape | None = None) -> Prompt:
        shape = shape or ("tools" if response_format is None else "json_schema")
        system = system_prompt(privacy=state.options.privacy, min_field_coverage=state.options.min_field_coverage,
                               hybrid=self.hybrid, shape=shape)
        fixed = estimate_messages([{"role": "system", "content": system}, {"role": "user", "content": ""}],
                                  tools, response_format)
        available = self.budget - fixed
        if available < 300:
            raise ArgusError(f"the prompt budget of {self.budget} tokens leaves no room for the state summary "
                             f"(system prompt and tools take {fixed}); raise prompt_token_budget")
        available = int(available / STATE_FACTOR)  # the parts below are measured in raw estimate_tokens
        masker = self.masker(state)
        self._remember(state, masker)
        stable = self._stable_part(state, masker, available)
        room = available - estimate_tokens(stable) - 2
        variable = ""
        for window, rows, names, findings in _LADDER:
            variable = self._variable_part(state, masker, authored=authored, critique=critique, notes=notes,
                                           window=window, rows=rows, names=names, findings=findings)
            if estimate_tokens(variable) <= room:
                break
        variable = _cut(variable, room)
        messages = [{"role": "system", "content": system}, {"role": "user", "content": stable + "\n\n" + variable}]
        return Prompt(messages, estimate_messages(messages, tools, response_format))

    def _remember(self, state: AgentState, masker: Masker) -> None:
        obs = state.last_observation
        i = len(state.history) - 1
        if obs is None or obs.kind != "result" or i < 0 or i in self._seen:
            return
        if isinstance(obs.result, StatsResult):
            self._seen[i] = stats_digest(obs.result, masker, rows=2)[:200]

    # --- the stable prefix ---------------------------------------------------------------------

    def _stable_part(self, state: AgentState, masker: Masker, available: int) -> str:
        key = (state.run_id, id(state.schema), available)
        if self._stable_key == key:
            return self._stable_text
        schema_budget = int(available * SCHEMA_SHARE)
        history_budget = int(available * HISTORY_SHARE)
        parts = [f"# Collection\n{state.database}.{state.collection} (connection {state.connection_name}): "
                 f"{state.collection_size:,} documents, {state.documents_sampled:,} sampled. "
                 f"Privacy mode: {state.options.privacy}."]
        parts.append(self._schema_section(state.schema, masker, schema_budget))
        context = state.historical_context
        if isinstance(context, HistoricalContext):
            text = context.render(max_chars=max(200, history_budget * 3))
            parts.append("# Earlier runs\n" + _cut(text, history_budget))
        self._stable_key = key
        self._stable_text = "\n\n".join(parts)
        return self._stable_text

    @staticmethod
    def _schema_section(schema: SchemaSampleResult | None, masker: Masker, budget: int) -> str:
        if schema is None:
            return "# Schema\nNot sampled yet."
        fields = [f for f in schema.fields if f.path != "_id"]
        ranked = sorted(enumerate(fields), key=lambda item: (-interest(item[1]), item[0]))
        head = (f"# Schema\n{len(fields)} field paths in the sample (dot notation reaches into arrays of objects); "
                f"per field: types with counts, missing/null, distinct values, statistics. Most suspicious first.")
        budget -= estimate_tokens(head) + 2
        shaped = shapes_section(schema.shapes, masker)
        shaped = _cut(shaped, int(budget * SHAPES_SHARE)) if shaped else ""
        budget -= estimate_tokens(shaped) + 1 if shaped else 0
        detailed, _ = _fit_lines([f"- {field_line(f, masker)}" for _, f in ranked], int(budget * 0.7))
        rest = [f for _, f in ranked[len(detailed):]]
        lines = [head, *detailed]
        if rest:
            used = sum(estimate_tokens(x) + 1 for x in detailed)
            names = [f"{f.path} ({'/'.join(sorted(f.non_null_types)) or 'null'})" for f in rest]
            intro = f"Other fields, fewer signals (name and types only; {len(rest)}):"
            shown, missing = _fit_lines(names, budget - used - estimate_tokens(intro) - 30)
            lines.append(intro + " " + ", ".join(shown)
                         + (f" … and {missing} more (any path can be queried)" if missing else ""))
        if shaped:
            lines.append(shaped)
        if schema.paths_dropped or schema.truncated_paths:
            lines.append(f"({schema.paths_dropped} values beyond 2,000 paths and {len(schema.truncated_paths)} paths "
                         f"deeper than 20 levels were not profiled)")
        return "\n".join(lines)

    # --- what changes every turn ---------------------------------------------------------------

    def _variable_part(self, state: AgentState, masker: Masker, *, authored: set[int], critique: str | None,
                       notes: Sequence[str], window: int, rows: int, names: int, findings: int) -> str:
        parts: list[str] = []
        fields = state.auditable_fields()
        missing = [f for f in fields if f not in state.fields_investigated]
        usage = state.total_usage
        progress = [f"# Progress\nIteration {state.iteration} of {state.iteration_budget}. "
                    f"Fields touched by a query: {len(fields) - len(missing)} of {len(fields)} "
                    f"(need {state.options.min_field_coverage:.0%} to conclude). "
                    f"LLM tokens used so far: {usage.total_tokens:,}."]
        if missing:
            shown = ", ".join(missing[:names]) + (f" … and {len(missing) - names} more" if len(missing) > names else "")
            progress.append(f"Not yet touched: {shown}")
        parts.append("\n".join(progress))
        parts.extend(notes)
        parts.append(self._findings(state, findings))
        parts.append(self._actions(state, masker, authored, window))
        last = self._last(state, masker, rows)
        if last:
            parts.append(last)
        todo = critique or state.last_critique
        if todo:
            parts.append(f"# Critique of your last step (fix this)\n{todo[:600]}")
        parts.append("Choose the next step.")
        return "\n\n".join(p for p in parts if p)

    @staticmethod
    def _findings(state: AgentState, limit: int) -> str:
        size = max(state.collection_size, 1)
        found = list(state.findings)
        lines = [f"# Findings committed ({len(found)})"]
        lines += [f"- {f.field} {f.category.value} {f.severity.value}: {f.affected_count:,} documents "
                  f"({f.affected_count / size:.2%})" for f in found[:limit]]
        if len(found) > limit:
            lines.append(f"… and {len(found) - limit} more")
        if state.dismissed_findings:
            lines.append(f"# Findings dismissed by the gate ({len(state.dismissed_findings)})")
            lines += [f"- {d.finding.field} {d.finding.category.value}: {d.critique[:160]}"
                      for d in state.dismissed_findings[-limit:]]
        return "\n".join(lines)

    def _actions(self, state: AgentState, masker: Masker, authored: set[int], window: int) -> str:
        if not state.history:
            return ""
        records: dict[int, list[Any]] = {}
        for rec in state.evaluation_records:
            records.setdefault(rec.iteration, []).append(rec)
        queries = {q.iteration: q for q in state.queries_run}
        start = max(0, len(state.history) - window)
        lines = ["# Recent actions (yours show their input; others' inputs are masked by privacy mode)"]
        if start:
            old = {"reads": 0, "committed": 0, "dismissed": 0, "rejected": 0}
            for i in range(start):
                outcome = _outcome(state, i, records.get(i, []), queries.get(i), self._seen.get(i))
                key = ("rejected" if outcome.startswith("rejected") else "committed" if outcome == "committed"
                       else "dismissed" if outcome.startswith("dismissed") else "reads")
                old[key] += 1
            lines.append(f"Iterations 0-{start - 1} (summarised): {old['reads']} reads or other steps, "
                         f"{old['committed']} findings committed, {old['dismissed']} dismissed, "
                         f"{old['rejected']} rejected.")
        for i in range(start, len(state.history)):
            action = state.history[i]
            shown = _input(action.action, action.action_input, masker, own=i in authored)
            outcome = _outcome(state, i, records.get(i, []), queries.get(i), self._seen.get(i))
            lines.append(f"#{i} {action.action} {shown} → {outcome}")
        return "\n".join(lines)

    @staticmethod
    def _last(state: AgentState, masker: Masker, rows: int) -> str:
        obs = state.last_observation
        if obs is None:
            return ""
        if obs.kind == "result":
            if isinstance(obs.result, RunQueryResult):
                # Masked rows say little beyond the column summary: two of them show the shape of a document.
                shown = rows if masker.mode == "full" else min(rows, 1)
                return "# Last result\n" + query_digest(obs.result, masker, rows=shown, columns=6 * rows)
            if isinstance(obs.result, StatsResult):
                return "# Last result\n" + stats_digest(obs.result, masker, rows=rows)
            if isinstance(obs.result, SchemaSampleResult):
                return "# Last result\nschema_sample done: see the Schema section."
            return ""
        if obs.kind == "error":
            text = f"# Last result\n{obs.action} failed: {obs.message[:300]}"
            action = state.history[-1] if state.history else None
            hint = schema_hint(state.schema, _touched(action.action_input if action else {}, state, obs.message))
            if hint:
                text += "\nSchema-only hint for the fields involved (no values):\n" + hint
            return text
        return ""


def _touched(action_input: dict[str, Any], state: AgentState, message: str) -> list[str]:
    fields: list[str] = []
    try:
        params = GetStatsInput.model_validate(action_input)
        fields.append(params.field)
    except ValueError:
        pass
    for key in ("filter", "value_filter"):
        query = action_input.get(key)
        if isinstance(query, dict) and key == "filter":
            with contextlib.suppress(ValueError, TypeError, ArgusError):
                fields.extend(sorted(filter_fields(decode(query))))
    if state.schema is not None:
        fields.extend(f.path for f in state.schema.fields if f.path != "_id" and f"'{f.path}'" in message)
    return list(dict.fromkeys(fields))[:5]


_HIDDEN = "\u2063hidden:"  # marks a masked operand until it is rendered without quotes
_HIDDEN_JSON = re.compile('"' + _HIDDEN + r'<?(.*?)>?"')


def _mark_hidden(original: Any, masked: Any) -> Any:
    """``masked`` with each operand the masker changed marked, so it renders as ``<kind>``, not a string."""
    if isinstance(masked, dict) and isinstance(original, dict):
        return {k: _mark_hidden(original.get(k), v) for k, v in masked.items()}
    if isinstance(masked, list) and isinstance(original, list) and len(masked) == len(original):
        return [_mark_hidden(o, m) for o, m in zip(original, masked, strict=True)]
    if masked != original and isinstance(masked, str):
        return _HIDDEN + masked
    return masked


def _hidden_filters(value: Any, masker: Masker) -> Any:
    """Every filter in a tool's input masked and marked, at any depth (``count_many`` nests them)."""
    if isinstance(value, dict):
        return {k: _mark_hidden(v, masker.filter(v)) if k in QUERY_KEYS and isinstance(v, dict)
                else _hidden_filters(v, masker) for k, v in value.items()}
    if isinstance(value, list):
        return [_hidden_filters(v, masker) for v in value]
    return value


def _input(tool: str, action_input: dict[str, Any], masker: Masker, *, own: bool) -> str:
    if own:
        return compact_json(action_input, 300)
    if tool == "write_finding":
        return compact_json({k: action_input.get(k) for k in ("field", "category", "severity", "affected_count")})
    shown = _hidden_filters(action_input, masker)
    # {"$lt": <date>}: a hidden operand must not look like a string a model could copy into its own filter
    return _HIDDEN_JSON.sub(lambda m: f"<{m.group(1)}>", compact_json(shown, 300))


def _outcome(state: AgentState, i: int, records: list[Any], query: Any, seen: str | None) -> str:
    for rec in records:
        if rec.gate == "action" and rec.verdict == "FAIL":
            return f"rejected: {(rec.critique or '')[:200]}"
    for rec in records:
        if rec.gate == "finding":
            return f"dismissed: {(rec.critique or '')[:200]}" if rec.verdict == "FAIL" else "committed"
        if rec.gate == "run":
            return f"conclusion refused: {(rec.critique or '')[:300]}" if rec.verdict == "FAIL" else "concluded"
    if query is not None:
        if query.matched_count is not None:
            return f"matched {query.matched_count:,}" + "".join(f" (hint: {h})" for h in query.hints)
        return seen or "done"
    if i == len(state.history) - 1 and state.last_observation is not None and state.last_observation.kind == "error":
        return "failed (see Last result)"
    return "failed"

