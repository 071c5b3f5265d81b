"""Well-known string formats, as regexes valid in both Python ``re`` and MongoDB's PCRE.

The profiler counts sampled values per format; planners use the same patterns in ``$regex``
filters, so a share seen in the sample and a count confirmed on the server mean the same thing.

Every pattern here runs in linear time (no nested or adjacent overlapping quantifiers, which the
guard refuses anyway), and Argus examines at most ``MAX_EXAMINED_CHARS`` characters of a value:
a longer string matches no format and has no unit.
"""

from __future__ import annotations

import re

__all__ = ["FORMATS", "MAX_EXAMINED_CHARS", "NUMBER_WITH_UNIT", "PLACEHOLDER", "PLACEHOLDER_TEXT", "is_placeholder",
           "matching_formats", "unit_of"]

MAX_EXAMINED_CHARS = 1000

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
# The trailing spaces sit inside the optional group: ``\s*(word)?\s*`` backtracks quadratically on blanks.
_NO_VALUE = r"n/?a|null|nil|undefined|empty|tbd|-+|\?+"
PLACEHOLDER = rf"^\s*(({_NO_VALUE})\s*)?$"
# ... and, in free text (names, addresses: not a categorical field, where ``none`` or ``unknown``
# can be a real category), the words people type when they do not know the value.
_NO_VALUE_TEXT = (rf"{_NO_VALUE}|nan|tba|unknown|none|missing|not (available|applicable|known)"
                  r"|no (name|data|value)|xx+|\.+")
PLACEHOLDER_TEXT = rf"^\s*(({_NO_VALUE_TEXT})\s*)?$"

_COMPILED = {name: re.compile(pattern) for name, pattern in FORMATS.items()}
_PLACEHOLDER = re.compile(PLACEHOLDER, re.IGNORECASE)
_UNIT = re.compile(r"^\s*[-+]?\d+(?:[.,]\d+)?\s*([^\d\s.,].*)$")


def matching_formats(text: str) -> list[str]:
    if len(text) > MAX_EXAMINED_CHARS:
        return []
    return [name for name, rx in _COMPILED.items() if rx.match(text)]


def is_placeholder(text: str) -> bool:
    """Whether ``text`` stands for "no value" (``"N/A"``, ``" -- "``, blanks)."""
    return len(text.strip()) <= MAX_EXAMINED_CHARS and _PLACEHOLDER.match(text.strip()) is not None


def unit_of(text: str) -> str | None:
    """The unit text after a leading number (``"12.0 oz."`` → ``"oz."``), or None."""
    if len(text) > MAX_EXAMINED_CHARS:
        return None
    m = _UNIT.match(text)
    return m.group(1).strip().lower() if m else None
