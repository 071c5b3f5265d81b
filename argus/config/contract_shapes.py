"""Nested rules of a contract: arrays (``items:``), objects (``fields:``), fields written two ways
(``one_of``), and the ``warn`` / ``fail`` thresholds any rule may carry.

::

    fields:
      items:
        type: array
        min_items: 1
        items:                          # each element: an object with these fields
          fields:
            sku: {required: true, pattern: '^SKU-[0-9]+$'}
            qty: {min: 1, fail: "> 1%", warn: "> 0"}
      tags: {max_items: 10, unique_items: true, items: {type: string, max_length: 20}}
      shipping:
        type: object
        required_fields: [street, city]
        additional_fields: false
        fields: {city: {type: string}}
      address:                          # text in old documents, an object in new ones
        one_of:
          - {type: string, max_length: 200}
          - {type: object, required_fields: [city]}

Every nested rule becomes a ``Rule`` on its full dot path, marked with what encloses it (``element``,
``arrays``, ``guards``), so it is counted per document like any other rule (``argus.agent.contracts.compile``).
Rules under an object's ``fields`` speak of documents holding that object (``required`` there is
"required in the object", as ``$jsonSchema`` reads it); rules under ``items`` speak of each element.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from argus.agent.contracts.model import Rule, Threshold
from argus.config.rule_values import Problems

__all__ = ["NESTING_KEYS", "THRESHOLD_KEYS", "TOP", "Within", "nested", "thresholds"]

NESTING_KEYS = ("items", "fields", "required_fields", "additional_fields", "one_of")
# warn_if / error_if are dbt's names for warn / fail
THRESHOLD_KEYS = ("warn", "fail", "mostly", "warn_if", "error_if")
_THRESHOLD = re.compile(r"^\s*(>=|>|!=)\s*([0-9]+(?:\.[0-9]+)?)\s*(%?)\s*$")

# What may not be asked of each element of an array, or inside an array of objects, and why.
_NOT_PER_ELEMENT = {
    "unique": "unique compares documents, not the elements of one array (use unique_items on the array)",
    "references": "write references on the array itself: each of its values is looked up",
    "max_null_share": "a share of documents, not of elements",
    "min_items": "arrays of arrays are not checked", "max_items": "arrays of arrays are not checked",
    "unique_items": "arrays of arrays are not checked",
}
_NOT_IN_ARRAYS = {
    "max_null_share": "a share of documents, not of elements",
    "unique_items": "not checked inside an array of objects (declare it on an array outside one)",
    "additional_fields": "not checked inside an array of objects (the validator's additionalProperties holds "
                         "it; write the keys as fields)",
}


@dataclass(frozen=True)
class Within:
    """What encloses a field's rules: see ``Rule.element``, ``Rule.arrays`` and ``Rule.guards``."""

    element: bool = False
    arrays: tuple[str, ...] = ()
    guards: tuple[tuple[str, str], ...] = ()

    def guarded(self, path: str, bson_type: str) -> Within:
        guard = (path, bson_type)
        return replace(self, guards=self.guards if guard in self.guards else (*self.guards, guard))

    def place(self, rule: Rule, loc: tuple[Any, ...], problems: Problems) -> Rule | None:
        """``rule`` marked with its enclosure, or None after recording why it cannot be checked there."""
        if self.element and rule.kind in _NOT_PER_ELEMENT:
            problems.add(loc, f"{rule.kind} is not a rule of each element: {_NOT_PER_ELEMENT[rule.kind]}", key=True)
            return None
        if (self.arrays or self.element) and rule.kind in _NOT_IN_ARRAYS:
            problems.add(loc, f"{rule.kind}: {_NOT_IN_ARRAYS[rule.kind]}", key=True)
            return None
        return replace(rule, element=self.element, arrays=self.arrays, guards=self.guards)


TOP = Within()

FieldParser = Callable[..., list[Rule]]       # argus.config.contracts._field
TypesParser = Callable[[Any, tuple[Any, ...], "Problems"], "list[str] | None"]


def nested(key: str, path: str, spec: Mapping[str, Any], loc: tuple[Any, ...], problems: Problems,
           within: Within, *, field: FieldParser, types: TypesParser, line: int) -> list[Rule]:
    """The rules one nesting key of a field's ``spec`` declares (``loc`` is the field's)."""
    raw = spec[key]
    here = (*loc, key)
    if key == "items":
        if within.element:
            problems.add(here, "arrays of arrays are not checked", key=True)
            return []
        if not isinstance(raw, Mapping) or not raw:
            problems.add(here, "items is the rules of each element, e.g. {type: string} or {fields: {sku: "
                               "{required: true}}}")
            return []
        return field(path, raw, problems, loc=here, within=replace(within, element=True))
    if key == "fields":
        if not isinstance(raw, Mapping) or not raw:
            problems.add(here, "fields is a mapping of the object's keys to their rules, e.g. {city: {required: "
                               "true}}")
            return []
        inner = replace(within, element=False, arrays=(*within.arrays, path)) if within.element \
            else within.guarded(path, "object")
        rules: list[Rule] = []
        for name, child in raw.items():
            rules.extend(field(f"{path}.{name}", child, problems, loc=(*here, name), within=inner))
        return rules
    if key == "required_fields":
        names = raw if isinstance(raw, list) else None
        if not names or not all(isinstance(n, str) and n and "." not in n and not n.startswith("$") for n in names):
            problems.add(here, "required_fields is a list of the object's keys, e.g. [street, city]")
            return []
        return _placed(Rule(kind="required_fields", field=path, value=tuple(dict.fromkeys(names)), source="",
                            line=problems.line(here)), spec, here, problems, within)
    if key == "additional_fields":
        if not isinstance(raw, bool):
            problems.add(here, "additional_fields is true or false (false: no key but the declared ones)")
            return []
        if raw:
            return []  # the default: keys beyond the declared ones are allowed
        declared = [str(k).split(".")[0] for k in (spec.get("fields") or {})] + \
            [str(k) for k in (spec.get("required_fields") or []) if isinstance(k, str)]
        if not declared:
            problems.add(here, "additional_fields: false needs the keys that are allowed: give fields or "
                               "required_fields beside it")
            return []
        return _placed(Rule(kind="additional_fields", field=path, value=tuple(dict.fromkeys(declared)), source="",
                            line=problems.line(here)), spec, here, problems, within)
    return _one_of(path, raw, here, problems, within, field=field, types=types, line=line)


def _placed(rule: Rule, spec: Mapping[str, Any], loc: tuple[Any, ...], problems: Problems,
            within: Within) -> list[Rule]:
    warn, fail = thresholds(spec, loc[:-1], problems)
    placed_rule = within.place(replace(rule, warn=warn, fail=fail), loc, problems)
    return [placed_rule] if placed_rule is not None else []


def _one_of(path: str, raw: Any, loc: tuple[Any, ...], problems: Problems, within: Within, *,
            field: FieldParser, types: TypesParser, line: int) -> list[Rule]:
    """``one_of``: the value is of one shape's type, and each shape's rules hold of the values of its type."""
    if within.element:
        problems.add(loc, "one_of is not checked on each element of an array", key=True)
        return []
    if not isinstance(raw, list) or len(raw) < 2 or not all(isinstance(s, Mapping) for s in raw):
        problems.add(loc, "one_of is a list of two or more shapes, each with its type and rules, e.g. "
                          "[{type: string}, {type: object, required_fields: [city]}]")
        return []
    rules: list[Rule] = []
    union: list[str] = []
    for i, shape in enumerate(raw):
        named = types(shape.get("type"), (*loc, i, "type"), problems) if "type" in shape else None
        if "type" not in shape:
            problems.add((*loc, i), "each shape of one_of names its type (type: string, type: object, ...)")
        if named is None:
            continue
        if len(named) != 1:
            problems.add((*loc, i, "type"), "a shape of one_of has one type: write one shape per type")
            continue
        if named[0] in union:
            problems.add((*loc, i, "type"), f"two shapes of type {named[0]}: write one")
            continue
        union.append(named[0])
        rest = {k: v for k, v in shape.items() if k != "type"}
        if rest:
            rules.extend(field(path, rest, problems, loc=(*loc, i), within=within.guarded(path, named[0])))
    if len(union) == len(raw):
        shape_type = within.place(Rule(kind="type", field=path, value=union, source="", line=line), loc, problems)
        rules.insert(0, shape_type) if shape_type is not None else None
    return rules


def thresholds(spec: Mapping[str, Any], loc: tuple[Any, ...],
               problems: Problems) -> tuple[Threshold | None, Threshold | None]:
    """``warn`` and ``fail`` (or dbt's ``warn_if`` / ``error_if``, or GX's ``mostly``) of a rule or a field."""
    given = {k: spec[k] for k in THRESHOLD_KEYS if k in spec}
    if ("warn" in given and "warn_if" in given) or ("fail" in given and "error_if" in given):
        problems.add(loc, "give warn or warn_if, fail or error_if, not both")
    warn = _threshold(given.get("warn", given.get("warn_if")), (*loc, "warn" if "warn" in given else "warn_if"),
                      problems)
    fail = _threshold(given.get("fail", given.get("error_if")), (*loc, "fail" if "fail" in given else "error_if"),
                      problems)
    if "mostly" in given:
        mostly = given["mostly"]
        if fail is not None:
            problems.add((*loc, "mostly"), "give mostly or fail, not both (mostly: 0.99 is fail: \"> 1%\")")
        elif isinstance(mostly, int | float) and not isinstance(mostly, bool) and 0 < mostly <= 1:
            fail = Threshold(">", round(1 - float(mostly), 12), share=True)
        else:
            problems.add((*loc, "mostly"), "mostly is the share of documents that must keep the rule, above 0 and "
                                           "at most 1 (0.99)")
    if warn is not None and fail is not None and warn.share == fail.share and warn.amount > fail.amount:
        problems.add((*loc, "warn"), f"warn {warn.text()} is past fail {fail.text()}: a rule would fail before it "
                                     f"warned")
    return warn, fail


def _threshold(value: Any, loc: tuple[Any, ...], problems: Problems) -> Threshold | None:
    if value is None:
        return None
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return Threshold(">", float(value))  # warn: 0 reads as "more than 0"
    match = _THRESHOLD.match(value) if isinstance(value, str) else None
    if match is None:
        problems.add(loc, f"{value!r} is no threshold: write '> 0', '>= 10' or '> 1%' (documents breaking the "
                          f"rule, or their share of the audited documents)")
        return None
    op, amount, percent = match.groups()
    number = float(amount) / 100 if percent else float(amount)
    if op == "!=":  # dbt's "!= 0": any breaking document
        if number != 0:
            problems.add(loc, f"{value!r}: only '!= 0' is understood; write '> N' for more")
            return None
        op = ">"
    if percent and number > 1:
        problems.add(loc, f"{value!r}: a share is at most 100%")
        return None
    return Threshold(">=" if op == ">=" else ">", number, share=bool(percent))
