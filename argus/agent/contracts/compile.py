"""A contract's rules as read-only queries: what to count, which statistics to compute, and the
evidence of each broken rule. Compiled once per run, after the sample (which says which paths hold
arrays of objects) and at the audit's clock (``max: now``).

Every filter here is plain query language the guard accepts, so a declared rule is counted like an
inferred hypothesis (``count_many``, in the audit's batched passes) and its evidence query
reproduces its count. By kind, on field ``f`` (a ``where`` scope joins with ``$and``):

=============== ======================================================================
required        ``{f: null}`` (missing or null)
type            ``{f: {$exists: true, $ne: null, $not: {$type: t}}}``, ``$nor`` of each for several (nulls
                are ``required``'s)
in              ``{f: {$exists: true, $ne: null, $nin: [...]}}``
min / max       ``{f: {$lt: min}}`` / ``{f: {$gt: max}}`` (numbers and dates compare within their type)
format, pattern ``{f: {$type: "string", $not: {$regex: ...}}}``
max_length      ``{f: {$type: "string", $regex: "^[\\s\\S]{N+1}"}}``
max_null_share  ``{f: null}``, against the documents in scope
unique          the ``duplicates`` statistic; evidence ``{f: {$in: [shared values]}}``
references      the ``distinct`` statistic, then lookups; evidence ``{f: {$in: [missing values]}}``
documents       the server's document count, or the count of ``where``
freshness       ``{field: {$gte: now - max_age}}`` must match something
shape           ``{by: {$exists: true, $ne: null, $nin: [declared shapes]}}`` (``shapes:``)
=============== ======================================================================
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from argus.agent.contracts.model import CONTRACT_FORMATS, Contract, Rule
from argus.agent.contracts.nesting import ELEMENT_COUNTED, element_condition, violation
from argus.agent.ejson import canonical_key, decode, encode, filter_key
from argus.agent.tools.elements import array_paths, per_element
from argus.agent.tools.models import DISTINCT_MAX, GetStatsInput, SchemaSampleResult

__all__ = ["REFERENCE_VALUES", "Declared", "DeclaredCheck", "compile_contract", "rule_filters", "stat_key"]

REFERENCE_VALUES = DISTINCT_MAX  # distinct values of a reference looked up at most
ELEMENT_VALUES = 1_000          # distinct broken values an element count sums (beyond: "at least")


def stat_key(spec: dict[str, Any] | GetStatsInput) -> str:
    """Identity of a statistic: its operation, field, filters and limit, however they were spelled."""
    params = spec if isinstance(spec, GetStatsInput) else GetStatsInput.model_validate(spec)
    data: dict[str, Any] = params.model_dump(mode="json")
    for key in ("filter", "value_filter"):
        if isinstance(data.get(key), dict):
            data[key] = decode(data[key])
    return canonical_key(data)


@dataclass(frozen=True)
class DeclaredCheck:
    """One rule as queries (decoded filters). ``violation``: the documents breaking it; ``scope``: the
    documents it speaks of, when it needs their count (``where``); ``expected``: documents that must
    exist (freshness); ``stat``: a statistic it needs (``get_stats`` input)."""

    rule: Rule
    violation: dict[str, Any] | None = None
    scope: dict[str, Any] | None = None
    expected: dict[str, Any] | None = None
    stat: dict[str, Any] | None = None
    presence: dict[str, Any] | None = None  # documents holding the field: none, and the rule is unmatched

    @property
    def violation_key(self) -> str | None:
        return filter_key(encode(self.violation)) if self.violation is not None else None

    @property
    def scope_key(self) -> str | None:
        return filter_key(encode(self.scope)) if self.scope is not None else None

    @property
    def expected_key(self) -> str | None:
        return filter_key(encode(self.expected)) if self.expected is not None else None


@dataclass
class Declared:
    """A contract compiled for one run."""

    contract: Contract
    now: datetime
    arrays: frozenset[str] = frozenset()  # sampled paths holding arrays (conditions inside are per element)
    checks: list[DeclaredCheck] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    sampled: tuple[str, ...] = ()          # the field paths the sample showed (for did-you-mean)
    optional: frozenset[str] = frozenset()  # fields declared ``required: false``: no document may hold them

    def counts(self) -> list[dict[str, Any]]:
        """Filters to count in the first pass: violations, scopes and presences (each once)."""
        out: dict[str, dict[str, Any]] = {}
        for check in self.checks:
            for query in (check.violation, check.scope, check.expected, check.presence):
                if query is not None:
                    out.setdefault(filter_key(encode(query)), query)
        return list(out.values())

    def stats(self) -> list[dict[str, Any]]:
        """Statistics for the second pass (duplicates of unique fields, distinct values of references)."""
        out: dict[str, dict[str, Any]] = {}
        for check in self.checks:
            if check.stat is not None:
                out.setdefault(stat_key(check.stat), check.stat)
        return list(out.values())

    def scoped(self, rule: Rule, condition: dict[str, Any]) -> dict[str, Any]:
        """``condition`` limited to the rule's ``where``, asked per array element as the sample shows."""
        return _scoped(rule, condition, self.arrays)


def compile_contract(contract: Contract, schema: SchemaSampleResult, now: datetime) -> Declared:
    """The contract's checks against this collection's sample; rules on paths the sample did not
    show become warnings (the rule is still checked: a required field nobody writes is broken)."""
    arrays = array_paths(schema.fields)
    sampled = [f.path for f in schema.fields]
    optional = frozenset(r.field for r in contract.rules if r.kind == "required" and r.value is False)
    declared = Declared(contract=contract, now=now, arrays=arrays, sampled=tuple(sampled), optional=optional)
    scalar_arrays = {f.path for f in schema.fields if f.path in arrays and f.arrays is not None}
    warned: set[str] = set()
    if contract.collection is not None and contract.collection != schema.collection:
        declared.warnings.append(f"{contract.source} is the contract of {contract.collection!r}; it is applied to "
                                 f"{schema.collection!r}")
    for rule in contract.rules:
        if not rule.is_check:
            continue
        path = rule.value[0] if rule.kind == "freshness" else rule.field
        if (not rule.collection_rule or rule.kind == "freshness") and path not in sampled and path not in warned \
                and schema.documents_sampled:
                warned.add(path)
                close = difflib.get_close_matches(path, sampled, n=1)
                declared.warnings.append(
                    f"{rule.source}:{rule.line} {path}: no sampled document has this field"
                    + (f" (did you mean {close[0]!r}?)" if close else "") + "; its rules are checked all the same, "
                    "and a rule no document can break is reported unmatched")
        declared.checks.append(_check(rule, now, arrays, scalar_arrays))
    return declared


def rule_filters(rule: Rule, now: datetime) -> list[dict[str, Any]]:
    """Every filter ``rule`` can send (array elements aside, which only wrap them in ``$elemMatch``):
    what the guard judges when a contract is read, so a value it would refuse on the wire is refused
    at the rule's line instead."""
    check = _check(rule, now, frozenset(), set())
    stat_filter = decode(check.stat["filter"]) if check.stat and "filter" in check.stat else None
    return [f for f in (check.violation, check.scope, check.expected, stat_filter) if f is not None]


def _scoped(rule: Rule, condition: dict[str, Any], arrays: frozenset[str]) -> dict[str, Any]:
    where = decode(rule.where) if rule.where else None
    query = {"$and": [where, condition]} if where else condition
    return per_element(query, arrays) if arrays else query


# Rules that a document without the field cannot break: on a field no document holds they pass vacuously.
_VACUOUS = ("type", "in", "min", "max", "format", "pattern", "max_length", "unique", "references", "min_items",
            "max_items", "unique_items", "required_fields", "additional_fields", "shape")


def _check(rule: Rule, now: datetime, arrays: frozenset[str], scalar_arrays: set[str]) -> DeclaredCheck:
    check = _queries(rule, now, arrays, scalar_arrays)
    if rule.kind in _VACUOUS:
        return replace(check, presence={rule.field: {"$exists": True}})
    return check


def _queries(rule: Rule, now: datetime, arrays: frozenset[str], scalar_arrays: set[str]) -> DeclaredCheck:
    path, kind, value = rule.field, rule.kind, rule.value
    where = decode(rule.where) if rule.where else None

    def scoped(condition: dict[str, Any]) -> dict[str, Any]:
        return _scoped(rule, condition, arrays)

    def each(operators: dict[str, Any]) -> dict[str, Any]:
        """A condition on a field's values: on each element when the field holds arrays of scalars."""
        if path in scalar_arrays:
            return {path: {"$elemMatch": operators}}
        return {path: operators}

    if kind == "shape":
        return DeclaredCheck(rule, violation={path: {"$exists": True, "$ne": None, "$nin": [decode(v) for v in value]}})
    if rule.nested and kind not in ("unique", "references"):
        at = value.at(now) if kind in ("min", "max") else None
        regex = CONTRACT_FORMATS[value] if kind == "format" else value if kind == "pattern" else None
        condition = violation(rule, at, regex)
        elements = None
        if (rule.element or rule.arrays) and kind in ELEMENT_COUNTED:  # the broken elements, in the stats pass
            elements = {"field": path, "operation": "value_counts", "limit": ELEMENT_VALUES,
                        "value_filter": encode(element_condition(rule, at, regex)),
                        **({"filter": encode(where)} if where else {})}
        return DeclaredCheck(rule, violation={"$and": [where, condition]} if where else condition, stat=elements)
    if kind == "required":
        return DeclaredCheck(rule, violation=scoped({path: None}))
    if kind == "max_null_share":
        return DeclaredCheck(rule, violation=scoped({path: None}), scope=where)
    if kind == "type":
        if len(value) == 1:
            return DeclaredCheck(rule, violation=scoped({path: {"$exists": True, "$ne": None,
                                                               "$not": {"$type": value[0]}}}))
        # one $type per name: a list of types is not understood by every engine (mongomock)
        return DeclaredCheck(rule, violation=scoped({"$and": [{path: {"$exists": True, "$ne": None}},
                                                              {"$nor": [{path: {"$type": t}} for t in value]}]}))
    if kind == "in":
        allowed = [decode(v) for v in value]
        condition = each({"$nin": allowed}) if path in scalar_arrays else \
            {path: {"$exists": True, "$ne": None, "$nin": allowed}}
        return DeclaredCheck(rule, violation=scoped(condition))
    if kind in ("min", "max"):
        return DeclaredCheck(rule, violation=scoped(each({"$lt" if kind == "min" else "$gt": value.at(now)})))
    if kind in ("format", "pattern"):
        regex = CONTRACT_FORMATS[value] if kind == "format" else value
        return DeclaredCheck(rule, violation=scoped(each({"$type": "string", "$not": {"$regex": regex}})))
    if kind == "max_length":
        return DeclaredCheck(rule, violation=scoped(each({"$type": "string", "$regex": f"^[\\s\\S]{{{value + 1}}}"})))
    if kind == "unique":
        return DeclaredCheck(rule, stat={"field": path, "operation": "duplicates",
                                         **({"filter": encode(where)} if where else {})})
    if kind == "references":
        return DeclaredCheck(rule, stat={"field": path, "operation": "distinct", "limit": REFERENCE_VALUES,
                                         **({"filter": encode(where)} if where else {})})
    if kind == "documents":
        return DeclaredCheck(rule, scope=where)
    if kind == "freshness":
        time_field, max_age = value
        return DeclaredCheck(rule, expected=scoped({time_field: {"$gte": now - max_age}}))
    raise ValueError(f"unknown rule kind {kind!r}")  # pragma: no cover - the parser knows every kind
