"""A YAML syntax error is said in words at the line where the mistake is (issue 36: the parser's own
text, `expected <block end>, but found '?'`, pointing one line after the real one)."""

from __future__ import annotations

from pathlib import Path

import pytest

from argus.config.yaml_source import YamlError, read_yaml

CASES = [
    ("a key without its colon", "version: 1\ndefaults\n  planner: heuristic\nschedules: []\n",
     2, "no ':' after the key"),
    ("a quote never closed", 'version: 1\nschedules:\n  - name: "x\n    connection: demo\n',
     3, "the quote opened here is never closed"),
    ("a bracket never closed", "version: 1\nschedules: [\n  {name: x}\nother: 1\n",
     2, "the '[' opened here is never closed"),
    ("an indentation that fits no level", "version: 1\nschedules:\n  - name: x\n   connection: demo\n",
     4, "indented differently from the lines above it"),
    ("a question mark starting a line", "version: 1\nschedules:\n  - name: x\n  ? bad\n",
     4, "'?' starts a complex key"),
    ("a tab in the indentation", "version: 1\nschedules:\n\t- name: x\n",
     3, "a tab in the indentation"),
    ("a colon inside a plain value", "version: 1\nschedules:\n  - name: a: b\n",
     3, "quote a value that holds ': '"),
]


@pytest.mark.parametrize(("text", "line", "words"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_a_syntax_error_is_said_in_words_at_its_own_line(tmp_path: Path, text: str, line: int, words: str) -> None:
    path = tmp_path / "schedules.yaml"
    with pytest.raises(YamlError) as caught:
        read_yaml(path, text.encode())
    [problem] = caught.value.problems
    assert problem.startswith(f"{path}:{line}: not valid YAML: "), problem
    assert words in problem
    assert "<block" not in problem and "<scalar>" not in problem and "while scanning" not in problem
