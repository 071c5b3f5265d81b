"""What a contract declares steers the inference: no second check of what the user has said.

A declared rule or declaration of a category on a field replaces Argus's inference of that
category there (a declared key gets no second duplicate check, a declared optional field no
null-rate check, a declared value set replaces the learned one, a declared range the learned
fences). Every other field and category is still inferred as before.
"""

from __future__ import annotations

from argus.agent.contracts.model import Contract
from argus.agent.findings import Category
from argus.agent.planners.heuristic.plan import Plan

__all__ = ["steered"]

_PROBE_CATEGORY = {"enum": Category.ENUM_VIOLATION, "duplicates": Category.DUPLICATE_VALUE,
                   "fence_out": Category.OUTLIER_VALUE, "fence_in": Category.OUTLIER_VALUE,
                   "number_set": Category.OUTLIER_VALUE}


def steered(plan: Plan, contract: Contract | None) -> Plan:
    """``plan`` without the checks and statistics whose field and category the contract declares."""
    if contract is None:
        return plan
    slots = {slot for r in contract.rules for slot in r.slots}
    plan.checks = [c for c in plan.checks if (c.path, c.category) not in slots]
    plan.probes = [p for p in plan.probes if (p.path, _PROBE_CATEGORY.get(p.kind)) not in slots]
    plan.fences = [(q, probes) for q, probes in plan.fences
                   if not any((p.path, Category.OUTLIER_VALUE) in slots for p in probes)]
    for path in [p for p in plan.outliers if (p, Category.OUTLIER_VALUE) in slots]:
        del plan.outliers[path]
    return plan
