"""What document values may leave a run, by privacy mode: the one boundary reports, traces,
stored runs, ``/runs``, alerts and prompts pass through.

``strict``: no document value at all, only kinds and counts. ``shapes`` (default): a free-form
value is replaced by its shape (``Zoe.12@mail.org`` → ``Aa+.9+@a+.a+``), numbers by their
magnitude; the vocabulary of categorical fields appears as itself (see ``categorical_values``).
``full``: raw values.

Masking changes document values only. In a query (an evidence query, a traced filter) operators,
field names, regular expressions, ``$type``/``$exists``/``$size``, numeric and date range bounds
and the constants Argus itself looks for (null, booleans, 0, NaN, ±Infinity, the Unix epoch, the
empty string) stay; a literal compared for equality or membership (``$eq``, ``$ne``, ``$in``,
``$nin``, ``$all``, ``{field: value}``) or a string bound becomes ``{"$masked": "<what it was>"}``
(its kind in ``strict``, its shape in ``shapes``). The marker cannot be mistaken for a value, and
a masked query is never replayed (see ``has_masked``).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from argus.agent.ejson import decode
from argus.agent.findings import FailingDocument, FailingDocuments, Finding
from argus.agent.options import PrivacyMode
from argus.agent.report import TraceEntry
from argus.agent.tools.models import SchemaSampleResult
from argus.agent.tools.profiling import shape_of

__all__ = [
    "CATEGORICAL_MAX",
    "CATEGORICAL_SHARE",
    "MASKED",
    "QUERY_KEYS",
    "Masker",
    "categorical_values",
    "has_masked",
    "identifier_like",
    "json_kind",
    "mask_query",
    "mask_value",
]

CATEGORICAL_MAX = 20
CATEGORICAL_SHARE = 0.25
MASKED = "$masked"


def _magnitude(number: float) -> str:
    if math.isnan(number) or math.isinf(number):
        return str(number)
    if number == 0:
        return "0"
    sign = "-" if number < 0 else ""
    digits = len(str(int(abs(number)))) if abs(number) >= 1 else 0
    return f"{sign}<1" if digits == 0 else f"{sign}{digits}-digit number"


def mask_value(value: Any, *, mode: PrivacyMode) -> Any:
    """One value as ``mode`` lets it be written (the vocabulary check is the caller's: ``Masker``)."""
    if mode == "full":
        return value
    if mode == "strict":
        return None
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int | float):
        return _magnitude(float(value))
    if isinstance(value, str):
        return f"shape:{shape_of(value)}"
    if isinstance(value, dict) and len(value) == 1:
        (key, _inner), = value.items()
        return f"<{key.lstrip('$')}>"  # an Extended JSON scalar such as {"$date": ...}
    return f"<{type(value).__name__}>"


# Operators whose operands are values taken from documents (``$in`` of duplicated keys, say);
# range bounds, regexes, types and sizes describe the rule, not a document, and stay.
_VALUE_OPERATORS = frozenset({"$eq", "$ne", "$in", "$nin", "$all"})
_RANGE_OPERATORS = frozenset({"$gt", "$gte", "$lt", "$lte"})
# Operands that are part of the question, not data: kept in every mode.
_SAFE_OPERANDS = frozenset({"$type", "$exists", "$size", "$options"})
# In a written query, regular expressions are patterns Argus learned from shapes (or a planner's rule).
_KEPT_OPERANDS = _SAFE_OPERANDS | {"$regex", "$mod", MASKED}
_LIST_MAX = 5
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def _argus_constant(value: Any) -> bool:
    """A literal Argus looks for itself (a placeholder, a sentinel), not a value from a document."""
    try:
        value = decode(value)
    except (TypeError, ValueError):
        return False
    if value is None or isinstance(value, bool) or value == "":
        return True
    if isinstance(value, int | float):
        return value == 0 or math.isnan(value) or math.isinf(value)
    if isinstance(value, datetime):
        return (value if value.tzinfo else value.replace(tzinfo=UTC)) == _EPOCH
    return False


def mask_query(query: Any, *, mode: PrivacyMode,
               categorical: Mapping[str, frozenset[Any]] | None = None) -> tuple[Any, bool]:
    """An Extended JSON query fit to be written under ``mode``, and whether anything was masked.

    ``full`` returns it as it is. Otherwise each document value becomes ``{"$masked": ...}``
    (see the module docstring); in ``shapes`` a string of a categorical field's vocabulary stays.
    A list of values with anything masked is cut to a few items and a count of the rest.
    Already masked parts pass unchanged, so masking twice is masking once."""
    if mode == "full":
        return query, False
    vocabulary = categorical or {}
    masked = [False]

    def literal(path: str | None, value: Any) -> Any:
        if _argus_constant(value):
            return value
        if mode == "shapes" and isinstance(value, str) and path is not None and value in vocabulary.get(path, ()):
            return value
        masked[0] = True
        if mode == "strict":
            return {MASKED: json_kind(value)}
        return {MASKED: mask_value(value, mode="shapes")}

    def values(path: str | None, operand: Any) -> Any:
        if isinstance(operand, list):
            out = [values(path, v) for v in operand]
            already = any(isinstance(v, dict) and MASKED in v for v in operand)  # cut once only
            if len(out) > _LIST_MAX and not already and any(isinstance(v, dict) and MASKED in v for v in out):
                out = [*out[:_LIST_MAX], {MASKED: f"{len(out) - _LIST_MAX} more"}]
            return out
        if isinstance(operand, dict) and MASKED in operand:
            return operand
        if isinstance(operand, dict) and not _is_scalar(operand) and any(k.startswith("$") for k in operand):
            return walk(operand, path)
        return literal(path, operand)

    def expression(node: Any) -> Any:
        """Inside ``$expr``: ``"$field"`` references and numbers stay, other strings are values."""
        if isinstance(node, list):
            return [expression(v) for v in node]
        if isinstance(node, dict):
            if MASKED in node:
                return node
            if _is_scalar(node):
                return literal(None, node)
            return {k: expression(v) for k, v in node.items()}
        if isinstance(node, str) and not node.startswith("$"):
            return literal(None, node)
        return node

    def walk(node: Any, path: str | None = None) -> Any:
        if isinstance(node, list):
            return [walk(v, path) for v in node]
        if not isinstance(node, dict):
            return literal(path, node)
        if _is_scalar(node):  # a BSON regex is a pattern (kept); a date, an id, a number is a value
            return node if "$regularExpression" in node else literal(path, node)
        out: dict[str, Any] = {}
        for key, value in node.items():
            if key == "$regex" and mode == "strict" and isinstance(value, str) and _literal_text(value):
                masked[0] = True
                out[key] = {MASKED: "pattern"}  # a declared pattern's literal text is the user's data
            elif key in _KEPT_OPERANDS:
                out[key] = value
            elif key in _VALUE_OPERATORS:
                out[key] = values(path, value)
            elif key in _RANGE_OPERATORS:
                out[key] = literal(path, value) if isinstance(value, str) else value
            elif key == "$expr":
                out[key] = expression(value)
            elif key.startswith("$"):
                out[key] = walk(value, path)  # $and, $or, $nor, $not, $elemMatch: same field, or fields inside
            else:
                out[key] = values(key, value)  # {field: literal} is an implicit $eq
        return out

    return walk(query), masked[0]


# What of a regular expression is syntax, not text: escapes, character classes, counted repeats, group heads.
_REGEX_SYNTAX = re.compile(r"\\.|\[(?:\\.|[^\]])*\]|\{\d*,?\d*\}|\(\?(?:P?<[^>]*>|[A-Za-z]*[:)=!]|<[=!])?")


def _literal_text(pattern: str) -> bool:
    """The pattern spells out letters or digits (``^ORD-[0-9]+$``), not only a shape (``^[A-Z]+-[0-9]+$``)."""
    return re.search(r"[A-Za-z0-9]", _REGEX_SYNTAX.sub("", pattern)) is not None


def _generated_key(value: Any) -> bool:
    """An Extended JSON ObjectId or UUID: a key the database or the application generated."""
    if not isinstance(value, dict) or len(value) != 1:
        return False
    if "$oid" in value or "$uuid" in value:
        return True
    binary = value.get("$binary")
    return isinstance(binary, dict) and binary.get("subType") in ("03", "04")


def has_masked(query: Any) -> bool:
    """The query had document values masked out of it: it no longer selects what it did."""
    if isinstance(query, dict):
        return MASKED in query or any(has_masked(v) for v in query.values())
    if isinstance(query, list):
        return any(has_masked(v) for v in query)
    return False


def _is_scalar(value: dict[str, Any]) -> bool:
    """An Extended JSON scalar such as ``{"$date": ...}`` or ``{"$oid": ...}``."""
    return len(value) == 1 and next(iter(value)) in {"$date", "$oid", "$numberDecimal", "$numberLong",
                                                     "$numberInt", "$numberDouble", "$binary", "$uuid",
                                                     "$regularExpression", "$timestamp"}


_TEXT_LIMIT = 80
_DIGITS = re.compile(r"\d")


def identifier_like(value: str) -> bool:
    """A value that names a person or a thing rather than a category: four or more digits (card
    numbers, phones, SSNs, ids, dates), an ``@`` (emails, handles), or more than 40 characters."""
    return len(_DIGITS.findall(value)) >= 4 or "@" in value or len(value) > 40


def categorical_values(schema: SchemaSampleResult | None) -> dict[str, frozenset[Any]]:
    """Values that may appear as themselves in ``shapes`` mode, per field: the sampled strings of a
    field whose strings form a small vocabulary relative to the sample, minus identifier-like ones.

    A field qualifies when strings are at least 90% of its values, the sample shows at most
    ``CATEGORICAL_MAX`` distinct strings, and no more than ``CATEGORICAL_SHARE`` of the sampled
    strings are distinct (each value repeats four times on average), so 18 documents with 18
    card numbers are not a vocabulary. A value the sample missed is masked like any free-form
    value, and so is text in a field of numbers (``12 oz`` among ounces)."""
    if schema is None:
        return {}
    out: dict[str, frozenset[Any]] = {}
    for f in schema.fields:
        s = f.strings
        if s is None or f.cardinality_capped or s.distinct_count > CATEGORICAL_MAX \
                or s.distinct_count > CATEGORICAL_SHARE * s.count or s.count < 0.9 * sum(f.non_null_types.values()):
            continue
        out[f.path] = frozenset(v for v, _ in s.top_values if isinstance(v, str) and not identifier_like(v))
    return out


QUERY_KEYS = ("filter", "value_filter", "evidence_query")  # where a tool input holds a MongoDB filter


class Masker:
    """Applies one privacy mode to values, documents and filters bound for a prompt, trace or log."""

    def __init__(self, mode: PrivacyMode, categorical: dict[str, frozenset[Any]] | None = None) -> None:
        self.mode = mode
        self.categorical = categorical or {}

    def value(self, path: str | None, value: Any) -> Any:
        if self.mode == "full":
            return value[:_TEXT_LIMIT] + "…" if isinstance(value, str) and len(value) > _TEXT_LIMIT else value
        if self.mode == "shapes" and isinstance(value, str) and path is not None \
                and value in self.categorical.get(path, ()):
            return value
        if self.mode == "strict":
            return _type_tag(value)
        if isinstance(value, list):
            return [self.value(path, v) for v in value[:5]] + (["…"] if len(value) > 5 else [])
        if isinstance(value, dict) and len(value) != 1:
            return {k: self.value(f"{path}.{k}" if path else k, v) for k, v in value.items()}
        return mask_value(value, mode=self.mode)

    def document(self, doc: Any, path: str | None = None) -> Any:
        """A document with every scalar masked (field names are kept)."""
        if isinstance(doc, dict) and not (len(doc) == 1 and next(iter(doc)).startswith("$")):
            return {k: self.document(v, f"{path}.{k}" if path else k) for k, v in doc.items()}
        if isinstance(doc, list):
            return [self.document(v, path) for v in doc]
        return self.value(path, doc)

    def sample_values(self, path: str, values: list[Any]) -> list[Any]:
        """A finding's example values: none in ``strict``, shapes (or vocabulary) in ``shapes``."""
        if self.mode == "full":
            return values
        if self.mode == "strict":
            return []
        return [v if isinstance(v, str) and v in self.categorical.get(path, ()) else mask_value(v, mode="shapes")
                for v in values]

    def query(self, query: Any) -> tuple[Any, bool]:
        """An evidence query or a traced filter as it may be written (see ``mask_query``)."""
        return mask_query(query, mode=self.mode, categorical=self.categorical)

    def finding(self, finding: Finding) -> Finding:
        """A finding as it may be written: evidence query and sample values masked."""
        if self.mode == "full":
            return finding
        evidence, _ = self.query(finding.evidence_query)
        return finding.model_copy(update={"evidence_query": evidence,
                                          "sample_values": self.sample_values(finding.field, finding.sample_values),
                                          "failing": self.failing(finding.field, finding.failing),
                                          "masked_as": self.mode})

    def failing(self, path: str, failing: FailingDocuments | None) -> FailingDocuments | None:
        """A finding's failing documents as they may be written. ``strict``: none of them (their
        ``_id``s are document values too), only how many were read. ``shapes``: an ``_id`` that is an
        ObjectId or a UUID (a generated key, naming no one) as itself, any other by its shape; the
        field's values as ``sample_values`` shows them."""
        if failing is None or self.mode == "full":
            return failing
        if self.mode == "strict":
            return FailingDocuments(read=failing.read, withheld="strict privacy: no _id or value of a document "
                                                                "is written")
        documents = [FailingDocument(id=d.id if _generated_key(d.id) else mask_value(d.id, mode="shapes"),
                                     values=self.sample_values(path, d.values)) for d in failing.documents]
        return failing.model_copy(update={"documents": documents})

    def trace_entry(self, entry: TraceEntry) -> TraceEntry:
        """A trace entry as it may be written: the filters and values in its action input masked. The
        values a reference check looks up (up to 50,000 of them) are document values: their count
        only, or in ``full`` the first few."""
        looked_up = entry.action_input.get("values")
        if isinstance(looked_up, list):
            shown = [*looked_up[:_LIST_MAX], f"… {len(looked_up) - _LIST_MAX} more"] \
                if len(looked_up) > _LIST_MAX else looked_up
            if self.mode != "full":
                shown = [{MASKED: f"{len(looked_up)} values"}]
            entry = entry.model_copy(update={"action_input": {**entry.action_input, "values": shown}})
        if self.mode == "full":
            return entry
        action_input = self._inputs(entry.action_input)
        if isinstance(action_input.get("sample_values"), list):
            action_input["sample_values"] = self.sample_values(str(action_input.get("field", "")),
                                                               action_input["sample_values"])
        return entry.model_copy(update={"action_input": action_input})

    def _inputs(self, value: Any) -> Any:
        """Every filter in a tool's input masked, at any depth: ``count_many`` nests them in lists."""
        if isinstance(value, dict):
            return {k: self.query(v)[0] if k in QUERY_KEYS else self._inputs(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self._inputs(v) for v in value]
        return value

    def filter(self, query: Any, path: str | None = None) -> Any:
        """A MongoDB filter with its operands masked; operators and field names are kept."""
        if self.mode == "full":
            return query
        if isinstance(query, list):
            return [self.filter(v, path) for v in query]
        if not isinstance(query, dict):
            return self.value(path, query)
        if _is_scalar(query):
            return self.value(path, query)
        out: dict[str, Any] = {}
        for key, operand in query.items():
            if key in _SAFE_OPERANDS:
                out[key] = operand
            elif key == "$regex":
                out[key] = "<pattern>"
            elif key.startswith("$"):
                out[key] = self.filter(operand, path)
            else:
                out[key] = self.filter(operand, key)
        return out


def json_kind(value: Any) -> str:
    """The JSON-level kind of a value (``number``, ``string``, ``date`` for ``{"$date": ...}``):
    what strict mode may say about a value instead of the value."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict) and len(value) == 1:
        return next(iter(value)).lstrip("$")
    return "object"


def _type_tag(value: Any) -> str:
    return f"<{json_kind(value)}>"
