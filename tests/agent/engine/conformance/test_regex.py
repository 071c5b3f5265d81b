"""``$regex`` read as MongoDB compiles it: PCRE2 with ``PCRE2_UTF`` and without ``PCRE2_UCP``.

Sources: ``src/mongo/util/pcre_util.cpp`` (``flagsToOptions``: ``pcre::UTF`` always, ``i m s x``
add CASELESS, MULTILINE, DOTALL, EXTENDED, ``u`` nothing, any other letter is error 51108);
``jstests/core/query/regex/regex_unicode.js`` (``\\w``, ``\\d``, ``[[:alpha:]]``, ``[[:digit:]]``
are ASCII unless the pattern opens with ``(*UCP)``; ``\\p{...}`` properties are Unicode); the
PCRE2 manual (pcre2pattern, "Generic character types": without UCP ``\\s`` is HT, LF, VT, FF, CR
and space, ``\\b`` is a ``\\w`` boundary; in UTF mode ``.`` is one code point and caseless matching
folds Unicode letters, pcre2unicode "Case-equivalence in UTF mode"); and the manual's ``$regex``
page for the options.
"""

from __future__ import annotations

from typing import Any

import pytest
from bson import Regex

from tests.agent.engine.conformance.answers import matching

WORDS = [{"_id": 0, "text": "kyle"}, {"_id": 1, "text": "박정수"}, {"_id": 2, "text": "suárez"}]
DIGITS = [{"_id": 0, "text": "02191996"}, {"_id": 1, "text": "༢༣༤༥"}, {"_id": 2, "text": "9୩୪୬୯6"}]

# regex_unicode.js, assertFindResultsEq(pattern, expected _ids)
UNICODE_CASES: list[tuple[list[dict[str, Any]], str, list[int]]] = [
    (WORDS, "e", [0, 2]), (WORDS, "á", [2]), (WORDS, "(*UTF)á", [2]), (WORDS, "(*UTF8)정", [1]),
    (WORDS, r"\p{Latin}", [0, 2]), (WORDS, r"^\p{Hangul}+$", [1]), (WORDS, r"^\p{L}+$", [0, 1, 2]),
    (WORDS, r"^\p{Xan}+$", [0, 1, 2]),
    (WORDS, r"\w", [0, 2]), (WORDS, r"^\w+$", [0]),
    (WORDS, r"(*UCP)\w", [0, 1, 2]), (WORDS, r"(*UCP)^\w+$", [0, 1, 2]),
    (WORDS, "[[:alpha:]]", [0, 2]), (WORDS, "^[[:alpha:]]+$", [0]), (WORDS, "(*UCP)^[[:alpha:]]+$", [0, 1, 2]),
    (DIGITS, r"^\p{N}+$", [0, 1, 2]), (DIGITS, r"\d", [0, 2]), (DIGITS, r"^\d+$", [0]),
    (DIGITS, r"(*UCP)^\d+$", [0, 1, 2]), (DIGITS, "[[:digit:]]", [0, 2]), (DIGITS, "^[[:digit:]]+$", [0]),
]


@pytest.mark.parametrize(("docs", "pattern", "expected"), UNICODE_CASES,
                         ids=[f"{i}-{p}" for i, (_, p, _) in enumerate(UNICODE_CASES)])
def test_regex_unicode_jstest(docs: list[dict[str, Any]], pattern: str, expected: list[int]) -> None:
    assert matching(docs, {"text": {"$regex": pattern}}) == expected


def test_class_shorthands_are_ascii_without_ucp() -> None:
    """Issue 29's cases: a no-break space is no ``\\s``, Arabic-Indic digits no ``\\d``, ``é`` no ``\\w``
    (pcre2pattern, "Generic character types", default non-UCP tables)."""
    docs = [{"_id": 1, "p": "(555)\u00a0555-1234"}, {"_id": 2, "p": "(555) 555-1234"}, {"_id": 3, "p": "٣٣"},
            {"_id": 4, "p": "café"}, {"_id": 5, "p": "33"}, {"_id": 6, "p": "cafe"}]
    assert matching(docs, {"p": {"$regex": r"^\(\d{3}\)\s\d{3}-\d{4}$"}}) == [2]
    assert matching(docs, {"p": {"$regex": r"^\d+$"}}) == [5]
    assert matching(docs, {"p": {"$regex": r"^\w+$"}}) == [5, 6]
    assert matching(docs, {"p": {"$not": {"$regex": r"^\w+$"}}}) == [1, 2, 3, 4]


def test_blank_or_placeholder_pattern_counts_no_unicode_space() -> None:
    """A value of only U+00A0 or U+3000 is not blank to PCRE2 without UCP; ASCII whitespace is,
    vertical tab included (PCRE2 10.x adds VT to ``\\s``)."""
    docs = [{"_id": 1, "v": "\u00a0"}, {"_id": 2, "v": "\u3000"}, {"_id": 3, "v": " \t"}, {"_id": 4, "v": "\x0b"},
            {"_id": 5, "v": ""}]
    assert matching(docs, {"v": {"$regex": r"^\s*$"}}) == [3, 4, 5]
    assert matching(docs, {"v": {"$regex": r"^\S+$"}}) == [1, 2]


def test_word_boundaries_are_ascii() -> None:
    docs = [{"_id": 1, "v": "x é"}, {"_id": 2, "v": "x e"}, {"_id": 3, "v": "éa"}]
    assert matching(docs, {"v": {"$regex": r"\bé"}}) == []
    assert matching(docs, {"v": {"$regex": r"\be"}}) == [2]
    assert matching(docs, {"v": {"$regex": r"\Ba"}}) == []  # é is no word character: a boundary before a


def test_classes_inside_brackets_are_ascii_too() -> None:
    docs = [{"_id": 1, "v": "é"}, {"_id": 2, "v": "a"}, {"_id": 3, "v": "1"}, {"_id": 4, "v": "-"}]
    assert matching(docs, {"v": {"$regex": r"^[\w-]$"}}) == [2, 3, 4]
    assert matching(docs, {"v": {"$regex": r"^[^\W\d]$"}}) == [2]
    assert matching(docs, {"v": {"$regex": r"^[\W]$"}}) == [1, 4]
    assert matching(docs, {"v": {"$regex": "^[^[:alnum:]]$"}}) == [1, 4]


def test_dot_is_one_code_point_in_utf_mode() -> None:
    docs = [{"_id": 1, "v": "é"}, {"_id": 2, "v": "😀"}, {"_id": 3, "v": "ab"}, {"_id": 4, "v": "\n"}]
    assert matching(docs, {"v": {"$regex": "^.$"}}) == [1, 2]
    assert matching(docs, {"v": {"$regex": "^.$", "$options": "s"}}) == [1, 2, 4]


def test_caseless_matching_folds_unicode_letters_in_utf_mode() -> None:
    docs = [{"_id": 1, "v": "ÉCOLE"}, {"_id": 2, "v": "école"}, {"_id": 3, "v": "ecole"}]
    assert matching(docs, {"v": {"$regex": "^école$", "$options": "i"}}) == [1, 2]
    assert matching(docs, {"v": Regex("^ÉCOLE$", "i")}) == [1, 2]


def test_options_m_s_x_and_u() -> None:
    """Manual, ``$regex`` options: ``m`` anchors at each line, ``s`` lets ``.`` match a newline,
    ``x`` ignores whitespace and ``#`` comments, ``u`` is accepted and changes nothing."""
    docs = [{"_id": 1, "v": "first\nsecond"}, {"_id": 2, "v": "second"}, {"_id": 3, "v": "a\nb"}]
    assert matching(docs, {"v": {"$regex": "^second"}}) == [2]
    assert matching(docs, {"v": {"$regex": "^second", "$options": "m"}}) == [1, 2]
    assert matching(docs, {"v": {"$regex": "a.b"}}) == []
    assert matching(docs, {"v": {"$regex": "a.b", "$options": "s"}}) == [3]
    assert matching(docs, {"v": {"$regex": "^ sec ond $  # the word", "$options": "x"}}) == [2]
    assert matching(docs, {"v": {"$regex": "^second$", "$options": "u"}}) == [2]


def test_pcre_only_syntax() -> None:
    """PCRE2 forms (pcre2pattern): ``\\Q...\\E`` quotes, ``\\x{hh}`` names a code point, ``\\z`` is the
    very end, ``\\Z`` the end or before a final newline."""
    docs = [{"_id": 1, "v": "a.b"}, {"_id": 2, "v": "axb"}, {"_id": 3, "v": "é\n"}]
    assert matching(docs, {"v": {"$regex": r"^\Qa.b\E$"}}) == [1]
    assert matching(docs, {"v": {"$regex": r"^\x{e9}"}}) == [3]
    assert matching(docs, {"v": {"$regex": r"é\z"}}) == []
    assert matching(docs, {"v": {"$regex": r"é\Z"}}) == [3]


def test_regex_matches_strings_only_and_array_elements() -> None:
    """Manual, ``$regex``: a regex matches string values, and any string element of an array."""
    docs = [{"_id": 1, "v": 123}, {"_id": 2, "v": ["x", "123"]}, {"_id": 3, "v": "123"}, {"_id": 4, "v": None}]
    assert matching(docs, {"v": {"$regex": "^1"}}) == [2, 3]
    assert matching(docs, {"v": {"$not": {"$regex": "^1"}}}) == [1, 4]
