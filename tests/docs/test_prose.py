"""Every prose paragraph of the documentation ends as a sentence ends (issue 36: the daemon page
ended with a sentence cut off mid-parenthesis, followed by a second copy of it)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[2] / "docs"
_NOT_PROSE = tuple("#|-*><!0123456789")


def _paragraphs(text: str) -> list[str]:
    text = re.sub(r"```.*?```", "", text, flags=re.S)
    text = re.sub(r"\n(?=#)", "\n\n", text)  # a heading right after a paragraph starts a new one
    return [p.strip() for p in re.split(r"\n\s*\n", text) if p.strip()]


@pytest.mark.parametrize("page", sorted(DOCS.glob("*.md")), ids=lambda p: p.name)
def test_every_paragraph_ends_as_a_sentence(page: Path) -> None:
    cut = [p[-100:] for p in _paragraphs(page.read_text())
           if not p.startswith(_NOT_PROSE) and p[-1] not in ".:!?)`*\"'|>]"]
    assert cut == []

