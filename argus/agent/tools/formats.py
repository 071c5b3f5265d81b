"""Well-known string formats, as regexes valid in both Python ``re`` and MongoDB's PCRE.

The profiler counts sampled values per format; planners use the same patterns in ``$regex``
filters, so a share seen in the sample and a count confirmed on the server mean the same thing.

Every pattern here runs in linear time (no nested or adjacent overlapping quantifiers, which the
guard refuses anyway), and Argus examines at most ``MAX_EXAMINED_CHARS`` characters of a value:
a longer string matches no format and has no unit.

Non-ASCII letters are written as "anything but an ASCII non-letter" (``[^\\x00-\\x40...]``): MongoDB's
PCRE reads ``\\w`` as ASCII only, Python as Unicode, and the two agree on explicit code points.
"""

from __future__ import annotations

import re

__all__ = ["FORMATS", "MADE_UP_EMAIL", "MAX_EXAMINED_CHARS", "NUMBER_WITH_UNIT", "PLACEHOLDER", "PLACEHOLDER_EMAIL",
           "PLACEHOLDER_TEXT", "is_placeholder", "matching_formats", "unit_of"]

MAX_EXAMINED_CHARS = 1000

# A letter of any script: ASCII letters and every non-ASCII character but spaces.
_LETTER = r"[^\x00-\x40\x5B-\x60\x7B-\x7F\s]"
# Unit text starts with a letter or a unit sign (``12 oz``, ``5%``, ``21 °C``, ``3 µg``); ``10:30``,
# ``718-7``, ``08/27`` and ``2-1`` are times, codes, dates and scores, not a number and its unit.
_UNIT_START = "[A-Za-z%°µμ]"

FORMATS: dict[str, str] = {
    # the top-level domain in any script (``пример.рф``), or its punycode (``xn--p1ai``)
    "email": rf"^[^@\s]+@[^@\s]+\.({_LETTER}{{2,}}|xn--[A-Za-z0-9-]+)$",
    "url": r"^[A-Za-z][A-Za-z0-9+.-]*://\S+$",
    "uuid": r"^[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}$",
    "iso_date": r"^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$",
    "number_text": r"^\s*[-+]?\d+([.,]\d+)?\s*$",
    "number_with_unit": rf"^\s*[-+]?\d+([.,]\d+)?\s*{_UNIT_START}.*$",
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
# Well-formed addresses that stand for "no address" (matched case-insensitively): a mailbox whose
# name says there is none (none@, noemail@) at any domain, any mailbox at a domain people type to get
# past a form (test.com, none.com), and any mailbox at a domain reserved for examples and tests
# (RFC 2606/6761: example.com/.net/.org and the .example, .test, .invalid and .localhost names).
# ``test@`` and ``noreply@`` at a real domain are not: a test account and a system sender are real.
_NO_MAILBOX = r"none|null|nil|unknown|noemail|no-email|no\.email|nomail|no-mail|noaddress|nobody"
_MADE_UP_DOMAIN = r"test\.com|none\.com|null\.com|noemail\.com|nomail\.com"
_RESERVED_DOMAIN = r"([^@\s]*\.)?(example\.(com|net|org|edu)|example|test|invalid|localhost)"
_ROLE_MAILBOX = r"test|noreply|no-reply|donotreply|do-not-reply"
_MADE_UP = rf"({_NO_MAILBOX})@[^@\s]+|[^@\s]+@({_MADE_UP_DOMAIN})"
PLACEHOLDER_EMAIL = rf"^({_MADE_UP}|[^@\s]+@{_RESERVED_DOMAIN})$"
# ... and where a field's own addresses sit at a reserved domain (test data, a data set anonymised
# to ``user17@example.com``), only the made-up ones and a test or no-reply mailbox there.
MADE_UP_EMAIL = rf"^({_MADE_UP}|({_ROLE_MAILBOX})@{_RESERVED_DOMAIN})$"

_COMPILED = {name: re.compile(pattern) for name, pattern in FORMATS.items()}
_PLACEHOLDER = re.compile(PLACEHOLDER, re.IGNORECASE)
_UNIT = re.compile(rf"^\s*[-+]?\d+(?:[.,]\d+)?\s*({_UNIT_START}.*)$")


def matching_formats(text: str) -> list[str]:
    if len(text) > MAX_EXAMINED_CHARS:
        return []
    return [name for name, rx in _COMPILED.items() if rx.match(text)]


def is_placeholder(text: str) -> bool:
    """Whether ``text`` stands for "no value" (``"N/A"``, ``" -- "``, blanks)."""
    return len(text.strip()) <= MAX_EXAMINED_CHARS and _PLACEHOLDER.match(text.strip()) is not None


def unit_of(text: str) -> str | None:
    """The unit text after a leading number (``"12.0 OZ."`` → ``"OZ."``), or None. The case is kept:
    ``OZ.`` beside ``oz.`` is one unit spelled two ways."""
    if len(text) > MAX_EXAMINED_CHARS:
        return None
    m = _UNIT.match(text)
    return m.group(1).strip() if m else None
