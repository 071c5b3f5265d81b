"""The regex cost check judged against the server's engine: PCRE2 counts its own backtracking steps.

Python's parser folds ``a|[ab]`` into ``[ab]`` (and runs it in linear time); PCRE does not, so
``^(a|[ab])+$`` backtracks exponentially on the server. Each pattern the issue found reaching the
wire is shown slow as PCRE2 runs it, then refused; each pattern Argus itself sends is shown to take
steps in proportion to the text (twice the text, at most about twice the steps) on hostile texts.
"""

from __future__ import annotations

import re

import pytest

from argus.agent.errors import QueryRefused
from argus.agent.planners.heuristic.text import _exact_regex, _shape_regex
from argus.agent.tools import formats
from argus.agent.tools.formats import FORMATS, MADE_UP_EMAIL, PLACEHOLDER, PLACEHOLDER_EMAIL, PLACEHOLDER_TEXT
from argus.agent.tools.guard import check_filter
from argus.agent.tools.regex_cost import regex_problem
from tests.security import pcre

needs_pcre = pytest.mark.skipif(not pcre.available(), reason="libpcre2-8 (Debian libpcre2-8-0) is not installed")

# (pattern, a text PCRE2 backtracks on, the refusal's words)
SLOW: list[tuple[str, str, str]] = [
    (r"^(?:a?){28}a{28}$", "a" * 28, "repeats a part that can match nothing"),
    (r"^(ab?|b)+$", "ab" * 20 + "c", "can split one text into repetitions in more than one way"),
    (r"^(a[bc]?|b)*$", "ab" * 20 + "d", "can split one text into repetitions in more than one way"),
    (r"^(a|[ab])+$", "a" * 25 + "c", "alternatives that overlap"),
    (r"^(\d|[0-9])+$", "1" * 25 + "x", "alternatives that overlap"),
    (r"^(\w|\d)+$", "1" * 25 + "!", "alternatives that overlap"),
    ("^([\u0100-\u0102]|[\u0101-\u0103])+$", "\u0101" * 22 + "x", "alternatives that overlap"),
    (r"^.*a.*a.*a.*a.*a.*b$", "a" * 100 + "\nb", "take polynomial time"),
    ("^" + "a?" * 30 + "a{30}$", "a" * 30, "can match one text in thousands of ways"),
]
# Escapes and classes PCRE reads wider than Python: \v is every vertical space (Python: the one
# character VT), \W \S \D are the complements of ASCII classes (Python: of Unicode ones), and a
# POSIX class [[:digit:]] is a class (Python: the characters "[:digt" and then "]").
WIDER: list[tuple[str, str, str]] = [
    (r"^(\v|\n)+$", "\n" * 25 + "x", "alternatives that overlap"),
    (r"^([\v]|\r)+$", "\r" * 25 + "x", "alternatives that overlap"),
    (r"^(\W|é)+$", "é" * 25 + "a", "alternatives that overlap"),
    (r"^(\S|\xa0)+$", "\xa0" * 25 + " ", "alternatives that overlap"),
    ("^(\\D|\u0663)+$", "\u0663" * 25 + "1", "alternatives that overlap"),  # ARABIC-INDIC DIGIT THREE
    (r"^([^\w]|é)+$", "é" * 25 + "a", "alternatives that overlap"),
    (r"^([[:digit:]]|1)+$", "1" * 25 + "x", "a POSIX class"),
    (r"^([[:^alpha:]]|1)+$", "1" * 25 + "a", "a POSIX class"),
]


@needs_pcre
@pytest.mark.parametrize(("pattern", "text", "words"), SLOW, ids=[p for p, _, _ in SLOW])
def test_a_pattern_pcre_backtracks_on_is_refused_before_it_reaches_the_wire(pattern: str, text: str,
                                                                            words: str) -> None:
    assert pcre.exceeds(pattern, text, 1_000_000)  # as the server runs it: a million steps on a few dozen characters
    with pytest.raises(QueryRefused, match=re.escape(words)):
        check_filter({"s": {"$regex": pattern}})


@needs_pcre
@pytest.mark.parametrize(("pattern", "text", "words"), WIDER, ids=[p for p, _, _ in WIDER])
def test_an_escape_or_class_pcre_reads_wider_than_python_is_judged_at_its_widest(pattern: str, text: str,
                                                                                 words: str) -> None:
    assert pcre.exceeds(pattern, text, 1_000_000)
    with pytest.raises(QueryRefused, match=re.escape(words)):
        check_filter({"s": {"$regex": pattern}})


OWN = {**FORMATS, "placeholder": PLACEHOLDER, "placeholder_text": PLACEHOLDER_TEXT,
       "placeholder_email": PLACEHOLDER_EMAIL, "made_up_email": MADE_UP_EMAIL, "unit": formats._UNIT.pattern,
       "shape_decimal": _shape_regex("9+.9+"), "shape_phone": _shape_regex("+9 (9+) 9+-9+"),
       "exact_phone": _exact_regex("(999) 999-9999"), "exact_zip": _exact_regex("99999"),
       "exact_code": _exact_regex("AA-9999"), "alternatives_parting_at_once": r"^(ab|ac)+$"}
UNITS = [" ", "a", "1", ".", "@", "-", "?", "x", "\n", "a@", "a.", "1.", "a ", "n/a ", "é", "9-", "(1", "ab",
         "x@example."]


@needs_pcre
@pytest.mark.parametrize("name", sorted(OWN))
def test_a_pattern_argus_sends_is_accepted_and_pcre_runs_it_in_linear_steps(name: str) -> None:
    pattern = OWN[name]
    assert pattern is not None and regex_problem(pattern) is None
    for unit in UNITS:
        for tail in ("", "!"):
            short = pcre.steps(pattern, unit * (2000 // len(unit)) + tail)
            long = pcre.steps(pattern, unit * (4000 // len(unit)) + tail)
            assert short is not None and long is not None and long <= 2.2 * short + 50, (unit, tail, short, long)


def test_the_judgement_reads_every_alternative_as_written_not_as_python_folds_it() -> None:
    from argus.agent.tools.regex_syntax import Alt, Chars, Repeat, parse

    tree = parse(r"(a|[ab])+")
    assert isinstance(tree, Repeat) and isinstance(tree.body, Alt)
    assert [o.chars for o in tree.body.options if isinstance(o, Chars)] == [((97, 97),), ((97, 98),)]


@pytest.mark.parametrize("pattern", [
    r"^(?:[a-z]{2,}\.)?example\.com$", r"^\d{4}\d{2}$", r"^\s+|\s+$", r"^(?=.*\d)(?=.*[a-z]).{8,}$",
    r"^\d{1,3}(,\d{3})*$", r"^[A-Z][a-z]+\s[A-Z][a-z]+$", r"smith", r"a.*b.*", r"^(?!.*@).*$",
])
def test_ordinary_patterns_pass(pattern: str) -> None:
    assert regex_problem(pattern) is None


@pytest.mark.parametrize(("pattern", "flags"), [(r"^(?i:A|a)+$", 0), (r"^(A|a)+$", re.IGNORECASE),
                                                (r"(?x)^ ( a | a b ) + $", 0), (r"^ (a|a b) + $", re.VERBOSE)])
def test_flags_are_read_as_the_engine_reads_them(pattern: str, flags: int) -> None:
    assert "alternatives that overlap" in (regex_problem(pattern, flags) or "")


def test_a_pattern_too_large_to_judge_is_refused_unjudged() -> None:
    assert regex_problem("(?:a" + "[a-z]?" * 150 + ")+$") == \
        "it is too complex to judge how long it runs; write it shorter"
