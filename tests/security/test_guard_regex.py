"""Every pattern Argus runs over document values itself passes the same cost check as a planner's."""

from __future__ import annotations

import re

import pytest

from argus.agent.tools import formats
from argus.agent.tools.formats import FORMATS, PLACEHOLDER, is_placeholder
from argus.agent.tools.regex_cost import regex_problem

OWN_PATTERNS = {**FORMATS, "placeholder": PLACEHOLDER, "unit": formats._UNIT.pattern}


@pytest.mark.parametrize("name", sorted(OWN_PATTERNS))
def test_argus_own_pattern_is_linear_by_the_guard_s_rules(name: str) -> None:
    assert regex_problem(OWN_PATTERNS[name]) is None


def test_the_old_placeholder_pattern_is_the_quadratic_shape_the_guard_refuses() -> None:
    assert regex_problem(r"^\s*(n/?a|null|nil|undefined|empty|tbd|-+|\?+)?\s*$") == (
        "it has adjacent quantifiers over the same characters (like \\s*\\s*), which take quadratic time; "
        "merge them into one")


@pytest.mark.parametrize(("text", "expected"), [("", True), ("   ", True), (" N/A ", True), ("na", True),
                                                ("--", True), (" ?? ", True), ("null\t", True), ("tbd", True),
                                                ("n/a x", False), ("nothing", False), (" " * 150_000 + "x", False),
                                                (" " * 150_000, True)])
def test_placeholder_rewrite_matches_what_the_old_pattern_matched(text: str, expected: bool) -> None:
    old = re.compile(r"^\s*(n/?a|null|nil|undefined|empty|tbd|-+|\?+)?\s*$", re.IGNORECASE)
    assert is_placeholder(text) is expected
    if len(text) < 1000:
        assert bool(old.match(text)) is expected
