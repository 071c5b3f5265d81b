"""The sample's shapes as the planner's prompt shows them: the discriminator and each shape's share
and paths, the paths that belong to some shapes only (judge them within those shapes), renames.

Written as the privacy mode lets the report write them (``argus.agent.shapes.privacy``: a masked
shape is ``#2``); the prompt cuts it to a share of the schema's budget.
"""

from __future__ import annotations

from argus.agent.privacy import Masker
from argus.agent.shapes.models import Shapes
from argus.agent.shapes.privacy import for_report
from argus.agent.shapes.scoping import rename_lead, scopes

__all__ = ["shapes_section"]

_SCOPED = 12  # paths of some shapes listed at most


def shapes_section(shapes: Shapes | None, masker: Masker) -> str:
    """``''`` for a collection of one shape with no rename; else a few lines."""
    named = for_report(shapes, masker.mode, masker.categorical)
    if shapes is None or named is None or (named.discriminator is None and not named.renames):
        return ""
    lines = ["# Shapes"]
    if named.discriminator is not None:
        lines.append(named.summary() + ".")
        scoped = scopes(shapes, named)
        if scoped:
            shown = [f"{path} in {scope.label.split(' (by ')[0]}" for path, scope in list(scoped.items())[:_SCOPED]]
            more = f" … and {len(scoped) - _SCOPED} more" if len(scoped) > _SCOPED else ""
            lines.append(f"Fields of some shapes only (judge their missing values within those shapes, with "
                         f"{named.discriminator} in the filter): " + "; ".join(shown) + more + ".")
    lines.extend(f"Renamed: {rename_lead(r)} (one schema_drift finding, not a null-rate rise)." for r in named.renames)
    return "\n".join(lines)
