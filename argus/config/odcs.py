"""Reading an Open Data Contract Standard (bitol ODCS v3) contract as Argus rules.

What maps, per property (nested ``properties`` and array ``items`` become dot paths):

- ``required: true`` → required; ``required: false`` → declared optional
- ``unique: true`` → unique; ``primaryKey: true`` → unique and required
- ``physicalType`` when it is a BSON type name, else ``logicalType`` (string, integer, number,
  boolean, date, timestamp, object, array) → type
- ``logicalTypeOptions``: ``minimum``/``maximum`` → min/max, ``maxLength`` → max_length,
  ``pattern`` → pattern, ``format`` (email, uuid, uri) → format; on an array ``minItems`` /
  ``maxItems`` / ``uniqueItems`` → min_items / max_items / unique_items
- an array's ``items`` with ``properties`` → the fields of each element (dot paths); without, its
  type and ``logicalTypeOptions`` → rules on each element (``items:``)
- ``enum`` (``- value: ...``) → in
- ``relationships: [{to: customers.customer_id}]`` → references
- ``quality`` library metrics: ``nullValues`` ``mustBe: 0`` → required, ``nullValues`` with
  ``unit: percent`` and ``mustBeLessThan``/``mustBeLessOrEqualTo`` → max_null_share,
  ``duplicateValues`` ``mustBe: 0`` → unique, ``invalidValues`` ``mustBe: 0`` with
  ``validValues`` → in or with ``pattern`` → pattern; at the object level ``rowCount``
  (``mustBeGreaterThan``, ``mustBeGreaterOrEqualTo``, ``mustBeLessThan``, ``mustBeLessOrEqualTo``,
  ``mustBeBetween``) → documents. ``severity`` of a quality rule is kept when it is one of Argus's.

What does not map is reported as a note, never silently dropped: SQL and custom quality rules,
thresholds other than zero in rows, ``missingValues``, exclusive bounds, ``minLength``,
``minProperties`` / ``maxProperties``, ``time`` and ``map`` types.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from argus.agent.contracts.model import Rule, RuleKind
from argus.config.rule_values import BSON_TYPES, Problems, rule_value, severity_of

__all__ = ["odcs_rules"]

_LOGICAL = {"string": ["string"], "integer": ["int", "long"], "number": ["number"], "boolean": ["bool"],
            "date": ["date"], "timestamp": ["date"], "object": ["object"], "array": ["array"]}
_FORMATS = {"email": "email", "uuid": "uuid", "uri": "url", "url": "url"}
_ROW_COUNT = {"mustBeGreaterThan": ("min", 1), "mustBeGreaterOrEqualTo": ("min", 0), "mustBeGreaterThanOrEqualTo":
              ("min", 0), "mustBeLessThan": ("max", -1), "mustBeLessOrEqualTo": ("max", 0),
              "mustBeLessThanOrEqualTo": ("max", 0), "mustBe": ("both", 0)}
_UNMAPPED_OPTIONS = ("exclusiveMinimum", "exclusiveMaximum", "minLength", "multipleOf", "minProperties",
                     "maxProperties")


def odcs_rules(data: Mapping[str, Any], *, problems: Problems,
               collection: str | None) -> tuple[list[Rule], list[str], str | None]:
    """Rules and notes for the schema object describing ``collection`` (the only one, when there is one)."""
    objects = data.get("schema")
    if not isinstance(objects, list) or not objects or not all(isinstance(o, Mapping) for o in objects):
        problems.add(("schema",), "an ODCS contract lists its objects under schema: (- name: orders, properties: ...)")
        return [], [], None
    names = [str(o.get("physicalName") or o.get("name")) for o in objects]
    index = 0
    if len(objects) > 1:
        chosen = [i for i, o in enumerate(objects) if collection in (o.get("name"), o.get("physicalName"))]
        if not chosen:
            problems.add(("schema",), f"the contract describes {', '.join(names)}; none is the audited collection "
                                      f"{collection!r}")
            return [], [], None
        index = chosen[0]
    reader = _Reader(problems)
    obj = objects[index]
    loc: tuple[Any, ...] = ("schema", index)
    for i, prop in enumerate(reader.listed(obj, "properties", loc)):
        reader.property(prop, "", (*loc, "properties", i))
    for j, check in enumerate(reader.listed(obj, "quality", loc)):
        reader.object_quality(check, (*loc, "quality", j))
    return reader.rules, reader.notes, names[index]


_EXAMPLES = {"properties": "[{name: order_id, required: true}]", "quality": "[{metric: nullValues, mustBe: 0}]",
             "relationships": "[{to: customers.customer_id}]"}


class _Reader:
    def __init__(self, problems: Problems) -> None:
        self.problems = problems
        self.rules: list[Rule] = []
        self.notes: list[str] = []

    def _add(self, kind: RuleKind, path: str, value: Any, loc: tuple[Any, ...], severity: Any = None, *,
             element: bool = False) -> None:
        parsed = rule_value(kind, value, loc, self.problems)
        if parsed is not None:
            self.rules.append(Rule(kind=kind, field=path, value=parsed, source="", line=self.problems.line(loc),
                                   severity=severity_of(severity, (*loc, "severity"), self.problems)
                                   if _ours(severity) else None, element=element))

    def listed(self, parent: Mapping[str, Any], key: str, loc: tuple[Any, ...]) -> list[Any]:
        """``parent[key]`` when it is a list (or absent: none); any other shape is a problem at its line,
        never read item by item (a string letter by letter) nor dropped."""
        value = parent.get(key)
        if value is None:
            return []
        if isinstance(value, list):
            return value
        self.problems.add((*loc, key), f"{key} is a list, e.g. {_EXAMPLES[key]}")
        return []

    def _note(self, loc: tuple[Any, ...], what: str) -> None:
        self.notes.append(f"line {self.problems.line(loc)}: {what} is not mapped to an Argus rule")

    def property(self, prop: Any, prefix: str, loc: tuple[Any, ...]) -> None:
        if not isinstance(prop, Mapping) or not isinstance(prop.get("name"), str):
            self.problems.add(loc, "an ODCS property needs a name")
            return
        path = prefix + prop["name"]
        if prop.get("required") is not None:
            self._add("required", path, prop["required"], (*loc, "required"))
        if prop.get("unique") is True or prop.get("primaryKey") is True:
            self._add("unique", path, True, (*loc, "unique" if prop.get("unique") else "primaryKey"))
            if prop.get("primaryKey") is True and prop.get("required") is None:
                self._add("required", path, True, (*loc, "primaryKey"))
        self._type(prop, path, loc)
        self._options(prop.get("logicalTypeOptions"), path, (*loc, "logicalTypeOptions"))
        enum = prop.get("enum")
        if isinstance(enum, list) and enum:
            values = [e.get("value") if isinstance(e, Mapping) else e for e in enum]
            self._add("in", path, values, (*loc, "enum"))
        for k, rel in enumerate(self.listed(prop, "relationships", loc)):
            target = rel.get("to") if isinstance(rel, Mapping) else None
            if isinstance(target, str) and rel.get("type", "foreignKey") == "foreignKey":
                self._add("references", path, target, (*loc, "relationships", k))
            else:
                self._note((*loc, "relationships", k), f"{path}: a relationship other than a single foreign key")
        for j, check in enumerate(self.listed(prop, "quality", loc)):
            self._property_quality(check, path, (*loc, "quality", j))
        for i, child in enumerate(self.listed(prop, "properties", loc)):
            self.property(child, path + ".", (*loc, "properties", i))
        items = prop.get("items")
        if isinstance(items, Mapping):
            for i, child in enumerate(self.listed(items, "properties", (*loc, "items"))):
                self.property(child, path + ".", (*loc, "items", "properties", i))
            if not items.get("properties"):  # an array of scalars: its elements' type and options
                self._type(items, path, (*loc, "items"), element=True)
                self._options(items.get("logicalTypeOptions"), path, (*loc, "items", "logicalTypeOptions"),
                              element=True)

    def _type(self, prop: Mapping[str, Any], path: str, loc: tuple[Any, ...], *, element: bool = False) -> None:
        physical = str(prop.get("physicalType") or "")
        bson = next((t for t in BSON_TYPES if t.lower() == physical.lower()), None)
        if bson is not None:
            self._add("type", path, bson, (*loc, "physicalType"), element=element)
            return
        logical = prop.get("logicalType")
        if logical is None:
            return
        if logical in _LOGICAL:
            self._add("type", path, _LOGICAL[logical], (*loc, "logicalType"), element=element)
        else:
            self._note((*loc, "logicalType"), f"{path}: logicalType {logical!r}")

    def _options(self, options: Any, path: str, loc: tuple[Any, ...], *, element: bool = False) -> None:
        if options is None:
            return
        if not isinstance(options, Mapping):
            self.problems.add(loc, "logicalTypeOptions is a mapping, e.g. {minimum: 0}")
            return
        for key, kind in (("minimum", "min"), ("maximum", "max"), ("maxLength", "max_length"), ("pattern", "pattern")):
            if key in options:
                self._add(kind, path, options[key], (*loc, key), element=element)  # type: ignore[arg-type]
        if not element:  # an array's own options (on an array of arrays: not checked, noted below)
            if options.get("minItems") not in (None, 0):
                self._add("min_items", path, options["minItems"], (*loc, "minItems"))
            if "maxItems" in options:
                self._add("max_items", path, options["maxItems"], (*loc, "maxItems"))
            if options.get("uniqueItems") is True:
                self._add("unique_items", path, True, (*loc, "uniqueItems"))
        fmt = options.get("format")
        if isinstance(fmt, str) and fmt.lower() in _FORMATS:
            self._add("format", path, _FORMATS[fmt.lower()], (*loc, "format"), element=element)
        elif fmt is not None:
            self._note((*loc, "format"), f"{path}: format {fmt!r}")
        for key in (*_UNMAPPED_OPTIONS, *(("minItems", "maxItems", "uniqueItems") if element else ())):
            if key in options:
                self._note((*loc, key), f"{path}: {key}")

    def _property_quality(self, check: Any, path: str, loc: tuple[Any, ...]) -> None:
        if not isinstance(check, Mapping):
            self.problems.add(loc, f"a quality rule is a mapping, e.g. {_EXAMPLES['quality'][1:-1]}")
            return
        metric = check.get("metric") or check.get("rule")
        kind = check.get("type", "library")
        severity = check.get("severity")
        if kind != "library" or metric is None:
            if kind != "text":
                self._note(loc, f"{path}: a {kind} quality rule")
            return
        zero = check.get("mustBe") == 0 and check.get("unit", "rows") == "rows"
        args: Mapping[str, Any] = check["arguments"] if isinstance(check.get("arguments"), Mapping) else {}
        if metric in ("nullValues", "not_null") and (zero or metric == "not_null"):
            self._add("required", path, True, loc, severity)
        elif metric == "nullValues" and check.get("unit") == "percent" and (
                "mustBeLessThan" in check or "mustBeLessOrEqualTo" in check):
            limit = check.get("mustBeLessOrEqualTo", check.get("mustBeLessThan"))
            share = limit / 100 if isinstance(limit, int | float) and not isinstance(limit, bool) else limit
            self._add("max_null_share", path, share, loc, severity)
        elif metric in ("duplicateValues", "unique") and (zero or metric == "unique"):
            self._add("unique", path, True, loc, severity)
        elif metric == "invalidValues" and zero and isinstance(args.get("validValues"), list):
            self._add("in", path, args["validValues"], loc, severity)
        elif metric == "invalidValues" and zero and isinstance(args.get("pattern"), str):
            self._add("pattern", path, args["pattern"], loc, severity)
        else:
            self._note(loc, f"{path}: quality metric {metric!r} with this threshold")

    def object_quality(self, check: Any, loc: tuple[Any, ...]) -> None:
        if not isinstance(check, Mapping):
            self.problems.add(loc, "a quality rule is a mapping, e.g. {metric: rowCount, mustBeGreaterThan: 0}")
            return
        metric = check.get("metric") or check.get("rule")
        if check.get("type", "library") != "library" or metric != "rowCount":
            if check.get("type") != "text":
                self._note(loc, f"the object-level quality rule {metric or check.get('type')!r}")
            return
        low: int | None = None
        high: int | None = None
        for key, (side, shift) in _ROW_COUNT.items():
            value = check.get(key)
            if isinstance(value, int) and not isinstance(value, bool):
                if side in ("min", "both"):
                    low = value + shift if side == "min" else value
                if side in ("max", "both"):
                    high = value + shift if side == "max" else value
        between = check.get("mustBeBetween")
        if isinstance(between, list) and len(between) == 2 and all(isinstance(v, int) for v in between):
            low, high = between
        if low is None and high is None:
            self._note(loc, "rowCount with this threshold")
            return
        severity = check.get("severity")
        self.rules.append(Rule(kind="documents", field="(collection)", value=(low, high), source="",
                               line=self.problems.line(loc),
                               severity=severity_of(severity, (*loc, "severity"), self.problems)
                               if _ours(severity) else None))


def _ours(severity: Any) -> bool:
    return isinstance(severity, str) and severity.lower() in ("low", "medium", "high", "critical")
