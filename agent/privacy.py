"""What document values may leave a run, by privacy mode.

``strict``: no values at all, only types and counts. ``shapes`` (default): a free-form value is
replaced by its shape (``Zoe.12@mail.org`` → ``Aa+.9+@a+.a+``), numbers by their magnitude; values
of low-cardinality categorical fields (at most 20 distinct) appear as themselves. ``full``: raw values.
"""

from __future__ import annotations

import math
from typing import Any

from agent.options import PrivacyMode
from agent.tools.profiling import shape_of

__all__ = ["CATEGORICAL_MAX", "mask_value", "mask_values"]

CATEGORICAL_MAX = 20


def _magnitude(number: float) -> str:
    if math.isnan(number) or math.isinf(number):
        return str(number)
    if number == 0:
        return "0"
    sign = "-" if number < 0 else ""
    digits = len(str(int(abs(number)))) if abs(number) >= 1 else 0
    return f"{sign}<1" if digits == 0 else f"{sign}{digits}-digit number"


def mask_value(value: Any, *, mode: PrivacyMode, categorical: bool = False) -> Any:
    if mode == "full" or (mode == "shapes" and categorical):
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


def mask_values(values: list[Any], *, mode: PrivacyMode, categorical: bool = False) -> list[Any]:
    if mode == "strict":
        return []
    return [mask_value(v, mode=mode, categorical=categorical) for v in values]
