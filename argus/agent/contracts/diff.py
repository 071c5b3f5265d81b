"""What changed between two versions of a contract, rule by rule, for a contract's pull request.

Rules are matched by field, kind and ``where`` scope. Each change is classified: ``tightened`` (the
new rule accepts less: a shorter ``in`` list, a higher ``min``, ``required`` turned on), ``loosened``
(it accepts more), ``changed`` (neither contains the other: another pattern or format), ``added``,
``removed``, or ``renamed`` (every rule of a field moved to a field of another name, unchanged). A
severity-only change is ``tightened`` or ``loosened`` by its rank, and makes no document fail.

``newly_failing`` is the filter of the documents that pass the old rule and fail the new one, for
the rules that can newly fail documents (tightened, changed, added, renamed) and are checked per
document; the caller counts them (``argus.daemon.contracts_cli``), all in one pass.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal

from argus.agent.contracts.compile import Declared
from argus.agent.contracts.model import Bound, Contract, Rule

__all__ = ["ContractChange", "Kind", "diff_contracts", "newly_failing"]

Kind = Literal["tightened", "loosened", "changed", "added", "removed", "renamed"]
NEWLY_FAILING: frozenset[Kind] = frozenset({"tightened", "changed", "added", "renamed"})


@dataclass(frozen=True)
class ContractChange:
    kind: Kind
    field: str
    rule: str             # the rule's kind: in, min, required...
    old: Rule | None
    new: Rule | None
    detail: str           # what changed, in the contracts' own words

    @property
    def severity_only(self) -> bool:
        return self.kind in ("tightened", "loosened") and self.old is not None and self.new is not None \
            and _value(self.old) == _value(self.new)

    @property
    def can_fail_documents(self) -> bool:
        return self.kind in NEWLY_FAILING and self.new is not None and not self.severity_only

    def text(self) -> str:
        rule = self.new or self.old
        where = f" where {json.dumps(rule.where)}" if rule is not None and rule.where else ""
        return f"{self.kind:<9}  {self.field} {self.rule}{where}: {self.detail}"


def _key(rule: Rule) -> tuple[str, str, str]:
    return rule.field, rule.kind, json.dumps(rule.where, sort_keys=True) if rule.where else ""


def _value(rule: Rule) -> str:
    """A comparable text of the rule's value (an ``in`` list as a set: its order means nothing)."""
    value = rule.value
    if rule.kind in ("in", "type", "shape") and isinstance(value, list | tuple):
        return json.dumps(sorted(json.dumps(v, sort_keys=True, default=str) for v in value))
    return json.dumps(value, sort_keys=True, default=str)


def _said(rule: Rule) -> str:
    return rule.expectation(values=True)


def diff_contracts(old: Contract, new: Contract) -> list[ContractChange]:
    """Every rule-level change from ``old`` to ``new``, in the new contract's order (removed ones last)."""
    before = {_key(r): r for r in old.rules}
    after = {_key(r): r for r in new.rules}
    renamed = _renamed_fields(old, new)
    out: list[ContractChange] = []
    for key, rule in after.items():
        was = before.get(key)
        if was is None:
            source = renamed.get(rule.field)
            if source is not None:
                out.append(ContractChange("renamed", rule.field, rule.kind, before.get((source, *key[1:])), rule,
                                          f"was on {source}: {_said(rule)}"))
            else:
                out.append(ContractChange("added", rule.field, rule.kind, None, rule, _said(rule)))
            continue
        change = _compared(was, rule)
        if change is not None:
            out.append(change)
    moved = set(renamed.values())
    out += [ContractChange("removed", r.field, r.kind, r, None, _said(r))
            for key, r in before.items() if key not in after and r.field not in moved]
    return out


def _renamed_fields(old: Contract, new: Contract) -> dict[str, str]:
    """New field -> old field, where a field's rules all moved unchanged to a field the old contract
    did not name (and only one field fits)."""
    def signatures(contract: Contract) -> dict[str, tuple[Any, ...]]:
        per: dict[str, list[tuple[str, str, str, str]]] = {}
        for r in contract.rules:
            per.setdefault(r.field, []).append((r.kind, _value(r), _key(r)[2], str(r.severity)))
        return {f: tuple(sorted(s)) for f, s in per.items()}

    before, after = signatures(old), signatures(new)
    gone = {f: s for f, s in before.items() if f not in after}
    came = {f: s for f, s in after.items() if f not in before}
    out: dict[str, str] = {}
    for field, signature in came.items():
        matches = [f for f, s in gone.items() if s == signature]
        if len(matches) == 1 and sum(1 for s in came.values() if s == signature) == 1:
            out[field] = matches[0]
    return out


def _compared(old: Rule, new: Rule) -> ContractChange | None:
    if _value(old) == _value(new):
        if old.severity == new.severity:
            return None
        rank = {None: -1} | {s: s.rank for s in (old.severity, new.severity) if s is not None}
        kind: Kind = "tightened" if rank[new.severity] > rank[old.severity] else "loosened"
        return ContractChange(kind, new.field, new.kind, old, new, f"severity {_severity(old)} → {_severity(new)}")
    order = _order(new.kind, old.value, new.value)
    kind = "tightened" if order > 0 else "loosened" if order < 0 else "changed"
    return ContractChange(kind, new.field, new.kind, old, new, f"{_said(old)} → {_said(new)}")


def _severity(rule: Rule) -> str:
    return rule.severity.value if rule.severity is not None else "default"


def _order(kind: str, old: Any, new: Any) -> int:
    """1: the new value accepts less than the old; -1: more; 0: neither contains the other."""
    if kind in ("in", "type", "shape"):
        a = {json.dumps(v, sort_keys=True, default=str) for v in old}
        b = {json.dumps(v, sort_keys=True, default=str) for v in new}
        return 1 if b < a else -1 if a < b else 0
    if kind in ("required", "unique"):
        return 1 if new and not old else -1 if old and not new else 0
    if kind in ("min", "max") and isinstance(old, Bound) and isinstance(new, Bound):
        higher = _compare_bounds(old, new)
        return 0 if higher is None else higher if kind == "min" else -higher
    if kind in ("max_length", "max_null_share") and isinstance(old, int | float) and isinstance(new, int | float):
        return 1 if new < old else -1
    if kind == "documents" and isinstance(old, tuple) and isinstance(new, tuple):
        lo = _sign(new[0], old[0], missing=float("-inf"))
        hi = _sign(old[1], new[1], missing=float("inf"))
        return 1 if lo >= 0 and hi >= 0 else -1 if lo <= 0 and hi <= 0 else 0
    if kind == "freshness" and isinstance(old, tuple) and isinstance(new, tuple) and old[0] == new[0]:
        return 1 if new[1] < old[1] else -1
    return 0


def _sign(a: Any, b: Any, *, missing: float) -> int:
    x, y = (missing if a is None else a), (missing if b is None else b)
    return (x > y) - (x < y)


def _compare_bounds(old: Bound, new: Bound) -> int | None:
    """1 when ``new`` is higher than ``old``, -1 lower; None when they are of different kinds."""
    for a, b in ((old.number, new.number), (old.date, new.date), (old.from_now, new.from_now)):
        if a is not None and b is not None:
            return (b > a) - (b < a)  # type: ignore[operator]
    return None


def newly_failing(change: ContractChange, old: Declared, new: Declared) -> dict[str, Any] | None:
    """The filter of the documents that pass the old rule and break the new one; None when the rule is
    no per-document check (``unique``, ``references``, the collection's rules: statistics)."""
    after = next((c.violation for c in new.checks if c.rule == change.new), None)
    if after is None:
        return None
    before = next((c.violation for c in old.checks if c.rule == change.old), None) \
        if change.old is not None else None  # a renamed field's: what broke the old field's rule broke it before
    return after if before is None else {"$and": [after, {"$nor": [before]}]}
