"""A data contract: what its author declares must hold of one collection, rule by rule.

A ``Contract`` is parsed once (``argus.config.contracts``) from a file or an inline mapping and is
plain data: each ``Rule`` names its kind, its field (``(collection)`` for collection rules), its
value, an optional severity and ``where`` scope (Extended JSON), and the file and line it was
written at. ``required: false`` and ``unique: false`` are declarations, not checks: they steer
the inference (an optional field, no key) and are not counted as rules.

``ContractReport`` is what a report says about a contract: each rule with its result
(``passed``, ``failed`` with the exact count of documents breaking it, or ``unchecked`` with the
reason), so a user reads "14 rules, 13 passed, 1 failed", as ``soda scan`` prints it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Literal
from uuid import UUID

from pydantic import BaseModel, Field

from argus.agent.durations import format_duration
from argus.agent.findings import Category, Severity
from argus.agent.segments.models import SegmentOptions
from argus.agent.tools.formats import FORMATS

__all__ = [
    "CATEGORY",
    "COLLECTION",
    "CONTRACT_FORMATS",
    "SHAPE_KINDS",
    "Bound",
    "Contract",
    "ContractReport",
    "Reference",
    "Rule",
    "RuleKind",
    "RuleOutcome",
    "Threshold",
]

# The formats Argus knows (argus.agent.tools.formats) and phone numbers; all linear-time and valid in PCRE.
CONTRACT_FORMATS: dict[str, str] = {
    "email": FORMATS["email"],
    "url": FORMATS["url"],
    "uuid": FORMATS["uuid"],
    "iso_date": FORMATS["iso_date"],
    # an optional +, then 7 to 20 digits, each but the first after at most one separator
    "phone": r"^\+?[0-9]([ ().\/-]?[0-9]){6,19}$",
}

COLLECTION = "(collection)"  # the field of a collection rule's finding, as health findings name it

RuleKind = Literal["required", "unique", "type", "in", "min", "max", "format", "pattern", "max_length",
                   "max_null_share", "references", "documents", "freshness", "min_items", "max_items",
                   "unique_items", "required_fields", "additional_fields", "shape"]
SHAPE_KINDS = ("min_items", "max_items", "unique_items", "required_fields", "additional_fields")

CATEGORY: dict[str, Category] = {
    "required": Category.NULL_RATE,
    "max_null_share": Category.NULL_RATE,
    "unique": Category.DUPLICATE_VALUE,
    "type": Category.TYPE_MISMATCH,
    "in": Category.ENUM_VIOLATION,
    "min": Category.OUTLIER_VALUE,
    "max": Category.OUTLIER_VALUE,
    "format": Category.FORMAT_VIOLATION,
    "pattern": Category.FORMAT_VIOLATION,
    "max_length": Category.FORMAT_VIOLATION,
    "references": Category.ORPHAN_REFERENCE,
    "documents": Category.VOLUME_ANOMALY,
    "freshness": Category.FRESHNESS,
    # the shape of an array or an object: its length, its repeats, its keys
    **{kind: Category.SCHEMA_DRIFT for kind in SHAPE_KINDS},
    "shape": Category.SCHEMA_DRIFT,  # a document of a shape the contract does not declare
}


@dataclass(frozen=True)
class Bound:
    """A ``min`` or ``max``: a number, a date, or a time relative to the audit's clock (``now - 7d``)."""

    number: float | None = None
    date: datetime | None = None
    from_now: timedelta | None = None

    def at(self, now: datetime) -> float | datetime:
        if self.number is not None:
            return self.number
        if self.date is not None:
            return self.date
        assert self.from_now is not None
        return now + self.from_now

    @property
    def is_date(self) -> bool:
        return self.number is None

    def text(self) -> str:
        if self.number is not None:
            return f"{self.number:g}"
        if self.date is not None:
            return self.date.isoformat().replace("+00:00", "Z")
        assert self.from_now is not None
        seconds = self.from_now.total_seconds()
        if seconds == 0:
            return "now"
        return f"now {'+' if seconds > 0 else '-'} {format_duration(abs(self.from_now))}"


@dataclass(frozen=True)
class Reference:
    collection: str
    field: str

    def text(self) -> str:
        return f"{self.collection}.{self.field}"


@dataclass(frozen=True)
class Threshold:
    """``> 1%`` or ``>= 5``: a rule's count (or its share of the audited documents) past which it warns
    or fails."""

    op: Literal[">", ">="]
    amount: float
    share: bool = False

    def crossed(self, count: int, size: int) -> bool:
        value = (count / size if size else 0.0) if self.share else float(count)
        return value > self.amount if self.op == ">" else value >= self.amount

    def text(self) -> str:
        return f"{self.op} {self.amount * 100:g}%" if self.share else f"{self.op} {self.amount:g}"


@dataclass(frozen=True)
class Rule:
    """One declared rule. ``value`` by kind: bool (required, unique), a list of BSON type names
    (type), a list of Extended JSON values (in), a ``Bound`` (min, max), a format name (format), a
    regex (pattern), an int (max_length), a share 0..1 (max_null_share), a ``Reference``
    (references), ``(min, max)`` (documents) and ``(field, max_age)`` (freshness)."""

    kind: RuleKind
    field: str
    value: Any
    source: str
    line: int
    severity: Severity | None = None
    where: dict[str, Any] | None = None   # Extended JSON
    # Nested rules (``items:``, ``fields:``, ``one_of``): ``element`` judges each element of the array at
    # ``field``; ``arrays`` are the declared arrays of objects around it (outermost first), checked per
    # element; ``guards`` the (path, BSON type) a document must hold for the rule to speak of it (the
    # enclosing object, a one_of shape).
    element: bool = False
    arrays: tuple[str, ...] = ()
    guards: tuple[tuple[str, str], ...] = ()
    warn: Threshold | None = None          # None and no fail: any breaking document fails the rule
    fail: Threshold | None = None

    @property
    def id(self) -> str:
        """``contracts/sales.yaml:4 order_id unique``: where it is written and what it says."""
        return f"{self.source}:{self.line} {self.shown_field} {self.kind}"

    @property
    def shown_field(self) -> str:
        """``tags[]`` for a rule on each element of ``tags``."""
        return f"{self.field}[]" if self.element else self.field

    @property
    def slots(self) -> list[tuple[str, Category]]:
        """The (field, category) the rule decides, where Argus infers nothing: its own, and the keys
        ``required_fields`` names (their presence is declared)."""
        keys = [(f"{self.field}.{k}", Category.NULL_RATE) for k in self.value] if self.kind == "required_fields" else []
        return [(self.field, self.category), *keys]

    @property
    def nested(self) -> bool:
        return self.element or bool(self.arrays) or bool(self.guards) or self.kind in SHAPE_KINDS

    def outcome(self, count: int, size: int) -> Literal["passed", "warned", "failed"]:
        """What ``count`` breaking documents of ``size`` make of the rule: past ``fail`` failed, past
        ``warn`` warned; without thresholds any breaking document fails it."""
        if self.warn is None and self.fail is None:
            return "failed" if count else "passed"
        if self.fail is not None and self.fail.crossed(count, size):
            return "failed"
        if self.warn is not None and self.warn.crossed(count, size):
            return "warned"
        return "passed"

    @property
    def category(self) -> Category:
        return CATEGORY[self.kind]

    @property
    def is_check(self) -> bool:
        """False for declarations that only steer the inference (``required: false``, ``unique: false``)."""
        return not (self.kind in ("required", "unique") and self.value is False)

    @property
    def collection_rule(self) -> bool:
        return self.kind in ("documents", "freshness")

    def expectation(self, *, values: bool = True) -> str:
        """What the rule expects, in the contract's own words (cut when long). ``values=False`` (strict
        privacy) leaves out the literals a value list, a pattern or a ``where`` compares documents with."""
        value = self.value
        if self.kind in ("required", "unique"):
            text = self.kind if value else f"not {self.kind}"
        elif self.kind == "type":
            text = f"type {' or '.join(value)}"
        elif self.kind == "shape":
            text = f"one of the {len(value)} declared shapes by {self.field}" if not values else \
                f"a declared shape: {self.field} in [{', '.join(str(v) for v in value)}]"
        elif self.kind == "in" and not values:
            text = f"in a list of {len(value)} values"
        elif self.kind == "pattern" and not values:
            text = "a declared pattern"  # its literal text is the user's data, as a value list is
        elif self.kind == "in":
            shown = ", ".join(str(v) for v in value[:8]) + (f", … ({len(value)} values)" if len(value) > 8 else "")
            text = f"in [{shown}]"
        elif self.kind in ("min", "max"):
            text = f"{self.kind} {value.text()}"
        elif self.kind == "max_null_share":
            text = f"at most {value:.2%} null or missing"
        elif self.kind == "references":
            text = f"references {value.text()}"
        elif self.kind == "documents":
            low, high = value
            text = "documents " + " and ".join(p for p in (f">= {low:,}" if low is not None else "",
                                                           f"<= {high:,}" if high is not None else "") if p)
        elif self.kind == "freshness":
            text = f"newest {value[0]} at most {format_duration(value[1])} old"
        elif self.kind in ("min_items", "max_items"):
            text = f"{self.kind} {value}"
        elif self.kind == "unique_items":
            text = "no element repeated"
        elif self.kind == "required_fields":
            text = f"keys {', '.join(value)} present"
        elif self.kind == "additional_fields":
            text = f"no key but {', '.join(value)}" if value else "no key at all"
        else:
            text = f"{self.kind} {value}"
        if self.element:
            text = f"each element: {text}"
        if self.guards and self.guards[-1][0] == self.field and self.guards[-1][1] != "object":
            text += f" (when {self.guards[-1][1]})"
        if self.warn is not None or self.fail is not None:
            text += " (" + ", ".join(f"{name} {t.text()}" for name, t in (("warn", self.warn), ("fail", self.fail))
                                     if t is not None) + ")"
        if self.where:
            text += f" where {json.dumps(self.where, separators=(',', ':'))}" if values else " (scoped by where)"
        return text if len(text) <= 160 else text[:159] + "…"


@dataclass(frozen=True)
class Contract:
    """A parsed contract. ``source`` is how reports name it (the path as given, or
    ``schedules.yaml:12`` for an inline one); ``notes`` say what was not mapped (ODCS)."""

    source: str
    rules: tuple[Rule, ...]
    collection: str | None = None
    notes: tuple[str, ...] = field(default_factory=tuple)
    segments: SegmentOptions | None = None  # ``segments:`` of the contract: the run's, unless it names its own

    @property
    def checks(self) -> list[Rule]:
        return [r for r in self.rules if r.is_check]

    def declares(self, path: str, category: Category) -> list[Rule]:
        """The rules and declarations about ``path`` in ``category`` (which replace Argus's inference)."""
        return [r for r in self.rules if (path, category) in r.slots]


# unmatched: no document holds the rule's field, so nothing could break it (a misspelled field, most often)
# warned: broken past its ``warn`` threshold but within ``fail``; a warned rule never fails the audit
RuleOutcome = Literal["passed", "warned", "failed", "unchecked", "unmatched"]


class RuleResult(BaseModel):
    id: str = Field(description="file:line, field and rule, e.g. contracts/sales.yaml:4 order_id unique")
    source: str
    line: int
    field: str
    rule: str = Field(description="required, unique, type, in, min, max, format, pattern, max_length, "
                                  "max_null_share, references, documents, freshness, min_items, max_items, "
                                  "unique_items, required_fields, additional_fields or shape")
    expect: str = Field(description="what the rule expects, in the contract's words")
    category: Category
    severity: Severity | None = Field(None, description="as declared; None: by category and share")
    result: RuleOutcome
    count: int | None = Field(None, description="documents breaking the rule (exact), when it was checked")
    detail: str = Field("", description="why it failed or was not checked")
    finding_id: UUID | None = None


class ContractReport(BaseModel):
    source: str
    rules: list[RuleResult] = Field(default_factory=list)
    declared: list[str] = Field(default_factory=list, description="declarations that steer the inference "
                                                                  "(optional fields, fields that are no key)")
    warnings: list[str] = Field(default_factory=list, description="rules on fields the sample did not show, "
                                                                  "ODCS parts that do not map")

    def count(self, outcome: RuleOutcome) -> int:
        return sum(1 for r in self.rules if r.result == outcome)

    def warned_only(self) -> set[UUID]:
        """Findings that report warned rules and no failed one: they never fail the audit."""
        failed = {r.finding_id for r in self.rules if r.result == "failed"}
        return {r.finding_id for r in self.rules if r.result == "warned" and r.finding_id is not None
                and r.finding_id not in failed}

    def summary(self) -> str:
        """``14 rules, 13 passed, 1 failed`` (and how many were not checked)."""
        parts = [f"{len(self.rules)} rule{'s' if len(self.rules) != 1 else ''}", f"{self.count('passed')} passed",
                 *([f"{self.count('warned')} warned"] if self.count("warned") else []),
                 f"{self.count('failed')} failed"]
        if self.count("unchecked"):
            parts.append(f"{self.count('unchecked')} not checked")
        if self.count("unmatched"):
            parts.append(f"{self.count('unmatched')} unmatched (no document holds the field)")
        return ", ".join(parts)
