"""One mask for an evidence query in every command: the run masks it once, knowing what it may keep
(the sampled vocabulary of a field and the values the contract itself declares); whatever shows it
later (``/runs``, incidents, alerts, ``argus finding show``) keeps that mask instead of masking again
without that knowledge, which hid ``paid`` where ``argus audit`` had printed it (issue 36)."""

from __future__ import annotations

from typing import Any

from argus.agent.contracts.model import Contract
from argus.agent.ejson import decode
from argus.agent.findings import Finding
from argus.agent.options import PrivacyMode
from argus.agent.privacy import categorical_values, mask_query
from argus.agent.tools.models import SchemaSampleResult

__all__ = ["vocabulary", "written_evidence"]


def vocabulary(schema: SchemaSampleResult | None, contract: Contract | None) -> dict[str, frozenset[Any]]:
    """Strings ``shapes`` may show as themselves, per field: the sampled vocabulary, and the strings of
    the contract's ``in`` lists (the user's own words, which the report's description prints too)."""
    out = dict(categorical_values(schema))
    for rule in contract.rules if contract is not None else ():
        if rule.kind == "in" and isinstance(rule.value, list | tuple):
            declared = frozenset(v for v in (_decoded(x) for x in rule.value) if isinstance(v, str))
            out[rule.field] = out.get(rule.field, frozenset()) | declared
    return out


def _decoded(value: Any) -> Any:
    try:
        return decode(value)
    except (TypeError, ValueError):
        return None


def written_evidence(finding: Finding, mode: PrivacyMode) -> Any:
    """The finding's evidence query as ``mode`` lets it be shown: as the run wrote it when the run
    masked it under ``mode``, else masked now (a report stored before runs masked it)."""
    if finding.masked_as == mode:
        return finding.evidence_query
    return mask_query(finding.evidence_query, mode=mode)[0]
