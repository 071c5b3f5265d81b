"""A contract as a MongoDB ``$jsonSchema`` validator for ``collMod``, so a team can move from
monitoring to enforcement; Argus never runs ``collMod`` itself.

Each per-document rule maps to the ``$jsonSchema`` keywords MongoDB accepts, with the same meaning
as the filter Argus counts it with (so "documents that would fail" is exactly the documents the
audit finds breaking those rules): ``type`` → ``bsonType`` (with ``null`` unless the field is
required: a type rule leaves nulls to ``required``), ``required`` → ``required`` on every enclosing
object and no ``null``, ``in`` → ``enum`` (with ``null`` unless required), ``min``/``max`` on numbers
→ ``minimum``/``maximum``, ``format``/``pattern`` → ``pattern``, ``max_length`` → ``maxLength``.
Paths inside arrays of objects go under ``items``. What a validator cannot hold is listed instead:
``unique`` (a unique index does it), ``references``, ``max_null_share``, the collection rules,
date bounds and rules scoped by ``where``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from argus.agent.contracts.model import CONTRACT_FORMATS, Contract, Rule

__all__ = ["JSON_SCHEMA_KEYWORDS", "Validator", "validator_for"]

# The keywords MongoDB's $jsonSchema accepts (draft 4 without $ref, $schema, default, definitions,
# format and id; with bsonType).
JSON_SCHEMA_KEYWORDS = frozenset({
    "bsonType", "type", "enum", "required", "properties", "additionalProperties", "patternProperties",
    "minProperties", "maxProperties", "dependencies", "items", "additionalItems", "minItems", "maxItems",
    "uniqueItems", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "minLength",
    "maxLength", "pattern", "allOf", "anyOf", "oneOf", "not", "title", "description"})


@dataclass
class Validator:
    schema: dict[str, Any]
    exported: list[Rule] = field(default_factory=list)   # rules the schema holds
    left_out: list[str] = field(default_factory=list)    # rules it cannot hold, and why

    def command(self, collection: str, *, action: str = "warn", level: str = "strict") -> dict[str, Any]:
        """The ``collMod`` command document (run it yourself, e.g. ``db.runCommand(...)`` in mongosh)."""
        return {"collMod": collection, "validator": {"$jsonSchema": self.schema}, "validationLevel": level,
                "validationAction": action}


def _node(root: dict[str, Any], path: str, arrays: frozenset[str]) -> dict[str, Any]:
    """The schema node of ``path``, creating its parents (``items`` below an array of objects)."""
    node = root
    parts = path.split(".")
    for i, part in enumerate(parts):
        node = node.setdefault("properties", {}).setdefault(part, {})
        if i < len(parts) - 1 and ".".join(parts[:i + 1]) in arrays:
            node = node.setdefault("items", {})
    return node


def _require(root: dict[str, Any], path: str, arrays: frozenset[str], within: str = "") -> None:
    """``path`` present and not null: required in its object, and each enclosing object required and
    an object (``{a.b: null}`` also matches a document without ``a``); below ``within`` (a declared
    object or array element the rule speaks of only when it is there) only in its own object."""
    node = root
    parts = path.split(".")
    for i, part in enumerate(parts):
        parent = ".".join(parts[:i])
        own = not within or parent == within or parent.startswith(within + ".")
        required = node.setdefault("required", []) if own else node.get("required", [])
        if own and part not in required:
            required.append(part)
        node = node.setdefault("properties", {}).setdefault(part, {})
        if i < len(parts) - 1:
            prefix = ".".join(parts[:i + 1])
            if prefix in arrays:
                node = node.setdefault("items", {})
            elif own:
                node["bsonType"] = "object"
    node["__required__"] = True


def validator_for(contract: Contract, *, arrays: frozenset[str] = frozenset()) -> Validator:
    """The ``$jsonSchema`` of ``contract``'s per-document rules. ``arrays``: paths holding arrays of
    objects (from the sample), whose fields are checked per element."""
    root: dict[str, Any] = {"bsonType": "object"}
    out = Validator(schema=root)
    sampled = arrays
    for rule in contract.checks:
        why = _not_exportable(rule, sampled)
        if why:
            out.left_out.append(f"{rule.id}: {why}")
            continue
        out.exported.append(rule)
        arrays = sampled | frozenset(rule.arrays)
        if rule.kind == "required" and not rule.element:
            enclosing = [p for p, _ in rule.guards if rule.field.startswith(p + ".")] + \
                [a for a in rule.arrays if rule.field.startswith(a + ".")]
            _require(root, rule.field, arrays, max(enclosing, key=len, default=""))
            continue
        node = _node(root, rule.field, arrays)
        if rule.element:
            node = node.setdefault("items", {})
        if rule.kind in _SHAPES:
            _shape(node, rule)
        elif rule.kind == "required":
            node["__required__"] = True
        elif rule.kind == "type":
            node["__types__"] = list(rule.value)
        elif rule.kind in ("in", "shape"):  # shape: the declared values of the discriminator
            node["__enum__"] = list(rule.value)
        elif rule.kind == "min":
            node["minimum"] = _number(rule.value.number)
        elif rule.kind == "max":
            node["maximum"] = _number(rule.value.number)
        elif rule.kind in ("format", "pattern"):
            if "pattern" in node:  # two patterns on one field: both must hold
                node.setdefault("allOf", []).append({"pattern": node.pop("pattern")})
                node["allOf"].append({"pattern": _pattern(rule)})
            else:
                node["pattern"] = _pattern(rule)
        elif rule.kind == "max_length":
            node["maxLength"] = rule.value
    _finish(root)
    return out


_SHAPES = ("min_items", "max_items", "unique_items", "required_fields", "additional_fields")


def _shape(node: dict[str, Any], rule: Rule) -> None:
    """An array's or an object's shape: each keyword judges only values of its type, as the rule's filter does."""
    if rule.kind == "min_items":
        node["minItems"] = rule.value
    elif rule.kind == "max_items":
        node["maxItems"] = rule.value
    elif rule.kind == "unique_items":
        node["uniqueItems"] = True
    elif rule.kind == "required_fields":
        node["required"] = list(dict.fromkeys([*node.get("required", []), *rule.value]))
    else:
        properties = node.setdefault("properties", {})
        for key in rule.value:
            properties.setdefault(key, {})
        node["additionalProperties"] = False


def _pattern(rule: Rule) -> str:
    return str(CONTRACT_FORMATS[rule.value] if rule.kind == "format" else rule.value)


def _number(value: float | None) -> int | float:
    assert value is not None
    return int(value) if float(value).is_integer() else value


def _not_exportable(rule: Rule, arrays: frozenset[str]) -> str | None:
    if rule.where:
        return "scoped by where: a validator judges every document alike"
    if rule.kind == "unique":
        return (f"uniqueness is an index, not a validator: createIndex({{\"{rule.field}\": 1}}, {{unique: true}}) "
                f"(it fails while duplicates exist)")
    if rule.kind == "references":
        return "a validator cannot read another collection"
    if rule.kind == "max_null_share":
        return "a share of the collection, not a property of one document"
    if rule.collection_rule:
        return "a property of the collection, not of one document"
    if rule.kind in ("min", "max") and rule.value.is_date:
        return "a date bound ($jsonSchema minimum and maximum compare numbers only)"
    if rule.kind == "in" and any(isinstance(v, dict) for v in rule.value):
        return "values of BSON types JSON cannot spell ($jsonSchema enum holds JSON values)"
    if rule.kind == "in" and rule.field in arrays and not rule.element:
        return "a field holding arrays (enum would judge the whole array)"
    if rule.kind in ("in", "type") and any(p == rule.field and t != "object" for p, t in rule.guards):
        return "a rule of one shape of one_of (a validator judges every value of the field alike)"
    return None


def _finish(node: dict[str, Any]) -> None:
    """Types, enums and nulls settled once every rule of a node is known."""
    required = node.pop("__required__", False)
    types = node.pop("__types__", None)
    enum = node.pop("__enum__", None)
    if types is not None:
        node["bsonType"] = types + ([] if required else ["null"]) if len(types) > 1 or not required else types[0]
    elif required and "bsonType" not in node:
        node["not"] = {"bsonType": "null"}
    if enum is not None:
        node["enum"] = enum + ([] if required else [None])
    for child in node.get("properties", {}).values():
        _finish(child)
    if isinstance(node.get("items"), dict):
        _finish(node["items"])
