"""Contract files: Argus's own short syntax, or the Open Data Contract Standard (bitol ODCS v3).

Argus's syntax, for people who write SodaCL checks or dbt tests::

    fields:
      order_id: {required: true, unique: true, type: string, pattern: '^ORD-[0-9]+$'}
      status:   {in: [pending, paid, shipped, cancelled]}
      total:    {type: number, min: 0}
      shipped_at:
        required: {where: {status: shipped}, severity: critical}
        max: now
      customer_id: {references: customers.customer_id}
    documents: {min: 1}
    freshness: {field: created_at, max_age: 24h}

A rule is written short (``rule: value``) or long (``rule: {value: ..., severity: ..., where: ...}``;
``values`` for ``in``, ``to`` for ``references``); ``severity`` and ``where`` beside a field's rules
apply to all of them. Every problem is reported at once, each naming the file, the line and the
key, with the nearest valid key or type when one is close: ``contracts/sales.yaml:4
fields.order_id.uniqe: unknown rule (did you mean 'unique'?)``. A ``pattern`` is judged by the
read-only guard's regex check when the file is read, not when the query is sent.

A file with ``kind: DataContract`` (or ``apiVersion`` and ``schema``) is read as ODCS: see
``odcs`` for what maps; what does not is kept as a note the report shows.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from argus.agent.contracts.compile import rule_filters
from argus.agent.contracts.model import Contract, Rule, RuleKind, Threshold
from argus.agent.durations import parse_duration
from argus.agent.ejson import decode, encode
from argus.agent.errors import QueryRefused
from argus.agent.findings import Severity
from argus.agent.segments.models import SegmentOptions
from argus.agent.tools.guard import check_field_path, check_filter
from argus.config.contract_shapes import NESTING_KEYS, THRESHOLD_KEYS, TOP, Within, nested, thresholds
from argus.config.declared_shapes import shape_rules
from argus.config.odcs import odcs_rules
from argus.config.rule_values import Problems, bson_types, rule_value, severity_of
from argus.config.yaml_source import Lines, YamlError, nearest, problem_order, read_yaml, where

__all__ = ["ContractError", "contract_digest", "load_contract", "parse_contract"]


class ContractError(YamlError):
    """A contract is invalid; ``problems`` holds one ``file:line key: message`` per problem."""


_RULES: tuple[RuleKind, ...] = ("required", "unique", "type", "in", "min", "max", "format", "pattern", "max_length",
                                "max_null_share", "references", "min_items", "max_items", "unique_items")
_FIELD_KEYS = (*_RULES, *NESTING_KEYS, *THRESHOLD_KEYS, "severity", "where", "description")
_LONG_KEYS = ("value", "values", "to", "severity", "where", "description", *THRESHOLD_KEYS)
_TOP_KEYS = ("collection", "description", "fields", "shapes", "documents", "freshness", "segments")


def load_contract(path: str | Path, *, shown_as: str | None = None, collection: str | None = None) -> Contract:
    """Read and validate a contract file; raise ``ContractError`` listing every problem. ``shown_as``
    is how reports name it (default: the path as given); ``collection`` picks the object of an ODCS
    contract that describes several."""
    file = Path(path)
    try:
        raw = _read(file)
    except OSError as exc:
        raise ContractError([f"{file}: cannot read the contract: {exc.strerror}"]) from None
    if len(raw) > MAX_CONTRACT_BYTES:
        raise ContractError([f"{file}:1: the contract is over {MAX_CONTRACT_BYTES // 1024 // 1024} MiB, more than "
                             f"any contract needs; refused"])
    try:
        document = read_yaml(file, raw)
    except YamlError as exc:
        raise ContractError(exc.problems) from None
    return parse_contract(document.data, file=file, lines=document.lines, source=shown_as or str(path),
                          collection=collection)


def contract_digest(path: str | Path) -> str:
    """A digest of a contract file's bytes ('' when it cannot be read): reloads compare it."""
    try:
        return hashlib.sha256(_read(Path(path))).hexdigest()
    except OSError:
        return ""


MAX_CONTRACT_BYTES = 1024 * 1024  # a contract of a thousand rules takes about 100 KB


def _read(file: Path) -> bytes:
    """At most one byte more than a contract may hold: a huge file is refused, not read into memory."""
    with file.open("rb") as handle:
        return handle.read(MAX_CONTRACT_BYTES + 1)


def parse_contract(data: Any, *, file: Path | str, lines: Lines, source: str, base: tuple[Any, ...] = (),
                   collection: str | None = None) -> Contract:
    """A contract from parsed YAML ``data`` located by ``lines`` under ``base`` (inline in
    schedules.yaml: ``("schedules", 2, "contract")``); raise ``ContractError`` listing every problem."""
    problems = Problems(file, lines, base)
    if not isinstance(data, Mapping):
        problems.add((), "a contract is a mapping with fields (and documents, freshness), or an ODCS "
                         "DataContract")
        raise ContractError(problems.items)
    if data.get("kind") == "DataContract" or ("apiVersion" in data and "schema" in data):
        rules, notes, name = odcs_rules(data, problems=problems, collection=collection)
    else:
        rules, notes, name = _native(data, problems), [], data.get("collection")
    segments = _segments(data.get("segments"), problems) if isinstance(data, Mapping) else None
    if not rules and segments is None and not problems.items:
        problems.add((), "the contract declares no rule (give fields, documents or freshness)")
    for rule in rules:
        _judge_on_the_wire(rule, problems)
    if problems.items:
        raise ContractError(sorted(set(problems.items), key=problem_order))
    return Contract(source=source, rules=tuple(replace(r, source=source) for r in rules),
                    collection=name if isinstance(name, str) else None, notes=tuple(notes), segments=segments)


def _segments(spec: Any, problems: Problems) -> SegmentOptions | None:
    """``segments: {by: tenant, top: 50}`` (or ``segments: tenant``): the run's, unless its schedule names its own."""
    if spec is None:
        return None
    try:
        return SegmentOptions.model_validate({"by": spec} if isinstance(spec, str | list) else spec)
    except ValidationError as exc:
        for err in exc.errors():
            loc = ("segments", *(p for p in err["loc"] if isinstance(p, str)))
            message = "unknown key" + nearest(str(err["loc"][-1]), list(SegmentOptions.model_fields)) \
                if err["type"] == "extra_forbidden" else str(err["msg"]).removeprefix("Value error, ")
            problems.add(loc, message, key=err["type"] == "extra_forbidden")
        return None


# --- Argus's syntax ---------------------------------------------------------------------------

# Any instant will do: the guard judges operators and values, not how far back a bound reaches.
_JUDGED_AT = datetime(2000, 1, 1, tzinfo=UTC)


def _judge_on_the_wire(rule: Rule, problems: Problems) -> None:
    """Refuse, at the rule's line, a rule whose filters the guard would refuse when the audit sends them
    (an unpaired surrogate or an integer beyond int64 in ``in``, a NUL in a pattern): the audit would
    otherwise end, or leave the rule unchecked."""
    for query in rule_filters(rule, _JUDGED_AT):
        try:
            check_filter(query, where=f"the {rule.kind} rule")
        except QueryRefused as exc:
            loc = ("fields", rule.field, rule.kind) if not rule.collection_rule else (rule.kind,)
            problems.items.append(f"{problems.file}:{rule.line} {where((*problems.base, *loc))}: {exc}")
            return


def _native(data: Mapping[str, Any], problems: Problems) -> list[Rule]:
    rules: list[Rule] = []
    for key in data:
        if key not in _TOP_KEYS:
            problems.add((key,), "unknown key" + nearest(str(key), _TOP_KEYS), key=True)
    if "collection" in data and not isinstance(data["collection"], str):
        problems.add(("collection",), "the collection's name is a string")
    fields = data.get("fields") or {}
    if not isinstance(fields, Mapping):
        problems.add(("fields",), "fields is a mapping of field paths (dot notation) to their rules")
        fields = {}
    for path, spec in fields.items():
        rules.extend(_field(str(path), spec, problems))
    if "shapes" in data:
        rules.extend(shape_rules(data["shapes"], problems, field=_field, severity=severity_of))
    if "documents" in data:
        rules.extend(_documents(data["documents"], problems))
    if "freshness" in data:
        rules.extend(_freshness(data["freshness"], problems))
    return rules


def _field(path: str, spec: Any, problems: Problems, *, loc: tuple[Any, ...] | None = None,
           within: Within = TOP) -> list[Rule]:
    """A field's rules; ``loc`` and ``within`` place a nested field (``items:``, ``fields:``, ``one_of``)."""
    loc = ("fields", path) if loc is None else loc
    try:
        check_field_path(path)
    except QueryRefused:
        problems.add(loc, "not a field path (dot notation such as customer.email, no '$', no empty part)", key=True)
        return []
    if not isinstance(spec, Mapping) or not spec:
        problems.add(loc, "give the field's rules as a mapping, e.g. {required: true, type: string}")
        return []
    severity = severity_of(spec.get("severity"), (*loc, "severity"), problems)
    scope = _where(spec.get("where"), (*loc, "where"), problems)
    limits = thresholds(spec, loc, problems)
    rules: list[Rule] = []
    for key, raw in spec.items():
        if key in ("severity", "where", "description", *THRESHOLD_KEYS):
            continue
        if key in NESTING_KEYS:
            rules.extend(nested(key, path, spec, loc, problems, within, field=_field, types=bson_types,
                                line=problems.line((*loc, key))))
            continue
        if key not in _RULES:
            problems.add((*loc, key), "unknown rule" + nearest(str(key), _FIELD_KEYS), key=True)
            continue
        rule = _rule(key, path, raw, (*loc, key), problems, severity, scope, limits)
        rule = within.place(rule, (*loc, key), problems) if rule is not None else None
        if rule is not None:
            rules.append(rule)
    own = [r for r in rules if r.field == path and r.element == within.element]
    kinds = {r.kind: r for r in own}
    if "min_items" in kinds and "max_items" in kinds and kinds["min_items"].value > kinds["max_items"].value:
        problems.add((*loc, "min_items"), f"min_items {kinds['min_items'].value} is above max_items "
                                          f"{kinds['max_items'].value}")
    if "min" in kinds and "max" in kinds and kinds["min"].where == kinds["max"].where:
        low, high = kinds["min"].value, kinds["max"].value
        if low.number is not None and high.number is not None and low.number > high.number:
            problems.add((*loc, "min"), f"min {low.text()} is above max {high.text()}")
    if kinds.get("required") is not None and kinds["required"].value is True and "max_null_share" in kinds:
        problems.add((*loc, "max_null_share"), "a required field has no nulls to share; drop one of the two")
    return rules


def _rule(kind: RuleKind, path: str, raw: Any, loc: tuple[Any, ...], problems: Problems,
          severity: Severity | None, scope: dict[str, Any] | None,
          limits: tuple[Threshold | None, Threshold | None] = (None, None)) -> Rule | None:
    """One rule, short (``unique: true``) or long (``unique: {value: true, severity: high}``)."""
    value = raw
    line = problems.line(loc)
    if isinstance(raw, Mapping) and not (kind == "references" and {"collection", "field"} >= set(raw)
                                         and "collection" in raw):
        for key in raw:
            if key not in _LONG_KEYS:
                problems.add((*loc, key), "unknown key" + nearest(str(key), _LONG_KEYS), key=True)
        given = [k for k in ("value", "values", "to") if k in raw]
        if len(given) > 1:
            problems.add(loc, f"give the rule's value once ({' or '.join(given)})")
        severity = severity_of(raw["severity"], (*loc, "severity"), problems) if "severity" in raw else severity
        scope = _where(raw["where"], (*loc, "where"), problems) if "where" in raw else scope
        if any(k in raw for k in THRESHOLD_KEYS):
            limits = thresholds(raw, loc, problems)
        if given:
            value, loc = raw[given[0]], (*loc, given[0])
        elif kind == "required":
            value = True  # required: {where: {status: shipped}} reads as "required where ..."
        else:
            problems.add(loc, f"the long form of {kind} needs its value: {kind}: {{value: ..., severity: ...}}")
            return None
    parsed = rule_value(kind, value, loc, problems)
    if parsed is None:
        return None
    if kind == "unique_items" and parsed is False:
        return None  # the default: an array may repeat a value
    warn, fail = limits
    if (warn is not None or fail is not None) and (kind == "max_null_share" or parsed is False):
        problems.add(loc, f"{kind} {'is a threshold itself' if kind == 'max_null_share' else 'false checks nothing'}"
                          f": warn and fail do not apply to it")
        warn = fail = None
    return Rule(kind=kind, field=path, value=parsed, source="", line=line, severity=severity, where=scope,
                warn=warn, fail=fail)


def _where(value: Any, loc: tuple[Any, ...], problems: Problems) -> dict[str, Any] | None:
    """A rule's scope: a read-only filter (Extended JSON), judged by the guard like every other."""
    if value is None:
        return None
    if not isinstance(value, Mapping) or not value:
        problems.add(loc, "where is a MongoDB filter, e.g. {status: shipped}")
        return None
    try:
        decoded = decode(dict(value))
        check_filter(decoded, where="where")
    except QueryRefused as exc:
        problems.add(loc, str(exc))
        return None
    except (ValueError, TypeError) as exc:
        problems.add(loc, f"where is not valid Extended JSON ({type(exc).__name__})")
        return None
    encoded: dict[str, Any] = encode(decoded)
    return encoded


def _documents(value: Any, problems: Problems) -> list[Rule]:
    loc: tuple[Any, ...] = ("documents",)
    if not isinstance(value, Mapping):
        problems.add(loc, "documents is {min: N, max: N}")
        return []
    for key in value:
        if key not in ("min", "max", "severity", "where", "description"):
            problems.add((*loc, key), "unknown key" + nearest(str(key), ("min", "max", "severity", "where")), key=True)
    bounds: list[int | None] = []
    for key in ("min", "max"):
        given = value.get(key)
        if given is not None and (not isinstance(given, int) or isinstance(given, bool) or given < 0):
            problems.add((*loc, key), f"documents {key} is a whole number of documents")
            given = None
        bounds.append(given)
    low, high = bounds
    if low is None and high is None:
        problems.add(loc, "documents needs min, max or both")
        return []
    if low is not None and high is not None and low > high:
        problems.add((*loc, "min"), f"min {low:,} is above max {high:,}")
    return [Rule(kind="documents", field="(collection)", value=(low, high), source="", line=problems.line(loc),
                 severity=severity_of(value.get("severity"), (*loc, "severity"), problems),
                 where=_where(value.get("where"), (*loc, "where"), problems))]


def _freshness(value: Any, problems: Problems) -> list[Rule]:
    loc: tuple[Any, ...] = ("freshness",)
    if not isinstance(value, Mapping):
        problems.add(loc, "freshness is {field: created_at, max_age: 24h}")
        return []
    for key in value:
        if key not in ("field", "max_age", "severity", "where", "description"):
            problems.add((*loc, key), "unknown key" + nearest(str(key), ("field", "max_age", "severity", "where")),
                         key=True)
    path = value.get("field")
    try:
        check_field_path(str(path))
    except QueryRefused:
        problems.add((*loc, "field"), "freshness needs the field that records when a document arrived "
                                      "(field: created_at)")
        return []
    try:
        age = parse_duration(value.get("max_age"))
    except ValueError as exc:
        problems.add((*loc, "max_age"), f"max_age: {exc}")
        return []
    if age <= timedelta(0):
        problems.add((*loc, "max_age"), "max_age must be longer than zero")
        return []
    return [Rule(kind="freshness", field="(collection)", value=(str(path), age), source="", line=problems.line(loc),
                 severity=severity_of(value.get("severity"), (*loc, "severity"), problems),
                 where=_where(value.get("where"), (*loc, "where"), problems))]
