"""What one value is, without what it holds: its BSON type and, for a string, its shape (letters,
digits and runs; the way profiles, privacy masking and prompts describe a value they must not show)."""

from __future__ import annotations

from typing import Any

from argus.agent.engine.values import bson_type as engine_bson_type

__all__ = ["SHAPE_CHARS", "bson_type", "exact_shape_of", "shape_of"]

SHAPE_CHARS = 64


def bson_type(value: Any) -> str:
    """The MongoDB ``$type`` alias of a Python value as pymongo decodes it (the engine's own
    judgement, which ``$type`` filters use), or ``unknown`` for a value BSON has no type for."""
    try:
        return engine_bson_type(value)
    except TypeError:
        return "unknown"


def shape_of(text: str) -> str:
    """A string's shape: letters become ``A``/``a``, digits ``9``, runs collapse to ``X+``.

    ``"ORD-100234"`` → ``"A+-9+"``, ``"n/a"`` → ``"a/a"``, ``"Zoe.12@mail.org"`` → ``"Aa+.9+@a+.a+"``.
    Non-ASCII letters become ``~`` and shapes are cut at 64 characters (``…`` marks the cut).
    """
    out: list[str] = []
    prev = ""
    run = 0
    for ch in text[:SHAPE_CHARS]:
        cls = _class_of(ch)
        if cls == prev and cls in "Aa9~ ":
            run += 1
            if run == 2:
                out.append("+")
            continue
        out.append(cls)
        prev, run = cls, 1
    if len(text) > SHAPE_CHARS:
        out.append("…")
    return "".join(out)


def exact_shape_of(text: str) -> str:
    """A string's shape with its run lengths: ``"02134"`` → ``"99999"``, ``"(555) 010-4477"`` →
    ``"(999) 999-9999"``. Letters become ``A``/``a`` (``~`` outside ASCII), digits ``9``, spaces `` ``,
    every other character stays itself; cut like ``shape_of``."""
    cut = "…" if len(text) > SHAPE_CHARS else ""
    return "".join(_class_of(ch) for ch in text[:SHAPE_CHARS]) + cut


def _class_of(ch: str) -> str:
    if "A" <= ch <= "Z":
        return "A"
    if "a" <= ch <= "z":
        return "a"
    if "0" <= ch <= "9":
        return "9"
    if ch.isalpha():
        return "~"
    if ch.isspace():
        return " "
    return ch
