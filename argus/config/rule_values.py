"""One rule's value as a contract states it, checked and normalised, and where its problems are.

Argus's own contract syntax (``contracts``) and the ODCS mapping (``odcs``) both read a rule's
value here, so a type name, a bound, a format or a reference means the same in either file and
every problem is reported the same way (file, line, key, the nearest valid word).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

from argus.agent.contracts.model import CONTRACT_FORMATS, Bound, Reference, RuleKind
from argus.agent.durations import parse_duration
from argus.agent.ejson import decode, encode
from argus.agent.errors import QueryRefused
from argus.agent.findings import Severity
from argus.agent.tools.guard import check_field_path
from argus.agent.tools.regex_cost import regex_problem
from argus.config.yaml_source import Lines, line_for, nearest, where

__all__ = ["BSON_TYPES", "Problems", "bson_types", "rule_value", "severity_of"]

# BSON type names as $type takes them; `number` is MongoDB's own alias for the four numeric types.
BSON_TYPES = ("string", "int", "long", "double", "decimal", "number", "bool", "date", "objectId", "object", "array",
              "null", "binData", "timestamp", "regex")
_TYPE_ALIASES = {"integer": "int", "boolean": "bool", "float": "double", "str": "string", "datetime": "date",
                 "objectid": "objectId", "oid": "objectId", "dict": "object", "list": "array"}
_FORMAT_ALIASES = {"uri": "url", "date": "iso_date", "iso-date": "iso_date", "isodate": "iso_date",
                   "e-mail": "email", "telephone": "phone"}
_MAX_ITEMS = 1_000_000  # more elements than a 16 MB document holds
_MAX_LENGTH = 65_534  # a regex repeat ({n}) is bounded by 65,535 in PCRE
_NOW = re.compile(r"^\s*now\s*(?:([+-])\s*(.+?))?\s*$", re.IGNORECASE)


class Problems:
    """Collects every problem of one contract, each at its file and line."""

    def __init__(self, file: Path | str, lines: Lines, base: tuple[Any, ...]) -> None:
        self.file, self.lines, self.base = file, lines, base
        self.items: list[str] = []

    def add(self, loc: tuple[Any, ...], message: str, *, key: bool = False) -> None:
        full = (*self.base, *loc)
        self.items.append(f"{self.file}:{line_for(full, self.lines, key=key)} {where(full)}: {message}")

    def line(self, loc: tuple[Any, ...]) -> int:
        return line_for((*self.base, *loc), self.lines, key=True)


def rule_value(kind: RuleKind, value: Any, loc: tuple[Any, ...], problems: Problems) -> Any:
    """The rule's value checked and normalised, or None after recording the problem."""
    if kind in ("required", "unique", "unique_items"):
        if isinstance(value, bool):
            return value
        problems.add(loc, f"{kind} is true or false")
    elif kind in ("min_items", "max_items"):
        low = 1 if kind == "min_items" else 0
        if isinstance(value, int) and not isinstance(value, bool) and low <= value <= _MAX_ITEMS:
            return value
        problems.add(loc, f"{kind} is a whole number of elements from {low} to {_MAX_ITEMS:,}"
                          + (" (every array has at least 0)" if value == 0 else ""))
    elif kind == "type":
        return bson_types(value, loc, problems)
    elif kind == "in":
        if isinstance(value, list) and value:
            try:
                return [encode(decode(_plain(v))) for v in value]
            except (ValueError, TypeError, QueryRefused):
                problems.add(loc, "a value of the list is not valid Extended JSON")
                return None
        problems.add(loc, "in is a non-empty list of the allowed values, e.g. [pending, paid]")
    elif kind in ("min", "max"):
        return _bound(value, loc, problems)
    elif kind == "format":
        name = _FORMAT_ALIASES.get(str(value).lower(), str(value).lower()) if isinstance(value, str) else None
        if name in CONTRACT_FORMATS:
            return name
        problems.add(loc, f"{value!r} is not a format Argus knows" + nearest(str(value), CONTRACT_FORMATS)
                     + "; write a pattern for any other")
    elif kind == "pattern":
        if not isinstance(value, str) or not value:
            problems.add(loc, "pattern is a regular expression, e.g. '^ORD-[0-9]+$'")
            return None
        problem = regex_problem(value)
        if problem:
            problems.add(loc, f"the pattern is refused: {problem}")
            return None
        return value
    elif kind == "max_length":
        if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= _MAX_LENGTH:
            return value
        problems.add(loc, f"max_length is a whole number of characters from 0 to {_MAX_LENGTH:,}")
    elif kind == "max_null_share":
        if isinstance(value, int | float) and not isinstance(value, bool) and 0 <= value <= 1:
            return float(value)
        problems.add(loc, "max_null_share is a share from 0 to 1 (0.05 for 5%)")
    elif kind == "references":
        return _reference(value, loc, problems)
    return None


def _plain(value: Any) -> Any:
    """A YAML scalar as Extended JSON takes it: a bare YAML date is a UTC midnight."""
    if isinstance(value, datetime):
        return {"$date": (value if value.tzinfo else value.replace(tzinfo=UTC)).isoformat()}
    if isinstance(value, date):
        return {"$date": f"{value.isoformat()}T00:00:00Z"}
    return value


def bson_types(value: Any, loc: tuple[Any, ...], problems: Problems) -> list[str] | None:
    """A ``type`` rule's names as ``$type`` takes them (aliases such as ``integer`` read), or None
    after recording the problem."""
    names = value if isinstance(value, list) else [value]
    out: list[str] = []
    for name in names:
        if not isinstance(name, str):
            problems.add(loc, "type is a BSON type name or a list of them (string, int, double, number, date, ...)")
            return None
        canonical = next((t for t in BSON_TYPES if t.lower() == name.lower()), None) \
            or _TYPE_ALIASES.get(name.lower())
        if canonical is None:
            problems.add(loc, f"{name!r} is not a BSON type" + nearest(name, BSON_TYPES))
            return None
        if canonical not in out:
            out.append(canonical)
    if not out:
        problems.add(loc, "type needs at least one BSON type name")
        return None
    return out


def _bound(value: Any, loc: tuple[Any, ...], problems: Problems) -> Bound | None:
    if isinstance(value, bool):
        pass
    elif isinstance(value, int | float):
        if math.isfinite(value):
            return Bound(number=float(value))
    elif isinstance(value, datetime):
        return Bound(date=value if value.tzinfo else value.replace(tzinfo=UTC))
    elif isinstance(value, date):
        return Bound(date=datetime(value.year, value.month, value.day, tzinfo=UTC))
    elif isinstance(value, str):
        relative = _NOW.match(value)
        if relative:
            sign, amount = relative.groups()
            if amount is None:
                return Bound(from_now=timedelta(0))
            try:
                offset = parse_duration(amount)
            except ValueError as exc:
                problems.add(loc, str(exc))
                return None
            return Bound(from_now=offset if sign == "+" else -offset)
        try:
            parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            pass
        else:
            return Bound(date=parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC))
    problems.add(loc, f"{value!r} is no bound: give a number, a date (2024-01-01) or a time from now "
                      f"(now, now - 7d)")
    return None


def _reference(value: Any, loc: tuple[Any, ...], problems: Problems) -> Reference | None:
    if isinstance(value, Mapping) and isinstance(value.get("collection"), str) and isinstance(value.get("field"), str):
        collection, path = value["collection"], value["field"]
        shown = collection
    elif isinstance(value, str) and "." in value.strip(". "):
        collection, _, path = value.partition(".")
        shown = value
    else:
        problems.add(loc, "references is collection.field, e.g. customers.customer_id (or {collection: ..., "
                          "field: ...} when the collection's name holds a dot)")
        return None
    if _elsewhere(collection, path):
        problems.add(loc, f"{shown!r} names a system collection or another database: references stay within the "
                          f"audited database (collection.field, e.g. customers.customer_id)")
        return None
    try:
        check_field_path(path)
    except QueryRefused:
        problems.add(loc, f"{path!r} is not a field path of {collection!r}")
        return None
    if not collection or collection.startswith("system.") or "$" in collection:
        problems.add(loc, f"{collection!r} is not a collection Argus may read")
        return None
    return Reference(collection, path)


_DATABASES = ("admin", "local", "config")  # MongoDB's own databases: never a collection a contract means


def _elsewhere(collection: str, path: str) -> bool:
    """Whether a reference reaches past the audited database: a ``system.*`` collection anywhere in the
    name (``admin.system.users`` reads as collection ``admin``, field ``system.users``) or a qualifier
    naming one of MongoDB's own databases (``admin.users``, ``{collection: local.oplog.rs}``)."""
    names = collection.split(".")
    return "system" in names or path.startswith("system.") or names[0] in _DATABASES


def severity_of(value: Any, loc: tuple[Any, ...], problems: Problems) -> Severity | None:
    if value is None:
        return None
    try:
        return Severity(str(value).lower())
    except ValueError:
        problems.add(loc, f"{value!r} is not a severity" + nearest(str(value), [s.value for s in Severity]))
        return None
