"""Drafting a polymorphic collection's shapes: when the sample shows a discriminator
(``argus.agent.shapes.discover``), the fields that belong to some shapes are drafted inside those
shapes (``shapes: {by: kind, view: {fields: ...}}``), each required where nearly every sampled
document of its shape holds it, instead of collection-wide with a low presence and ``required: false``.

The declared shapes are the discriminator's value set when one was drafted from the whole
collection (rare variants left out, as a value set leaves typos out), else the sampled shapes; the
discriminator's own ``in`` rule gives way to the ``shape`` rule, which counts the same documents.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from argus.agent.contracts.model import Rule
from argus.agent.ejson import encode
from argus.agent.options import PrivacyMode
from argus.agent.privacy import identifier_like
from argus.agent.shapes.models import Shapes
from argus.agent.shapes.scoping import MIN_SAMPLED, scopes

__all__ = ["ShapesDraft", "draft_shapes", "rule_key", "shapes_yaml"]

# YAML 1.2 and 1.1 words a plain key would be read as (a shape named 'true' must be quoted)
# A draft declares shapes only for a clear tagged union: the discriminator explains at least this share of
# which paths documents hold (a real union explains nearly all; a field that merely correlates with one
# path's form, such as a city with an address written two ways, explains far less and is no shape).
DRAFT_EXPLAINED = 0.9
_RESERVED = ("by", "description", "severity")  # keys of shapes: that name no shape
_WORDS = ("true", "false", "null", "~", "yes", "no", "on", "off", "y", "n")


@dataclass
class ShapesDraft:
    by: str
    values: list[Any]            # the declared shapes, in the order written
    evidence: str


def rule_key(rule: Rule) -> tuple[str, str, bool, str]:
    """A drafted rule's identity: its field, kind, whether it speaks of elements, and its shape."""
    return rule.field, rule.kind, rule.element, json.dumps(rule.where, sort_keys=True)


def draft_shapes(rules: list[Any], shapes: Shapes | None, privacy: PrivacyMode, *,
                 make: Callable[[Rule, str], Any], required_share: float) -> tuple[list[Any], ShapesDraft | None]:
    """``rules`` (``DraftRule``) with the fields of some shapes moved into them, and the shapes drafted;
    unchanged (and None) when the sample shows no discriminator or its values may not be written."""
    if shapes is None or shapes.discriminator is None or shapes.explained < DRAFT_EXPLAINED or privacy == "strict":
        return rules, None
    by = shapes.discriminator
    sampled = [s for s in shapes.shapes if isinstance(s.value, str | int) and not isinstance(s.value, bool)]
    if len(sampled) < 2 or len(sampled) != len(shapes.shapes) or any(s.value in _RESERVED for s in sampled) \
            or (privacy != "full" and any(identifier_like(str(s.value)) for s in sampled)):
        return rules, None
    scoped = scopes(shapes)
    if not scoped:
        return rules, None
    value_set = next((d for d in rules if d.rule.field == by and d.rule.kind == "in" and not d.rule.element), None)
    values: list[Any] = list(value_set.rule.value) if value_set is not None else [s.value for s in sampled]
    shares = ", ".join(f"{s.label} {s.share:.0%}" for s in sampled[:6]) + (", …" if len(sampled) > 6 else "")
    evidence = f"{len(sampled)} shapes by {by} in the {shapes.sampled:,} sampled documents ({shares})" \
        + ("; the shapes are its value set in the whole collection" if value_set is not None else "")
    # A key stays collection-wide: its duplicates were counted over the whole collection, and it holds there.
    out = [d for d in rules if d is not value_set and (d.rule.field not in scoped or d.rule.kind == "unique")]
    for s in sampled:
        if s.sampled < MIN_SAMPLED or s.value not in values:
            continue
        presence = {p.path: p.presence for p in s.paths}
        scope = {by: encode(s.value)}
        for path in scoped:
            held = presence.get(path, 0.0)
            if held < 0.5:
                continue  # not a field of this shape
            for d in rules:
                if d.rule.field == path and d.rule.kind not in ("required", "unique"):
                    out.append(dataclasses.replace(d, rule=dataclasses.replace(d.rule, where=scope)))
            required = held >= required_share
            out.append(make(Rule(kind="required", field=path, value=required, source="", line=0, where=scope),
                            f"present and not null in {held:.1%} of the {s.sampled:,} sampled {s.label} documents"
                            + ("" if required else ": optional")))
    out.append(make(Rule(kind="shape", field=by, value=[encode(v) for v in values], source="", line=0), evidence))
    return out, ShapesDraft(by=by, values=values, evidence=evidence)


def shapes_yaml(draft: ShapesDraft, rules: list[Any], fields_yaml: Callable[[list[Any], int], list[str]],
                comment: Callable[[Any], str]) -> list[str]:
    """The ``shapes:`` section: the discriminator, then each shape with its fields (``fields_yaml``
    writes a list of drafted rules at a depth)."""
    shape_rule = next(d for d in rules if d.rule.kind == "shape")
    out = ["shapes:", f"  by: {_key(draft.by)}  # {comment(shape_rule)}"]
    for value in draft.values:
        scope = json.dumps({draft.by: encode(value)}, sort_keys=True)
        own = [d for d in rules if d.rule.kind != "shape" and json.dumps(d.rule.where, sort_keys=True) == scope]
        if own:
            out.append(f"  {_key(value)}:")
            out.append("    fields:")
            out.extend(fields_yaml(own, 3))
        else:
            out.append(f"  {_key(value)}: {{fields: {{}}}}")
    return out


def _key(value: Any) -> str:
    text = str(value)
    if isinstance(value, str) and (not text or text.lower() in _WORDS or text[0].isdigit()
                                   or not all(c.isalnum() or c in "._-" for c in text)):
        return json.dumps(text)
    return text
