"""A contract's ``shapes:``: a polymorphic collection declared shape by shape.

::

    shapes:
      by: method                    # the discriminator: its value names a document's shape
      card:
        fields:
          card.last4: {required: true, pattern: '^[0-9]{4}$'}
      iban:
        fields:
          iban: {required: true}
          bic: {required: true}
      cash: {fields: {}}            # a shape with no fields of its own

Each shape's field rules are ordinary rules scoped to that shape (``where: {method: card}``, joined
with a rule's own ``where`` by ``$and``), so they are counted in the same passes as the others, and
``iban`` is required of IBAN transfers, not of cards. One more rule, kind ``shape``, counts the
documents whose discriminator holds a value no shape declares (a document without the
discriminator holds no value: require ``by``'s field in ``fields`` to forbid that).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from argus.agent.contracts.model import Rule
from argus.agent.ejson import encode
from argus.agent.errors import QueryRefused
from argus.agent.tools.guard import check_field_path
from argus.config.yaml_source import nearest

if TYPE_CHECKING:
    from argus.config.rule_values import Problems

__all__ = ["SHAPE_KEYS", "shape_rules"]

SHAPE_KEYS = ("fields", "description")   # the keys of one shape
_RESERVED = ("by", "description", "severity")  # keys of ``shapes:`` that are not shapes
_EXAMPLE = "{by: type, card: {fields: {card.last4: {required: true}}}, iban: {fields: {iban: {required: true}}}}"

FieldParser = Callable[..., list[Rule]]  # argus.config.contracts._field
SeverityParser = Callable[[Any, tuple[Any, ...], "Problems"], Any]


def shape_rules(spec: Any, problems: Problems, *, field: FieldParser, severity: SeverityParser) -> list[Rule]:
    """The rules ``shapes:`` declares: each shape's field rules scoped to it, and the undeclared-shape rule."""
    loc: tuple[Any, ...] = ("shapes",)
    if not isinstance(spec, Mapping) or not spec:
        problems.add(loc, f"shapes is a mapping of the discriminator (by) and each shape's fields, e.g. {_EXAMPLE}")
        return []
    by = spec.get("by")
    if "by" not in spec:
        problems.add(loc, "shapes needs by: the field whose value names a document's shape (by: type)", key=True)
        return []
    if not isinstance(by, str) or not _is_path(by):
        problems.add((*loc, "by"), "by is the field path whose value names a document's shape (by: type)")
        return []
    names = [name for name in spec if name not in _RESERVED]
    if not names:
        problems.add(loc, f"shapes declares no shape beside by: give each value of {by} with its fields, e.g. "
                          f"{_EXAMPLE}", key=True)
        return []
    rules: list[Rule] = []
    for name in names:
        if not isinstance(name, str | int) or isinstance(name, bool):
            problems.add((*loc, name), "a shape is named by a value of the discriminator: a string or a whole number",
                         key=True)
            continue
        rules.extend(_shape(by, name, spec[name], (*loc, name), problems, field))
    values = [encode(n) for n in names if isinstance(n, str | int) and not isinstance(n, bool)]
    rules.append(Rule(kind="shape", field=by, value=values, source="", line=problems.line((*loc, "by")),
                      severity=severity(spec.get("severity"), (*loc, "severity"), problems)))
    return rules


def _is_path(text: str) -> bool:
    try:
        check_field_path(text)
    except QueryRefused:
        return False
    return True


def _shape(by: str, name: str | int, spec: Any, loc: tuple[Any, ...], problems: Problems,
           field: FieldParser) -> list[Rule]:
    unknown = [key for key in spec if key not in SHAPE_KEYS] if isinstance(spec, Mapping) else []
    for key in unknown:
        problems.add((*loc, key), "unknown key of a shape" + nearest(str(key), SHAPE_KEYS), key=True)
    if not isinstance(spec, Mapping) or "fields" not in spec:
        if not unknown:
            problems.add(loc, f"the shape {name} has no fields: give {{fields: {{...}}}} with its fields' rules "
                              f"({{fields: {{}}}} for a shape with no fields of its own)")
        return []
    fields = spec["fields"]
    if fields is None or (isinstance(fields, Mapping) and not fields):
        return []  # declared with no fields of its own
    if not isinstance(fields, Mapping):
        problems.add((*loc, "fields"), "fields is a mapping of field paths (dot notation) to their rules")
        return []
    scope = {by: encode(name)}
    rules: list[Rule] = []
    for path, child in fields.items():
        for rule in field(str(path), child, problems, loc=(*loc, "fields", path)):
            rules.append(replace(rule, where=scope if rule.where is None else {"$and": [scope, rule.where]}))
    return rules
