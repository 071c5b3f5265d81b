"""From the sample's field statistics to hypotheses: what to count over the whole collection.

Every field's presence, types, ranges, strings and key-likeness become checks and probes on a
``Plan``, with generous margins: the sample only decides which questions to ask, never a verdict.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from argus.agent.ejson import encode
from argus.agent.findings import Category
from argus.agent.history import HistoricalContext
from argus.agent.planners.heuristic.keys import GROUP_MEMORY, group_bytes, key_plan
from argus.agent.planners.heuristic.names import NameHints, hints_for, optional
from argus.agent.planners.heuristic.plan import (
    Check,
    Plan,
    Probe,
    any_of,
    beyond_fence,
    fence_bound,
    outlier_why,
    parent_of,
    scoped,
)
from argus.agent.planners.heuristic.presence import self_links, waits_for_its_event
from argus.agent.planners.heuristic.ranges import date_plan, numeric_plan
from argus.agent.planners.heuristic.relations import intervals, products
from argus.agent.planners.heuristic.sets import few_values
from argus.agent.planners.heuristic.text import FormatSpec, string_format
from argus.agent.shapes.drift import drift
from argus.agent.shapes.models import Shapes
from argus.agent.shapes.scoping import count_queries, rename_lead, scopes
from argus.agent.tools.elements import per_element
from argus.agent.tools.formats import MADE_UP_EMAIL, PLACEHOLDER, PLACEHOLDER_EMAIL, PLACEHOLDER_TEXT
from argus.agent.tools.models import FieldStats

__all__ = ["by_shape", "duplicates", "hypotheses"]

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
_FAMILY = {"int": "number", "long": "number", "double": "number", "decimal": "number"}
_TYPE_ALIAS = {"number": "number", "string": "string", "date": "date", "bool": "bool", "objectId": "objectId",
               "object": "object", "array": "array", "binData": "binData"}
_SCALARS = {"number", "string", "date", "bool", "objectId"}
_PLACEHOLDER_MATCH = {"$regex": PLACEHOLDER, "$options": "i"}
_PLACEHOLDER_TEXT_MATCH = {"$regex": PLACEHOLDER_TEXT, "$options": "i"}
# Only well-formed placeholders: '', 'n/a' or 'unknown' in an email field already break its format,
# and one defect is reported once.
_PLACEHOLDER_EMAIL_MATCH = {"$regex": PLACEHOLDER_EMAIL, "$options": "i"}
_MADE_UP_EMAIL_MATCH = {"$regex": MADE_UP_EMAIL, "$options": "i"}


def _families(stats: FieldStats) -> dict[str, int]:
    out: dict[str, int] = {}
    for t, n in stats.non_null_types.items():
        fam = _FAMILY.get(t, t)
        out[fam] = out.get(fam, 0) + n
    return dict(sorted(out.items(), key=lambda kv: (-kv[1], kv[0])))


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


def by_shape(plan: Plan, shapes: Shapes | None, named: Shapes | None, history: Any = None) -> None:
    """Judge the null-rate, type and value-set checks of a path that belongs to some shapes
    among those shapes' documents; one rename finding replaces a null-rate rise on the old name
    and schema drift on the new (``argus.agent.shapes``)."""
    if shapes is None:
        return
    plan.counted = count_queries(shapes)
    if isinstance(history, HistoricalContext) and named is not None:
        moved, gone = drift(shapes, named, history.shapes)
        plan.notes += gone
        plan.checks += [Check(shapes.discriminator or "", Category.SCHEMA_DRIFT, d.query, description=d.description,
                               hypothesis="a release added, retired or redirected a kind of document")
                        for d in moved]
    renamed = {p for r in shapes.renames for p in (r.old, r.new)}
    plan.checks = [c for c in plan.checks if not (c.path in renamed and c.category in (Category.NULL_RATE,
                                                                                        Category.SCHEMA_DRIFT))]
    for r in shapes.renames:
        plan.checks.insert(0, Check(
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
            plan.checks.append(Check(
                path, Category.NULL_RATE, {**scope.within, **scoped(path, None)}, max_share=MAX_NULL_SHARE,
                optional=optional(path), within=scope.within, scope=scope.label,
                description=f"have no value for {path}, which the shape's other documents carry",
                hypothesis="a writer of this shape omits the field or writes null"))
    # Below a field written as a string in some documents and an object in others, a value is
    # missing only where the field is an object: the string form is a type mix, reported as one.
    objects = {m.path for m in shapes.mixes if not m.elements and "object" in m.sampled}
    for check in plan.checks:
        parent = parent_of(check.path)
        if check.category == Category.NULL_RATE and parent in objects and check.query.get(parent) == {"$exists": True}:
            check.query = {**check.query, parent: {"$type": "object"}}


def hypotheses(fields: list[FieldStats], now: datetime, *, collection: str = "", size: int | None = None,
                sampled: int | None = None, history: Any = None) -> Plan:
    plan = Plan()
    drifted = _schema_drift(fields, plan)
    paths = [f.path for f in fields]
    links = self_links(fields)
    for f in fields:
        if f.path not in drifted:
            _presence(f, plan, links=links, history=history)
        _field(f, now, plan, renamed=f.path in drifted, collection=collection, size=size, siblings=paths,
               sampled=sampled)
    for pair in intervals(fields):
        plan.checks.append(Check(
            pair.end, Category.CROSS_FIELD,
            {pair.start: {"$type": "date"}, pair.end: {"$type": "date"}, "$expr": {"$lt": [f"${pair.end}",
                                                                                       f"${pair.start}"]}},
            max_share=INTERVAL_MAX_SHARE, description=f"have {pair.end} before {pair.start}",
            hypothesis="the two dates were swapped, or one was written in another time zone or format"))
    for product in products(fields):
        t, q, p = (f"${product.total}", f"${product.quantity}", f"${product.unit_price}")
        off = {"$gt": [{"$abs": {"$subtract": [t, {"$multiply": [q, p]}]}},
                       {"$max": [PRODUCT_TOLERANCE_ABS, {"$multiply": [PRODUCT_TOLERANCE, {"$abs": t}]}]}]}
        plan.checks.append(Check(
            product.total, Category.CROSS_FIELD,
            {product.total: {"$type": "number"}, product.quantity: {"$type": "number"},
             product.unit_price: {"$type": "number"}, "$expr": off},
            max_share=PRODUCT_MAX_SHARE,
            description=f"have a {product.total} that is not {product.quantity} times {product.unit_price}",
            hypothesis="a writer computes the total from other inputs, rounds twice, or updates one field alone"))
    arrays = frozenset(f.path for f in fields if f.types.get("array", 0) and f.types["array"] >= 0.5 * f.value_count)
    if arrays:
        for check in plan.checks:
            check.query = per_element(check.query, arrays)
    return plan


def _schema_drift(fields: list[FieldStats], plan: Plan) -> set[str]:
    """Fields written under two names (``user_id`` / ``userId``) by different writers."""
    groups: dict[tuple[str | None, str], list[FieldStats]] = {}
    for f in fields:
        leaf = f.path.rsplit(".", 1)[-1]
        groups.setdefault((parent_of(f.path), leaf.replace("_", "").replace("-", "").lower()), []).append(f)
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
            renamed = scoped(main.path, {"$exists": False}) | {other.path: {"$exists": True}}
            plan.checks.append(Check(
                main.path, Category.SCHEMA_DRIFT, renamed,
                description=f"carry the value under {other.path!r} instead of {main.path!r}",
                hypothesis="some writers use a different field name for the same data"))
    return drifted


def _presence(f: FieldStats, plan: Plan, *, links: frozenset[str] = frozenset(), history: Any = None) -> None:
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
    plan.checks.append(Check(
        f.path, Category.NULL_RATE, scoped(f.path, None), max_share=MAX_NULL_SHARE, optional=optional(f.path),
        description=f"have no value for {f.path}, which the rest of the collection carries",
        hypothesis="a writer omits the field or writes null"))


def _field(f: FieldStats, now: datetime, plan: Plan, *, renamed: bool = False, collection: str = "",
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
        plan.checks.append(Check(
            f.path, Category.TYPE_MISMATCH,
            {f.path: {"$exists": True, "$ne": None, "$not": {"$type": _TYPE_ALIAS.get(dominant, dominant)}}},
            description=(f"store {f.path} as {shown} where the field is otherwise {dominant}"
                         + (f" (the field is mixed: {dominant} and {shown})" if mixed else "")),
            hypothesis=f"a writer serialises {f.path} differently (for example a {dominant} written as {shown})"))
    if dominant == "number" and f.numeric and f.numeric.count >= MIN_VALUES:
        _ranges(f.path, numeric_plan(f.numeric, hints), plan, dates=False)
        if few_values(f.numeric):  # a set as well as a range: its exact value counts ride in the statistics pass
            plan.probes.append(Probe(f.path, "number_set", {"field": f.path, "operation": "value_counts"}))
    elif dominant == "date" and f.dates and f.dates.count >= MIN_VALUES:
        _ranges(f.path, date_plan(f.dates, now, hints), plan, dates=True)
    elif dominant == "string" and f.strings:
        fmt = _strings(f, hints, plan)
    elif dominant == "array" and f.arrays:
        plan.checks.append(Check(
            f.path, Category.EMPTY_VALUE, {f.path: {"$size": 0}}, max_share=EMPTY_ARRAY_MAX_SHARE,
            description=f"have an empty {f.path} array",
            hypothesis="a writer stores an empty list instead of omitting it"))
    if dominant in ("string", "number", "objectId") and not f.in_array and not renamed:
        duplicates(f, hints, plan, collection=collection, size=size, sampled=sampled,
                    well_formed=fmt.regex if fmt is not None and not fmt.violation_matches else None)


def _ranges(path: str, ranges: Any, plan: Plan, *, dates: bool) -> None:
    hard = [{path: cond} for _, cond in ranges.conditions]
    # Only the rules the sample shows broken are named; when it shows none (a defect rarer than
    # the sample resolves) every rule the count stands for is.
    reasons = [reason for reason, _ in ranges.conditions if reason in ranges.seen]
    if hard:
        named = reasons or [reason for reason, _ in ranges.conditions]
        plan.checks.append(Check(path, Category.OUTLIER_VALUE, any_of(hard),
                                  description=f"have an implausible {path} ({'; '.join(named)})",
                                  hypothesis=outlier_why(dates)))
    plan.outliers[path] = (hard, reasons, dates)
    for fence in ranges.fences:
        inside_op, inner = ("$lte", "max") if fence.side == "above" else ("$gte", "min")
        nearest = "min" if fence.side == "above" else "max"
        beyond = beyond_fence(fence, dates)
        inside = {"field": path, "operation": inner, "value_filter": {inside_op: encode(fence_bound(fence.at, dates))}}
        outside = {"field": path, "operation": nearest, "value_filter": encode(beyond)}
        plan.fences.append(({path: beyond}, [
            Probe(path, "fence_out", outside, fence, dates), Probe(path, "fence_in", inside, fence, dates)]))


def _strings(f: FieldStats, hints: NameHints, plan: Plan) -> FormatSpec | None:
    """String checks; returns the format the field's values follow, if any."""
    s = f.strings
    assert s is not None
    fmt = string_format(s, code=hints.identifier, named=hints.format, path=f.path)
    if fmt is not None and fmt.violation_matches:
        plan.checks.append(Check(
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
        plan.checks.append(Check(
            f.path, Category.EMPTY_VALUE, {f.path: _PLACEHOLDER_MATCH if vocabulary else _PLACEHOLDER_TEXT_MATCH},
            description=f"have an empty, blank or placeholder {f.path} ('', 'n/a', 'null', '-'{words})",
            hypothesis="a writer fills the field with a placeholder when the value is unknown"))
    elif fmt.kind == "email":  # test@test.com is well-formed: the format check passes it
        # The first that holds: the field's own addresses may sit at a reserved domain (test data,
        # a generator following RFC 2606, an anonymised copy), and then only made-up ones count.
        for match, cap in ((_PLACEHOLDER_EMAIL_MATCH, RESERVED_EMAIL_MAX_SHARE), (_MADE_UP_EMAIL_MATCH, None)):
            plan.checks.append(Check(
                f.path, Category.EMPTY_VALUE, {f.path: match}, max_share=cap,
                description=f"have a placeholder {f.path} (an address at example.com, test.com or another reserved "
                            "domain, or a mailbox such as none@)",
                hypothesis="a writer fills the field with a placeholder when the address is unknown"))
    if categorical:
        plan.probes.append(Probe(f.path, "enum", {"field": f.path, "operation": "value_counts"}))
    return fmt


def _format_check(path: str, fmt: FormatSpec, query: dict[str, Any]) -> Check:
    kind = fmt.kind.removeprefix("shape ")
    what = {"email": "an email address", "url": "a URL", "uuid": "a UUID", "iso_date": "an ISO date"}
    mixed = " (the field is mixed: two formats)" if fmt.share < 0.7 else ""
    return Check(path, Category.FORMAT_VIOLATION, query,
                  description=f"have a {path} that is not {what.get(kind, f'of the form {kind}')}, "
                              f"unlike {fmt.share:.0%} of sampled values{mixed}",
                  hypothesis="values entered by hand or placeholders written where the value was unknown")


def duplicates(f: FieldStats, hints: NameHints, plan: Plan, *, collection: str = "", size: int | None = None,
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
    plan.probes.append(Probe(f.path, "duplicates", {
        "field": f.path, "operation": "duplicates", "value_filter": value_filter}, hints=hints, key=key))
