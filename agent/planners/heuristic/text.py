"""String analysis: the field's format, and values that break its categorical domain.

Enum violations are values that a frequent value explains: the same value in other case,
spacing or separators (``usd`` beside ``USD``, ``no-show`` beside ``no_show``), a near-miss
spelling (``EURO``, ``acuxe care hospitals``, ``compelted``), or,
when the field has a small dominant set, a rare value of a different kind (``$`` among
three-letter codes). A rare value that looks like the others (``diamond`` beside ``gold``) is a
legitimate category, and codes that differ only in digits (``SKU-0062``, ``SKU-0063``) are
different things, so neither is reported.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from agent.tools.formats import FORMATS, NUMBER_WITH_UNIT
from agent.tools.models import StringStats

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
UNIT_SHARE = 0.5           # numbers-with-units when at least half the values are written so
UNIT_KINDS = 20            # ... with at most this many distinct unit texts

_SPACES = re.compile(r"\s+")
_SEPARATORS = re.compile(r"[\s_\-]+")
_TOKENS = re.compile(r"[^\W_]+")
_DIGITS = re.compile(r"\d")


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
    characters or fewer are one substitution away from each other (``AR``/``AZ``), so for them a
    substitution counts only when the caller knows ``value`` is a rare outsider (``short_substitutions``).
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
    if len(b) <= 3 and len(a) == len(b) and not short_substitutions:
        return None
    if len(b) >= ANAGRAM_MIN and _letters(a) == _letters(b) and _distance_within(a, b, len(b) // 3):
        return "spelling"
    limit = max(1, len(b) // (6 if once else 10))
    return "spelling" if _distance_within(a, b, limit) else None


def enum_violations(counts: list[tuple[str, int]]) -> dict[str, str]:
    """Values (with the reason) that break a categorical field's domain, from exact value counts."""
    ordered = sorted(((v, c) for v, c in counts if isinstance(v, str) and v.strip()), key=lambda vc: -vc[1])
    if len(ordered) < 2:
        return {}
    total = sum(c for _, c in ordered)
    found: dict[str, str] = {}
    frequent = ordered[:200]
    dominant = _dominant_set(ordered, total)
    outsiders = {v for v, _ in ordered[len(dominant):]} if dominant else set()
    words: dict[str, int] = {}
    for value, count in ordered:
        for token in set(_TOKENS.findall(value.casefold())):
            words[token] = words.get(token, 0) + count
    for value, count in ordered:
        for other, other_count in frequent:
            if other_count < CASE_RATIO * count:
                break
            why = is_variant(value, other, short_substitutions=value in outsiders, once=count <= 2)
            if why == "spelling" and (other_count < VARIANT_RATIO * count or not _new_word(value, count, words)):
                continue  # made of words the field uses elsewhere ("Bo Fox" beside "Jo Fox"): a real value
            if why:
                found[value] = why
                break
    if dominant:
        kinds = {_classes(v) for v in dominant}
        for value, _ in ordered[len(dominant):]:
            if value not in found and _classes(value) not in kinds:
                found[value] = "a different kind of value"
    return found


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


def string_format(stats: StringStats, *, code: bool = False, named: str | None = None) -> FormatSpec | None:
    """The format a clear majority of a string field's values follow, if any. ``code``: the
    field's name says it holds a code (phone, zip), so a dominant shape is learned from a smaller majority.
    ``named``: a well-known format the field's name promises (``email``); it applies while a fair
    share of the values follow it, so a field whose malformed values outgrow the good ones is
    reported as mixed, never as clean."""
    filled = stats.count - stats.empty_count - stats.blank_count - stats.placeholder_count
    if filled < 20:
        return None
    if named in FORMATS and stats.formats.get(named, 0) >= NAMED_FORMAT_SHARE * filled:
        matched = stats.formats[named]
        return FormatSpec(named, FORMATS[named], matched / filled, matched)
    units = stats.formats.get("number_with_unit", 0)
    if units >= UNIT_SHARE * stats.count and stats.unit_count <= UNIT_KINDS:
        return FormatSpec("number_with_unit", NUMBER_WITH_UNIT, units / stats.count, units, violation_matches=True)
    for name in ("email", "url", "uuid", "iso_date"):
        matched = stats.formats.get(name, 0)
        if matched >= FORMAT_SHARE * filled:
            return FormatSpec(name, FORMATS[name], matched / filled, matched)
    general: dict[str, int] = {}
    for shape, n in stats.shapes:
        key = _runs(shape) if code else shape  # in free text, runs of different lengths are different words
        general[key] = general.get(key, 0) + n
    if general:
        shape, n = max(general.items(), key=lambda kv: (kv[1], kv[0]))
        regex = _shape_regex(shape)
        if regex and n >= (CODE_SHAPE_SHARE if code else SHAPE_SHARE) * filled:
            return FormatSpec("shape " + shape, regex, n / filled, n)
    return None


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
