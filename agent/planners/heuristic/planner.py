"""The heuristic planner: a deterministic audit that needs no language model.

It samples the collection, forms hypotheses per field from the sample's statistics, confirms
each with an exact query over the whole collection, and writes a finding only on that evidence.
Defects too rare to show in the sample are caught by screening queries: one ``$or`` over many
fields' "something is wrong" conditions, bisected when it matches, so a clean collection costs a
handful of queries however wide it is.

The strategy is written as a generator: each ``yield`` hands the loop one action and receives
the observation it produced, so the audit reads top to bottom like the procedure it is.
"""

from __future__ import annotations

from collections.abc import Generator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from agent.clock import Clock, SystemClock
from agent.ejson import decode, encode, filter_key
from agent.errors import ArgusError
from agent.findings import Category
from agent.history import HistoricalContext, fingerprint
from agent.planners.heuristic.names import NameHints, hints_for
from agent.planners.heuristic.ranges import Fence, RangePlan, as_date, date_plan, detached, numeric_plan
from agent.planners.heuristic.text import FormatSpec, enum_violations, string_format
from agent.severity import severity_for
from agent.state import AgentAction, AgentState, Observation
from agent.tools.formats import PLACEHOLDER
from agent.tools.models import FieldStats, RunQueryResult, SchemaSampleResult, StatsResult

__all__ = ["HeuristicPlanner"]

Steps = Generator[AgentAction, Observation | None, Any]

MAX_NULL_SHARE = 0.35        # missing more often than this, a field is optional, not defective
MIN_VALUES = 20              # fewer sampled values than this say nothing about a distribution
CATEGORICAL_RATIO = 0.2      # distinct / values at or below this: a categorical field
DUPLICATE_UNIQUE = 0.99      # a field named as a key and this unique in the sample is meant to be unique
DUPLICATE_MAX_SHARE = 0.05   # other fields unique in the sample: duplicates this common mean it is no key
DUPLICATE_MAX_SHARE_ID = 0.5  # ... and for a field named as a key, this common
SCREEN_CHUNK = 64
EXAMPLES = 5

_FAMILY = {"int": "number", "long": "number", "double": "number", "decimal": "number"}
_TYPE_ALIAS = {"number": "number", "string": "string", "date": "date", "bool": "bool", "objectId": "objectId",
               "object": "object", "array": "array", "binData": "binData"}
_SCALARS = {"number", "string", "date", "bool", "objectId"}


class PlannerGaveUp(ArgusError):
    """The audit cannot go on (the sample itself failed)."""


def _families(stats: FieldStats) -> dict[str, int]:
    out: dict[str, int] = {}
    for t, n in stats.non_null_types.items():
        fam = _FAMILY.get(t, t)
        out[fam] = out.get(fam, 0) + n
    return dict(sorted(out.items(), key=lambda kv: -kv[1]))


def _parent(path: str) -> str | None:
    return path.rsplit(".", 1)[0] if "." in path else None


def _scoped(path: str, condition: Any) -> dict[str, Any]:
    """``{path: condition}``, limited to documents where the enclosing object exists."""
    parent = _parent(path)
    if parent is None:
        return {path: condition}
    return {parent: {"$exists": True}, path: condition}


def _or(clauses: list[dict[str, Any]]) -> dict[str, Any]:
    return clauses[0] if len(clauses) == 1 else {"$or": clauses}


def _values_at(doc: Any, path: list[str]) -> list[Any]:
    if not path:
        return [doc]
    if isinstance(doc, list):
        return [v for item in doc for v in _values_at(item, path)]
    if isinstance(doc, dict) and path[0] in doc:
        return _values_at(doc[path[0]], path[1:])
    return []


@dataclass
class _Screen:
    category: Category
    items: list[tuple[str, dict[str, Any]]] = field(default_factory=list)  # (field, clause)


class HeuristicPlanner:
    """Deterministic, free, and quiet on healthy data. One instance audits one run."""

    name = "heuristic"
    model: str | None = None

    def __init__(self, *, clock: Clock | None = None) -> None:
        self._clock = clock or SystemClock()
        self._proc: Steps | None = None
        self._done: set[tuple[str, Category]] = set()

    def propose(self, state: AgentState) -> AgentAction:
        try:
            if self._proc is None:
                self._proc = self._audit(state)
                return next(self._proc)
            return self._proc.send(state.last_observation)
        except StopIteration:
            return AgentAction(action="conclude", reasoning="every hypothesis has been checked")

    # --- primitives --------------------------------------------------------------------------

    def _query(self, state: AgentState, query: dict[str, Any], why: str, *, examples_of: str | None = None,
               ) -> Generator[AgentAction, Observation | None, RunQueryResult | int | None]:
        """Count ``query`` on the whole collection (reusing a count already made); with
        ``examples_of`` also fetch a few values of that field for the finding."""
        encoded = encode(query)
        known = state.evidence_counts.get(filter_key(encoded))
        if known is not None and examples_of is None:
            return known
        inp: dict[str, Any] = {"filter": encoded, "limit": 0}
        if examples_of is not None:
            inp.update(limit=EXAMPLES, projection={examples_of: 1, "_id": 0})
        obs = yield AgentAction(action="run_query", action_input=inp, reasoning=why)
        if obs is None or obs.kind != "result" or not isinstance(obs.result, RunQueryResult):
            return known
        return obs.result if examples_of is not None else obs.result.matched_count

    def _stats(self, path: str, operation: str, why: str, *, value_filter: dict[str, Any] | None = None,
               query: dict[str, Any] | None = None) -> Generator[AgentAction, Observation | None, StatsResult | None]:
        inp: dict[str, Any] = {"field": path, "operation": operation}
        if value_filter is not None:
            inp["value_filter"] = encode(value_filter)
        if query is not None:
            inp["filter"] = encode(query)
        obs = yield AgentAction(action="get_stats", action_input=inp, reasoning=why)
        if obs is None or obs.kind != "result" or not isinstance(obs.result, StatsResult):
            return None
        return obs.result

    def _confirm_and_write(self, state: AgentState, path: str, category: Category, query: dict[str, Any], *,
                           description: str, hypothesis: str, identifier: bool = True) -> Steps:
        """Run the evidence query, and write the finding when it matches anything."""
        if (path, category) in self._done:
            return
        self._done.add((path, category))
        result = yield from self._query(state, query, f"confirm {category.value} on {path} over the whole "
                                                      f"collection", examples_of=path)
        if not isinstance(result, RunQueryResult) or result.matched_count == 0:
            return
        count, size = result.matched_count, max(state.collection_size, 1)
        share = count / size
        if self._held_back(state, path, category, share):
            return
        examples: list[Any] = []
        for doc in result.documents:
            examples.extend(_values_at(doc, path.split(".")))
        severity = severity_for(category, share, critical_min_share=state.options.critical_min_share,
                                identifier=identifier)
        yield AgentAction(action="write_finding", reasoning=f"{count} documents confirm it", action_input={
            "field": path, "category": category.value, "severity": severity.value,
            "description": f"{count:,} of {size:,} documents ({share:.2%}) {description}",
            "hypothesis": hypothesis, "evidence_query": result.filter, "affected_count": count,
            "affected_pct": round(share, 6), "sample_values": examples[:EXAMPLES],
        })

    @staticmethod
    def _held_back(state: AgentState, path: str, category: Category, share: float) -> bool:
        """Users called it a false positive, or a gate dismissed it last run, and it has not grown."""
        context = state.historical_context
        if not isinstance(context, HistoricalContext):
            return False
        fp = fingerprint(state.connection_name, state.database, state.collection, path, category)
        if context.suppressed(fp, share):
            return True
        dismissed = next((p for p in context.dismissed if p.fingerprint == fp and not p.committed_runs), None)
        return dismissed is not None and share <= dismissed.last_share * context.growth_factor

    # --- the audit ---------------------------------------------------------------------------

    def _audit(self, state: AgentState) -> Steps:
        obs = yield AgentAction(action="schema_sample", action_input={"sample_size": state.options.sample_size},
                                reasoning="survey the implicit schema before anything else")
        # Read the sample from the state, not the observation: a wrapper (ReplayFirst) may have
        # run other steps in between.
        schema = state.schema
        if not isinstance(schema, SchemaSampleResult):
            raise PlannerGaveUp(f"the schema sample failed: {obs.message if obs else 'no observation'}")
        if schema.documents_sampled == 0:
            return
        now = self._clock.now()
        fields = [f for f in schema.fields if f.queryable and f.path != "_id"]
        screens = {c: _Screen(c) for c in (Category.NULL_RATE, Category.TYPE_MISMATCH, Category.OUTLIER_VALUE,
                                           Category.EMPTY_VALUE, Category.FORMAT_VIOLATION,
                                           Category.ENUM_VIOLATION)}
        drifted = yield from self._schema_drift(state, schema, fields)
        for f in fields:
            if f.path not in drifted:
                yield from self._presence(state, schema, f, screens)
            yield from self._field(state, f, now, screens)
        for screen in screens.values():
            yield from self._screen(state, screen, {f.path: f for f in fields}, now)
        obs = yield AgentAction(action="conclude", reasoning="all fields checked")
        if obs is not None and obs.kind == "run_rejected":
            missing = [p for p in state.auditable_fields() if p not in state.fields_investigated]
            for start in range(0, len(missing), SCREEN_CHUNK):
                chunk = missing[start:start + SCREEN_CHUNK]
                yield from self._query(state, _or([{p: {"$exists": True}} for p in chunk]),
                                       "cover the fields no check has touched yet")

    def _schema_drift(self, state: AgentState, schema: SchemaSampleResult, fields: list[FieldStats]) -> Steps:
        """Fields written under two names (``user_id`` / ``userId``) by different writers."""
        groups: dict[tuple[str | None, str], list[FieldStats]] = {}
        for f in fields:
            leaf = f.path.rsplit(".", 1)[-1]
            groups.setdefault((_parent(f.path), leaf.replace("_", "").replace("-", "").lower()), []).append(f)
        drifted: set[str] = set()
        for members in groups.values():
            if len(members) < 2:
                continue
            members.sort(key=lambda f: -f.present_count)
            main = members[0]
            for other in members[1:]:
                base = max(main.parent_present_count, 1)
                if main.present_count + other.present_count > 1.05 * base:
                    continue  # both names in the same documents: two fields, not one renamed
                drifted.update({main.path, other.path})
                query = _scoped(main.path, {"$exists": False}) | {other.path: {"$exists": True}}
                yield from self._confirm_and_write(
                    state, main.path, Category.SCHEMA_DRIFT, query,
                    description=f"carry the value under {other.path!r} instead of {main.path!r}",
                    hypothesis="some writers use a different field name for the same data")
        return drifted

    def _presence(self, state: AgentState, schema: SchemaSampleResult, f: FieldStats,
                  screens: dict[Category, _Screen]) -> Steps:
        base = max(f.parent_present_count, 1)
        absent = (base - f.present_count) + f.null_count
        share = absent / base
        query = _scoped(f.path, None)
        if absent == 0:
            screens[Category.NULL_RATE].items.append((f.path, query))
        elif share <= MAX_NULL_SHARE:
            yield from self._null_rate(state, f.path, query)

    def _null_rate(self, state: AgentState, path: str, query: dict[str, Any]) -> Steps:
        count = yield from self._query(state, query, f"how many documents lack {path}")
        if isinstance(count, int) and 0 < count <= MAX_NULL_SHARE * max(state.collection_size, 1):
            yield from self._confirm_and_write(
                state, path, Category.NULL_RATE, query,
                description=f"have no value for {path}, which the rest of the collection carries",
                hypothesis="a writer omits the field or writes null")

    def _field(self, state: AgentState, f: FieldStats, now: datetime, screens: dict[Category, _Screen]) -> Steps:
        families = _families(f)
        if not families:
            return
        dominant = next(iter(families))
        hints = hints_for(f.path)
        if len(families) > 1:
            yield from self._type_mismatch(state, f.path, dominant, [k for k in families if k != dominant])
        elif dominant in _SCALARS:
            clause = {f.path: {"$exists": True, "$ne": None, "$not": {"$type": _TYPE_ALIAS[dominant]}}}
            screens[Category.TYPE_MISMATCH].items.append((f.path, clause))
        if dominant == "number" and f.numeric and f.numeric.count >= MIN_VALUES:
            plan = numeric_plan(f.numeric, hints)
            if plan:
                screens[Category.OUTLIER_VALUE].items.append((f.path, _range_clause(f.path, plan, dates=False)))
        elif dominant == "date" and f.dates and f.dates.count >= MIN_VALUES:
            plan = date_plan(f.dates, now)
            if plan:
                screens[Category.OUTLIER_VALUE].items.append((f.path, _range_clause(f.path, plan, dates=True)))
        elif dominant == "string" and f.strings:
            yield from self._strings(state, f, screens)
        elif dominant == "array" and f.arrays and 0 < f.arrays.empty_count <= 0.1 * f.arrays.count:
            yield from self._confirm_and_write(state, f.path, Category.EMPTY_VALUE, {f.path: {"$size": 0}},
                                               description=f"have an empty {f.path} array",
                                               hypothesis="a writer stores an empty list instead of omitting it")
        if dominant in ("string", "number", "objectId") and not f.in_array:
            yield from self._duplicates(state, f, hints)

    def _type_mismatch(self, state: AgentState, path: str, dominant: str, other_types: list[str]) -> Steps:
        others = ", ".join(other_types) or "other types"
        yield from self._confirm_and_write(
            state, path, Category.TYPE_MISMATCH,
            {path: {"$exists": True, "$ne": None, "$not": {"$type": _TYPE_ALIAS.get(dominant, dominant)}}},
            description=f"store {path} as {others} where the field is otherwise {dominant}",
            hypothesis=f"a writer serialises {path} differently (for example a {dominant} written as {others})")

    def _strings(self, state: AgentState, f: FieldStats, screens: dict[Category, _Screen]) -> Steps:
        s = f.strings
        assert s is not None
        fmt = string_format(s)
        placeholder = {"$regex": PLACEHOLDER, "$options": "i"}
        if fmt is not None and fmt.violation_matches:
            yield from self._confirm_and_write(
                state, f.path, Category.FORMAT_VIOLATION, {f.path: {"$regex": fmt.regex}},
                description=f"store {f.path} as a number followed by unit text instead of a number",
                hypothesis="units are written into the value instead of the field's definition")
        elif fmt is not None:
            clause = {f.path: {"$type": "string", "$not": {"$regex": fmt.regex}}}
            if s.count > fmt.matched:
                yield from self._format(state, f.path, fmt, clause)
            else:
                screens[Category.FORMAT_VIOLATION].items.append((f.path, clause))
        if fmt is None or fmt.violation_matches:
            if s.empty_count + s.blank_count + s.placeholder_count:
                yield from self._empty(state, f.path, placeholder)
            else:
                screens[Category.EMPTY_VALUE].items.append((f.path, {f.path: placeholder}))
        if s.distinct_count <= 20 or (f.distinct_ratio <= CATEGORICAL_RATIO and s.distinct_count <= 1000):
            top = [(v, c) for v, c in s.top_values if isinstance(v, str)]
            if f.cardinality_capped or enum_violations(top):
                yield from self._enum(state, f.path)
            elif s.distinct_count <= 20 and top:
                domain = {f.path: {"$type": "string", "$nin": [v for v, _ in top]}}
                screens[Category.ENUM_VIOLATION].items.append((f.path, domain))

    def _format(self, state: AgentState, path: str, fmt: FormatSpec, clause: dict[str, Any]) -> Steps:
        kind = fmt.kind.removeprefix("shape ")
        what = {"email": "an email address", "url": "a URL", "uuid": "a UUID", "iso_date": "an ISO date"}
        yield from self._confirm_and_write(
            state, path, Category.FORMAT_VIOLATION, clause,
            description=f"have a {path} that is not {what.get(kind, f'of the form {kind}')}, "
                        f"unlike {fmt.share:.0%} of sampled values",
            hypothesis="values entered by hand or placeholders written where the value was unknown")

    def _empty(self, state: AgentState, path: str, placeholder: dict[str, Any]) -> Steps:
        yield from self._confirm_and_write(
            state, path, Category.EMPTY_VALUE, {path: placeholder},
            description=f"have an empty, blank or placeholder {path} ('', 'n/a', 'null', '-')",
            hypothesis="a writer fills the field with a placeholder when the value is unknown")

    def _enum(self, state: AgentState, path: str) -> Steps:
        result = yield from self._stats(path, "value_counts", f"exact value counts of {path}")
        if result is None or result.capped:
            return
        counts = [(item["value"], item["count"]) for item in result.value if isinstance(item["value"], str)]
        bad = enum_violations(counts)
        if not bad:
            return
        reasons = sorted(set(bad.values()))
        yield from self._confirm_and_write(
            state, path, Category.ENUM_VIOLATION, {path: {"$in": sorted(bad)}},
            description=f"hold one of {len(bad)} values outside the field's usual set ({', '.join(reasons)})",
            hypothesis="values typed by hand or written by a client with its own spelling")

    def _duplicates(self, state: AgentState, f: FieldStats, hints: NameHints) -> Steps:
        families = _families(f)
        values = sum(families.values())
        if values < 50 or (f.numeric is not None and f.numeric.integer_share < 1.0):
            return
        if f.distinct_ratio < (DUPLICATE_UNIQUE if hints.key else 1.0):
            return  # values already repeat in the sample: a reference or an attribute, not a key
        result = yield from self._stats(f.path, "duplicates", f"is {f.path} unique across the collection?",
                                        value_filter={"$not": {"$regex": PLACEHOLDER, "$options": "i"}})
        if result is None or not result.totals or result.totals["values"] == 0:
            return
        cap = DUPLICATE_MAX_SHARE_ID if hints.key else DUPLICATE_MAX_SHARE
        if result.totals["documents"] > cap * max(state.collection_size, 1):
            return  # so common that the field is not a key, however unique the sample looked
        shared = [item["value"] for item in result.value][:1000]
        yield from self._confirm_and_write(
            state, f.path, Category.DUPLICATE_VALUE, {f.path: {"$in": shared}},
            description=f"share their {f.path} with another document ({result.totals['values']:,} values "
                        f"used more than once)",
            hypothesis="a retry or a merge wrote the same record twice", identifier=hints.key)

    # --- outliers ----------------------------------------------------------------------------

    def _outliers(self, state: AgentState, f: FieldStats, now: datetime) -> Steps:
        dates = f.dates is not None and _families(f).get("date", 0) >= _families(f).get("number", 0)
        plan = date_plan(f.dates, now) if dates and f.dates else \
            numeric_plan(f.numeric, hints_for(f.path)) if f.numeric else RangePlan()
        clauses = [{f.path: cond} for _, cond in plan.conditions]
        reasons = [reason for reason, _ in plan.conditions]
        for fence in plan.fences:
            kept = yield from self._verify_fence(f.path, fence, dates)
            if kept:
                clauses.append({f.path: {"$gt" if fence.side == "above" else "$lt": _bound(fence.at, dates)}})
                reasons.append(f"far {fence.side} every other value")
        if not clauses:
            return
        yield from self._confirm_and_write(
            state, f.path, Category.OUTLIER_VALUE, _or(clauses),
            description=f"have an implausible {f.path} ({'; '.join(reasons)})",
            hypothesis="placeholder, unit or data-entry errors" if not dates else "clock or parsing errors")

    def _verify_fence(self, path: str, fence: Fence, dates: bool) -> Generator[AgentAction, Observation | None, bool]:
        beyond, within = ("$gt", "$lte") if fence.side == "above" else ("$lt", "$gte")
        nearest = "min" if fence.side == "above" else "max"
        inner = "max" if fence.side == "above" else "min"
        at = _bound(fence.at, dates)
        out = yield from self._stats(path, nearest, f"nearest {path} value {fence.side} the fence",
                                     value_filter={beyond: at})
        if out is None or out.value is None:
            return False
        inside = yield from self._stats(path, inner, f"the most extreme normal {path} value",
                                        value_filter={within: at})
        return detached(fence, _scalar(inside.value if inside else None), _scalar(out.value))

    # --- screens -----------------------------------------------------------------------------

    def _screen(self, state: AgentState, screen: _Screen, by_path: dict[str, FieldStats], now: datetime) -> Steps:
        items = [(p, c) for p, c in screen.items if (p, screen.category) not in self._done]
        positives: list[str] = []
        for start in range(0, len(items), SCREEN_CHUNK):
            chunk = items[start:start + SCREEN_CHUNK]
            count = yield from self._query(state, _or([c for _, c in chunk]),
                                           f"screen {len(chunk)} fields for {screen.category.value}")
            if count:
                found = yield from self._bisect(state, chunk, screen.category)
                positives.extend(found)
        for path in positives:
            f = by_path[path]
            clause = dict(items)[path]
            if screen.category == Category.NULL_RATE:
                yield from self._null_rate(state, path, clause)
            elif screen.category == Category.TYPE_MISMATCH:
                yield from self._type_mismatch(state, path, next(iter(_families(f))), [])
            elif screen.category == Category.OUTLIER_VALUE:
                yield from self._outliers(state, f, now)
            elif screen.category == Category.EMPTY_VALUE:
                yield from self._empty(state, path, clause[path])
            elif screen.category == Category.FORMAT_VIOLATION and f.strings:
                fmt = string_format(f.strings)
                if fmt is not None:
                    yield from self._format(state, path, fmt, clause)
            elif screen.category == Category.ENUM_VIOLATION:
                yield from self._enum(state, path)

    def _bisect(self, state: AgentState, items: list[tuple[str, dict[str, Any]]],
                category: Category) -> Generator[AgentAction, Observation | None, list[str]]:
        """The fields whose clause matches, given that the ``$or`` of all of them does."""
        if len(items) == 1:
            return [items[0][0]]
        half = len(items) // 2
        left, right = items[:half], items[half:]
        found: list[str] = []
        why = f"narrow the {category.value} screen"
        left_count = yield from self._query(state, _or([c for _, c in left]), why)
        if left_count:
            found += yield from self._bisect(state, left, category)
            right_count = yield from self._query(state, _or([c for _, c in right]), why)
        else:
            right_count = 1  # the whole matched and the left half did not: the right half must
        if right_count:
            found += yield from self._bisect(state, right, category)
        return found


def _bound(at: float, dates: bool) -> Any:
    return as_date(at) if dates else at


def _scalar(value: Any) -> float | None:
    """A min/max result as a number (dates as epoch seconds)."""
    if value is None:
        return None
    if isinstance(value, dict) and "$date" in value:
        d = decode(value)
        return d.timestamp() if isinstance(d, datetime) else None
    if isinstance(value, dict) and "$numberDecimal" in value:
        try:
            return float(value["$numberDecimal"])
        except ValueError:
            return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def _range_clause(path: str, plan: RangePlan, *, dates: bool) -> dict[str, Any]:
    clauses = [{path: cond} for _, cond in plan.conditions]
    for fence in plan.fences:
        clauses.append({path: {"$gt" if fence.side == "above" else "$lt": _bound(fence.at, dates)}})
    return _or(clauses)
