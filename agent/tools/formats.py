"""Well-known string formats, as regexes valid in both Python ``re`` and MongoDB's PCRE.

The profiler counts sampled values per format; planners use the same patterns in ``$regex``
filters, so a share seen in the sample and a count confirmed on the server mean the same thing.
"""

from __future__ import annotations

import re

__all__ = ["FORMATS", "NUMBER_WITH_UNIT", "PLACEHOLDER", "matching_formats", "unit_of"]

FORMATS: dict[str, str] = {
    "email": r"^[^@\s]+@[^@\s]+\.[A-Za-z]{2,}$",
    "url": r"^[A-Za-z][A-Za-z0-9+.-]*://\S+$",
    "uuid": r"^[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}$",
    "iso_date": r"^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$",
    "number_text": r"^\s*[-+]?\d+([.,]\d+)?\s*$",
    "number_with_unit": r"^\s*[-+]?\d+([.,]\d+)?\s*[^\d\s.,].*$",
}

NUMBER_WITH_UNIT = FORMATS["number_with_unit"]

# Strings that stand for "no value" (matched case-insensitively); the empty string matches too.
PLACEHOLDER = r"^\s*(n/?a|null|nil|undefined|empty|tbd|-+|\?+)?\s*$"

_COMPILED = {name: re.compile(pattern) for name, pattern in FORMATS.items()}
_UNIT = re.compile(r"^\s*[-+]?\d+(?:[.,]\d+)?\s*([^\d\s.,].*)$")


def matching_formats(text: str) -> list[str]:
    return [name for name, rx in _COMPILED.items() if rx.match(text)]


def unit_of(text: str) -> str | None:
    """The unit text after a leading number (``"12.0 oz."`` → ``"oz."``), or None."""
    m = _UNIT.match(text)
    return m.group(1).strip().lower() if m else None
