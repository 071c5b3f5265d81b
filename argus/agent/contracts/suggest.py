"""Drafting a contract from the data: what Argus sees, written down as rules a user edits and commits.

From the sample's profile and the whole collection's exact statistics (one pass), per field: its
type, whether it is required (present and not null in nearly every sampled document; an optional
field is declared ``required: false``), uniqueness (a key unique in the sample, checked over the
whole collection), the value set of a low-cardinality field (without the rare variants Argus's enum
check calls typos), a lower bound where the bulk is not negative or the name gives a range, ``max:
now`` for dates of past events, and a format or code shape. Every drafted rule is then counted over
the whole collection (a second pass); a rule today's data breaks is kept, with a comment saying how
many documents break it, so nothing is drafted silently broken. Each rule carries, as a comment,
the evidence it was drawn from.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Collection
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from argus.agent.contracts.compile import compile_contract, stat_key
from argus.agent.contracts.model import Bound, Contract, Rule
from argus.agent.contracts.results import Recorded, verdicts
from argus.agent.contracts.suggest_shapes import ShapesDraft, draft_shapes, rule_key, shapes_yaml
from argus.agent.ejson import decode, encode, filter_key
from argus.agent.options import PrivacyMode
from argus.agent.planners.heuristic.names import hints_for
from argus.agent.planners.heuristic.presence import self_links, waits_for_its_event
from argus.agent.planners.heuristic.text import enum_violations, string_format
from argus.agent.privacy import identifier_like
from argus.agent.tools.count_many import count_many
from argus.agent.tools.formats import FORMATS
from argus.agent.tools.models import CountManyInput, FieldStats, SchemaSampleInput, SchemaSampleResult
from argus.agent.tools.profiling import bson_type
from argus.agent.tools.schema_sample import schema_sample
from argus.agent.tools.target import AuditTarget

__all__ = ["Draft", "draft_contract"]

REQUIRED_SHARE = 0.9         # present and not null in at least this share of sampled documents: required
TYPE_SHARE = 0.9             # the dominant type family holds at least this share of sampled values
UNIQUE_SAMPLE = 0.95         # distinct / values in the sample, for a field to be tried as a key
UNIQUE_MAX_SHARED = 0.05     # ... and, named as a key, kept while at most this share of documents share a value
ENUM_DISTINCT = 20           # a value set is drafted for at most this many distinct sampled strings ...
ENUM_VALUES = 50             # ... and at most this many in the whole collection
NONNEGATIVE_SHARE = 0.99     # the bulk is not negative: min 0
PAST_SHARE = 0.98            # sampled dates not after the clock: max now (the rest marked as broken today)
_FAMILY = {"int": "number", "long": "number", "double": "number", "decimal": "number"}


@dataclass
class DraftRule:
    rule: Rule
    evidence: str                          # what it was drawn from, as a comment
    broken: int = 0                        # documents that break it today
    unchecked: str | None = None           # why today's data could not be judged against it (a count unanswered)
    shape_share: float | None = None       # pattern and format: the sampled share of the shape it came from


@dataclass
class Draft:
    collection: str
    documents: int
    sampled: int
    rules: list[DraftRule] = field(default_factory=list)
    passes: int = 0
    containers: dict[str, str] = field(default_factory=dict)  # path -> "array" (of objects) or "object"
    shapes: ShapesDraft | None = None  # the shapes drafted (argus.agent.contracts.suggest_shapes)

    def yaml(self, *, source: str, now: datetime) -> str:
        """The draft as a commented YAML contract (Argus's syntax)."""
        out = [f"# Drafted by `argus contract suggest` from {source} on {now:%Y-%m-%d} ({self.documents:,} documents,",
               f"# {self.sampled:,} sampled). Every rule says what it was drawn from; a rule marked BROKEN TODAY",
               "# is broken by today's data: fix the data, or edit or drop the rule. Review, then commit it.",
               f"collection: {json.dumps(self.collection)}", "fields:"]
        out.extend(self._fields_yaml([d for d in self.rules if not d.rule.collection_rule and d.rule.where is None
                                      and d.rule.kind != "shape"], 1))
        if self.shapes is not None:
            out.extend(shapes_yaml(self.shapes, [d for d in self.rules if d.rule.where is not None
                                                 or d.rule.kind == "shape"],
                                   self._fields_yaml, lambda d: _comment(d, self.documents)))
        for d in self.rules:
            if d.rule.kind == "documents":
                low, _ = d.rule.value
                out.append(f"documents: {{min: {low}}}  # {_comment(d, self.documents)}")
        return "\n".join(out) + "\n"


    def _fields_yaml(self, rules: list[DraftRule], depth: int) -> list[str]:
        """``rules`` field by field, nested under the drafted arrays and objects around them."""
        by_field: dict[str, list[DraftRule]] = {}
        for d in rules:
            by_field.setdefault(d.rule.field, []).append(d)
        for path in self.containers:
            if any(p.startswith(path + ".") for p in list(by_field)):
                by_field.setdefault(path, [])
        out: list[str] = []
        for path in by_field:
            if _container_of(path, self.containers) not in by_field:
                out.extend(self._nested_yaml(path, path, by_field, depth))
        return out

    def _nested_yaml(self, path: str, key: str, by_field: dict[str, list[DraftRule]], depth: int) -> list[str]:
        """``path``'s rules, its elements' rules (``items:``) and the fields inside it (``fields:``, or
        ``items: {fields: ...}`` for an array of objects), indented ``depth`` levels."""
        pad = "  " * depth
        out = [f"{pad}{_key(key)}:"]
        own = [d for d in by_field[path] if not d.rule.element]
        each = [d for d in by_field[path] if d.rule.element]
        out.extend(f"{pad}  {d.rule.kind}: {_value(d.rule)}  # {_comment(d, self.documents)}" for d in own)
        children = [p for p in by_field if _container_of(p, self.containers) == path]
        inner = depth + 1
        if each or (children and self.containers[path] == "array"):
            out.append(f"{pad}  items:")
            out.extend(f"{pad}    {d.rule.kind}: {_value(d.rule)}  # {_comment(d, self.documents)}" for d in each)
            inner += 1
        if children:
            out.append(f"{'  ' * inner}fields:")
            for child in children:
                out.extend(self._nested_yaml(child, child[len(path) + 1:], by_field, inner + 1))
        return out


def _container_of(path: str, containers: dict[str, str]) -> str | None:
    """The nearest drafted array of objects or object around ``path``."""
    parts = path.split(".")
    return next((".".join(parts[:i]) for i in range(len(parts) - 1, 0, -1) if ".".join(parts[:i]) in containers),
                None)


def _key(path: str) -> str:
    return path if all(c.isalnum() or c in "._-" for c in path) and not path[0].isdigit() else json.dumps(path)


def _value(rule: Rule) -> str:
    value = rule.value
    if rule.kind in ("required", "unique"):
        return "true" if value else "false"
    if rule.kind == "type":
        return value[0] if len(value) == 1 else json.dumps(value)
    if rule.kind == "in":
        return json.dumps(value, ensure_ascii=False)
    if rule.kind in ("min", "max"):
        return value.text() if value.from_now is None else "now"
    if rule.kind == "pattern":
        return "'" + value.replace("'", "''") + "'"
    return json.dumps(value)


def _plural(n: int, word: str, plural: str | None = None) -> str:
    """``1 value``, ``5 values``: a count with its noun."""
    return f"{n:,} {word if n == 1 else plural or word + 's'}"


def _value_set_evidence(kept: list[str], held: list[dict[str, Any]], pairs: list[tuple[str, int]],
                        typos: Collection[str]) -> str:
    """``the 5 values the whole collection holds``, or ``5 of the 6 ...`` with what was left out and why:
    a rare variant (a typo, by the enum check) or a value that is no string."""
    others = [item for item in held if not isinstance(item["value"], str)]
    if not typos and not others:
        return f"the {_plural(len(kept), 'value')} the whole collection holds"
    said = f"{len(kept):,} of the {_plural(len(held), 'value')} the whole collection holds"
    if typos:
        left = sum(n for v, n in pairs if v in typos)
        said += f"; {_plural(len(typos), 'rare variant')} ({_plural(left, 'document')}) left out"
    if others:
        left = sum(int(item["count"]) for item in others)
        said += f"; {_plural(len(others), 'value')} that {'is' if len(others) == 1 else 'are'} no string " \
                f"({_plural(left, 'document')}) left out"
    return said


def _comment(d: DraftRule, documents: int) -> str:
    if d.unchecked is not None:
        return f"NOT CHECKED TODAY: {d.unchecked}; {d.evidence}"
    if d.broken:
        return f"BROKEN TODAY: {d.broken:,} documents ({d.broken / max(documents, 1):.2%}) break it; {d.evidence}"
    return d.evidence


def draft_contract(target: AuditTarget, *, now: datetime, sample_size: int = 1000,
                   privacy: PrivacyMode = "shapes") -> Draft:
    """Sample, compute the statistics the draft needs in one pass, draft, count every rule in a
    second pass. ``privacy``: in ``strict`` no value set is drafted (it would write document values)."""
    sample = schema_sample(target, SchemaSampleInput(sample_size=sample_size))
    draft = Draft(collection=target.name, documents=sample.collection_size, sampled=sample.documents_sampled)
    fields = [f for f in sample.fields if f.queryable and f.path != "_id"]
    stats = _statistics(fields, privacy)
    measured = count_many(target, CountManyInput(stats=stats)) if stats else None
    by_key = {stat_key(s): r for s, r in zip(stats, measured.stats if measured else [], strict=False)}
    rules: list[DraftRule] = []
    links = self_links(fields)
    for f in fields:
        rules.extend(_field_rules(f, sample, by_key, privacy, now, empty_by_meaning=f.path in links))
        rules.extend(_array_rules(f, fields, by_key, privacy))
    rules, draft.shapes = draft_shapes(rules, sample.shapes, privacy, make=DraftRule, required_share=REQUIRED_SHARE)
    containers = _containers(fields)
    per_element = {d.rule.field for d in rules if d.rule.element and d.rule.kind == "in"}
    rules = [dataclasses.replace(d, rule=_enclosed(d.rule, containers)) for d in rules
             if not (d.rule.kind == "in" and not d.rule.element and d.rule.field in per_element)]
    rules.append(DraftRule(Rule(kind="documents", field="(collection)", value=(1, None), source="", line=0),
                           "an empty collection is never right"))
    contract = Contract(source="draft", rules=tuple(r.rule for r in rules))
    declared = compile_contract(contract, sample, now)
    queries = declared.counts()
    counted = count_many(target, CountManyInput(queries=[{"filter": encode(q)} for q in queries])) \
        if queries else None
    # A count the server did not answer (timed out, refused) is no count: its rule is unchecked, never 0 broken.
    counts = {filter_key(c.filter): c.matched_count for c in (counted.counts if counted else []) if c.error is None}
    recorded = Recorded(counts=counts, statistics=by_key, lookups={}, collection_size=sample.collection_size)
    judged = verdicts(declared, recorded)
    broken = {rule_key(v.rule): (v.count or 0) for v in judged if v.result == "failed"}
    unchecked = {rule_key(v.rule): v.detail for v in judged if v.result == "unchecked"}
    for d in rules:  # declarations (required: false) have no verdict: nothing to break
        d.broken = broken.get(rule_key(d.rule), 0)
        d.unchecked = unchecked.get(rule_key(d.rule))
        if d.rule.kind in ("pattern", "format") and not d.broken and d.unchecked is None and d.shape_share is not None \
                and d.shape_share < 1:
            # Nothing breaks it, so every value matches: the share was of one narrower shape the rule widens.
            d.evidence = (f"no document breaks it; drawn from the {d.shape_share:.1%} of sampled values of one "
                          f"shape, widened to take the others")
    draft.rules = rules
    draft.containers = containers
    draft.passes = (1 if measured else 0) + (1 if counted else 0)
    return draft


def _statistics(fields: list[FieldStats], privacy: PrivacyMode) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for f in fields:
        if _scalar_array(f, fields):  # its elements' values (flattened), for their type and value set
            out.append({"field": f.path, "operation": "value_counts", "limit": ENUM_VALUES})
        if _value_set_candidate(f, privacy):
            out.append({"field": f.path, "operation": "value_counts", "limit": ENUM_VALUES})
        if _key_candidate(f):
            out.append({"field": f.path, "operation": "duplicates"})
    return out


def _scalar_array(f: FieldStats, fields: list[FieldStats]) -> bool:
    """An array field whose elements are scalars: no sampled path below it, not inside another array."""
    return f.arrays is not None and f.arrays.count > 0 and not f.in_array \
        and not any(g.path.startswith(f.path + ".") for g in fields)


def _containers(fields: list[FieldStats]) -> dict[str, str]:
    """Paths with sampled fields below them: arrays of objects (their fields nested under ``items``) and
    objects (under ``fields``, which speak of documents holding the object, as a one_of's object shape)."""
    out: dict[str, str] = {}
    for f in fields:
        if not any(g.path.startswith(f.path + ".") for g in fields):
            continue
        if f.types.get("array", 0) >= 0.5 * max(f.value_count, 1) and not f.in_array:
            out[f.path] = "array"
        elif f.types.get("object", 0) and "array" not in f.types:
            out[f.path] = "object"
    return out


def _enclosed(rule: Rule, containers: dict[str, str]) -> Rule:
    """``rule`` as the nested YAML will read back: per element inside the arrays of objects around it, and
    speaking of documents holding each object around it."""
    parts = rule.field.split(".")
    prefixes = [".".join(parts[:i]) for i in range(1, len(parts))]
    arrays = tuple(p for p in prefixes if containers.get(p) == "array")
    guards = tuple((p, "object") for p in prefixes if containers.get(p) == "object")
    return dataclasses.replace(rule, arrays=arrays, guards=guards) if arrays or guards else rule


def _array_rules(f: FieldStats, fields: list[FieldStats], stats: dict[str, Any],
                 privacy: PrivacyMode) -> list[DraftRule]:
    """An array's length range from the sample, and for an array of scalars its elements' type and value set
    (from the whole collection's elements)."""
    lengths = f.arrays
    if lengths is None or lengths.count < 20 or f.types.get("array", 0) < TYPE_SHARE * max(f.value_count, 1):
        return []
    out: list[DraftRule] = []

    def add(kind: Any, value: Any, evidence: str, *, element: bool = False) -> None:
        out.append(DraftRule(Rule(kind=kind, field=f.path, value=value, source="", line=0, element=element),
                             evidence))

    if lengths.min_length >= 1:
        add("min_items", lengths.min_length, f"no sampled array of the {lengths.count:,} is shorter")
    add("max_items", max(lengths.max_length, 1), f"no sampled array of the {lengths.count:,} is longer")
    counts = stats.get(stat_key({"field": f.path, "operation": "value_counts", "limit": ENUM_VALUES}))
    if not _scalar_array(f, fields) or counts is None or counts.error is not None or counts.capped \
            or not isinstance(counts.value, list) or not counts.value:
        return out
    held = [item for item in counts.value if item["value"] is not None]
    families: dict[str, int] = {}
    for item in held:
        name = bson_type(decode(item["value"]))
        families[_FAMILY.get(name, name)] = families.get(_FAMILY.get(name, name), 0) + int(item["count"])
    total = sum(families.values())
    if len(families) == 1 and total:
        (name,) = families
        add("type", [name], f"all {total:,} elements of the whole collection are {name}", element=True)
        strings = sorted(str(item["value"]) for item in held)
        if name == "string" and privacy != "strict" and len(strings) <= ENUM_DISTINCT \
                and (privacy == "full" or not any(identifier_like(v) for v in strings)):
            add("in", strings, f"the {_plural(len(strings), 'value')} the whole collection's elements hold",
                element=True)
    return out


def _families(f: FieldStats) -> dict[str, int]:
    families: dict[str, int] = {}
    for t, n in f.non_null_types.items():
        families[_FAMILY.get(t, t)] = families.get(_FAMILY.get(t, t), 0) + n
    return families


def _family(f: FieldStats) -> tuple[str, float] | None:
    families = _families(f)
    total = sum(families.values())
    if not total:
        return None
    name, n = max(families.items(), key=lambda kv: kv[1])
    return name, n / total


def _value_set_candidate(f: FieldStats, privacy: PrivacyMode) -> bool:
    s = f.strings
    return privacy != "strict" and s is not None and 0 < s.distinct_count <= ENUM_DISTINCT \
        and s.count >= 0.9 * sum(f.non_null_types.values()) and s.distinct_count <= 0.25 * s.count


def _key_candidate(f: FieldStats) -> bool:
    family = _family(f)
    return family is not None and family[0] in ("string", "objectId", "number") and not f.in_array \
        and f.distinct_ratio >= UNIQUE_SAMPLE and f.value_count >= 50 \
        and (f.numeric is None or f.numeric.integer_share == 1.0)


def _field_rules(f: FieldStats, sample: SchemaSampleResult, stats: dict[str, Any], privacy: PrivacyMode,
                 now: datetime, *, empty_by_meaning: bool = False) -> list[DraftRule]:
    """``empty_by_meaning``: a link between the collection's own documents (empty at the top of its
    hierarchy), judged from the values as the planner does: never drafted as required."""
    out: list[DraftRule] = []

    def add(kind: Any, value: Any, evidence: str) -> None:
        out.append(DraftRule(Rule(kind=kind, field=f.path, value=value, source="", line=0), evidence))

    base = max(f.parent_present_count, 1)
    filled = f.present_count - f.null_count
    family = _family(f)
    if family is not None and family[1] >= TYPE_SHARE:
        name, share = family
        add("type", [name], f"{share:.1%} of the {sum(f.non_null_types.values()):,} sampled values are {name}")
    elif family is not None and len(two := _families(f)) == 2 and "object" in two:
        # a field written two ways (text in old documents, an object in new ones): both, each with its share
        total = sum(two.values())
        add("type", sorted(two), "written two ways: " + " or ".join(f"{name} ({n / total:.1%})"
                                                                     for name, n in sorted(two.items())))
    # A link up a hierarchy, or a date waiting for its event (delivered_at), is empty by meaning:
    # neither is drafted as required (the planner excuses them the same way, from the values).
    waits = waits_for_its_event(f, family[0] if family else None, 1 - filled / base)
    if filled >= REQUIRED_SHARE * base and not (empty_by_meaning or waits):
        add("required", True, f"present and not null in {filled:,} of {base:,} sampled documents")
    elif filled < REQUIRED_SHARE * base:
        add("required", False, f"missing or null in {base - filled:,} of {base:,} sampled documents: optional")
    duplicates = stats.get(stat_key({"field": f.path, "operation": "duplicates"}))
    hints = hints_for(f.path, [g.path for g in sample.fields])
    if duplicates is not None and duplicates.error is None and duplicates.totals is not None and not hints.shared:
        shared = duplicates.totals["documents"]
        # Unique in the whole collection; or named as a key with a few values shared (a defect to show).
        if shared == 0 or (hints.key and shared <= UNIQUE_MAX_SHARED * max(sample.collection_size, 1)):
            add("unique", True, f"{f.distinct_ratio:.1%} distinct in the sample"
                + ("; no value repeats in the whole collection" if shared == 0 else "; its name says it is a key"))
    counts = stats.get(stat_key({"field": f.path, "operation": "value_counts", "limit": ENUM_VALUES}))
    if counts is not None and counts.error is None and not counts.capped and isinstance(counts.value, list):
        held = [item for item in counts.value if item["value"] is not None]  # nulls are required's business
        pairs = [(item["value"], item["count"]) for item in held if isinstance(item["value"], str)]
        typos = enum_violations(pairs, path=f.path)
        kept = sorted(v for v, _ in pairs if v not in typos)
        if kept and (privacy == "full" or not any(identifier_like(v) for v in kept)):
            add("in", kept, _value_set_evidence(kept, held, pairs, typos))
    if f.numeric is not None and family is not None and family[0] == "number" and f.numeric.count >= 20:
        if hints.bounds is not None:
            low, high = hints.bounds
            add("min", Bound(number=low), f"{f.path}'s name gives the range {low:g} to {high:g}")
            add("max", Bound(number=high), f"{f.path}'s name gives the range {low:g} to {high:g}")
        elif not hints.signed and f.numeric.negative_count <= (1 - NONNEGATIVE_SHARE) * f.numeric.count:
            add("min", Bound(number=0), f"{f.numeric.count - f.numeric.negative_count:,} of "
                                        f"{f.numeric.count:,} sampled values are zero or more")
    if f.dates is not None and family is not None and family[0] == "date" and f.dates.count >= 20 \
            and not hints.future_event:
        ahead = [n for d, n in f.dates.high_tail if d > now]
        future = sum(ahead)
        # every value of the profile's tail in the future: how many more there are is unknown, so no rule
        if len(ahead) < len(f.dates.high_tail) and future <= (1 - PAST_SHARE) * f.dates.count:
            add("max", Bound(from_now=now - now), f"{f.dates.count - future:,} of {f.dates.count:,} sampled dates "
                                                  f"lie in the past")
    if f.strings is not None and family is not None and family[0] == "string" \
            and not any(d.rule.kind == "in" for d in out):
        fmt = string_format(f.strings, code=hints.identifier, named=hints.format, path=f.path)
        if fmt is not None and not fmt.violation_matches:
            known = next((k for k, rx in FORMATS.items() if rx == fmt.regex and k in ("email", "url", "uuid",
                                                                                      "iso_date")), None)
            evidence = f"{fmt.share:.1%} of the sampled values have this {'format' if known else 'shape'}"
            if known:
                add("format", known, evidence)
            elif privacy != "strict" or "[" in fmt.regex:
                add("pattern", fmt.regex, evidence)
            if out and out[-1].rule.kind in ("format", "pattern"):
                out[-1].shape_share = fmt.share
    return out
