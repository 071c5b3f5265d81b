"""The shapes section in words, for the terminal report and notes."""

from __future__ import annotations

from argus.agent.shapes.models import Shapes

__all__ = ["shape_lines"]


def shape_lines(shapes: Shapes | None) -> list[str]:
    """``shapes 3 shapes by `method`: card 60% (...)``, then one line per type mix and rename."""
    if shapes is None:
        return []
    out = []
    if shapes.discriminator is not None:
        named = " (named by index: the privacy mode keeps the discriminator's values out)" if shapes.masked else ""
        out.append(f"shapes {shapes.summary()}{named}")
    for mix in shapes.mixes:
        counts = mix.counted if mix.counted is not None else mix.sampled
        unit = "documents" if mix.counted is not None else ("sampled elements" if mix.elements else "sampled values")
        forms = ", ".join(f"{t} {n:,}" + (f" (last written {mix.last_written[t]:%Y-%m-%d})"
                                          if t in mix.last_written else "") for t, n in counts.items())
        where = f"elements of {mix.path}" if mix.elements else mix.path
        out.append(f"type mix {where}: {forms} {unit}")
    for r in shapes.renames:
        when = f" around {r.boundary:%Y-%m-%d}" if r.boundary is not None else ""
        out.append(f"renamed {r.old} -> {r.new}{when}")
    return out
