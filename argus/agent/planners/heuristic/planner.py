"""The heuristic planner: a deterministic audit that needs no language model.

It samples the collection, turns every field's statistics into hypotheses (data, not queries
sent one by one), and confirms them all in three passes over the collection with ``count_many``:

1. every hypothesis's exact count;
2. the server-side statistics some verdicts need: exact value counts of categorical fields,
   duplicates of key-like fields, the values nearest each statistical fence;
3. the evidence of each finding: its exact count (for evidence built from pass 2, such as an
   enum's bad values) and a few example values.

The sample only decides which hypotheses to ask, with generous margins; every verdict comes from
an exact count over the whole collection. So the same data gives the same findings whatever the
sample held, and a defect that grows stays reported. Each finding's evidence query is a plain
filter whose count, run on its own, is its ``affected_count``.

The strategy is a generator: each ``yield`` hands the loop one action and receives the
observation it produced, so the audit reads top to bottom like the procedure it is.
"""

from __future__ import annotations

import re
from collections.abc import Generator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import structlog

from argus.agent.clock import Clock, SystemClock
from argus.agent.ejson import decode, encode, filter_key
from argus.agent.errors import ArgusError
from argus.agent.findings import Category, Severity
from argus.agent.history import HistoricalContext, fingerprint
from argus.agent.planners.heuristic.declared import steered
from argus.agent.planners.heuristic.keys import GROUP_MEMORY, KeyPlan, group_bytes, key_plan, verdict
from argus.agent.planners.heuristic.names import NameHints, hints_for, optional
from argus.agent.planners.heuristic.presence import self_links, waits_for_its_event
from argus.agent.planners.heuristic.ranges import Fence, as_date, date_plan, detached, numeric_plan
from argus.agent.planners.heuristic.relations import intervals, products
from argus.agent.planners.heuristic.sets import breaks, few_values, moved_values, outside_values
from argus.agent.planners.heuristic.text import FormatSpec, enum_violations, string_format
from argus.agent.privacy import categorical_values
from argus.agent.severity import severity_for
from argus.agent.shapes.drift import drift
from argus.agent.shapes.models import ShapeCounts, Shapes
from argus.agent.shapes.privacy import for_report
from argus.agent.shapes.scoping import count_queries, newest_stats, rename_lead, scopes, with_newest
from argus.agent.shapes.scoping import counted as by_count
from argus.agent.state import AgentAction, AgentState, Observation
from argus.agent.tools.elements import per_element as _per_element
from argus.agent.tools.formats import MADE_UP_EMAIL, PLACEHOLDER, PLACEHOLDER_EMAIL, PLACEHOLDER_TEXT
from argus.agent.tools.models import CountManyResult, FieldStats, SchemaSampleResult, StatsResult
from argus.agent.tools.profiling import values_at

__all__ = ["HeuristicPlanner"]

log = structlog.get_logger("argus.planner")

Steps = Generator[AgentAction, Observation | None, Any]

MAX_NULL_SHARE = 0.35        # missing more often than this, a field is optional, not defective
RESERVED_EMAIL_MAX_SHARE = 0.05  # addresses at example.com in more documents than this are the data's convention
NULL_ASK_SHARE = 0.45        # ... so ask about nulls when the sample shows at most this (margin for chance)
MIN_VALUES = 20              # fewer sampled values than this say nothing about a distribution
CATEGORICAL_RATIO = 0.2      # distinct / values at or below this: a categorical field
ENUM_VALUES = 20             # ... as is any field with at most this many distinct values in the sample
PRODUCT_TOLERANCE = 0.005     # a total may differ from quantity times unit price by rounding: half a percent,
PRODUCT_TOLERANCE_ABS = 0.011  # ... or a cent
PRODUCT_MAX_SHARE = 0.2       # more totals off than this: something else (unnamed) enters the total
INTERVAL_MAX_SHARE = 0.5     # ends before starts in most documents: the names pair the fields wrongly
EMPTY_ARRAY_MAX_SHARE = 0.1  # empty arrays more common than this are how the data says "none"
EXAMPLES = 5

_DECLARED_KEY = KeyPlan(cap=1.0)  # a duplicates probe no inference made: the field is a key whatever the share
_FAMILY = {"int": "number", "long": "number", "double": "number", "decimal": "number"}
_TYPE_ALIAS = {"number": "number", "string": "string", "date": "date", "bool": "bool", "objectId": "objectId",
               "object": "object", "array": "array", "binData": "binData"}
_SCALARS = {"number", "string", "date", "bool", "objectId"}
_PLACEHOLDER_MATCH = {"$regex": PLACEHOLDER, "$options": "i"}
_PLACEHOLDER_TEXT_MATCH = {"$regex": PLACEHOLDER_TEXT, "$options": "i"}
_LOWER = {Severity.CRITICAL: Severity.HIGH, Severity.HIGH: Severity.MEDIUM, Severity.MEDIUM: Severity.LOW,
          Severity.LOW: Severity.LOW}
# Only well-formed placeholders: '', 'n/a' or 'unknown' in an email field already break its format,
# and one defect is reported once.
_PLACEHOLDER_EMAIL_MATCH = {"$regex": PLACEHOLDER_EMAIL, "$options": "i"}
_MADE_UP_EMAIL_MATCH = {"$regex": MADE_UP_EMAIL, "$options": "i"}


class PlannerGaveUp(ArgusError):
    """The audit cannot go on (the sample itself failed)."""


def _families(stats: FieldStats) -> dict[str, int]:
    out: dict[str, int] = {}
    for t, n in stats.non_null_types.items():
        fam = _FAMILY.get(t, t)
        out[fam] = out.get(fam, 0) + n
    return dict(sorted(out.items(), key=lambda kv: (-kv[1], kv[0])))


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




def _valid_patterns(query: Any) -> bool:
    """Every ``$regex`` in ``query`` compiles: a learned pattern is checked before it is sent."""
    if isinstance(query, dict):
        pattern = query.get("$regex")
        if isinstance(pattern, str):
            try:
                re.compile(pattern)
            except re.error:
                return False
        return all(_valid_patterns(v) for v in query.values())
    if isinstance(query, list):
        return all(_valid_patterns(v) for v in query)
    return True


@dataclass
class _Check:
    """A hypothesis about one field: its exact count over the collection decides it."""

    path: str
    category: Category
    query: dict[str, Any]
    description: str
    hypothesis: str
    identifier: bool = True
    max_share: float | None = None   # more common than this, the pattern is the data's normal, not a defect
    optional: bool = False           # a field records may lack by meaning: one severity step lower
    within: dict[str, Any] | None = None  # judged among the documents of some shapes only (their filter) ...
    scope: str | None = None              # ... named so: 'iban (by method)'
    lead: str | None = None               # a sentence the description follows ('a was renamed b around ...')


@dataclass
class _Probe:
    """A server-side statistic some verdict needs (``get_stats`` input, run inside the batch)."""

    path: str
    kind: str                        # "enum", "number_set", "duplicates", "fence_out", "fence_in"
    spec: dict[str, Any]
    fence: Fence | None = None
    dates: bool = False
    hints: NameHints | None = None
    key: KeyPlan | None = None       # duplicates: how the whole collection's repeated values are judged


@dataclass
class _Plan:
    checks: list[_Check] = field(default_factory=list)
    probes: list[_Probe] = field(default_factory=list)
    outliers: dict[str, tuple[list[dict[str, Any]], list[str], bool]] = field(default_factory=dict)
    # (documents with a value beyond the fence, the probes that check its gap when there are any)
    fences: list[tuple[dict[str, Any], list[_Probe]]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # checks the audit skipped, and why: the report says so
    counted: list[dict[str, Any]] = field(default_factory=list)  # counts for the report (shapes, type mixes)


class HeuristicPlanner:
    """Deterministic, free, and quiet on healthy data. One instance audits one run."""

    name = "heuristic"
    model: str | None = None

    def __init__(self, *, clock: Clock | None = None, shapes: bool = True) -> None:
        self._clock = clock or SystemClock()
        self._by_shape = shapes  # False: every rule judged over the whole collection (bench/shapes.py compares)
        self._proc: Steps | None = None
        self._notes: list[str] = []  # checks the audit skipped, and why: its conclusion hands them to the report
        self._counts: dict[str, int] = {}  # the first pass's counts, by filter key
        self._shape_counts: ShapeCounts | None = None  # the first pass's counts of the sample's shapes: the report's

    def propose(self, state: AgentState) -> AgentAction:
        try:
            if self._proc is None:
                self._proc = self._audit(state)
                return next(self._proc)
            return self._proc.send(state.last_observation)
        except StopIteration:
            return AgentAction(action="conclude", reasoning="every hypothesis has been checked",
                               action_input=self._conclusion())

    def _conclusion(self) -> dict[str, Any]:
        out: dict[str, Any] = {"notes": self._notes}
        if self._shape_counts is not None:
            out["shape_counts"] = self._shape_counts.model_dump()
        return out

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
        fields = sorted((f for f in schema.fields if f.queryable and f.path != "_id"), key=lambda f: f.path)
        plan = steered(_hypotheses(fields, now, collection=state.collection, size=schema.collection_size,
                                   sampled=schema.documents_sampled, history=state.historical_context),
                       state.contract)
        if self._by_shape:
            _by_shape(plan, schema.shapes, for_report(schema.shapes, state.options.privacy, categorical_values(schema)),
                      state.historical_context)
        self._notes = plan.notes
        queries = _unique([c.query for c in plan.checks] + [q for q, _ in plan.fences] + plan.counted)
        counted = yield from self._batch(queries, [], f"count {len(queries)} hypotheses on {len(fields)} "
                                                      f"fields in one pass")
        size = max(state.collection_size, 1)
        confirmed: list[_Check] = []
        counts: dict[str, int] = {}
        if counted is not None:
            counts = {filter_key(encode(q)): c.matched_count for q, c in zip(queries, counted.counts, strict=True)}
            confirmed = [c for c in plan.checks if counts.get(filter_key(encode(c.query)), 0) > 0
                         and (c.max_share is None or counts[filter_key(encode(c.query))]
                              <= c.max_share * _base(c, counts, size))]
            self._counts = counts
            self._shape_counts = by_count(schema.shapes, lambda q: counts.get(filter_key(encode(q))))
        # A fence's gap is measured only when something lies beyond it.
        probes = plan.probes + [p for q, pair in plan.fences if counts.get(filter_key(encode(q)), 0) for p in pair]
        newest = newest_stats(schema.shapes) if probes and self._by_shape else []  # each form's last write
        measured = yield from self._batch([], [p.spec for p in probes] + newest,
                                          f"compute {len(probes)} statistics in one pass")
        if measured is not None:  # a verified fence widens the hard rules' evidence: it goes first
            confirmed = _from_statistics(plan, probes, measured.stats[:len(probes)], size) + confirmed
            self._shape_counts = with_newest(self._shape_counts, schema.shapes, measured.stats[len(probes):])
        confirmed = _one_per_field_and_category(confirmed)
        if confirmed:
            second = yield from self._batch([c.query for c in confirmed], [],
                                            f"count and show the evidence of {len(confirmed)} findings",
                                            examples_of=[c.path for c in confirmed])
            if second is not None:
                for check, evidence in zip(confirmed, second.counts, strict=True):
                    yield from self._write(state, check, evidence.filter, evidence.matched_count, evidence.documents)
        obs = yield AgentAction(action="conclude", reasoning="all fields checked", action_input=self._conclusion())
        if obs is not None and obs.kind == "run_rejected":
            attempted = state.fields_investigated | state.unanswered_fields()  # unanswered: no $exists stand-in
            missing = [p for p in state.auditable_fields() if p not in attempted]
            if missing:
                yield from self._batch([{p: {"$exists": True}} for p in missing], [],
                                       "cover the fields no check has touched yet")

    def _batch(self, queries: list[dict[str, Any]], stats: list[dict[str, Any]], why: str, *,
               examples_of: list[str] | None = None) -> Generator[AgentAction, Observation | None,
                                                                  CountManyResult | None]:
        items: list[dict[str, Any]] = []
        for i, query in enumerate(queries):
            item: dict[str, Any] = {"filter": encode(query)}
            if examples_of is not None:
                item.update(examples_of=examples_of[i], examples=EXAMPLES)
            items.append(item)
        if not items and not stats:
            return None
        obs = yield AgentAction(action="count_many", action_input={"queries": items, "stats": stats}, reasoning=why)
        if obs is None or obs.kind != "result" or not isinstance(obs.result, CountManyResult):
            log.warning("batch_failed", queries=len(items), stats=len(stats))
            return None
        return obs.result

    def _write(self, state: AgentState, check: _Check, evidence: dict[str, Any], count: int,
               documents: list[dict[str, Any]]) -> Steps:
        if count == 0:
            return
        size = max(state.collection_size, 1)
        share = count / size
        if self._held_back(state, check.path, check.category, share):
            return
        among, within = size, share
        if check.within is not None:  # judged among the shape's documents: counted in the first pass
            among = max(_base(check, self._counts, size), count)
            within = count / among
        examples: list[Any] = []
        for doc in documents:
            examples.extend(values_at(doc, check.path))
        severity = severity_for(check.category, within, critical_min_share=state.options.critical_min_share,
                                identifier=check.identifier)
        if check.optional:
            severity = _LOWER[severity]
        yield AgentAction(action="write_finding", reasoning=f"{count} documents confirm it", action_input={
            "field": check.path, "category": check.category.value, "severity": severity.value,
            "description": (f"{check.lead}; " if check.lead else "") + (
                f"{count:,} of {among:,} documents of shape {check.scope} ({within:.2%}) {check.description}"
                if check.scope else f"{count:,} of {size:,} documents ({share:.2%}) {check.description}"),
            "hypothesis": check.hypothesis, "evidence_query": evidence, "affected_count": count,
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


def _unique(queries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    seen: dict[str, dict[str, Any]] = {}
    for q in queries:
        seen.setdefault(filter_key(encode(q)), q)
    return list(seen.values())


def _base(check: _Check, counts: dict[str, int], size: int) -> int:
    """The documents a check's share is of: its shapes' (counted in the first pass), or all."""
    if check.within is None:
        return size
    return counts.get(filter_key(encode(check.within)), size)


def _by_shape(plan: _Plan, shapes: Shapes | None, named: Shapes | None, history: Any = None) -> None:
    """Judge the null-rate, type and value-set checks of a path that belongs to some shapes
    among those shapes' documents; one rename finding replaces a null-rate rise on the old name
    and schema drift on the new (``argus.agent.shapes``)."""
    if shapes is None:
        return
    plan.counted = count_queries(shapes)
    if isinstance(history, HistoricalContext) and named is not None:
        moved, gone = drift(shapes, named, history.shapes)
        plan.notes += gone
        plan.checks += [_Check(shapes.discriminator or "", Category.SCHEMA_DRIFT, d.query, description=d.description,
                               hypothesis="a release added, retired or redirected a kind of document")
                        for d in moved]
    renamed = {p for r in shapes.renames for p in (r.old, r.new)}
    plan.checks = [c for c in plan.checks if not (c.path in renamed and c.category in (Category.NULL_RATE,
                                                                                        Category.SCHEMA_DRIFT))]
    for r in shapes.renames:
        plan.checks.insert(0, _Check(
            r.old, Category.SCHEMA_DRIFT, {r.old: {"$exists": True}, r.new: {"$exists": False}}, lead=rename_lead(r),
            description=f"still use the old name ({r.old}); newer documents carry {r.new}",
            hypothesis="a release renamed the field; older documents (or writers not yet upgraded) keep the old name"))
    for path, scope in scopes(shapes, named).items():
        if path in renamed:
            continue
        plan.checks = [c for c in plan.checks if not (c.path == path and c.category == Category.NULL_RATE)]
        for check in plan.checks:
            if check.path == path and check.category == Category.TYPE_MISMATCH:
                check.query, check.within, check.scope = {**scope.within, **check.query}, scope.within, scope.label
        for probe in plan.probes:
            if probe.path == path and probe.kind == "enum":
                probe.spec["filter"] = encode(scope.within)
        if scope.missing_share <= NULL_ASK_SHARE:
            plan.checks.append(_Check(
                path, Category.NULL_RATE, {**scope.within, **_scoped(path, None)}, max_share=MAX_NULL_SHARE,
                optional=optional(path), within=scope.within, scope=scope.label,
                description=f"have no value for {path}, which the shape's other documents carry",
                hypothesis="a writer of this shape omits the field or writes null"))
    # Below a field written as a string in some documents and an object in others, a value is
    # missing only where the field is an object: the string form is a type mix, reported as one.
    objects = {m.path for m in shapes.mixes if not m.elements and "object" in m.sampled}
    for check in plan.checks:
        parent = _parent(check.path)
        if check.category == Category.NULL_RATE and parent in objects and check.query.get(parent) == {"$exists": True}:
            check.query = {**check.query, parent: {"$type": "object"}}


def _one_per_field_and_category(checks: list[_Check]) -> list[_Check]:
    """The first confirmed check of each (field, category), in a stable order."""
    seen: dict[tuple[str, Category], _Check] = {}
    for c in checks:
        seen.setdefault((c.path, c.category), c)
    return sorted(seen.values(), key=lambda c: (c.path, c.category.value))


# --- hypotheses from the sample (pure) -----------------------------------------------------------

def _hypotheses(fields: list[FieldStats], now: datetime, *, collection: str = "", size: int | None = None,
                sampled: int | None = None, history: Any = None) -> _Plan:
    plan = _Plan()
    drifted = _schema_drift(fields, plan)
    paths = [f.path for f in fields]
    links = self_links(fields)
    for f in fields:
        if f.path not in drifted:
            _presence(f, plan, links=links, history=history)
        _field(f, now, plan, renamed=f.path in drifted, collection=collection, size=size, siblings=paths,
               sampled=sampled)
    for pair in intervals(fields):
        plan.checks.append(_Check(
            pair.end, Category.CROSS_FIELD,
            {pair.start: {"$type": "date"}, pair.end: {"$type": "date"}, "$expr": {"$lt": [f"${pair.end}",
                                                                                       f"${pair.start}"]}},
            max_share=INTERVAL_MAX_SHARE, description=f"have {pair.end} before {pair.start}",
            hypothesis="the two dates were swapped, or one was written in another time zone or format"))
    for product in products(fields):
        t, q, p = (f"${product.total}", f"${product.quantity}", f"${product.unit_price}")
        off = {"$gt": [{"$abs": {"$subtract": [t, {"$multiply": [q, p]}]}},
                       {"$max": [PRODUCT_TOLERANCE_ABS, {"$multiply": [PRODUCT_TOLERANCE, {"$abs": t}]}]}]}
        plan.checks.append(_Check(
            product.total, Category.CROSS_FIELD,
            {product.total: {"$type": "number"}, product.quantity: {"$type": "number"},
             product.unit_price: {"$type": "number"}, "$expr": off},
            max_share=PRODUCT_MAX_SHARE,
            description=f"have a {product.total} that is not {product.quantity} times {product.unit_price}",
            hypothesis="a writer computes the total from other inputs, rounds twice, or updates one field alone"))
    arrays = frozenset(f.path for f in fields if f.types.get("array", 0) and f.types["array"] >= 0.5 * f.value_count)
    if arrays:
        for check in plan.checks:
            check.query = _per_element(check.query, arrays)
    return plan


def _schema_drift(fields: list[FieldStats], plan: _Plan) -> set[str]:
    """Fields written under two names (``user_id`` / ``userId``) by different writers."""
    groups: dict[tuple[str | None, str], list[FieldStats]] = {}
    for f in fields:
        leaf = f.path.rsplit(".", 1)[-1]
        groups.setdefault((_parent(f.path), leaf.replace("_", "").replace("-", "").lower()), []).append(f)
    drifted: set[str] = set()
    for members in groups.values():
        if len(members) < 2:
            continue
        members.sort(key=lambda f: (-f.present_count, f.path))
        main = members[0]
        for other in members[1:]:
            base = max(main.parent_present_count, 1)
            if main.present_count + other.present_count > 1.05 * base:
                continue  # both names in the same documents: two fields, not one renamed
            drifted.update({main.path, other.path})
            renamed = _scoped(main.path, {"$exists": False}) | {other.path: {"$exists": True}}
            plan.checks.append(_Check(
                main.path, Category.SCHEMA_DRIFT, renamed,
                description=f"carry the value under {other.path!r} instead of {main.path!r}",
                hypothesis="some writers use a different field name for the same data"))
    return drifted


def _presence(f: FieldStats, plan: _Plan, *, links: frozenset[str] = frozenset(), history: Any = None) -> None:
    """Missing or null in a minority of documents that otherwise carry the field, whatever its name
    and type. Not asked of a link between the collection's own documents (``links``: the top of a
    hierarchy has no ``manager_id``), nor of a date of a later stage (``delivered_at``) while its
    share holds steady against ``history``; a contact detail people may not give (``phone``,
    ``fax``) is reported a step lower. Absent and null count alike: a writer that drops a field
    (``mongoimport --ignoreBlanks``, a client that omits empty keys) leaves it absent, so absence is
    no milder sign than null."""
    base = max(f.parent_present_count, 1)
    share = ((base - f.present_count) + f.null_count) / base
    families = _families(f)
    dominant = next(iter(families), None)
    if share > NULL_ASK_SHARE or f.path in links or waits_for_its_event(f, dominant, share, history):
        return
    plan.checks.append(_Check(
        f.path, Category.NULL_RATE, _scoped(f.path, None), max_share=MAX_NULL_SHARE, optional=optional(f.path),
        description=f"have no value for {f.path}, which the rest of the collection carries",
        hypothesis="a writer omits the field or writes null"))


def _field(f: FieldStats, now: datetime, plan: _Plan, *, renamed: bool = False, collection: str = "",
           size: int | None = None, siblings: list[str] | None = None, sampled: int | None = None) -> None:
    families = _families(f)
    if not families:
        return
    dominant = next(iter(families))
    hints = hints_for(f.path, siblings or ())
    fmt: FormatSpec | None = None
    if len(families) > 1 or dominant in _SCALARS:
        others = [k for k in families if k != dominant]
        shown = ", ".join(others) or "other types"
        mixed = sum(families[k] for k in others) >= 0.3 * sum(families.values())
        plan.checks.append(_Check(
            f.path, Category.TYPE_MISMATCH,
            {f.path: {"$exists": True, "$ne": None, "$not": {"$type": _TYPE_ALIAS.get(dominant, dominant)}}},
            description=(f"store {f.path} as {shown} where the field is otherwise {dominant}"
                         + (f" (the field is mixed: {dominant} and {shown})" if mixed else "")),
            hypothesis=f"a writer serialises {f.path} differently (for example a {dominant} written as {shown})"))
    if dominant == "number" and f.numeric and f.numeric.count >= MIN_VALUES:
        _ranges(f.path, numeric_plan(f.numeric, hints), plan, dates=False)
        if few_values(f.numeric):  # a set as well as a range: its exact value counts ride in the statistics pass
            plan.probes.append(_Probe(f.path, "number_set", {"field": f.path, "operation": "value_counts"}))
    elif dominant == "date" and f.dates and f.dates.count >= MIN_VALUES:
        _ranges(f.path, date_plan(f.dates, now, hints), plan, dates=True)
    elif dominant == "string" and f.strings:
        fmt = _strings(f, hints, plan)
    elif dominant == "array" and f.arrays:
        plan.checks.append(_Check(
            f.path, Category.EMPTY_VALUE, {f.path: {"$size": 0}}, max_share=EMPTY_ARRAY_MAX_SHARE,
            description=f"have an empty {f.path} array",
            hypothesis="a writer stores an empty list instead of omitting it"))
    if dominant in ("string", "number", "objectId") and not f.in_array and not renamed:
        _duplicates(f, hints, plan, collection=collection, size=size, sampled=sampled,
                    well_formed=fmt.regex if fmt is not None and not fmt.violation_matches else None)


def _bound(at: float, dates: bool) -> Any:
    return as_date(at) if dates else at


def _ranges(path: str, ranges: Any, plan: _Plan, *, dates: bool) -> None:
    hard = [{path: cond} for _, cond in ranges.conditions]
    # Only the rules the sample shows broken are named; when it shows none (a defect rarer than
    # the sample resolves) every rule the count stands for is.
    reasons = [reason for reason, _ in ranges.conditions if reason in ranges.seen]
    if hard:
        named = reasons or [reason for reason, _ in ranges.conditions]
        plan.checks.append(_Check(path, Category.OUTLIER_VALUE, _or(hard),
                                  description=f"have an implausible {path} ({'; '.join(named)})",
                                  hypothesis=_outlier_why(dates)))
    plan.outliers[path] = (hard, reasons, dates)
    for fence in ranges.fences:
        inside_op, inner = ("$lte", "max") if fence.side == "above" else ("$gte", "min")
        nearest = "min" if fence.side == "above" else "max"
        beyond = _beyond(fence, dates)
        inside = {"field": path, "operation": inner, "value_filter": {inside_op: encode(_bound(fence.at, dates))}}
        outside = {"field": path, "operation": nearest, "value_filter": encode(beyond)}
        plan.fences.append(({path: beyond}, [
            _Probe(path, "fence_out", outside, fence, dates), _Probe(path, "fence_in", inside, fence, dates)]))


def _beyond(fence: Fence, dates: bool) -> dict[str, Any]:
    """The condition on a value beyond ``fence``: below a scale fence, the positive values only
    (zeros and negatives are no unit written another way)."""
    at = _bound(fence.at, dates)
    if fence.side == "above":
        return {"$gt": at}
    return {"$gt": 0, "$lt": at} if fence.shift else {"$lt": at}


def _outlier_why(dates: bool) -> str:
    return "clock or parsing errors" if dates else "placeholder, unit or data-entry errors"


def _strings(f: FieldStats, hints: NameHints, plan: _Plan) -> FormatSpec | None:
    """String checks; returns the format the field's values follow, if any."""
    s = f.strings
    assert s is not None
    fmt = string_format(s, code=hints.identifier, named=hints.format, path=f.path)
    if fmt is not None and fmt.violation_matches:
        plan.checks.append(_Check(
            f.path, Category.FORMAT_VIOLATION, {f.path: {"$regex": fmt.regex}},
            description=f"store {f.path} as a number followed by unit text instead of a number",
            hypothesis="units are written into the value instead of the field's definition"))
    elif fmt is not None:
        query = {f.path: {"$type": "string", "$not": {"$regex": fmt.regex}}}
        if _valid_patterns(query):
            plan.checks.append(_format_check(f.path, fmt, query))
    # A small vocabulary (status, tier) may hold 'none' or 'unknown' as a category of its own;
    # among names, cities or titles they stand for a missing value.
    vocabulary = s.distinct_count <= ENUM_VALUES
    categorical = vocabulary or (f.distinct_ratio <= CATEGORICAL_RATIO and s.distinct_count <= 1000)
    if fmt is None or fmt.violation_matches:
        words = "" if vocabulary else ", 'unknown', 'none'"
        plan.checks.append(_Check(
            f.path, Category.EMPTY_VALUE, {f.path: _PLACEHOLDER_MATCH if vocabulary else _PLACEHOLDER_TEXT_MATCH},
            description=f"have an empty, blank or placeholder {f.path} ('', 'n/a', 'null', '-'{words})",
            hypothesis="a writer fills the field with a placeholder when the value is unknown"))
    elif fmt.kind == "email":  # test@test.com is well-formed: the format check passes it
        # The first that holds: the field's own addresses may sit at a reserved domain (test data,
        # a generator following RFC 2606, an anonymised copy), and then only made-up ones count.
        for match, cap in ((_PLACEHOLDER_EMAIL_MATCH, RESERVED_EMAIL_MAX_SHARE), (_MADE_UP_EMAIL_MATCH, None)):
            plan.checks.append(_Check(
                f.path, Category.EMPTY_VALUE, {f.path: match}, max_share=cap,
                description=f"have a placeholder {f.path} (an address at example.com, test.com or another reserved "
                            "domain, or a mailbox such as none@)",
                hypothesis="a writer fills the field with a placeholder when the address is unknown"))
    if categorical:
        plan.probes.append(_Probe(f.path, "enum", {"field": f.path, "operation": "value_counts"}))
    return fmt


def _format_check(path: str, fmt: FormatSpec, query: dict[str, Any]) -> _Check:
    kind = fmt.kind.removeprefix("shape ")
    what = {"email": "an email address", "url": "a URL", "uuid": "a UUID", "iso_date": "an ISO date"}
    mixed = " (the field is mixed: two formats)" if fmt.share < 0.7 else ""
    return _Check(path, Category.FORMAT_VIOLATION, query,
                  description=f"have a {path} that is not {what.get(kind, f'of the form {kind}')}, "
                              f"unlike {fmt.share:.0%} of sampled values{mixed}",
                  hypothesis="values entered by hand or placeholders written where the value was unknown")


def _duplicates(f: FieldStats, hints: NameHints, plan: _Plan, *, collection: str = "", size: int | None = None,
                well_formed: str | None = None, sampled: int | None = None) -> None:
    """Key-like fields are checked over the whole collection (``keys.key_plan`` says which, from
    their values; names only add). The sample only chooses; the exact totals decide.
    ``well_formed``: the field's learned format, if any."""
    key = key_plan(f, hints, collection=collection, size=size, sampled=sampled)
    if key is None:
        return
    needs = group_bytes(f, size)
    if needs > GROUP_MEMORY:
        plan.notes.append(
            f"duplicates of {f.path} were not counted: grouping {size or f.present_count:,} values would take about "
            f"{needs / 2**20:,.0f} MB, more than the {GROUP_MEMORY / 2**20:.0f} MB one $group inside $facet may use "
            f"(it cannot spill to disk); check them with an aggregation that may (allowDiskUse) or a unique index")
        return
    value_filter: dict[str, Any] = {"$not": _PLACEHOLDER_TEXT_MATCH}
    if well_formed is not None and key.merely_unique:
        # A field that is merely unique (a phone, an email): malformed values that coincide are the
        # format's defect. A learned format never matches a placeholder, so it excludes them too.
        # (``$in`` holds the pattern: a bare ``{"$regex": ...}`` is a regex value in Extended JSON.)
        value_filter = {"$in": [{"$regex": well_formed}]}
    plan.probes.append(_Probe(f.path, "duplicates", {
        "field": f.path, "operation": "duplicates", "value_filter": value_filter}, hints=hints, key=key))


# --- verdicts from pass-1 statistics (pure) ------------------------------------------------------

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


def _from_statistics(plan: _Plan, probes: list[_Probe], stats: list[StatsResult], size: int) -> list[_Check]:
    out: list[_Check] = []
    fences: dict[tuple[str, str, float], dict[str, Any]] = {}
    moved: dict[str, tuple[dict[str, Any], str]] = {}  # per number field: its set's moved values, and why
    unanswered: set[tuple[str, str, float]] = set()  # fences a statistic of which went unanswered
    for probe, result in zip(probes, stats, strict=True):
        if result.error is not None:  # refused or timed out: no verdict either way
            if probe.fence is not None:  # nor on its fence: no answer is not "no value inside"
                unanswered.add((probe.path, probe.fence.side, probe.fence.at))
            continue
        check = None
        if probe.kind == "enum":
            check = _enum_check(probe.path, result)
        elif probe.kind == "number_set":
            rules = [rule[probe.path] for rule in plan.outliers.get(probe.path, ([], [], False))[0]]
            clause = _moved_clause(probe.path, result, rules)
            if clause is not None:
                moved[probe.path] = clause
        elif probe.kind == "duplicates":
            check = _duplicate_check(probe, result, size)
        else:
            assert probe.fence is not None
            key = (probe.path, probe.fence.side, probe.fence.at)
            fences.setdefault(key, {"fence": probe.fence})[probe.kind] = result.value
        if check is not None:
            out.append(check)
    verified: dict[str, list[Fence]] = {}
    innermost: dict[tuple[str, str], Fence] = {}  # of the fences at which a gap was found, per side
    for (path, side, at), found in sorted(fences.items()):
        if (path, side, at) in unanswered:
            continue
        fence: Fence = found["fence"]
        if detached(fence, _scalar(found.get("fence_in")), _scalar(found.get("fence_out"))):
            best = innermost.get((path, side))
            if best is None or (at < best.at if side == "above" else at > best.at):
                innermost[(path, side)] = fence
    for (path, _), fence in sorted(innermost.items()):
        verified.setdefault(path, []).append(fence)
    for path in sorted(set(verified) | set(moved)):
        sides = verified.get(path, [])
        hard, reasons, dates = plan.outliers[path]
        clauses = list(hard) + [{path: _beyond(fence, dates)} for fence in sides]
        why = reasons + [_fence_reason(fence) for fence in sides]
        if path in moved:
            clauses.append(moved[path][0])
            why.append(moved[path][1])
        out.insert(0, _Check(path, Category.OUTLIER_VALUE, _or(clauses),
                             description=f"have an implausible {path} ({'; '.join(why)})",
                             hypothesis=_outlier_why(dates)))
    return out


def _moved_clause(path: str, result: StatsResult, rules: list[dict[str, Any]]) -> tuple[dict[str, Any], str] | None:
    """The values of a number field's set moved by a power of ten, or outside it (but for those the
    field's range ``rules`` already report), from its exact value counts."""
    if result.capped or not isinstance(result.value, list):
        return None
    counts = [(float(item["value"]), int(item["count"])) for item in result.value
              if isinstance(item["value"], int | float) and not isinstance(item["value"], bool)]
    found = moved_values(counts)
    outside = [v for v in outside_values(counts) if (found is None or v not in found.values)
               and not any(breaks(rule, v) for rule in rules)]
    values, why = list(outside), (["a rare value outside the set of the field's few others"] if outside else [])
    if found is not None:
        times = f"{10 ** abs(found.shift):,}"
        size = f"{times} times" if found.shift > 0 else f"1/{times} of"
        values += found.values
        why.insert(0, f"{size} a value of the field's few others "
                      "(one unit written as another: a percent for a fraction)")
    return ({path: {"$in": sorted(values)}}, "; ".join(why)) if values else None


def _fence_reason(fence: Fence) -> str:
    if fence.future:
        return "in the future, apart from every earlier value"
    if not fence.shift:
        return f"far {fence.side} every other value"
    times = f"{10 ** abs(fence.shift):,}"
    return (f"about {times} times the other values" if fence.shift > 0 else f"about 1/{times} of the other values") \
        + " (one unit written as another: a percent for a fraction, cents for units)"


def _enum_check(path: str, result: StatsResult) -> _Check | None:
    if result.capped or not isinstance(result.value, list):
        return None
    counts = [(item["value"], item["count"]) for item in result.value if isinstance(item["value"], str)]
    bad = enum_violations(counts, path=path)
    if not bad:
        return None
    reasons = sorted(set(bad.values()))
    return _Check(path, Category.ENUM_VIOLATION, {path: {"$in": sorted(bad)}},
                  description=f"hold one of {len(bad)} values outside the field's usual set ({', '.join(reasons)})",
                  hypothesis="values typed by hand or written by a client with its own spelling")


def _duplicate_check(probe: _Probe, result: StatsResult, size: int) -> _Check | None:
    """A probe without a ``KeyPlan`` (a key declared elsewhere, not inferred) is a key at any share."""
    if not result.totals or result.totals["values"] == 0 or not isinstance(result.value, list):
        return None
    key = probe.key or _DECLARED_KEY
    documents, values = result.totals["documents"], result.totals["values"]
    if not verdict(key, documents=documents, values=values, size=size):
        return None  # so common the field is no key, however unique the sample looked, or chance explains them
    shared = sorted((item["value"] for item in result.value), key=lambda v: str(v))
    listed = "" if len(shared) == values else f"; the {len(shared):,} most repeated are counted here"
    return _Check(probe.path, Category.DUPLICATE_VALUE, {probe.path: {"$in": [decode(v) for v in shared]}},
                  description=f"share their {probe.path} with another document ({values:,} "
                              f"values used more than once{listed})",
                  hypothesis="a retry or a merge wrote the same record twice", identifier=key.identifier)
