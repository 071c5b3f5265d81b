"""String analysis: the field's format, and values that break its categorical domain.

Enum violations are values that a frequent value explains: the same value in other case,
spacing or separators (``usd`` beside ``USD``, ``no-show`` beside ``no_show``), a near-miss
spelling (``EURO``, ``acuxe care hospitals``, ``compelted``), or,
when the field has a small dominant set, a rare value of a different kind (``$`` among
three-letter codes). A rare value that looks like the others (``diamond`` beside ``gold``) is a
legitimate category, and codes that differ only in digits (``SKU-0062``, ``SKU-0063``) are
different things, so neither is reported. In a field of person or place names a recurring
variant is another name (``Meyer`` beside ``Meier``, ``Homburg`` beside ``Hamburg``): only a one-off
is a typo there.

A number followed by unit text is a defect when the field writes one unit several ways (``oz``,
``oz.``, ``OZ.``) or mixes it with bare numbers; ``500 mg`` in every value is a string field, and
``10:30``, ``2024-FA``, ``3rd`` or ``123 Oak St`` are no quantities at all.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from itertools import groupby

from argus.agent.planners.heuristic.names import words_of
from argus.agent.tools.formats import FORMATS, NUMBER_WITH_UNIT
from argus.agent.tools.models import StringStats

__all__ = ["FormatSpec", "enum_violations", "is_variant", "string_format"]

VARIANT_RATIO = 2          # a misspelling's explaining value must be at least this many times more frequent
ANAGRAM_MIN = 5            # shorter words are too often each other's anagrams (``stop``/``spot``)
CASE_RATIO = 1.5           # ... and a case or spacing variant's (a minority of any size still is one)
DOMINANCE_BREAK = 8        # a drop in frequency this steep separates the dominant set from the tail
TAIL_SHARE = 0.05          # ... when the tail holds at most this share of the values
FORMAT_SHARE = 0.5         # a well-known format applies when a clear majority of values follows it
NAMED_FORMAT_SHARE = 0.2   # ... or this share, when the field's name promises the format (email)
SHAPE_SHARE = 0.95         # a structural shape applies when this share of values has it
CODE_SHAPE_SHARE = 0.6     # ... or this share, in a field named as a code (phone, zip, sku)
UNIT_SHARE = 0.5           # numbers (with units or bare) make at least half the values, most units are units
UNIT_KINDS = 20            # ... with at most this many distinct unit texts
MIXED_SHARE = 0.01         # bare numbers and numbers with a unit are mixed when each is at least this share
ONE_OFF = 2                # a value seen at most this often is a one-off (a typo, not a category)
TOKEN_RUNS = 4             # a code's part holds at most this many runs of letters or digits (A1A: 3)
FILLER_DIGITS = 5          # a code of at least this many digits, all zero, is a filler ("00000")

_SPACES = re.compile(r"\s+")
_SEPARATORS = re.compile(r"[\s_\-]+")
_TOKENS = re.compile(r"[^\W_]+")
_DIGITS = re.compile(r"\d")
_COMPOUND = re.compile(r"[-_]")

# Fields of person and place names: real names one letter apart abound (Meier/Meyer, Hamburg/Homburg).
_PROPER_NAME_WORDS = {"name", "surname", "forename", "firstname", "lastname", "city", "town", "village",
                      "municipality", "locality", "county", "suburb", "borough", "hometown", "birthplace"}
# Codes people make up (FREESHIP beside SPRING20): a shape shared by most of them is no format.
_FREE_FORM_WORDS = {"coupon", "promo", "promotion", "voucher", "referral", "campaign", "discount"}

# Unit spellings (case folded, dots and spaces dropped; plurals of two letters and more) and the unit
# each means. One-letter units are only those no house number or flat suffix uses (12a, 12b, 12d).
_UNITS: dict[str, tuple[str, ...]] = {
    "mg": ("mg", "milligram"), "g": ("g", "gr", "gram", "gramm"), "kg": ("kg", "kilo", "kilogram"),
    "µg": ("µg", "μg", "ug", "mcg", "microgram"), "t": ("ton", "tonne"), "lb": ("lb", "pound"),
    "oz": ("oz", "ounce"), "fl oz": ("floz", "fluidounce"), "ml": ("ml", "millilitre", "milliliter"),
    "cl": ("cl",), "dl": ("dl",), "l": ("l", "lt", "ltr", "litre", "liter"), "gal": ("gal", "gallon"),
    "pt": ("pint",), "qt": ("qt", "quart"), "cc": ("cc",), "mm": ("mm", "millimetre", "millimeter"),
    "cm": ("cm", "centimetre", "centimeter"), "m": ("m", "metre", "meter"), "km": ("km", "kilometre", "kilometer"),
    "in": ("inch", "inches"), "ft": ("ft", "feet", "foot"), "mi": ("mi", "mile"),
    "ms": ("ms", "millisecond"), "s": ("sec", "second"), "min": ("min", "minute"), "h": ("hr", "hour"),
    "day": ("day",), "wk": ("wk", "week"), "mo": ("month",), "yr": ("yr", "year"),
    "byte": ("byte",), "kb": ("kb", "kilobyte"), "mb": ("mb", "megabyte"), "gb": ("gb", "gigabyte"),
    "tb": ("tb", "terabyte"), "kib": ("kib",), "mib": ("mib",), "gib": ("gib",),
    "%": ("%", "pct", "percent"), "°c": ("°c", "ºc", "celsius"), "°f": ("°f", "ºf", "fahrenheit"),
    "°": ("°", "deg", "degree"), "kcal": ("kcal", "cal", "calorie"), "kwh": ("kwh",), "w": ("w", "watt"),
    "kw": ("kw", "kilowatt"), "v": ("v", "volt"), "mah": ("mah",), "hz": ("hz",), "mhz": ("mhz",),
    "ghz": ("ghz",), "mph": ("mph",), "km/h": ("km/h", "kmh", "kph"), "psi": ("psi",), "bar": ("bar",),
    "mbar": ("mbar",), "mmhg": ("mmhg",), "bpm": ("bpm",), "rpm": ("rpm",), "px": ("px",),
    "pcs": ("pc", "pcs", "piece"), "iu": ("iu",), "mmol/l": ("mmol/l",), "mg/dl": ("mg/dl",),
}
_UNIT_NAMES = {spelling + plural: unit for unit, spellings in _UNITS.items() for spelling in spellings
               for plural in ("", "s") if not plural or (len(spelling) > 1 and not spelling.endswith("s"))}


def _normal(text: str) -> str:
    return _SPACES.sub(" ", text.strip()).casefold()


def _joined(text: str) -> str:
    """``text`` without word separators: ``no-show``, ``no_show`` and ``No Show`` are one value."""
    return _SEPARATORS.sub("", text).casefold()


def _letters(text: str) -> str:
    return "".join(sorted(text.casefold()))


def _classes(text: str) -> frozenset[str]:
    out = set()
    for ch in text:
        if ch.isupper():
            out.add("A")
        elif ch.islower():
            out.add("a")
        elif ch.isdigit():
            out.add("9")
        elif ch.isspace():
            out.add(" ")
        elif ch.isalpha():
            out.add("~")
        else:
            out.add("p")
    return frozenset(out)


def _distance_within(a: str, b: str, limit: int) -> bool:
    """The edit distance of ``a`` and ``b`` is at most ``limit``; swapping two neighbouring
    characters is one edit (``compelted``), as a typist makes it (banded, exits early)."""
    if abs(len(a) - len(b)) > limit:
        return False
    if len(a) > len(b):
        a, b = b, a
    far = limit + 1
    before: list[int] = []
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        lo, hi = max(1, i - limit), min(len(b), i + limit)
        cur = [far] * (len(b) + 1)
        cur[0] = i
        for j in range(lo, hi + 1):
            cost = 0 if ca == b[j - 1] else 1
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost)
            if i > 1 and j > 1 and ca == b[j - 2] and a[i - 2] == b[j - 1]:
                cur[j] = min(cur[j], before[j - 2] + 1)
        if min(cur[lo:hi + 1], default=far) > limit and cur[0] > limit:
            return False
        before, prev = prev, cur
    return prev[len(b)] <= limit


def is_variant(value: str, frequent: str, *, short_substitutions: bool = False, once: bool = False) -> str | None:
    """Why ``value`` looks like a corrupted ``frequent`` (``"case or spacing"``/``"spelling"``), or None.

    About one edit per ten characters counts as a misspelling, one per six for a value seen only
    once or twice (``once``): typos are idiosyncratic, a rare real category recurs. The same letters
    in another order (``compltede``, ``schdulede``) are a typist's slip up to one edit in three
    characters: real words that are anagrams of each other are rarely that close. Codes of three
    characters or fewer are one edit away from each other (``AR``/``AZ``, ``S``/``XS``, ``XL``/``XXL``),
    so for them an edit counts only when the caller knows ``value`` is a rare outsider (``short_substitutions``),
    or when it only lengthens or cuts the code at its end (``USA`` beside ``US``, ``Euro`` beside ``EUR``).
    """
    if value == frequent:
        return None
    a, b = _normal(value), _normal(frequent)
    if a == b:
        return "case or spacing"
    if _joined(value) == _joined(frequent):
        return "punctuation"
    if _DIGITS.sub("", value) == _DIGITS.sub("", frequent):
        return None  # differs only in digits: another code, not a typo
    if len(b) <= 3 and not short_substitutions and (len(a) == len(b) or not (a.startswith(b) or b.startswith(a))):
        return None
    if len(b) >= ANAGRAM_MIN and _letters(a) == _letters(b) and _distance_within(a, b, len(b) // 3):
        return "spelling"
    limit = max(1, len(b) // (6 if once else 10))
    return "spelling" if _distance_within(a, b, limit) else None


def enum_violations(counts: list[tuple[str, int]], *, path: str = "") -> dict[str, str]:
    """Values (with the reason) that break a categorical field's domain, from exact value counts.
    ``path``: the field's name, which says whether it holds person or place names."""
    ordered = sorted(((v, c) for v, c in counts if isinstance(v, str) and v.strip()), key=lambda vc: -vc[1])
    if len(ordered) < 2:
        return {}
    total = sum(c for _, c in ordered)
    found: dict[str, str] = {}
    frequent = ordered[:200]
    dominant = _dominant_set(ordered, total)
    outsiders = {v for v, _ in ordered[len(dominant):]} if dominant else set()
    names = _proper_names(path)
    words: dict[str, int] = {}
    for value, count in ordered:
        for token in set(_TOKENS.findall(value.casefold())):
            words[token] = words.get(token, 0) + count
    for value, count in ordered:
        for other, other_count in frequent:
            if other_count < CASE_RATIO * count:
                break
            why = is_variant(value, other, short_substitutions=value in outsiders, once=count <= ONE_OFF)
            if why == "spelling" and (other_count < VARIANT_RATIO * count or not _new_word(value, count, words)):
                continue  # made of words the field uses elsewhere ("Bo Fox" beside "Jo Fox"): a real value
            if why == "spelling" and names and count > max(ONE_OFF, other_count // 1000):
                continue  # a name that recurs is another name; a slip is a one-off (or a thousand times rarer)
            if why:
                found[value] = why
                break
    if dominant:
        kinds = {_classes(v) for v in dominant}
        parts = {_folded(_classes(p)) for v in dominant for p in _COMPOUND.split(v) if p}
        for value, _ in ordered[len(dominant):]:
            if value not in found and _classes(value) not in kinds and not _compound(value, parts):
                found[value] = "a different kind of value"
    return found


def _folded(classes: frozenset[str]) -> frozenset[str]:
    return frozenset("a" if c in "Aa~" else c for c in classes)


def _compound(value: str, parts: set[frozenset[str]]) -> bool:
    """``value`` joins words of the dominant values' kind (``zh-Hant``, ``pt_BR`` beside ``de``, ``en``):
    a finer category of the same kind, not a value of another kind (``U.S.D``, ``$``, ``12``)."""
    pieces = _COMPOUND.split(value)
    return len(pieces) > 1 and all(len(p) > 1 and _folded(_classes(p)) in parts for p in pieces)


def _proper_names(path: str) -> bool:
    """The field holds person or place names (``city``, ``last_name``, ``HospitalName``)."""
    return not _PROPER_NAME_WORDS.isdisjoint(words_of(path))


def _new_word(value: str, count: int, words: dict[str, int]) -> bool:
    """Does ``value`` use a word no other value of the field uses? Misspellings do."""
    return any(words[t] <= count for t in set(_TOKENS.findall(value.casefold())))


def _dominant_set(ordered: list[tuple[str, int]], total: int) -> list[str]:
    tail = total
    for i in range(len(ordered) - 1):
        tail -= ordered[i][1]
        if ordered[i][1] >= DOMINANCE_BREAK * ordered[i + 1][1] and tail <= TAIL_SHARE * total:
            return [v for v, _ in ordered[: i + 1]]
    return []


@dataclass(frozen=True)
class FormatSpec:
    """``violation_matches``: True when matching the regex is the defect (numbers written with units)."""

    kind: str
    regex: str
    share: float
    matched: int
    violation_matches: bool = False


_CLASS_REGEX = {"A": "[A-Z]", "a": "[a-z]", "9": "[0-9]", " ": r"\s"}


def _shape_regex(shape: str) -> str | None:
    """The regex of a shape; every literal character is escaped (``+1-555`` → ``^\\+[0-9]\\-[0-9]+$``).

    In a shape, ``+`` right after a class letter is a run; anywhere else it is the character."""
    if "~" in shape or "…" in shape or not any(c == "9" or not (c.isalpha() or c in " +") for c in shape):
        return None  # words only, or not ASCII: names and prose have no format to break
    parts: list[str] = []
    runnable = False
    for ch in shape:
        if ch == "+" and runnable:
            parts.append("+")
            runnable = False
        elif ch in _CLASS_REGEX:
            parts.append(_CLASS_REGEX[ch])
            runnable = True
        else:
            parts.append(re.escape(ch))
            runnable = False
    regex = "^" + "".join(parts) + "$"
    try:
        re.compile(regex)
    except re.error:
        return None
    return regex


def string_format(stats: StringStats, *, code: bool = False, named: str | None = None,
                  path: str = "") -> FormatSpec | None:
    """The format a clear majority of a string field's values follow, if any. ``code``: the
    field's name says it holds a code (phone, zip): its exact shape, run lengths included, applies
    when it holds a clear majority; otherwise its shape with runs of any length applies from a
    smaller majority (phones in several national formats), unless the name says people make the
    codes up (``coupon_code``). Values made of digit runs between separators are such a code by
    their shape alone (``_structured``), whatever the field is called. ``named``: a well-known
    format the field's name promises (``email``); it applies while a fair share of the values
    follow it, so a field whose malformed values outgrow the good ones is reported as mixed, never
    as clean. ``path``: the field's name."""
    filled = stats.count - stats.empty_count - stats.blank_count - stats.placeholder_count
    if filled < 20:
        return None
    if named in FORMATS and stats.formats.get(named, 0) >= NAMED_FORMAT_SHARE * filled:
        matched = stats.formats[named]
        return FormatSpec(named, FORMATS[named], matched / filled, matched)
    units = _unit_violation(stats, filled)
    if units is not None:
        return units
    for name in ("email", "url", "uuid", "iso_date"):
        matched = stats.formats.get(name, 0)
        if matched >= FORMAT_SHARE * filled:
            return FormatSpec(name, FORMATS[name], matched / filled, matched)
    if code and stats.exact_shapes:
        shape, n = stats.exact_shapes[0]
        regex = _exact_regex(shape)
        if regex and n >= SHAPE_SHARE * filled:
            return FormatSpec("shape " + shape, regex, n / filled, n)
    general: dict[str, int] = {}
    for shape, n in stats.shapes:
        # In free text, runs of different lengths are different words; in a code they are one format.
        key = _runs(shape) if code or _structured(_runs(shape)) else shape
        general[key] = general.get(key, 0) + n
    if general:
        shape = max(general.items(), key=lambda kv: (kv[1], kv[0]))[0]
        named_code = code and _FREE_FORM_WORDS.isdisjoint(words_of(path))
        lenient = (named_code or _structured(shape)) and not _random_token(shape)
        n = general[shape]
        regex = _shape_regex(shape)
        if regex and n >= (CODE_SHAPE_SHARE if lenient else SHAPE_SHARE) * filled:
            return FormatSpec("shape " + shape, regex, n / filled, n)
    return None


def _structured(shape: str) -> bool:
    """Digits in several runs between separators, no lower-case words (``+9+ (9+) 9+-9+``,
    ``9+-9+-9+``): a phone, a date or a numbered code by its values alone, whatever the field is
    called, so its shape applies from the same majority as a code's the name announces."""
    return shape.count("9") >= 2 and "a" not in shape and "~" not in shape


def _random_token(shape: str) -> bool:
    """More than ``TOKEN_RUNS`` runs of letters and digits with no separator between them (a hex id, a
    hash, a VIN): the shape is chance, shared by many values only when their prefix is (ids made in one
    second by one process)."""
    return any(len(part) > 2 * TOKEN_RUNS for part in re.split(r"[^Aa9+]", shape))


def _unit_violation(stats: StringStats, filled: int) -> FormatSpec | None:
    """Numbers written with their unit, when the field spells one unit several ways or mixes
    numbers with and without it. Text after a number that is no unit (a street, an ordinal, a hex
    id) makes no quantity, and a unit written one way in every value is just part of the string."""
    units = stats.formats.get("number_with_unit", 0)
    bare = stats.formats.get("number_text", 0)
    if not units or units + bare < UNIT_SHARE * filled or stats.unit_count > UNIT_KINDS:
        return None
    spellings: dict[str, set[str]] = {}
    quantities = 0
    for text, n in stats.units:
        unit = _UNIT_NAMES.get(re.sub(r"[\s.]", "", text.casefold()))
        if unit is not None:
            quantities += n
            spellings.setdefault(unit, set()).add(text)
    if quantities < UNIT_SHARE * units:
        return None
    inconsistent = any(len(written) > 1 for written in spellings.values())
    mixed = min(bare, quantities) >= MIXED_SHARE * filled
    if not (inconsistent or mixed):
        return None
    return FormatSpec("number_with_unit", NUMBER_WITH_UNIT, units / filled, units, violation_matches=True)


def _exact_regex(shape: str) -> str | None:
    """The regex of an exact shape (``(999) 999-9999`` → ``^\\([0-9]{3,}\\)\\s[0-9]{3,}\\-[0-9]{4,}$``). A run of
    digits may grow longer (a counter written as text crosses a power of ten: ``ORD-99999`` →
    ``ORD-100000``); a shorter one breaks it (a zip that lost its leading zero, a phone a digit
    short). A code of digits alone, at least ``FILLER_DIGITS`` of them, breaks it when every digit
    is zero (``00000``): a filler typed to get past a form."""
    if "~" in shape or "…" in shape or not any(c == "9" or not (c.isalpha() or c == " ") for c in shape):
        return None
    parts: list[str] = []
    for ch, run in groupby(shape):
        n = len(list(run))
        if ch == "9":
            parts.append("[0-9]" + (f"{{{n},}}" if n > 1 else "+"))
        else:
            parts.append((_CLASS_REGEX.get(ch) or re.escape(ch)) + (f"{{{n}}}" if n > 1 else ""))
    filler = "(?![^1-9]*$)" if shape.count("9") >= FILLER_DIGITS and not any(c in shape for c in "Aa") else ""
    return "^" + filler + "".join(parts) + "$"


def _runs(shape: str) -> str:
    """The shape with every class written as a run (``+9 (9+)`` → ``+9+ (9+)``): one digit or
    three in a country code are the same format."""
    out: list[str] = []
    runnable = False
    for ch in shape:
        if ch == "+" and runnable:
            runnable = False  # the run marker of the class just written
        elif ch in _CLASS_REGEX:
            out.append(ch + "+")
            runnable = True
        else:
            out.append(ch)
            runnable = False
    return "".join(out)
